import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { encodeCursor } from '../../src/common/pagination/cursor.js';
import { encodeChangesCursor } from '../../src/intel/changes.service.js';
import { createCollection } from '../intel/objects.helpers.js';
import { createKey } from '../support/factories.js';
import { expectBoundedPlan, nodes, startExplainingCluster, type ExplainingCluster, type PlanNode } from '../support/query-plans.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * Plan shapes of the paging and lookup statements, whatever the statistics say (deterministic: no
 * timings). The service runs on a cluster of its own with auto_explain, which writes the plan of every
 * statement the service runs, with its buffer counts, to the cluster's JSON log. Tables are loaded by SQL
 * and analysed, autovacuum is turned off for them, and a burst is added that ANALYZE never sees: exactly
 * what a follower meets right after a bulk ingest. Each page must then be served by an index walk bounded
 * by the page (no Sort, no Seq Scan of the table, buffers a small multiple of the page's own).
 */
const OLD = 60_000; // objects per collection seen by ANALYZE (two collections, interleaved)
const BURST = 20_000; // objects added after the last ANALYZE
const PAGE = 100;
/**
 * A page of PAGE rows walked in index order reads a few index pages and at most PAGE heap pages; fetched
 * row by row through another index (network search, lookup) about 4 buffers per row (index levels and the
 * heap page). A sort of the burst, or a scan of the table, reads thousands.
 */
const PAGE_BUFFERS = 3 * PAGE + 50;
/**
 * A listed object's score (src/scoring/score-sql.ts) probes, per row, the sightings summary by its key and its
 * collection's decay by primary key (2 buffers each; its sources' claims only when it has one). The first
 * score a connection computes also plans intel_score (catalog reads, once per connection): warmed first.
 */
const SCORE_BUFFERS = 4 * PAGE + 50;
const PER_ROW_BUFFERS = 6 * PAGE + 100;
/** A row updated costs its new version and an entry in each of its indexes: about 16 buffers. */
const PER_WRITE_BUFFERS = 20 * PAGE + 100;
/**
 * A task taken costs more: its new version carries the attempt (token hash, attempt log) and enters the
 * leases index per schema too (quotas count live leases by it): about 21 buffers a task (2,125-2,184 seen).
 */
const PER_TAKE_BUFFERS = 25 * PAGE + 100;

describe('query plans hold after a burst that ANALYZE has not seen', () => {
  let cluster: ExplainingCluster;
  let t: TestApp;
  let db: pg.Pool;
  let collectionId: number;

  /** GETs `path` (200 expected) as `key` and returns the plans of the statements matching `pattern` that it ran. */
  async function planOf(path: string, pattern: RegExp, body?: unknown, key = t.adminKey): Promise<PlanNode> {
    cluster.plansSince(/$^/); // skip what earlier requests logged
    const request =
      body === undefined
        ? t.http().get(path)
        : t
            .http()
            .post(path)
            .send(body as object);
    const response = await request.set('X-Api-Key', key);
    expect(response.status).toBe(200);
    const plans = await cluster.plansAfterLog(pattern);
    expect(plans.length).toBeGreaterThan(0);
    return plans[0].plan;
  }

  beforeAll(async () => {
    cluster = await startExplainingCluster('plans');
    t = await createTestApp({ DATABASE_URL: cluster.databaseUrl });
    db = t.db;
    for (const name of ['burst', 'other']) await createCollection(t, name);
    const { rows } = await db.query(`SELECT id, name FROM intel_collection WHERE name IN ('burst', 'other') ORDER BY name`);
    collectionId = Number(rows[0].id);
    const otherId = Number(rows[1].id);

    const client = await db.connect();
    try {
      await client.query(`SET auto_explain.log_min_duration = -1`); // the loading itself is not explained
      // Objects of the two collections interleaved by id; each with one IPAddress key and its change record.
      const load = async (from: number, to: number) => {
        await client.query(
          `WITH o AS (
             INSERT INTO intel_object (collection_id, type, keys, context)
             SELECT CASE WHEN g % 2 = 0 THEN $1::int ELSE $2::int END, 'IPAddress',
                    jsonb_build_array(jsonb_build_object('type', 'IPAddress', 'value', '10.' || (g / 65536 % 256) || '.' || (g / 256 % 256) || '.' || (g % 256))),
                    jsonb_build_object('n', g)
               FROM generate_series($3::int, $4::int) g
             RETURNING id, collection_id, keys, context)
           , k AS (
             INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
             SELECT collection_id, 'IPAddress', keys->0->>'value', id FROM o)
           INSERT INTO intel_change (collection_id, seq, operation, object)
           SELECT collection_id, row_number() OVER (PARTITION BY collection_id ORDER BY id)
                    + (SELECT last_seq FROM intel_collection c WHERE c.id = o.collection_id),
                  'Add', jsonb_build_object('type', 'IPAddress', 'keys', keys, 'context', context)
             FROM o`,
          [collectionId, otherId, from, to],
        );
        await client.query(
          `UPDATE intel_collection c SET last_seq = (SELECT max(seq) FROM intel_change ch WHERE ch.collection_id = c.id)
            WHERE id IN ($1, $2)`,
          [collectionId, otherId],
        );
      };
      // Tasks: OLD finished ones and BURST pending ones seen by ANALYZE, then BURST more pending ones.
      const tasks = async (count: number, state: string) =>
        client.query(
          `INSERT INTO insight_task (schema_id, object_keys, state, result, error_code, created_at)
           SELECT 'plans', '[{"type":"Domain","value":"a.example"}]', $2::text,
                  CASE WHEN $2 = 'Completed' THEN '{}'::json END, CASE WHEN $2 = 'Failed' THEN 'X' END,
                  now() - make_interval(secs => $1 - g)
             FROM generate_series(1, $1::int) g`,
          [count, state],
        );
      // Resources: OLD collections' resources under intel (2), seen by ANALYZE, then BURST more.
      const resources = (from: number, to: number) =>
        client.query(`INSERT INTO auth_resource (name, parent_id) SELECT 'r' || g, 2 FROM generate_series($1::int, $2::int) g`, [from, to]);
      await resources(1, OLD);
      await tasks(OLD / 2, 'Completed');
      await tasks(OLD / 2, 'Failed');
      await tasks(BURST, 'Pending');
      await load(1, 2 * OLD);
      for (const table of ['intel_object', 'intel_object_key', 'intel_change', 'insight_task', 'auth_resource']) {
        await client.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
        await client.query(`VACUUM ANALYZE ${table}`);
      }
      await load(2 * OLD + 1, 2 * (OLD + BURST));
      await tasks(BURST, 'Pending');
      await resources(OLD + 1, OLD + BURST);
    } finally {
      client.release();
    }
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  async function objectIdAt(fraction: number): Promise<number> {
    const { rows } = await db.query(`SELECT id FROM intel_object WHERE collection_id = $1 ORDER BY id OFFSET $2 LIMIT 1`, [
      collectionId,
      Math.floor((OLD + BURST) * fraction),
    ]);
    return Number(rows[0].id);
  }

  // Start, middle and tail of the analysed rows, and the start of the burst ANALYZE has not seen.
  const POSITIONS = [0, 0.5, 0.74, OLD / (OLD + BURST)];

  it.each(POSITIONS)('object listing at %p of the collection', async (fraction) => {
    const after = await objectIdAt(fraction);
    const cursor = encodeURIComponent(encodeCursor({ a: after }));
    const path = `/intel/collections/burst/objects?limit=${PAGE}&cursor=${cursor}`;
    await t.http().get(path).set('X-Api-Key', t.adminKey).expect(200);
    expectBoundedPlan(await planOf(path, /FROM intel_object\b/), ['intel_object'], PAGE_BUFFERS + SCORE_BUFFERS);
  });

  it.each(POSITIONS)('change feed at %p of the collection', async (fraction) => {
    const seq = Math.floor((OLD + BURST) * fraction);
    const cursor = encodeURIComponent(encodeChangesCursor(collectionId, seq));
    expectBoundedPlan(
      await planOf(`/intel/collections/burst/objects/changes?limit=${PAGE}&cursor=${cursor}`, /FROM intel_change\b/),
      ['intel_change'],
      PAGE_BUFFERS,
    );
  });

  it('numbering a page of committed changes (the sequencer pass a feed read waits for) beside 160k numbered ones', async () => {
    // Records written but not yet numbered, as writers leave them; the feed read sees them and waits for a pass.
    await db.query(
      `INSERT INTO intel_change (collection_id, operation, object)
       SELECT $1, 'Add', jsonb_build_object('type', 'IPAddress', 'n', g) FROM generate_series(1, $2::int) g`,
      [collectionId, PAGE],
    );
    const cursor = encodeURIComponent(encodeChangesCursor(collectionId, OLD + BURST));
    // The pass finds the pending records by the partial index of unnumbered ones: no scan of the feed.
    expectBoundedPlan(
      await planOf(`/intel/collections/burst/objects/changes?limit=${PAGE}&cursor=${cursor}`, /unnumbered AS MATERIALIZED/),
      ['intel_change', 'intel_collection'],
      PER_WRITE_BUFFERS,
    );
  });

  it('numbering a page of committed changes after ANALYZE saw a bulk of unnumbered ones, and after they were numbered', async () => {
    // A bulk of writes the sequencer had not numbered yet when ANALYZE ran: the statistics then expect a
    // pass to number its whole LIMIT, and a plain join of the records to number against the change table
    // was planned as a sequential scan of the whole feed, per pass.
    const pending = (count: number) =>
      db.query(
        `INSERT INTO intel_change (collection_id, operation, object)
         SELECT $1, 'Add', jsonb_build_object('type', 'IPAddress', 'n', g) FROM generate_series(1, $2::int) g`,
        [collectionId, count],
      );
    await db.query(
      `INSERT INTO intel_change (collection_id, operation, object)
       SELECT c.id, 'Add', jsonb_build_object('type', 'IPAddress', 'n', g) FROM intel_collection c, generate_series(1, $1::int) g
        WHERE c.name = 'other'`,
      [BURST],
    );
    await db.query('ANALYZE intel_change');
    await t.http().get('/intel/collections/other/objects?limit=1').set('X-Api-Key', t.adminKey).expect(200);
    // Numbered, the bulk left dead entries in the index of unnumbered records (until a vacuum). The first
    // pass steps over them once; a later one must not read their rows again (a bitmap scan of that index
    // would, in every pass: the sequencer asks for index scans, see change-sequencer.ts).
    const feedAfterLast = async () => {
      const { rows } = await db.query(`SELECT last_seq AS "lastSeq" FROM intel_collection WHERE id = $1`, [collectionId]);
      return `/intel/collections/burst/objects/changes?limit=${PAGE}&cursor=${encodeURIComponent(encodeChangesCursor(collectionId, Number(rows[0].lastSeq)))}`;
    };
    await pending(1);
    await t
      .http()
      .get(await feedAfterLast())
      .set('X-Api-Key', t.adminKey)
      .expect(200);
    await pending(PAGE);
    const plan = await planOf(await feedAfterLast(), /unnumbered AS MATERIALIZED/);
    expectBoundedPlan(plan, ['intel_change', 'intel_collection'], PER_WRITE_BUFFERS);
    // The update of the records is a plan of its own beside the statement's: bounded by the page too.
    const onChanges = nodes(plan).filter((node) => node['Relation Name'] === 'intel_change');
    const heaviest = Math.max(...onChanges.map((node) => (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0)));
    expect({ heaviest, bounded: heaviest <= PER_WRITE_BUFFERS }).toEqual({ heaviest, bounded: true });
  });

  it('taking tasks from a queue that ANALYZE saw at half its size', async () => {
    // Leases the oldest pending tasks by the queue index, whatever the statistics say of pending tasks.
    expectBoundedPlan(await planOf('/insight/task-queue/executing-tasks', /FOR UPDATE SKIP LOCKED/, { limit: PAGE }), ['insight_task'], PER_TAKE_BUFFERS);
  });

  it('listing the few top-level resources beside many children', async () => {
    expectBoundedPlan(await planOf(`/auth/resources?limit=${PAGE}`, /FROM auth_resource/), ['auth_resource'], PAGE_BUFFERS);
  });

  it.each(POSITIONS)('listing the children of intel at %p', async (fraction) => {
    const { rows } = await db.query(`SELECT id FROM auth_resource WHERE parent_id = 2 ORDER BY id OFFSET $1 LIMIT 1`, [Math.floor((OLD + BURST) * fraction)]);
    const cursor = encodeURIComponent(encodeCursor({ a: Number(rows[0].id) }));
    expectBoundedPlan(await planOf(`/auth/resources?parentID=2&limit=${PAGE}&cursor=${cursor}`, /FROM auth_resource/), ['auth_resource'], PAGE_BUFFERS);
  });

  it('lookup of keys in the burst', async () => {
    const keys = Array.from({ length: PAGE }, (_, i) => {
      const g = 2 * OLD + 2 * (i + 1);
      return { type: 'IPAddress', value: `10.${Math.floor(g / 65536) % 256}.${Math.floor(g / 256) % 256}.${g % 256}` };
    });
    // A key is looked up in each collection (two here): about 20 buffers per key.
    expectBoundedPlan(await planOf('/intel/lookup', /intel_object_key/, { keys }), ['intel_object', 'intel_object_key'], 25 * PAGE, true);
  });

  it('a batch into a collection that grew after the last ANALYZE probes the key table once per key', async () => {
    // A collection the statistics have never seen, holding keys already: the owners read of a batch
    // was estimated at one key row there and scanned the whole key table instead (bench row 10).
    await createCollection(t, 'unseen');
    await db.query(
      `WITH o AS (
         INSERT INTO intel_object (collection_id, type, keys, context)
         SELECT c.id, 'DomainName', jsonb_build_array(jsonb_build_object('type', 'DomainName', 'value', 'u' || g || '.example')), '{}'
           FROM intel_collection c, generate_series(1, $1::int) g WHERE c.name = 'unseen'
         RETURNING id, collection_id, keys)
       INSERT INTO intel_object_key (collection_id, key_type, value, object_id) SELECT collection_id, 'DomainName', keys->0->>'value', id FROM o`,
      [BURST / 4],
    );
    const items = Array.from({ length: 10 * PAGE }, (_, i) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value: `n${i}.example` }], context: {} }));
    const plan = await planOf('/intel/collections/unseen/objects/batch', /o\.id IN \(SELECT k\.object_id FROM/, items);
    expectBoundedPlan(plan, ['intel_object', 'intel_object_key'], 10 * PER_ROW_BUFFERS, true);
  });

  it('history of a key of the burst, live and removed: its lives by index, never a scan of the records', async () => {
    const g = 2 * OLD + 2 * 500;
    const value = `10.${Math.floor(g / 65536) % 256}.${Math.floor(g / 256) % 256}.${g % 256}`;
    const path = `/intel/collections/burst/objects/history?objectKeyType=IPAddress&objectKey=${value}&limit=${PAGE}`;
    // The statement finds the lives by the key row and by the GIN index over Remove records' keys, then
    // reads their records by (collection_id, object_uid, seq); the sort is of those records only.
    expectBoundedPlan(await planOf(path, /ch\.object_uid IN/), ['intel_change', 'intel_object', 'intel_object_key'], PAGE_BUFFERS, true);
    const removed = await t.http().delete(`/intel/collections/burst/objects?objectKeyType=IPAddress&objectKey=${value}`).set('X-Api-Key', t.adminKey);
    expect(removed.status).toBe(204);
    expectBoundedPlan(await planOf(path, /ch\.object_uid IN/), ['intel_change', 'intel_object', 'intel_object_key'], PAGE_BUFFERS, true);
  });

  it('the change feed and history of a key below TLP:RED: the same walks, each record judged as read, a raise finding its previous record by index', async () => {
    const { key } = await createKey(t, { permissions: [{ resource: 2, actions: ['Read', 'ReadChildren'] }], maxTLP: 'TLP:GREEN' });
    // Every other record of a page raised its object to AMBER: each reads as Remove Restricted, and looks for
    // the object's previous record by (collection_id, object_uid, seq).
    const seq = Math.floor((OLD + BURST) * 0.9);
    await db.query(
      `UPDATE intel_change SET operation = 'Update', tlp = 2, was_tlp = 0 WHERE collection_id = $1 AND seq > $2 AND seq <= $2 + $3 AND seq % 2 = 0`,
      [collectionId, seq, PAGE],
    );
    const cursor = encodeURIComponent(encodeChangesCursor(collectionId, seq));
    const feed = await planOf(`/intel/collections/burst/objects/changes?limit=${PAGE}&cursor=${cursor}`, /FROM intel_change ch\b/, undefined, key);
    expectBoundedPlan(feed, ['intel_change'], PER_ROW_BUFFERS);
    const g = 2 * OLD + 2 * 700;
    const value = `10.${Math.floor(g / 65536) % 256}.${Math.floor(g / 256) % 256}.${g % 256}`;
    const history = await planOf(
      `/intel/collections/burst/objects/history?objectKeyType=IPAddress&objectKey=${value}&limit=${PAGE}`,
      /ch\.object_uid IN/,
      undefined,
      key,
    );
    expectBoundedPlan(history, ['intel_change', 'intel_object', 'intel_object_key'], PAGE_BUFFERS, true);
  });

  it('network search within a /24 of the burst', async () => {
    const g = 2 * OLD + 2 * 1000;
    const net = `10.${Math.floor(g / 65536) % 256}.${Math.floor(g / 256) % 256}.0/24`;
    expectBoundedPlan(
      await planOf(`/intel/collections/burst/objects/network?within=${encodeURIComponent(net)}&limit=${PAGE}`, /network/),
      ['intel_object', 'intel_object_key'],
      PER_ROW_BUFFERS,
    );
  });

  it('the marking an export states (X-TLP-Max): along the index of marked objects, never a scan of the collection', async () => {
    // Last: it marks objects of the burst (a marking set by SQL records no change). Marked objects ANALYZE never saw.
    await db.query(`UPDATE intel_object SET api_tlp = 1, was_tlp = tlp WHERE collection_id = $1 AND id % 100 = 0`, [collectionId]);
    await db.query(
      `UPDATE intel_object SET api_tlp = 3, was_tlp = tlp WHERE collection_id = $1 AND id = (SELECT max(id) FROM intel_object WHERE collection_id = $1)`,
      [collectionId],
    );
    const marking = async (query: string, tlp: string) => {
      cluster.plansSince(/$^/);
      const head = await t.http().head(`/intel/collections/burst/export?${query}`).set('X-Api-Key', t.adminKey);
      expect([head.status, head.headers['x-tlp-max']]).toEqual([200, tlp]);
      const plans = await cluster.plansAfterLog(/o\.tlp > 0/);
      expect(plans.length).toBe(1);
      expectBoundedPlan(plans[0].plan, ['intel_object'], PAGE_BUFFERS);
    };
    await marking('format=ndjson&warninglists=ignore', 'TLP:AMBER+STRICT');
    await marking('format=ndjson&warninglists=ignore&maxTLP=TLP:AMBER', 'TLP:GREEN');
    await marking('format=txt&keyType=IPAddress&warninglists=ignore&maxTLP=TLP:CLEAR', 'TLP:CLEAR');
  });
});
