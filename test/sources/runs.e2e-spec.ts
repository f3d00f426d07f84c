import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { RunView as Run } from '../../src/sources/dto/source.dto.js';
import { freshCollections, listAll } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { eventually } from '../support/eventually.js';
import { sourceFactory } from '../support/factories.js';
import { freePort } from '../support/processes.js';
import { sampleOf, scrape } from '../support/prometheus.js';
import type { TestApp } from '../support/test-app.js';
import type { FeedServer } from './feed-server.js';
import { runNow, withSourceApp } from './sources.helpers.js';

const ips = (...n: number[]) => n.map((i) => `198.51.100.${i}`).join('\n') + '\n';

/** Runs of sources (extensions §13): kinds, modes, removal policies, the suspect guard, conditional GET, failures. */
describe('source runs', () => {
  let t: TestApp;
  let feed: FeedServer;
  let metricsPort: number;

  beforeAll(async () => {
    metricsPort = await freePort();
  });
  withSourceApp(
    (app) => ({ t, feed } = app),
    () => ({
      METRICS_PORT: String(metricsPort),
      SOURCE_DENY_NETWORKS: '169.254.0.0/16,127.0.0.1/32,::1/128',
      SOURCE_MAX_BYTES: '100000',
    }),
  );

  const fresh = freshCollections(() => t, 'runs');
  // The feed server is reached at 127.0.0.2: 127.0.0.1 (what `localhost` names) is denied in this app.
  const at = (path: string) => feed.url(path, '127.0.0.2');
  const { text: source } = sourceFactory(() => t, 'src', at);
  const run = (name: string) => runNow(t, name);
  const keysOf = async (collection: string) => (await listAll(t, collection, 100)).objects.map((object) => object.keys[0].value).sort();
  const records = async (collection: string) =>
    (
      await t.db.query(
        `SELECT c.operation, c.reason, c.via, c.source, c.object->'keys'->0->>'value' AS value FROM intel_change c
           JOIN intel_collection k ON k.id = c.collection_id WHERE k.name = $1 ORDER BY c.id`,
        [collection],
      )
    ).rows as { operation: string; reason: string | null; via: string; source: string; value: string }[];

  it('text snapshot: adds what the list names with the source context, then the same body is unchanged and writes no change record', async () => {
    const c = await fresh();
    feed.list('/a.txt', `# a comment\n${ips(1, 2)}198.51.100[.]3 ; inline comment\n\nnot an indicator\n`);
    const name = await source(c, '/a.txt', { context: { feed: 'a' } });
    const first = await run(name);
    expect(first).toMatchObject({ outcome: 'ok', httpStatus: 200, items: 4, added: 3, updated: 0, withdrawn: 0, rejected: 1 });
    expect(first.rejections).toEqual([{ line: 6, value: 'not an indicator', reason: expect.any(String) }]);
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3']);
    const written = await records(c);
    expect(written).toHaveLength(3);
    for (const record of written) expect(record).toMatchObject({ operation: 'Add', via: 'source', source: name });
    // Other comment lines, order and a duplicate: the same objects.
    feed.list('/a.txt', `; other comment\n198.51.100.3\n${ips(2, 1, 2)}`);
    expect(await run(name)).toMatchObject({ outcome: 'unchanged', added: 0, updated: 0, withdrawn: 0 });
    expect(await records(c)).toHaveLength(3);
    const claims = await t.sources.claims(name);
    expect(claims.body).toHaveLength(3);
    expect(claims.body[0]).toMatchObject({ type: 'IPAddress', value: '198.51.100.1', missedRuns: 0 });
    expect((await t.sources.source(name)).body).toMatchObject({ state: 'ok', claims: 3 });
  });

  it('conditional GET: a stored ETag is sent, a 304 is notModified and writes nothing', async () => {
    const c = await fresh();
    feed.list('/etag.txt', ips(1, 2), '"v1"');
    const name = await source(c, '/etag.txt');
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 2 });
    expect(await run(name)).toMatchObject({ outcome: 'notModified', httpStatus: 304, added: 0 });
    expect(feed.requests.filter((r) => r.path === '/etag.txt').map((r) => r.headers['if-none-match'])).toEqual([undefined, '"v1"']);
    expect(await records(c)).toHaveLength(2);
  });

  it('removal policy remove: an indicator the list drops is withdrawn (Remove, reason Withdrawn), unless a native write claims it', async () => {
    const c = await fresh();
    feed.list('/rm.txt', ips(1, 2, 3, 4));
    const name = await source(c, '/rm.txt');
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 4 });
    // 198.51.100.4 is also written natively: the api claim keeps it.
    expect((await t.intel.add(c, { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '198.51.100.4' }], context: { size: 1 } })).status).toBe(204);
    feed.list('/rm.txt', ips(1, 2));
    expect(await run(name)).toMatchObject({ outcome: 'ok', withdrawn: 1 });
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.4']);
    const removes = (await records(c)).filter((record) => record.operation === 'Remove');
    expect(removes).toEqual([{ operation: 'Remove', reason: 'Withdrawn', via: 'source', source: name, value: '198.51.100.3' }]);
    const claims = await t.sources.claims(name);
    expect(claims.body.map((claim: { value: string }) => claim.value)).toEqual(['198.51.100.1', '198.51.100.2']);
  });

  it('an object two sources claim stays until the last claim ends; deleting a source ends its claims before the answer', async () => {
    const c = await fresh();
    feed.list('/one.txt', ips(1, 2));
    feed.list('/two.txt', ips(2));
    const one = await source(c, '/one.txt');
    const two = await source(c, '/two.txt');
    await run(one);
    await run(two);
    feed.list('/one.txt', ips(1));
    expect(await run(one)).toMatchObject({ withdrawn: 0 });
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2']);
    expect((await t.sources.remove(two)).status).toBe(204);
    expect(await keysOf(c)).toEqual(['198.51.100.1']);
    expect((await records(c)).filter((record) => record.operation === 'Remove')).toEqual([
      { operation: 'Remove', reason: 'Withdrawn', via: 'source', source: two, value: '198.51.100.2' },
    ]);
    // The deletion's withdrawals carry the request's id and key.
    const [origin] = (await t.db.query(`SELECT key_id, request_id FROM intel_change WHERE reason = 'Withdrawn' AND source = $1`, [two])).rows;
    expect(origin.request_id).toEqual(expect.any(String));
    expect(origin.key_id).toEqual(expect.any(Number));
  });

  it('removal policies afterMissedRuns (after that many runs without it) and never', async () => {
    const c = await fresh();
    feed.list('/grace.txt', ips(1, 2, 3, 4));
    feed.list('/never.txt', ips(5, 6));
    const grace = await source(c, '/grace.txt', { removal: { policy: 'afterMissedRuns', runs: 2 } });
    const never = await source(c, '/never.txt', { removal: { policy: 'never' }, maxRemovalRatio: 1 });
    await run(grace);
    await run(never);
    feed.list('/grace.txt', ips(1, 2, 3));
    feed.list('/never.txt', ips(5));
    expect(await run(grace)).toMatchObject({ outcome: 'ok', withdrawn: 0 });
    expect(await run(never)).toMatchObject({ outcome: 'ok', withdrawn: 0 });
    const claims = await t.sources.claims(grace);
    expect(claims.body.find((claim: { value: string }) => claim.value === '198.51.100.4')).toMatchObject({ missedRuns: 1 });
    // The same body again: unchanged, but the grace of 198.51.100.4 ends with this run.
    expect(await run(grace)).toMatchObject({ outcome: 'unchanged', withdrawn: 1 });
    expect(await run(never)).toMatchObject({ withdrawn: 0 });
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.5', '198.51.100.6']);
  });

  it('suspect: a run that would end more than maxRemovalRatio of the claims, or parses fewer than minItems, adds but ends nothing', async () => {
    const c = await fresh();
    feed.list('/suspect.txt', ips(1, 2, 3, 4));
    const name = await source(c, '/suspect.txt');
    await run(name);
    feed.list('/suspect.txt', ips(1, 9));
    expect(await run(name)).toMatchObject({ outcome: 'suspect', added: 1, withdrawn: 0 });
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4', '198.51.100.9']);
    feed.list('/suspect.txt', '# nothing today\n');
    expect(await run(name)).toMatchObject({ outcome: 'suspect', withdrawn: 0 });
    expect((await t.sources.source(name)).body.claims).toBe(5);
  });

  it('csv and ndjson kinds, and a gzip body', async () => {
    const c = await fresh();
    const csv = '# generated today\n# "id", "ioc_value", "threat"\n"1", "evil.example.com", "botnet_cc"\n"2", "198.51.100.7", "payload"\n';
    feed.routes.set('/feed.csv', { body: gzipSync(csv), headers: { 'content-encoding': 'gzip' } });
    const fromCsv = await source(c, '/feed.csv', { kind: 'csv', skipLines: 1, valueColumn: 'ioc_value', contextColumns: ['threat'] });
    expect(await run(fromCsv)).toMatchObject({ outcome: 'ok', added: 2, rejected: 0 });
    feed.list('/drop.json', '{"cidr":"203.0.113.0/24","sblid":"SBL1"}\n{"type":"metadata","timestamp":1}\n');
    const fromJson = await source(c, '/drop.json', { kind: 'ndjson', valueField: 'cidr', contextFields: ['sblid'] });
    expect(await run(fromJson)).toMatchObject({ outcome: 'ok', added: 1, rejected: 0 });
    const { objects } = await listAll(t, c, 100);
    const contexts = Object.fromEntries(objects.map((object) => [object.keys[0].value, object.context]));
    expect(contexts).toEqual({ 'evil.example.com': { threat: 'botnet_cc' }, '198.51.100.7': { threat: 'payload' }, '203.0.113.0/24': { sblid: 'SBL1' } });
    // A CSV without the named column fails the run and changes nothing.
    feed.routes.set('/feed.csv', { body: '"id","other"\n"1","x.example.com"\n' });
    expect(await run(fromCsv)).toMatchObject({ outcome: 'failed', error: { code: 'MissingColumn' } });
    expect(objects).toHaveLength(3);
    expect((await listAll(t, c, 100)).objects).toHaveLength(3);
  });

  it('failures change nothing: 500, 429 with Retry-After, a body over SOURCE_MAX_BYTES, a truncated body; the source is failing', async () => {
    const c = await fresh();
    feed.list('/flaky.txt', ips(1));
    const name = await source(c, '/flaky.txt');
    await run(name);
    feed.routes.set('/flaky.txt', { status: 500, body: '<html>oops</html>' });
    expect(await run(name)).toMatchObject({ outcome: 'failed', httpStatus: 500, error: { code: 'HttpStatus' } });
    feed.routes.set('/flaky.txt', { status: 429, body: 'slow down', headers: { 'retry-after': '7200' } });
    expect(await run(name)).toMatchObject({ outcome: 'failed', httpStatus: 429 });
    feed.routes.set('/flaky.txt', { body: '198.51.100.2\n'.repeat(10_000) });
    expect(await run(name)).toMatchObject({ outcome: 'failed', error: { code: 'TooLarge' } });
    feed.routes.set('/flaky.txt', (_request, response) => {
      response.writeHead(200, { 'content-length': '1000' });
      response.write('198.51.100.3\n');
      setTimeout(() => response.destroy(), 50);
    });
    expect(await run(name)).toMatchObject({ outcome: 'failed', error: { code: 'TruncatedBody' } });
    expect(await keysOf(c)).toEqual(['198.51.100.1']);
    const view = (await t.sources.source(name)).body;
    expect(view).toMatchObject({ state: 'failing', consecutiveFailures: 4, claims: 1 });
  });

  it('the address policy: a redirect to a name that resolves to a denied address fails the run, and no request reaches it', async () => {
    const c = await fresh();
    feed.list('/target.txt', ips(1));
    feed.routes.set('/hop', (_request, response) => void response.writeHead(302, { location: feed.url('/target.txt', 'localhost') }).end());
    const name = await source(c, '/hop');
    const failed = await run(name);
    expect(failed).toMatchObject({ outcome: 'failed', error: { code: 'AddressRefused' } });
    expect(failed.error!.message).toMatch(/SOURCE_DENY_NETWORKS/);
    expect(feed.hits('/target.txt')).toBe(0);
    // A redirect to an allowed address is followed.
    feed.routes.set('/hop', (_request, response) => void response.writeHead(301, { location: at('/target.txt') }).end());
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 1 });
  });

  it('test: answers what a run would do and writes nothing, stores no validator; 409 RunInProgress while a run holds the source', async () => {
    const c = await fresh();
    feed.list('/dry.txt', ips(1, 2), '"d1"');
    const name = await source(c, '/dry.txt');
    const dry = await t.sources.dryRun(name);
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ httpStatus: 200, items: 2, added: 2, updated: 0, unchanged: 0, withdrawn: 0, rejected: 0, suspect: false, error: null });
    expect(await keysOf(c)).toEqual([]);
    expect(await records(c)).toEqual([]);
    expect((await t.db.query(`SELECT etag, body_digest FROM sources_source WHERE name = $1`, [name])).rows[0]).toEqual({ etag: null, body_digest: null });
    expect((await t.sources.runs(name)).body).toEqual([]);

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    feed.routes.set('/dry.txt', (_request, response) => {
      response.writeHead(200);
      response.write('198.51.100.1\n');
      void held.then(() => response.end());
    });
    const started = await t.sources.start(name);
    expect(started.status).toBe(202);
    expectError(await t.sources.start(name), 'RunInProgress');
    release();
    await eventually(async () => {
      const log = await t.sources.runs(name);
      return log.body[0]?.outcome === 'ok';
    });
    expectError(await t.sources.start('nothing'), 'NotFound');
  });

  it('native writes while a run fetches: both land, the run updates an object written meanwhile, the api claim keeps it', async () => {
    const c = await fresh();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    feed.routes.set('/busy.txt', (_request, response) => {
      response.writeHead(200);
      response.write(ips(1));
      void held.then(() => response.end(ips(2)));
    });
    // maxRemovalRatio 1: its last run below ends its only claim.
    const name = await source(c, '/busy.txt', { context: { feed: 'busy' }, maxRemovalRatio: 1 });
    const started = await t.sources.start(name);
    expect(started.status).toBe(202);
    await eventually(() => feed.hits('/busy.txt') === 1);
    const native = (n: number) => t.intel.add(c, { type: 'IPAddress', keys: [{ type: 'IPAddress', value: `198.51.100.${n}` }], context: { size: n } });
    const writes = await Promise.all([native(2), native(8), native(9)]);
    expect(writes.map((response) => response.status)).toEqual([204, 204, 204]);
    release();
    const done = await eventually(async () => {
      const log = await t.sources.runs(name);
      return log.body[0]?.finishedAt ? (log.body[0] as Run) : false;
    });
    expect(done).toMatchObject({ outcome: 'ok', added: 1, updated: 1 });
    const { objects } = await listAll(t, c, 100);
    expect(Object.fromEntries(objects.map((object) => [object.keys[0].value, object.context]))).toEqual({
      '198.51.100.1': { feed: 'busy' },
      '198.51.100.2': { feed: 'busy' },
      '198.51.100.8': { size: 8 },
      '198.51.100.9': { size: 9 },
    });
    // The feed drops both of its objects: 198.51.100.2 was natively added (api claim) and stays.
    feed.list('/busy.txt', ips(1));
    await run(name);
    feed.list('/busy.txt', ips(3, 4));
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 2, withdrawn: 1 });
    expect(await keysOf(c)).toEqual(['198.51.100.2', '198.51.100.3', '198.51.100.4', '198.51.100.8', '198.51.100.9']);
  });

  it('metrics: runs by source and outcome, the last success and the claims of each source', async () => {
    const c = await fresh();
    feed.list('/metered.txt', ips(1, 2));
    const name = await source(c, '/metered.txt');
    await run(name);
    await run(name);
    const lastSuccess = Date.parse((await t.sources.source(name)).body.lastSuccessAt) / 1000;
    // The counter moves right after the run's row is closed: scrape until it has.
    await eventually(async () => {
      const { families } = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(sampleOf(families, 'ids_source_runs_total', { source: name, outcome: 'ok' })).toBe(1);
      expect(sampleOf(families, 'ids_source_runs_total', { source: name, outcome: 'unchanged' })).toBe(1);
      expect(sampleOf(families, 'ids_source_claims', { source: name })).toBe(2);
      expect(sampleOf(families, 'ids_source_last_success_timestamp_seconds', { source: name })).toBeCloseTo(lastSuccess, 0);
    });
  });
});
