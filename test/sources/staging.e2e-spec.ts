import { describe, expect, it } from '@jest/globals';
import type { RunView as Run } from '../../src/sources/dto/source.dto.js';
import { freshCollections } from '../intel/objects.helpers.js';
import { eventually } from '../support/eventually.js';
import { sourceFactory } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import type { FeedServer } from './feed-server.js';
import { withSourceApp } from './sources.helpers.js';

/** Address `i` of a large list (distinct for i < 2^24). */
const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => address(from + i)).join('\n') + '\n';

/**
 * Runs with large bodies (extensions §13, memory bounded: the body is staged in PostgreSQL and applied in
 * chunks): a body far larger than a chunk applied exactly, its repeat writing nothing, a small change
 * writing exactly its changes, items naming one object replayed in body order, and native writes landing
 * while a run is applied.
 */
describe('source runs of large bodies', () => {
  let t: TestApp;
  let feed: FeedServer;

  withSourceApp((app) => ({ t, feed } = app));

  const fresh = freshCollections(() => t, 'staging');
  const { text: source } = sourceFactory(
    () => t,
    'big',
    (path) => feed.url(path),
  );
  async function start(name: string): Promise<string> {
    const started = await t.sources.start(name);
    expect(started.status).toBe(202);
    return (started.body as { runID: string }).runID;
  }
  const finished = (name: string, runID: string) =>
    eventually(
      async () => {
        const log = await t.sources.runs(name);
        const found = (log.body as Run[]).find((entry) => entry.runID === runID);
        return found?.finishedAt ? found : false;
      },
      { timeoutMs: 240_000, intervalMs: 200 },
    );
  const run = async (name: string) => finished(name, await start(name));
  const count = async (sql: string, collection: string) => (await t.db.query(sql, [collection])).rows[0].n as number;
  const objects = (c: string) => count(`SELECT count(*)::int AS n FROM intel_object o JOIN intel_collection k ON k.id = o.collection_id WHERE k.name = $1`, c);
  const records = (c: string, where = 'true') =>
    count(`SELECT count(*)::int AS n FROM intel_change r JOIN intel_collection k ON k.id = r.collection_id WHERE k.name = $1 AND ${where}`, c);
  const claims = (name: string) => count(`SELECT count(*)::int AS n FROM sources_claim c JOIN sources_source s ON s.id = c.source_id WHERE s.name = $1`, name);

  it('15,000 lines (three chunks): all added with one record each; the same body again writes nothing; 1 % replaced writes exactly those changes', async () => {
    const size = 15_000;
    const c = await fresh();
    feed.list('/large.txt', `# a large list\n${lines(0, size)}`);
    const name = await source(c, '/large.txt', { context: { feed: 'large' } });
    expect(await run(name)).toMatchObject({ outcome: 'ok', items: size, added: size, updated: 0, withdrawn: 0, rejected: 0 });
    expect([await objects(c), await records(c), await claims(name)]).toEqual([size, size, size]);

    // The same objects in another order, with other comments (no ETag: fetched and staged again).
    feed.list('/large.txt', `# regenerated\n${lines(size / 2, size)}${lines(0, size / 2)}`);
    expect(await run(name)).toMatchObject({ outcome: 'unchanged', items: size, added: 0, updated: 0, withdrawn: 0 });
    expect(await records(c)).toBe(size);

    // 1 %: 150 lines replaced by new ones.
    const replaced = size / 100;
    feed.list('/large.txt', `${lines(replaced, size)}${lines(size, size + replaced)}`);
    expect(await run(name)).toMatchObject({ outcome: 'ok', items: size, added: replaced, updated: 0, withdrawn: replaced });
    expect(await records(c)).toBe(size + 2 * replaced);
    expect(await records(c, `r.operation = 'Remove' AND r.reason = 'Withdrawn'`)).toBe(replaced);
    expect([await objects(c), await claims(name)]).toEqual([size, size]);
    const gone = await t.db.query(
      `SELECT count(*)::int AS n FROM intel_object_key ok JOIN intel_collection k ON k.id = ok.collection_id WHERE k.name = $1 AND ok.value = ANY($2::text[])`,
      [c, [address(0), address(replaced - 1)]],
    );
    expect(gone.rows[0].n).toBe(0);
  }, 600_000);

  /** Each stored object's first key value and its context, by value. */
  const contextsOf = async (collection: string) =>
    (
      await t.db.query(
        `SELECT o.keys->0->>'value' AS value, o.context FROM intel_object o JOIN intel_collection k ON k.id = o.collection_id WHERE k.name = $1 ORDER BY 1`,
        [collection],
      )
    ).rows;

  it('items naming one object are replayed in body order, even where one of them is already stored as it says', async () => {
    const c = await fresh();
    const name = await source(c, '/ordered.json', { kind: 'ndjson', valueField: 'v', contextFields: ['c'] });
    feed.list('/ordered.json', '{"v":"198.51.100.1","c":"0"}\n{"v":"198.51.100.2","c":"0"}\n');
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 2 });
    // .1 as stored, then changed, then as stored again: two updates, the last one wins; .2 stays as stored.
    feed.list('/ordered.json', '{"v":"198.51.100.1","c":"1"}\n{"v":"198.51.100.2","c":"0"}\n{"v":"198.51.100.1","c":"0"}\n');
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 0, updated: 2 });
    expect(await contextsOf(c)).toEqual([
      { value: '198.51.100.1', context: { c: '0' } },
      { value: '198.51.100.2', context: { c: '0' } },
    ]);
    expect(await records(c)).toBe(4);
  });

  it('a first run (no claims yet, no set difference): an object already stored as listed is unchanged, items naming one object replayed in body order', async () => {
    const c = await fresh();
    const key = (n: number) => ({ type: 'IPAddress', value: `198.51.100.${n}` });
    expect((await t.intel.add(c, { type: 'IPAddress', keys: [key(3)], context: { c: '0' } })).status).toBe(204);
    const name = await source(c, '/first.json', { kind: 'ndjson', valueField: 'v', contextFields: ['c'] });
    feed.list('/first.json', ['1', '3', '1', '2', '3'].map((n, i) => `{"v":"198.51.100.${n}","c":"${i === 2 ? 1 : 0}"}`).join('\n') + '\n');
    // .1 added then updated by its second line, .2 added, .3 (stored as listed, twice) unchanged.
    expect(await run(name)).toMatchObject({ outcome: 'ok', items: 5, added: 2, updated: 1, withdrawn: 0, rejected: 0 });
    expect(await contextsOf(c)).toEqual([
      { value: '198.51.100.1', context: { c: '1' } },
      { value: '198.51.100.2', context: { c: '0' } },
      { value: '198.51.100.3', context: { c: '0' } },
    ]);
    expect([await records(c), await claims(name)]).toEqual([4, 3]);
  });

  it('native writes while a large run is staged and applied: all answered, and every change record is a real change consistent with the objects', async () => {
    const size = 10_000;
    const c = await fresh();
    feed.list('/busy-large.txt', lines(0, size));
    const name = await source(c, '/busy-large.txt', { context: { feed: 'busy' } });
    const runID = await start(name);
    let stop = false;
    const statuses: number[] = [];
    // Adds with a native context of keys the body lists and of others, and deletes of listed keys, until the run ends.
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const n = (w * 7919 + i * 104_729) % (size + 500);
        const key = { type: 'IPAddress', value: address(n) };
        const response =
          i % 3 === 2 ? await t.intel.remove(c, key.type, key.value) : await t.intel.add(c, { type: 'IPAddress', keys: [key], context: { writer: w, i } });
        statuses.push(response.status);
      }
    };
    const writers = [0, 1, 2].map((w) => writer(w));
    let done: Run;
    try {
      done = await finished(name, runID);
    } finally {
      stop = true;
      await Promise.all(writers);
    }
    expect(done).toMatchObject({ outcome: 'ok', rejected: 0 });
    expect(done.added + done.updated).toBeGreaterThan(0);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 204)).toEqual([]);

    // Per key, in feed order: no record repeats the state before it, and the last one is the object as stored (or its removal).
    const history = await t.db.query(
      `SELECT r.object->'keys'->0->>'value' AS value, r.operation, r.object->'context' AS context FROM intel_change r
         JOIN intel_collection k ON k.id = r.collection_id WHERE k.name = $1 ORDER BY r.id`,
      [c],
    );
    const last = new Map<string, { operation: string; context: unknown }>();
    for (const row of history.rows as { value: string; operation: string; context: unknown }[]) {
      const before = last.get(row.value);
      if (row.operation === 'Add') expect(before === undefined || before.operation === 'Remove').toBe(true);
      else expect(before !== undefined && before.operation !== 'Remove').toBe(true);
      if (row.operation === 'Update') expect(row.context).not.toEqual(before!.context);
      last.set(row.value, row);
    }
    const stored = await t.db.query(
      `SELECT o.keys->0->>'value' AS value, o.context FROM intel_object o JOIN intel_collection k ON k.id = o.collection_id WHERE k.name = $1`,
      [c],
    );
    const current = new Map((stored.rows as { value: string; context: unknown }[]).map((row) => [row.value, row.context]));
    for (const [value, record] of last) {
      if (record.operation === 'Remove') expect(current.has(value)).toBe(false);
      else expect(current.get(value)).toEqual(record.context);
    }
    expect(current.size).toBe([...last.values()].filter((record) => record.operation !== 'Remove').length);
    // Every listed key the run did not see removed afterwards is there.
    for (let i = 0; i < size; i++) {
      const record = last.get(address(i));
      expect(record === undefined ? 'missing' : record.operation === 'Remove' ? 'removed natively' : 'present').not.toBe('missing');
    }
  }, 600_000);
});
