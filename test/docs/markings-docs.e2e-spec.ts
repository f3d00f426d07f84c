import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection } from '../intel/objects.helpers.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const run = promisify(execFile);
const domain = (value: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });

/** The bash block of docs/markings.md after `<!-- marker -->`. */
async function documentedBlock(marker: string): Promise<string> {
  const text = await readFile('docs/markings.md', 'utf8');
  const block = new RegExp(`<!-- ${marker} -->\\n\`\`\`bash\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (!block) throw new Error(`docs/markings.md has no ${marker} block`);
  return block[1];
}

describe("docs/markings.md: a partner's GREEN key, then narrowed to CLEAR, as written", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await createCollection(t, 'partner-feed');
    await t.intel.batch('partner-feed', ['clear.example', 'green.example', 'amber.example', 'red.example'].map(domain)).expect(200);
    // The api claim's markings a native write's tlp would leave (GREEN 1, AMBER 2, RED 4).
    await t.db.query(
      `UPDATE intel_object o SET was_tlp = o.tlp, api_tlp = m.rank
         FROM intel_object_key k, (VALUES ('green.example', 1), ('amber.example', 2), ('red.example', 4)) AS m(value, rank)
        WHERE k.object_id = o.id AND k.value = m.value`,
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates the key with maxTLP, which reads CLEAR and GREEN; the PATCH with If-Match leaves it CLEAR', async () => {
    // A script file, run as the README's blocks are (`bash -c` may read the machine's ~/.bashrc first).
    const dir = await mkdtemp(join(tmpdir(), 'ids-markings-'));
    const script = join(dir, 'partner.sh');
    await writeFile(script, `set -euo pipefail\n${await documentedBlock('markings-partner-key')}\necho ---\n${await documentedBlock('markings-patch')}`);
    const { stdout, stderr } = await run('bash', [script], { env: { PATH: process.env.PATH, BASE: t.url, KEY: t.adminKey }, timeout: 60_000 }).finally(() =>
      rm(dir, { recursive: true, force: true }),
    );
    expect(stderr).toBe('');
    const [created, patched] = stdout.split('---\n');
    expect(created.trim().split('\n')).toEqual(['clear.example', 'green.example']);
    // The PATCH's answer (the key's view, no newline after it), then the partner's next export.
    const [view, ...after] = patched
      .replace(/^(\{.*\})/, '$1\n')
      .trim()
      .split('\n');
    expect(JSON.parse(view)).toMatchObject({ description: 'ACME CERT (partner)', maxTLP: 'TLP:CLEAR', revoked: false });
    expect(after).toEqual(['clear.example']);
    const listed = (await t.auth.keys('?limit=1000').expect(200)).body as { description: string; maxTLP: string }[];
    expect(listed.filter((key) => key.description === 'ACME CERT (partner)').map((key) => key.maxTLP)).toEqual(['TLP:CLEAR']);
  });
});
