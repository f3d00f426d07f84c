import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../src/common/errors/api-error.js';
import { BUILTIN_RESOURCES } from '../../src/common/guard/access.js';
import { ChangeSequencer } from '../../src/intel/change-sequencer.js';
import { openSession, sdkPartFields, uploadFile, uploadPart } from '../filebox/filebox.helpers.js';
import { createCollection, md5 } from '../intel/objects.helpers.js';
import { eventually } from '../support/eventually.js';
import { createKey, cursorOf, parseLinks, tokenFor } from '../support/factories.js';
import { fetchOpenApi, type OpenApiDocument } from '../support/openapi.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { parseJson } from '../taxii/taxii-support.js';
import { requestsFor, send, type FuzzAnswer, type FuzzRequest } from './http-fuzz.js';

const SEED = 20261123;

/**
 * Everything the service stores: every table (the key's last-use time and address aside, which reads update
 * by design, and the audit trail, which records refused requests by design) and the files of DATA_DIR. Tables are read from the catalogue, so a table added later is covered too. Rows
 * as json, not jsonb: a json column may hold a \u0000 escape, which jsonb cannot.
 */
async function fingerprint(t: TestApp): Promise<Record<string, string>> {
  // Change records are numbered after the answer: the state of earlier requests includes their numbers
  // (a pass only when some record is still unnumbered).
  await t.app.get(ChangeSequencer).numberLeftovers();
  // So are source runs: a run a request started (202) ends after the answer, writing its log row.
  await eventually(async () => (await t.db.query('SELECT 1 FROM sources_run WHERE finished_at IS NULL LIMIT 1')).rowCount === 0);
  const rows = (await t.db.query<{ name: string; digest: string }>({ name: 'fuzz-fingerprint', text: (fingerprintStatement ??= await fingerprintSql(t)) }))
    .rows;
  const files = await readdir(join(t.dataDir, 'files'), { recursive: true, withFileTypes: true });
  const sizes = await Promise.all(
    files.filter((entry) => entry.isFile()).map(async (entry) => `${entry.name}:${(await stat(join(entry.parentPath, entry.name))).size}`),
  );
  return { ...Object.fromEntries(rows.map((row) => [row.name, row.digest])), files: sizes.sort().join(',') };
}

/**
 * The statement of `fingerprint`, one digest per table, built on the first call: the service creates no table
 * in `public` while it runs (its migrations did, before the app started), and a fingerprint follows each of
 * 3,000-odd requests, which read the catalogue and planned this statement anew each time. Run as a named
 * prepared statement: planned once per pool connection.
 */
let fingerprintStatement: string | undefined;
async function fingerprintSql(t: TestApp): Promise<string> {
  const tables = (
    await t.db.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
         AND table_name NOT IN ('typeorm_migrations', 'audit_entry') ORDER BY 1`,
    )
  ).rows.map((row) => row.name);
  // A key's use, refused requests included, records its time and address at most once a minute and moves its
  // view's version with them (the key's ETag): a use, not a change a request made.
  const usage = (name: string) => `"last_used_(at|address)":("[^"]*"|null)${name === 'auth_api_key' ? '|"version":[0-9]+' : ''}`;
  return tables
    .map(
      (name) =>
        `SELECT '${name}' AS name, count(*) || ':' || md5(coalesce(string_agg(r, '|' ORDER BY r), '')) AS digest
         FROM (SELECT regexp_replace(row_to_json(t)::text, '${usage(name)}', '', 'g') AS r FROM "${name}" t) rows`,
    )
    .join(' UNION ALL ');
}

/**
 * What every answer must be: never 5xx; an error is JSON with a code of the table and that code's status
 * (under /taxii2 a TAXII error message: its `error_code` and `http_status`, as application/taxii+json).
 */
function checkAnswer(request: FuzzRequest, answer: FuzzAnswer): void {
  const where = `${request.method} ${request.path} ${JSON.stringify(request.headers)} ${request.body?.toString('utf8').slice(0, 300) ?? ''}`;
  if (answer.status >= 500) throw new Error(`${answer.status} for ${where}: ${answer.body.slice(0, 300)}`);
  if (answer.status < 400 || request.method === 'HEAD') return;
  const taxii = request.path.startsWith('/taxii2');
  let code: unknown;
  try {
    const body = JSON.parse(answer.body) as { code?: unknown; error_code?: unknown; http_status?: unknown };
    code = taxii ? (body.http_status === String(answer.status) ? body.error_code : undefined) : body.code;
  } catch {
    throw new Error(`${answer.status} without a JSON body for ${where}: ${answer.body.slice(0, 300)}`);
  }
  const mediaType = taxii ? /^application\/taxii\+json;version=2\.1$/ : /^application\/json/;
  if (!mediaType.test(answer.contentType) || typeof code !== 'string' || ERROR_STATUS[code as keyof typeof ERROR_STATUS] !== answer.status) {
    throw new Error(`${answer.status} ${answer.contentType} with code ${String(code)} for ${where}`);
  }
}

describe('fuzzing the HTTP surface (fast-check, fixed seed)', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  let known: Record<string, string[]>;
  let readOnly: { key: string; token: string };
  let victims: string[];

  beforeAll(async () => {
    // The source schedule's timer off: a source the fuzzer created would otherwise run in the background between a
    // request and the fingerprint taken after it, and a refused request would seem to have changed its run log.
    t = await createTestApp({ SOURCE_POLL_SECONDS: '3600' });
    document = await fetchOpenApi(t);
    const admin = await tokenFor(t, t.adminKey);

    // Real things for path parameters to name, so that requests get past the lookups.
    await createCollection(t, 'fuzzed', 'fuzz-schema');
    for (let n = 1; n <= 3; n++) {
      const added = await t
        .http()
        .post('/intel/collections/fuzzed/objects')
        .set('X-Api-Key', t.adminKey)
        .send({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context: { size: n } });
      expect(added.status).toBe(204);
    }
    const listing = await t.http().get('/intel/collections/fuzzed/objects').set('X-Api-Key', t.adminKey);
    const cursor = cursorOf(parseLinks(listing.headers.link as string | undefined).related) as string;
    const file = (await uploadFile(t, admin, randomBytes(1000))).json().fileID as string;
    const session = await openSession(t, admin, 1024 * 1024);
    expect((await uploadPart(t, admin, session, sdkPartFields(1, randomBytes(100)))).status).toBe(204);
    const insightSchema = await t
      .http()
      .post('/insight/schemas')
      .set('X-Api-Key', t.adminKey)
      .send({ $schema: 'https://json-schema.org/draft/2020-12/schema', schemaID: 'fuzz-result', type: 'object' });
    expect(insightSchema.status).toBe(201);
    const task = await t
      .http()
      .post('/insight/tasks')
      .set('X-Api-Key', t.adminKey)
      .send({ params: { schemaID: 'fuzz-result', objectKeys: [{ type: 'MD5Hash', value: md5(1) }], fileID: file } });
    expect(task.status).toBe(201);
    victims = [String((await createKey(t, { permissions: [{ resource: BUILTIN_RESOURCES.intel.id, actions: ['Read'] }] })).id)];

    // Read on everything, Write on nothing.
    const reader = await createKey(t, {
      permissions: Object.values(BUILTIN_RESOURCES).map((resource) => ({
        resource: resource.id,
        actions: resource.parentId === null ? ['Read', 'ReadChildren'] : ['Read'],
      })),
    });
    readOnly = { key: reader.key, token: await tokenFor(t, reader.key) };

    // The collection's TAXII id, an indicator of it and the status of a TAXII write.
    const taxii = (path: string) => t.http().get(path).set('X-Api-Key', t.adminKey).buffer(true).parse(parseJson);
    const taxiiId = ((await taxii('/taxii2/api/collections/')).body as { collections: { id: string }[] }).collections[0].id;
    const indicator = ((await taxii(`/taxii2/api/collections/${taxiiId}/objects/?match[type]=indicator`)).body as { objects: { id: string }[] }).objects[0];
    const posted = await t
      .http()
      .post(`/taxii2/api/collections/${taxiiId}/objects/`)
      .set('X-Api-Key', t.adminKey)
      .set('Content-Type', 'application/taxii+json;version=2.1')
      .send(JSON.stringify({ objects: [indicator] }))
      .buffer(true)
      .parse(parseJson);
    expect(posted.status).toBe(202);

    // A source of the collection (disabled: no run is due) and a built-in warninglist, both named by `name`.
    const source = await t
      .http()
      .post('/intel/sources')
      .set('X-Api-Key', t.adminKey)
      .send({ name: 'fuzz-source', collection: 'fuzzed', kind: 'text', url: 'http://127.0.0.1:9/feed.txt', enabled: false });
    expect(source.status).toBe(201);

    known = {
      name: ['fuzz-source', 'public-dns-resolvers'],
      collection_id: ['fuzzed', taxiiId],
      object_id: [indicator.id],
      status_id: [(posted.body as { id: string }).id],
      collectionName: ['fuzzed'],
      schema_id: ['fuzz-schema', 'fuzz-result'],
      fileID: [file],
      sessionID: [session],
      api_key_id: [...victims, String(reader.id)],
      task_id: [(task.body as { taskID: string }).taskID],
      cursor: [cursor],
    };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('has real values for every path parameter of the served document', () => {
    // A new endpoint is fuzzed automatically; one with a new kind of path parameter needs a real value here
    // too, or its requests would stop at the lookup.
    const names = Object.keys(document.paths).flatMap((path) => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]));
    expect([...new Set(names)].filter((name) => !known[name]?.length)).toEqual([]);
  });

  it('a key without Write, no key or a forged one: no 5xx, coded JSON errors, nothing stored changes', async () => {
    const before = await fingerprint(t);
    const headerNoise = fc.string({ unit: 'grapheme-ascii', maxLength: 60 });
    const identities = fc.oneof(
      { arbitrary: fc.constant({}), weight: 1 },
      { arbitrary: headerNoise.map((key) => ({ 'X-Api-Key': key })), weight: 1 },
      { arbitrary: headerNoise.map((token) => ({ Authorization: `Bearer ${token}` })), weight: 1 },
      { arbitrary: fc.constant({ 'X-Api-Key': readOnly.key }), weight: 5 },
      { arbitrary: fc.constant({ Authorization: `Bearer ${readOnly.token}` }), weight: 2 },
    );
    await fc.assert(
      fc.asyncProperty(requestsFor(document, known, identities), async (request) => {
        checkAnswer(request, await send(t.url, request));
      }),
      { seed: SEED, numRuns: 1200 },
    );
    expect(await fingerprint(t)).toEqual(before);
  });

  it('the admin key: no 5xx, coded JSON errors, and every refused request changes nothing', async () => {
    const identities = fc.constant({ 'X-Api-Key': t.adminKey });
    // Requests that would revoke or change the fuzzing key itself would only make the rest answer 401.
    // Writes only: reads were fuzzed above, and a write's rules lie behind the permission a reader lacks.
    const requests = requestsFor(document, known, identities, ['POST', 'PUT', 'PATCH', 'DELETE']).filter(
      (request) =>
        !/\/auth\/keys\/\{/.test(request.template) ||
        request.method === 'GET' ||
        victims.some((id) => request.path.startsWith(`/auth/keys/${id}/`) || request.path === `/auth/keys/${id}`),
    );
    let before = await fingerprint(t);
    await fc.assert(
      fc.asyncProperty(requests, async (request) => {
        const answer = await send(t.url, request);
        checkAnswer(request, answer);
        const after = await fingerprint(t);
        if (answer.status >= 300)
          expect({ request: `${request.method} ${request.path}`, after }).toEqual({ request: `${request.method} ${request.path}`, after: before });
        before = after;
      }),
      { seed: SEED + 1, numRuns: 2000 },
    );
    // 2000 requests, each followed by a fingerprint that may wait for a numbering pass (30–40 s on a busy 2-core machine).
  }, 120_000);
});
