import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SourceRunsService } from '../../src/sources/source-runs.service.js';
import { WarninglistsRepository } from '../../src/warninglists/warninglists.repository.js';
import { createCollection } from '../intel/objects.helpers.js';
import { FeedServer } from '../sources/feed-server.js';
import { sourceFactory } from '../support/factories.js';
import { expectBoundedPlan, nodes, startExplainingCluster, type ExplainedStatement, type ExplainingCluster, type PlanNode } from '../support/query-plans.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * Plan shapes of turn 4's hot statements with realistic rows present (see query-plans.e2e-spec.ts for the
 * method: auto_explain on a cluster of its own; actual rows and buffers, never timings): the schedule's lease
 * of a due source and a run's claim settlement, the sighting upsert, the sighting summaries a lookup and the
 * sighting filters of a listing read, and the entries read of a warninglist. Each must reach its rows by
 * index, reading rows in proportion to its own work, never a scan of the big table.
 */
/**
 * The sighted collection: one IPAddress key an object, every fourth a DomainName too; two keys of three
 * sighted, from one to three sources each. About 10,000 summaries, bench row 21's scale: there a plain
 * join of an object's keys to the summaries is planned as a hash join over a scan of the table, once per
 * object (the 13 ms an object the bench found). With many more summaries the planner probes by index
 * even then, so a larger table here would not catch that plan coming back.
 */
const OBJECTS = 12_000;
const OTHER_SUMMARIES = 1_000; // summaries of keys no object holds
const RAW_SIGHTINGS = 30_000; // raw sightings and client ids
const SOURCES = 300; // sources beside the one that runs, not due
const CLAIMS_PER_SOURCE = 150;
const RUNS = 30_000; // the run log (kept 30 days)
const FEED = 2_000; // the running source's list
const ENDING = 50; // its claims missed once before, ended by the run
const BIG_LIST = 30_000; // entries of each of three big warninglists
const SMALL_LIST = 100;
const PAGE = 100;

const ip = (g: number) => `10.${Math.floor(g / 65536) % 256}.${Math.floor(g / 256) % 256}.${g % 256}`;
const feedIp = (g: number) => `172.16.${Math.floor(g / 256) % 256}.${g % 256}`;
const sqlIp = (g: string) => `'10.' || (${g} / 65536 % 256) || '.' || (${g} / 256 % 256) || '.' || (${g} % 256)`;
const sqlFeedIp = (g: string) => `'172.16.' || (${g} / 256 % 256) || '.' || (${g} % 256)`;

/** Rows a scan node read: those it returned and those its filters removed, over all its loops. */
function rowsRead(node: PlanNode & { 'Rows Removed by Filter'?: number; 'Rows Removed by Index Recheck'?: number }): number {
  return ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1);
}

/**
 * How the nodes on `table` reach it (node type and index: a bitmap scan's index is its child's), and whether
 * each loop of them read at most `maxRowsPerLoop` rows.
 */
function accessOf(plan: PlanNode, table: string, maxRowsPerLoop: number): { access: string[]; rowsPerLoopBounded: boolean } {
  const on = nodes(plan).filter((node) => node['Relation Name'] === table && /Scan/.test(node['Node Type']));
  const index = (node: PlanNode): string[] =>
    node['Index Name'] !== undefined ? [node['Index Name']] : (node.Plans ?? []).filter((child) => /Bitmap/.test(child['Node Type'])).flatMap(index);
  return {
    access: [...new Set(on.map((node) => [node['Node Type'], ...index(node)].join(' using ')))].sort(),
    rowsPerLoopBounded: on.every((node) => rowsRead(node) / Math.max(1, node['Actual Loops'] ?? 1) <= maxRowsPerLoop),
  };
}

describe('query plans of the sources, sightings and warninglists hot statements with realistic rows present', () => {
  let cluster: ExplainingCluster;
  let t: TestApp;
  let feed: FeedServer;
  const sources = sourceFactory(
    () => t,
    'plans',
    (path) => feed.url(path),
  );

  /** Runs `work` and returns the plans of the statements it ran whose text matches `pattern`. */
  async function plansOf(work: () => Promise<unknown>, pattern: RegExp): Promise<ExplainedStatement[]> {
    cluster.plansSince(/$^/); // skip what ran before
    await work();
    const plans = await cluster.plansAfterLog(pattern);
    expect(plans.length).toBeGreaterThan(0);
    return plans;
  }

  beforeAll(async () => {
    cluster = await startExplainingCluster('plans4');
    // The schedule's timer is off: the test ticks it.
    t = await createTestApp({ DATABASE_URL: cluster.databaseUrl, SOURCE_POLL_SECONDS: '3600' });
    feed = await new FeedServer().start();
    const db = t.db;
    await createCollection(t, 'sighted');
    await createCollection(t, 'fed');

    // The running source, its first run done: FEED claims and objects.
    feed.list('/hot.txt', Array.from({ length: FEED }, (_, g) => feedIp(g)).join('\n') + '\n');
    await sources.text('fed', '/hot.txt', { name: 'hot', intervalSeconds: 3600, removal: { policy: 'afterMissedRuns', runs: 2 } });
    await t.app.get(SourceRunsService).runDue();
    const client = await db.connect();
    try {
      await client.query(`SET auto_explain.log_min_duration = -1`); // the loading itself is not explained
      await client.query(`SET synchronous_commit = off`);
      // Sources beside it, not due, half on its collection; each with its claims (keys the running source
      // lists among them: claimed elsewhere) and a run log.
      await client.query(
        `INSERT INTO sources_source (name, collection, kind, enabled, interval_seconds, settings, secrets, next_run_at, last_success_at)
         SELECT 'seed-' || g, CASE WHEN g % 2 = 0 THEN 'fed' ELSE 'other-' || g END, kind, true, interval_seconds, settings, secrets,
                now() + make_interval(mins => 10 + g), now() - interval '1 hour'
           FROM sources_source s, generate_series(1, $1::int) g WHERE s.name = 'hot'`,
        [SOURCES],
      );
      await client.query(
        `INSERT INTO sources_claim (source_id, key_type, value, first_seen_at, last_seen_at)
         SELECT s.id, 'IPAddress', ${sqlFeedIp(`((s.id * ${CLAIMS_PER_SOURCE} + g) % ${2 * FEED})`)}, now() - interval '1 day', now() - interval '1 hour'
           FROM sources_source s, generate_series(1, $1::int) g WHERE s.name LIKE 'seed-%'`,
        [CLAIMS_PER_SOURCE],
      );
      await client.query(
        `INSERT INTO sources_run (id, source_id, trigger, started_at, finished_at, outcome, items)
         SELECT gen_random_uuid(), s.id, 'schedule', now() - make_interval(secs => g * 25), now() - make_interval(secs => g * 25 - 3), 'ok', 150
           FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM sources_source) s, generate_series(1, $1::int) g
          WHERE g % ($2::int + 1) = s.n`,
        [RUNS, SOURCES],
      );
      // The running source's claims missed once already (not listed by its feed): its next run ends them.
      await client.query(
        `INSERT INTO sources_claim (source_id, key_type, value, first_seen_at, last_seen_at, missed_runs)
         SELECT s.id, 'IPAddress', ${sqlFeedIp(`(${2 * FEED} + g)`)}, now() - interval '1 day', now() - interval '1 hour', 1
           FROM sources_source s, generate_series(1, $1::int) g WHERE s.name = 'hot'`,
        [ENDING],
      );

      // Objects with their keys, two thirds of them sighted (some on their second key), and summaries of
      // other keys; raw sightings and client ids as recording leaves them.
      await client.query(
        `WITH o AS (
           INSERT INTO intel_object (collection_id, type, keys, context)
           SELECT c.id, 'IPAddress',
                  CASE WHEN g % 4 = 0
                       THEN jsonb_build_array(jsonb_build_object('type', 'IPAddress', 'value', ${sqlIp('g')}),
                                              jsonb_build_object('type', 'DomainName', 'value', 'h' || g || '.example'))
                       ELSE jsonb_build_array(jsonb_build_object('type', 'IPAddress', 'value', ${sqlIp('g')})) END,
                  jsonb_build_object('n', g)
             FROM intel_collection c, generate_series(1, $1::int) g WHERE c.name = 'sighted'
           RETURNING id, collection_id, keys)
         INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
         SELECT o.collection_id, k->>'type', k->>'value', o.id FROM o, jsonb_array_elements(o.keys) k`,
        [OBJECTS],
      );
      await client.query(
        `WITH k AS (
           SELECT 'IPAddress' AS key_type, ${sqlIp('g')} AS key_value, g FROM generate_series(1, $1::int) g WHERE g % 3 <> 0
           UNION ALL SELECT 'DomainName', 'h' || g || '.example', g FROM generate_series(1, $1::int) g WHERE g % 8 = 0
           UNION ALL SELECT 'MD5Hash', md5(g::text), g FROM generate_series(1, $2::int) g
         ), s AS (
           INSERT INTO sighting_source (key_type, key_value, source)
           SELECT key_type, key_value, 'src-' || n FROM k, generate_series(1, 1 + g % 3) n
         )
         INSERT INTO sighting_summary (key_type, key_value, count, false_positives, first_at, last_at, sources)
         SELECT key_type, key_value, 1 + g % 50, g % 3, now() - make_interval(days => 1 + g % 60), now() - make_interval(hours => g % 500), 1 + g % 3 FROM k`,
        [OBJECTS, OTHER_SUMMARIES],
      );
      await client.query(
        `INSERT INTO sighting (key_type, key_value, kind, source, at, count)
         SELECT 'IPAddress', ${sqlIp(`(g % ${OBJECTS} + 1)`)}, 'sighting', 'src-1', now() - make_interval(mins => g % 10000), 1
           FROM generate_series(1, $1::int) g`,
        [RAW_SIGHTINGS],
      );
      await client.query(
        `INSERT INTO sighting_client_id (id, at) SELECT gen_random_uuid(), now() - make_interval(mins => g % 10000) FROM generate_series(1, $1::int) g`,
        [RAW_SIGHTINGS],
      );

      // Three big warninglists beside the built-in ones and the small one created below.
      await client.query(
        `WITH l AS (
           INSERT INTO warninglist (name, kind, action, entry_count) SELECT 'big-' || n, 'hostname', 'annotate', $1::int FROM generate_series(1, 3) n
           RETURNING id)
         INSERT INTO warninglist_entry (list_id, position, value) SELECT l.id, g, 'e' || g || '.l' || l.id || '.example' FROM l, generate_series(1, $1::int) g`,
        [BIG_LIST],
      );
      for (const table of [
        'sources_source',
        'sources_claim',
        'sources_run',
        'intel_object',
        'intel_object_key',
        'sighting',
        'sighting_summary',
        'sighting_source',
        'sighting_client_id',
        'warninglist',
        'warninglist_entry',
      ]) {
        await client.query(`VACUUM ANALYZE ${table}`);
      }
    } finally {
      client.release();
    }
    await t.warninglists.create({ name: 'small', kind: 'hostname', entries: Array.from({ length: SMALL_LIST }, (_, g) => `s${g}.example`) }).expect(201);
  }, 120_000);

  afterAll(async () => {
    await feed?.stop();
    await t?.close();
    await cluster?.stop();
  });

  it('a scheduled run of one source among many: its lease, claim settlement and close reach the rows by index', async () => {
    // The next list: FEED - 20 of the old keys and 20 new; the source is due.
    const next = [...Array.from({ length: FEED - 20 }, (_, g) => feedIp(g + 20)), ...Array.from({ length: 20 }, (_, g) => feedIp(FEED + ENDING + 100 + g))];
    feed.list('/hot.txt', next.join('\n') + '\n');
    await t.db.query(`UPDATE sources_source SET next_run_at = now() - interval '1 second' WHERE name = 'hot'`);
    const plans = await plansOf(() => t.app.get(SourceRunsService).runDue(), /sources_(source|claim|run)\b|source_run_(seen|missed)\b/);
    const { rows } = await t.db.query(
      `SELECT r.outcome, r.error, s.next_run_at > now() AS rescheduled,
              (SELECT count(*)::int FROM sources_claim c WHERE c.source_id = s.id) AS claims
         FROM sources_run r JOIN sources_source s ON s.id = r.source_id WHERE s.name = 'hot' ORDER BY r.started_at DESC LIMIT 1`,
    );
    // The run did what a run does: FEED claims now (the ENDING ones ended, the 20 dropped ones missed once).
    expect(rows[0]).toEqual({ outcome: 'ok', error: null, rescheduled: true, claims: FEED + 20 });

    const find = (label: string, pattern: RegExp) => {
      const found = plans.find((explained) => pattern.test(explained.query));
      if (found === undefined) throw new Error(`no plan of ${label} (${pattern}) among:\n${plans.map((p) => p.query.slice(0, 120)).join('\n')}`);
      return found.plan;
    };
    const statements = {
      // The schedule's lease (LEASE_DUE): the few sources are read whole (no index on the due time; a
      // deployment has hundreds of sources, not more), the run log only by primary key.
      lease: find('the lease of a due source', /FOR UPDATE SKIP LOCKED/),
      holdLease: find('the settlement holding its lease', /AND lease_run_id = \$2 FOR UPDATE/),
      upsertSeen: find('the claims of the listed keys', /INSERT INTO sources_claim/),
      stageMissed: find('the claims it misses', /CREATE TEMP TABLE source_run_missed/),
      countEnding: find('the removal judgement', /AS held/),
      countMiss: find('a miss counted', /SET missed_runs = c\.missed_runs \+ 1/),
      endMissed: find('the claims ended', /DELETE FROM sources_claim c WHERE/),
      finish: find('the run closed', /UPDATE sources_run SET finished_at = clock_timestamp\(\), outcome =/),
    };
    // Each statement reads the claims of this source by the primary key's prefix (source_id), and those of
    // other sources only by key (IDX_sources_claim_key, claimed elsewhere): rows read are bounded by this
    // source's claims, whatever the others hold (45,000 here).
    const bound = FEED + ENDING + 100;
    const shapes = Object.fromEntries(
      Object.entries(statements).map(([name, plan]) => {
        const claims = accessOf(plan, 'sources_claim', bound);
        const runs = accessOf(plan, 'sources_run', 1);
        return [
          name,
          {
            seqScans: nodes(plan)
              .filter((node) => node['Node Type'] === 'Seq Scan' && ['sources_claim', 'sources_run'].includes(node['Relation Name'] ?? ''))
              .map((node) => node['Relation Name']),
            claimRowsBounded: nodes(plan)
              .filter((node) => node['Relation Name'] === 'sources_claim')
              .every((node) => rowsRead(node) <= bound),
            runsByKey: runs.rowsPerLoopBounded,
            claimsAccess: claims.access.filter((access) => !/using (sources_claim_pkey|IDX_sources_claim_key)$/.test(access)),
          },
        ];
      }),
    );
    if (process.env.PLANS_DEBUG) process.stderr.write(JSON.stringify(statements, null, 1) + '\n');
    const expected = { seqScans: [], claimRowsBounded: true, runsByKey: true, claimsAccess: [] };
    expect(shapes).toEqual(Object.fromEntries(Object.keys(statements).map((name) => [name, expected])));
    // The lease and the close: a handful of buffers beside the run log's rows (the sources' own table, of
    // a few hundred rows, may be read whole: there is no index on the due time).
    expectBoundedPlan(statements.lease, ['sources_run'], 100);
    expectBoundedPlan(statements.finish, ['sources_run'], 100);
  });

  it('recording a batch of sightings upserts the summaries and sources by primary key', async () => {
    const at = new Date(Date.now() - 60_000).toISOString();
    const items = Array.from({ length: PAGE }, (_, i) => ({
      type: 'IPAddress',
      value: ip(3 * i + 1), // sighted before
      source: `src-${i % 3}`, // a new source of a third of them
      at,
      ...(i % 2 === 0 && { id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }),
    }));
    const [{ plan }] = await plansOf(() => t.sightings.record(items).expect(200), /INSERT INTO sighting_summary/);
    // About 12 buffers an item: its raw row, its client id, its source and summary rows, and their indexes.
    expectBoundedPlan(plan, ['sighting', 'sighting_summary', 'sighting_source', 'sighting_client_id'], 20 * PAGE + 100);
  });

  /** The summaries of objects (sighting-sql.ts) read per key by primary key, one row a probe. */
  const BY_KEY = {
    sighting_summary: { access: ['Index Scan using sighting_summary_pkey'], rowsPerLoopBounded: true },
    sighting_source: { access: ['Index Only Scan using sighting_source_pkey'], rowsPerLoopBounded: true },
  };
  const sightingAccess = (plan: PlanNode) => ({
    sighting_summary: accessOf(plan, 'sighting_summary', 1),
    // A key has a few sources (three at most here).
    sighting_source: accessOf(plan, 'sighting_source', 3),
  });

  it('a lookup of sighted objects reads each summary by its keys, never the summaries table', async () => {
    // Two objects of three sighted; every eighth with both its keys sighted (its sources counted from sighting_source).
    const keys = Array.from({ length: PAGE }, (_, i) => ({ type: 'IPAddress', value: ip(i + 1) }));
    const [{ plan }] = await plansOf(() => t.intel.lookup({ keys }).expect(200), /intel_object_key/);
    // A plain join over jsonb_array_elements(o.keys) hashed the keys and scanned sighting_summary once per
    // object (13 ms an object, bench row 21b); the LATERAL probe reads one row per key.
    expect(sightingAccess(plan)).toEqual(BY_KEY);
    // About 20 buffers per key found (key, object, collection) and 4 per summary probe. (How the keys are
    // found is query-plans.e2e-spec.ts's concern: at this size a scan of the key table may be cheaper.)
    expectBoundedPlan(plan, ['sighting_summary', 'sighting_source'], 40 * PAGE, true);
  });

  it('a listing filtered by sightedSince and excludeFalsePositives probes the summaries of its page only', async () => {
    const since = encodeURIComponent(new Date(Date.now() - 30 * 86_400_000).toISOString());
    const [{ plan }] = await plansOf(
      () => t.intel.get(`/intel/collections/sighted/objects?limit=${PAGE}&sightedSince=${since}&excludeFalsePositives=true`).expect(200),
      /FROM intel_object\b.*sighting_summary/s,
    );
    expect(sightingAccess(plan)).toEqual({ sighting_summary: BY_KEY.sighting_summary, sighting_source: { access: [], rowsPerLoopBounded: true } });
    // The objects filtered out before the page fills are read too: a small multiple of the page.
    expectBoundedPlan(plan, ['intel_object', 'sighting_summary'], 30 * PAGE);
  });

  it.each([
    ['a small list beside big ones', 'small', SMALL_LIST],
    ['a big list beside others', 'big-2', BIG_LIST],
  ])('the entries of %s are read by the primary key, only theirs', async (_label, name, count) => {
    const { rows } = await t.db.query(`SELECT id, entries_revision::text AS revision FROM warninglist WHERE name = $1`, [name]);
    const repository = t.app.get(WarninglistsRepository);
    let entries: string[] | undefined;
    const [{ plan }] = await plansOf(async () => {
      entries = await repository.entries(Number(rows[0].id), rows[0].revision);
    }, /FROM warninglist l/);
    expect(entries).toHaveLength(count);
    // An index scan in order or a bitmap scan of the list's range of the primary key: either reads the list's rows only.
    const { access, rowsPerLoopBounded } = accessOf(plan, 'warninglist_entry', count);
    expect({ access: access.map((way) => way.replace(/^(Index|Bitmap Heap) Scan/, 'Scan')), rowsPerLoopBounded }).toEqual({
      access: ['Scan using warninglist_entry_pkey'],
      rowsPerLoopBounded: true,
    });
    // The list's own entries, sorted into chunks (sorts of its rows only): about one heap page per 100 and
    // their index pages.
    expectBoundedPlan(plan, ['warninglist_entry'], Math.ceil(count / 20) + 50, true);
  });
});
