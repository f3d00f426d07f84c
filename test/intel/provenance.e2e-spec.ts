import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SourceRunsService } from '../../src/sources/source-runs.service.js';
import { FeedServer } from '../sources/feed-server.js';
import { expectError } from '../support/clients/intel.js';
import { eventually } from '../support/eventually.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, resourceIdOf } from '../taxii/taxii-support.js';
import { hashedFile, md5, sha1 } from './objects.helpers.js';

const INTEL = 2;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ip = (value: string, context: Record<string, unknown> = {}) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value }], context });

interface Claim {
  origin: string;
  source: string | null;
  firstSeenAt: string;
  lastSeenAt: string;
}

interface Entry {
  at: string;
  operation: string;
  keyID: number | null;
  requestID: string | null;
  via: string | null;
  source: string | null;
}

/**
 * Provenance (extensions §14) as the areas that own its parts give it: the claims of sources (§13) beside
 * the api's, the sighting summary, and the warnings of the enabled warninglists (§15); and the attribution
 * of source runs as history shows it (§14: the key that started a manual run, none for a scheduled one,
 * the run's id as the request id).
 */
describe('provenance: source claims, sightings and warnings', () => {
  const collection = 'vouched';
  let t: TestApp;
  let feed: FeedServer;
  let writer: { id: number; key: string };
  let operator: { id: number; key: string };

  beforeAll(async () => {
    // The schedule's timer is off (an hour): the test ticks it itself.
    t = await createTestApp({ SOURCE_POLL_SECONDS: '3600' });
    feed = await new FeedServer().start();
    await createCollection(t, collection);
    await createCollection(t, 'elsewhere');
    writer = await createKey(t, {
      permissions: [
        { resource: await resourceIdOf(t, collection), actions: ['Read', 'Write'] },
        { resource: await resourceIdOf(t, 'elsewhere'), actions: ['Read', 'Write'] },
      ],
    });
    // Starting a source's run needs Write on intel.
    operator = await createKey(t, { permissions: [{ resource: INTEL, actions: ['Write'] }] });
  });
  afterAll(async () => {
    await t.close();
    await feed.stop();
  });

  const keyQuery = (value: string, type = 'IPAddress') => `objectKeyType=${type}&objectKey=${encodeURIComponent(value)}`;
  const provenanceOf = (value: string, type = 'IPAddress', key = writer.key, name = collection) =>
    t
      .http()
      .get(`/intel/collections/${name}/objects/provenance?${keyQuery(value, type)}`)
      .set('X-Api-Key', key);
  const historyOf = async (value: string): Promise<Entry[]> => {
    const response = await t
      .http()
      .get(`/intel/collections/${collection}/objects/history?${keyQuery(value)}`)
      .set('X-Api-Key', writer.key);
    expect(response.status).toBe(200);
    return response.body as Entry[];
  };
  const add = (form: object, name = collection) => t.http().post(`/intel/collections/${name}/objects`).set('X-Api-Key', writer.key).send(form).expect(204);
  const createSource = async (name: string, list: string) => {
    feed.list(`/${name}.txt`, list);
    const created = await t
      .http()
      .post('/intel/sources')
      .set('X-Api-Key', t.adminKey)
      .send({ name, collection, kind: 'text', url: feed.url(`/${name}.txt`) });
    expect(created.status).toBe(201);
  };
  const runsOf = async (name: string) =>
    (await t.http().get(`/intel/sources/${name}/runs`).set('X-Api-Key', t.adminKey)).body as {
      runID: string;
      outcome: string | null;
      finishedAt: string | null;
    }[];

  let scheduledRun: string;
  let manualRun: string;

  it('an object claimed by the api and by two sources shows every claim: api first, then the sources by name', async () => {
    // alpha-feed runs by the schedule (a new source is due at once), zeta-feed by hand.
    await createSource('alpha-feed', '198.51.100.1\n');
    await t.app.get(SourceRunsService).runDue();
    [{ runID: scheduledRun }] = await runsOf('alpha-feed');
    await createSource('zeta-feed', '198.51.100.1\n198.51.100.2\n');
    const started = await t.http().post('/intel/sources/zeta-feed/runs').set('X-Api-Key', operator.key);
    expect(started.status).toBe(202);
    manualRun = (started.body as { runID: string }).runID;
    await eventually(async () => (await runsOf('zeta-feed')).some((run) => run.runID === manualRun && run.finishedAt !== null));
    expect((await runsOf('zeta-feed')).map((run) => run.outcome)).toEqual(['ok']);

    // Only sources claim 198.51.100.2; 198.51.100.1 is then written natively too.
    const onlySource = await provenanceOf('198.51.100.2');
    expect(onlySource.status).toBe(200);
    expect(onlySource.body).toEqual({
      claims: [{ origin: 'source', source: 'zeta-feed', firstSeenAt: expect.stringMatching(ISO_MS), lastSeenAt: expect.stringMatching(ISO_MS) }],
      sightings: null,
      warnings: [],
      // A source of the default reliability and credibility (F, 6) claims with strength 50.
      score: 50,
    });
    await add(ip('198.51.100.1', { note: 'seen by the SOC' }));

    const [update, sourceAdd] = await historyOf('198.51.100.1');
    const { claims } = (await provenanceOf('198.51.100.1')).body as { claims: Claim[] };
    expect(claims.map(({ origin, source }) => [origin, source])).toEqual([
      ['api', null],
      ['source', 'alpha-feed'],
      ['source', 'zeta-feed'],
    ]);
    const [api, alpha, zeta] = claims;
    // Each claim's times are those of the writes that made it: the api's of the native update, alpha's of
    // its run's add (zeta listed the object unchanged, so wrote no change; its claim began after alpha's).
    expect(api).toEqual({ origin: 'api', source: null, firstSeenAt: update.at, lastSeenAt: update.at });
    expect(alpha).toEqual({ origin: 'source', source: 'alpha-feed', firstSeenAt: sourceAdd.at, lastSeenAt: sourceAdd.at });
    expect(zeta.firstSeenAt).toBe(zeta.lastSeenAt);
    expect(Date.parse(zeta.firstSeenAt)).toBeGreaterThanOrEqual(Date.parse(alpha.firstSeenAt));
    expect(Date.parse(zeta.firstSeenAt)).toBeLessThanOrEqual(Date.parse(api.firstSeenAt));
  });

  it('history attributes source runs: the key that started a manual run, none for a scheduled one, the run id as request id', async () => {
    expect((await historyOf('198.51.100.1')).map(({ operation, keyID, requestID, via, source }) => ({ operation, keyID, requestID, via, source }))).toEqual([
      { operation: 'Update', keyID: writer.id, requestID: expect.any(String), via: 'api', source: null },
      { operation: 'Add', keyID: null, requestID: scheduledRun, via: 'source', source: 'alpha-feed' },
    ]);
    expect((await historyOf('198.51.100.2')).map(({ operation, keyID, requestID, via, source }) => ({ operation, keyID, requestID, via, source }))).toEqual([
      { operation: 'Add', keyID: operator.id, requestID: manualRun, via: 'source', source: 'zeta-feed' },
    ]);
  });

  it("a source's claim ends with the source, and counts only in its own collection", async () => {
    // The same key in another collection: the sources of `vouched` do not vouch for it there.
    await add(ip('198.51.100.1'), 'elsewhere');
    expect(
      ((await provenanceOf('198.51.100.1', 'IPAddress', writer.key, 'elsewhere')).body as { claims: Claim[] }).claims.map((claim) => claim.origin),
    ).toEqual(['api']);
    expectError(await provenanceOf('198.51.100.2', 'IPAddress', writer.key, 'elsewhere'), 'ObjectNotFound');

    expect((await t.http().delete('/intel/sources/zeta-feed').set('X-Api-Key', t.adminKey)).status).toBe(204);
    const { claims } = (await provenanceOf('198.51.100.1')).body as { claims: Claim[] };
    expect(claims.map(({ origin, source }) => [origin, source])).toEqual([
      ['api', null],
      ['source', 'alpha-feed'],
    ]);
    // zeta-feed's last claim on 198.51.100.2 ended with it: the object was withdrawn.
    expectError(await provenanceOf('198.51.100.2'), 'ObjectNotFound');
  });

  it('only for collections the key may read: claims, summary and warnings are 403 MissingPermissions elsewhere', async () => {
    const reader = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, collection), actions: ['Read'] }] });
    const outsider = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, 'elsewhere'), actions: ['Read'] }] });
    const asReader = await provenanceOf('198.51.100.1', 'IPAddress', reader.key);
    expect(asReader.status).toBe(200);
    expect((asReader.body as { claims: Claim[] }).claims).toHaveLength(2);
    expectError(await provenanceOf('198.51.100.1', 'IPAddress', outsider.key), 'MissingPermissions');
    expectError(await provenanceOf('198.51.100.1', 'IPAddress', operator.key), 'MissingPermissions');
  });

  it('the sighting summary of the object over all its keys, as lookups show it', async () => {
    await add(hashedFile(1));
    const posted = await t
      .http()
      .post('/intel/sightings')
      .set('X-Api-Key', writer.key)
      .send([
        { type: 'MD5Hash', value: md5(1), source: 'siem/a', count: 3 },
        { type: 'SHA1Hash', value: sha1(1), kind: 'falsePositive', source: 'analyst' },
      ]);
    expect(posted.body).toEqual([{ status: 'Recorded' }, { status: 'Recorded' }]);
    const lookup = await t
      .http()
      .post('/intel/lookup')
      .set('X-Api-Key', writer.key)
      .send({ keys: [{ type: 'SHA1Hash', value: sha1(1) }] });
    const summary = lookup.body[0].matches[0].sightings;
    expect(summary).toMatchObject({ count: 3, falsePositives: 1, sources: 2 });
    expect((await provenanceOf(md5(1), 'MD5Hash')).body.sightings).toEqual(summary);
    expect((await provenanceOf(sha1(1), 'SHA1Hash')).body.sightings).toEqual(summary);
  });

  it('warnings: every enabled list each key of the object is on, in key order, acting at the next request', async () => {
    await add(ip('8.8.8.8'));
    expect((await provenanceOf('8.8.8.8')).body.warnings).toEqual([
      { list: 'public-dns-resolvers', entry: '8.8.8.8/32', action: 'excludeFromExport', match: 'contained' },
    ]);
    const lists = (path = '') => `/intel/warninglists${path}`;
    expect(
      (
        await t
          .http()
          .post(lists())
          .set('X-Api-Key', t.adminKey)
          .send({ name: 'known-files', kind: 'values', entries: [sha1(1), md5(1)] })
      ).status,
    ).toBe(201);
    const expected = [
      { list: 'known-files', entry: md5(1), action: 'annotate', match: 'exact' },
      { list: 'known-files', entry: sha1(1), action: 'annotate', match: 'exact' },
    ];
    // Asked by either key, the object's warnings are those of all its keys.
    expect((await provenanceOf(sha1(1).toUpperCase(), 'SHA1Hash')).body.warnings).toEqual(expected);
    expect((await provenanceOf(md5(1), 'MD5Hash')).body.warnings).toEqual(expected);

    const view = await t.http().get(lists('/known-files')).set('X-Api-Key', t.adminKey);
    const patched = await t
      .http()
      .patch(lists('/known-files'))
      .set('X-Api-Key', t.adminKey)
      .set('If-Match', view.headers.etag as string)
      .send({ enabled: false });
    expect(patched.status).toBeLessThan(300);
    expect((await provenanceOf(md5(1), 'MD5Hash')).body.warnings).toEqual([]);
  });
});
