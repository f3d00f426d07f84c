import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fetchOpenApi, type OpenApiDocument, type Operation } from '../support/openapi.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface DocumentedOperation {
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
}

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer?: string }[];
}

/**
 * `redocly lint` with its recommended rules on the document the service serves, run as the CLI a user would
 * run, from a temporary directory with only our config in it (so no ignore file can hide a problem).
 */
async function redoclyLint(document: string): Promise<{ errors: number; warnings: number; problems: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'ids-openapi-'));
  try {
    await writeFile(join(dir, 'openapi.json'), document);
    await writeFile(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
    const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
    const run = promisify(execFile)(process.execPath, [cli, 'lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 << 20,
    });
    // The CLI exits 1 when it finds errors; its report is on stdout either way.
    const { stdout } = await run.catch((error: { stdout?: string; stderr?: string }) => {
      if (!error.stdout) throw new Error(`redocly lint failed without a report: ${error.stderr}`);
      return { stdout: error.stdout };
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: LintProblem[] };
    return {
      errors: report.totals.errors,
      warnings: report.totals.warnings,
      problems: report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Operations that need credentials but no permission: they can answer 401, never 403, and are not counted. */
const NO_PERMISSION = [
  'GET /auth/token',
  'GET /intel/collections',
  'POST /intel/lookup',
  // Sightings act on, and list, only keys a lookup by the caller would find.
  'POST /intel/sightings',
  'GET /intel/sightings',
  'POST /intel/warninglists/check',
  // Lists the sources of the collections the key may read.
  'GET /intel/sources',
  // TAXII discovery and collections list what the key may see; a status is shown to keys that see its collection.
  'GET /taxii2',
  'GET /taxii2/api',
  'GET /taxii2/api/collections',
  'GET /taxii2/api/collections/{collection_id}',
  'GET /taxii2/api/status/{status_id}',
];
/** TAXII answers errors in its own format and media type (TaxiiErrorBody), as the protocol requires. */
const TAXII_ERROR = { mediaType: 'application/taxii+json;version=2.1', schema: '#/components/schemas/TaxiiErrorBody' };
const PUBLIC = ['GET /health/live', 'GET /health/ready'];

describe('OpenAPI document: conventions every operation follows', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  let operations: [string, Operation & DocumentedOperation][];
  beforeAll(async () => {
    t = await createTestApp();
    document = await fetchOpenApi(t);
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(
        ([method, operation]) => [`${method.toUpperCase()} ${path}`, operation as Operation & DocumentedOperation] as [string, Operation & DocumentedOperation],
      ),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('gives every operation a summary and a description', () => {
    const undocumented = operations
      .filter(([, op]) => !op.summary?.trim() || !op.description || op.description.length < 2 * op.summary.length)
      .map(([name]) => name);
    expect(undocumented).toEqual([]);
  });

  it('stands alone: no reference to documents outside the repository', async () => {
    const text = (await t.http().get('/openapi.json')).text;
    expect(text).not.toMatch(/\.\.\/shared|\/work\/shared|wire-contract|interface-spec|decisions(\.md| §)|extensions(\.md| §)/);
  });

  it('marks the health operations, and only them, as needing no credentials', () => {
    const open = operations.filter(([, op]) => Array.isArray(op.security) && op.security.length === 0).map(([name]) => name);
    expect(open.sort()).toEqual(PUBLIC);
    expect((document as unknown as { security: unknown }).security).toEqual([{ bearer: [] }, { apiKey: [] }]);
  });

  it('documents 401 and 503 on every operation that needs credentials, and 403 and 429 on every one that needs a permission', () => {
    const missing = operations
      .filter(([name]) => !PUBLIC.includes(name))
      .flatMap(([name, op]) => {
        const wanted = NO_PERMISSION.includes(name) ? ['401', '503'] : ['401', '403', '429', '503'];
        return wanted.filter((status) => !op.responses[status]).map((status) => `${name} ${status}`);
      });
    expect(missing).toEqual([]);
    for (const name of NO_PERMISSION) {
      const op = operations.find(([n]) => n === name)?.[1];
      expect(op && Object.keys(op.responses).filter((s) => s === '403' || s === '429')).toEqual([]);
    }
    const limited = operations.find(([name]) => name === 'POST /insight/tasks')![1].responses['429'];
    expect(Object.keys(limited.headers ?? {})).toContain('Retry-After');
    const unavailable = operations.find(([name]) => name === 'GET /auth/token')![1].responses['503'];
    expect(Object.keys(unavailable.headers ?? {})).toEqual(['Retry-After']);
  });

  it('documents 413 on every operation that takes a JSON body', () => {
    const missing = operations.filter(([, op]) => op.requestBody?.content['application/json'] && !op.responses['413']).map(([name]) => name);
    expect(missing).toEqual([]);
    expect(operations.find(([name]) => name === 'POST /intel/collections')![1].responses['413']).toBeDefined();
  });

  it('gives every error response the ErrorBody schema {code, message, details} (TAXII routes: the TAXII error)', () => {
    const bare = operations.flatMap(([name, op]) =>
      Object.entries(op.responses)
        .filter(([status]) => Number(status) >= 400)
        .filter(([, response]) =>
          name.includes(' /taxii2')
            ? response.content?.[TAXII_ERROR.mediaType]?.schema?.$ref !== TAXII_ERROR.schema
            : response.content?.['application/json']?.schema?.$ref !== '#/components/schemas/ErrorBody',
        )
        .map(([status]) => `${name} ${status}`),
    );
    expect(bare).toEqual([]);
    const body = document.components.schemas.ErrorBody;
    expect(Object.keys(body.properties ?? {}).sort()).toEqual(['code', 'details', 'message']);
    expect(body.required?.sort()).toEqual(['code', 'message']);
  });
});

describe('OpenAPI document: redocly lint (recommended rules)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('finds no error and no warning in /openapi.json', async () => {
    const response = await t.http().get('/openapi.json');
    expect(response.status).toBe(200);
    const result = await redoclyLint(response.text);
    expect(result.problems).toEqual([]);
    expect({ errors: result.errors, warnings: result.warnings }).toEqual({ errors: 0, warnings: 0 });
  });
});
