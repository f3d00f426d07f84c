import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_DECAY, DEFAULT_SCORING, type Scoring } from '../../src/scoring/scoring-config.js';
import { SourceRunsService } from '../../src/sources/source-runs.service.js';
import { hashedFile, md5, sha1 } from '../intel/objects.helpers.js';
import { FeedServer } from '../sources/feed-server.js';
import { expectError } from '../support/clients/intel.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, resourceIdOf } from '../taxii/taxii-support.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY = 86_400_000;
const ip = (value: string) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value }], context: {} });

interface Explanation {
  score: number;
  at: string;
  base: number;
  fp: number;
  decay: number;
  anchorAt: string;
  anchor: 'claim' | 'sighting';
  lifetimeDays: number | null;
  speed: number | null;
  threshold: number;
  belowThresholdAt: string | null;
  claims: { origin: string; source: string | null; reliability: string; credibility: number; strength: number; lastSeenAt: string }[];
  sightings: { count: number; falsePositives: number };
  override: { score: number; until: string | null; reason: string; keyID: number | null } | null;
}

/** The score the TypeScript factors give: it must be the SQL's, which the answer's `score` is. */
const tsScore = (e: Explanation) => Math.floor(e.base * e.fp * e.decay + 0.5);

/**
 * The explanation of a score and overrides (extensions §18) over HTTP on real PostgreSQL: every input read
 * where it lives, the SQL's score beside the TypeScript twin's factors, the read policy, overrides that hold
 * against decay, sightings and re-assertion until their end, audited and absent from the change feed.
 */
describe('GET/PUT/DELETE …/objects/score', () => {
  const collection = 'scored';
  let t: TestApp;
  let feed: FeedServer;
  let writer: { id: number; key: string };
  let reader: { id: number; key: string };
  let green: { id: number; key: string };

  beforeAll(async () => {
    t = await createTestApp({ SOURCE_POLL_SECONDS: '3600' });
    feed = await new FeedServer().start();
    await createCollection(t, collection);
    const resource = await resourceIdOf(t, collection);
    writer = await createKey(t, { permissions: [{ resource, actions: ['Read', 'Write'] }] });
    reader = await createKey(t, { permissions: [{ resource, actions: ['Read'] }] });
    green = await createKey(t, { permissions: [{ resource, actions: ['Read', 'Write'] }], maxTLP: 'TLP:GREEN' });
  });
  afterAll(async () => {
    await t.close();
    await feed.stop();
  });

  const keyQuery = (value: string, type = 'IPAddress') => `objectKeyType=${type}&objectKey=${encodeURIComponent(value)}`;
  const url = (value: string, type = 'IPAddress', name = collection) => `/intel/collections/${name}/objects/score?${keyQuery(value, type)}`;
  const explain = (value: string, { at, type, key = reader.key }: { at?: string; type?: string; key?: string } = {}) =>
    t
      .http()
      .get(`${url(value, type)}${at === undefined ? '' : `&at=${encodeURIComponent(at)}`}`)
      .set('X-Api-Key', key);
  const explained = async (value: string, options: { at?: string; type?: string } = {}): Promise<Explanation> => {
    const response = await explain(value, options);
    expect(response.status).toBe(200);
    const body = response.body as Explanation;
    if (body.override === null || Date.parse(body.at) >= Date.parse(body.override.until ?? '9999-12-31T00:00:00Z')) expect(body.score).toBe(tsScore(body));
    return body;
  };
  const put = (value: string, body: unknown, key = writer.key) =>
    t
      .http()
      .put(url(value))
      .set('X-Api-Key', key)
      .send(body as object);
  const remove = (value: string, key = writer.key) => t.http().delete(url(value)).set('X-Api-Key', key);
  /**
   * A native write, as the writer key (F: the api claim's reliability 50).
   */
  const add = async (form: { keys: { type: string; value: string }[]; context?: object }, query = '') => {
    await t.http().post(`/intel/collections/${collection}/objects${query}`).set('X-Api-Key', writer.key).send(form).expect(204);
  };
  const sight = async (items: object[]) => {
    const response = await t.http().post('/intel/sightings').set('X-Api-Key', writer.key).send(items);
    expect(response.status).toBe(200);
    expect((response.body as { status: string }[]).map((result) => result.status)).toEqual(items.map(() => 'Recorded'));
  };
  /** The collection's scoring as the collection forms (another part) store it: whole, defaults filled in. */
  const setScoring = ({ decay, ...rest }: { decay?: Partial<Scoring['decay']>; threshold?: number }) =>
    t.db.query(`UPDATE intel_collection SET scoring = $2::jsonb WHERE name = $1`, [
      collection,
      JSON.stringify({ ...DEFAULT_SCORING, ...rest, decay: { ...DEFAULT_DECAY, ...decay } }),
    ]);
  const scoreVersion = async () => Number((await t.db.query(`SELECT coalesce(sum(total), 0) AS v FROM score_tally`)).rows[0].v);
  const at = (ms: number) => new Date(ms).toISOString();

  it('an object the api alone claims: F/6, no sightings, the default decay of its type, anchored at its write', async () => {
    await add(ip('192.0.2.1'));
    const e = await explained('192.0.2.1');
    expect(e).toEqual({
      score: 50,
      at: expect.stringMatching(ISO_MS),
      base: 50,
      fp: 1,
      decay: expect.any(Number),
      anchorAt: expect.stringMatching(ISO_MS),
      anchor: 'claim',
      lifetimeDays: 60,
      speed: 2,
      threshold: 0,
      belowThresholdAt: null,
      claims: [{ origin: 'api', source: null, reliability: 'F', credibility: 6, strength: 50, lastSeenAt: e.anchorAt }],
      sightings: { count: 0, falsePositives: 0 },
      override: null,
    });
    // Any timestamp: before the anchor no decay, 30 days on (half the lifetime, speed 2) 1 − √0.5, past the lifetime 0.
    expect((await explained('192.0.2.1', { at: '2000-01-01T00:00:00+02:00' })).decay).toBe(1);
    const half = await explained('192.0.2.1', { at: at(Date.parse(e.anchorAt) + 30 * DAY) });
    expect(half.decay).toBeCloseTo(1 - Math.sqrt(0.5), 6);
    expect(half.score).toBe(15);
    expect(await explained('192.0.2.1', { at: at(Date.parse(e.anchorAt) + 61 * DAY) })).toMatchObject({ score: 0, decay: 0 });
  });

  it('every input read where it lives: the api claim, sources by name with their values, sightings over all keys, the collection decay', async () => {
    // Two sources list the File's MD5 (zeta first: its run creates the object); alpha also lists its SHA1, with a claim of its own (strongest counts once).
    const source = async (name: string, list: string, admiralty: { reliability: string; credibility: number }) => {
      feed.list(`/${name}.txt`, list);
      const created = await t
        .http()
        .post('/intel/sources')
        .set('X-Api-Key', t.adminKey)
        .send({ name, collection, kind: 'text', url: feed.url(`/${name}.txt`), ...admiralty });
      expect(created.status).toBe(201);
      await t.app.get(SourceRunsService).runDue();
    };
    await source('zeta', `${md5(1)}\n`, { reliability: 'B', credibility: 6 });
    await add(hashedFile(1));
    await source('alpha', `${md5(1)}\n${sha1(1)}\n`, { reliability: 'A', credibility: 4 });
    // A record's own credibility (2: 75) on alpha's SHA1 claim, as a csv source's credibilityField would give it,
    // and the api claim as a B key's write would leave it (rank 4).
    await t.db.query(
      `UPDATE sources_claim SET credibility = 75 WHERE key_type = 'SHA1Hash' AND source_id = (SELECT id FROM sources_source WHERE name = 'alpha')`,
    );
    await t.db.query(`UPDATE intel_object SET api_reliability = 4 WHERE keys @> $1::jsonb`, [JSON.stringify([{ type: 'MD5Hash', value: md5(1) }])]);
    // Sightings on both keys; the last one a minute ahead anchors the decay.
    const soon = Date.now() + 60_000;
    await sight([
      { type: 'MD5Hash', value: md5(1), count: 3, at: at(soon - 5000) },
      { type: 'SHA1Hash', value: sha1(1), kind: 'falsePositive', count: 1 },
      { type: 'SHA1Hash', value: sha1(1), count: 1, at: at(soon) },
    ]);
    await setScoring({ decay: { File: { lifetimeDays: 0.5, speed: 1 } }, threshold: 40 });

    const e = await explained(md5(1), { type: 'MD5Hash' });
    expect(e.claims).toEqual([
      { origin: 'api', source: null, reliability: 'B', credibility: 6, strength: 62.5, lastSeenAt: expect.stringMatching(ISO_MS) },
      { origin: 'source', source: 'alpha', reliability: 'A', credibility: 2, strength: 87.5, lastSeenAt: expect.stringMatching(ISO_MS) },
      { origin: 'source', source: 'zeta', reliability: 'B', credibility: 6, strength: 62.5, lastSeenAt: expect.stringMatching(ISO_MS) },
    ]);
    expect(e.base).toBeCloseTo(100 * (1 - 0.375 * 0.125 * 0.375), 10);
    expect(e.sightings).toEqual({ count: 4, falsePositives: 1 });
    expect(e.fp).toBe(5 / 6);
    expect(e).toMatchObject({ anchor: 'sighting', anchorAt: at(soon), lifetimeDays: 0.5, speed: 1, threshold: 40, decay: 1 });
    expect(e.score).toBe(Math.floor(e.base * (5 / 6) + 0.5));
    // The same object by its other key.
    expect(await explained(sha1(1), { type: 'SHA1Hash' })).toMatchObject({ score: e.score, claims: e.claims });

    // Linear decay over half a day: below 40 when base·fp·(1 − d/0.5) + 0.5 < 40, to the millisecond.
    const below = Date.parse(e.belowThresholdAt as string);
    expect(below).toBeGreaterThan(soon);
    expect(below).toBeLessThan(soon + DAY / 2);
    expect((await explained(md5(1), { type: 'MD5Hash', at: at(below) })).score).toBeLessThan(40);
    expect((await explained(md5(1), { type: 'MD5Hash', at: at(below - 1) })).score).toBeGreaterThanOrEqual(40);
    // Asked after it, it is the same moment: when it fell below.
    expect((await explained(md5(1), { type: 'MD5Hash', at: at(below + 1000) })).belowThresholdAt).toBe(at(below));

    // The SQL's score and the twin's factors agree all along the decay, to the millisecond.
    for (let step = 0; step <= 60; step += 1) await explained(md5(1), { type: 'MD5Hash', at: at(soon + Math.floor((step * DAY) / 100) + step) });

    // A type set to null never decays: no lifetime, no speed, never below.
    await setScoring({ decay: { File: null } });
    expect(await explained(md5(1), { type: 'MD5Hash', at: at(soon + 400 * DAY) })).toMatchObject({
      decay: 1,
      lifetimeDays: null,
      speed: null,
      belowThresholdAt: null,
      score: e.score,
    });
    await setScoring({});
  });

  it('refuses bad queries, unknown objects and collections, and keys that may not read or see the object', async () => {
    expectError(
      await t.http().get(`/intel/collections/${collection}/objects/score?objectKeyType=IPAddress`).set('X-Api-Key', reader.key),
      'InvalidQueryArgument',
    );
    expectError(await t.http().get(`/intel/collections/${collection}/objects/score`).set('X-Api-Key', reader.key), 'InvalidQueryArgument');
    expectError(await explain('not-an-address'), 'InvalidKeyFormat');
    for (const bad of ['yesterday', '2030-02-30T00:00:00Z', '2030-01-01', '2030-01-01T00:00:00', '9999-12-31T23:00:00-02:00'])
      expectError(await explain('192.0.2.1', { at: bad }), 'InvalidQueryArgument');
    expectError(await explain('192.0.2.99'), 'ObjectNotFound');
    expectError(
      await t
        .http()
        .get(url('192.0.2.1', 'IPAddress', 'nowhere'))
        .set('X-Api-Key', t.adminKey),
      'NotFound',
    );
    const outsider = await createKey(t, { permissions: [] });
    expectError(await explain('192.0.2.1', { key: outsider.key }), 'MissingPermissions');
    expectError(await put('192.0.2.1', { score: 1, reason: 'x' }, reader.key), 'MissingPermissions');
    expectError(await remove('192.0.2.1', reader.key), 'MissingPermissions');

    // Above the key's ceiling an object does not exist for it: neither to read nor to override.
    await add(ip('192.0.2.2'), '?tlp=TLP:AMBER');
    expect((await explain('192.0.2.2')).status).toBe(200);
    expectError(await explain('192.0.2.2', { key: green.key }), 'ObjectNotFound');
    expectError(await put('192.0.2.2', { score: 1, reason: 'x' }, green.key), 'ObjectNotFound');
    expectError(await remove('192.0.2.2', green.key), 'ObjectNotFound');
    expect((await explained('192.0.2.2')).override).toBeNull();
  });

  it('an override sets the score against decay, sightings and re-assertion; audited, bumps the version, no change record', async () => {
    await add(ip('192.0.2.10'));
    const listed = await t.http().get(`/intel/collections/${collection}/objects`).set('X-Api-Key', writer.key);
    const cursor = cursorOf(parseLinks(listed.headers.link as string).related) as string;
    const version = await scoreVersion();

    const set = await put('192.0.2.10', { score: 90, reason: 'confirmed C2 by the IR team' });
    expect(set.status).toBe(200);
    const answer = set.body as Explanation;
    expect(answer).toMatchObject({ score: 90, base: 50, override: { score: 90, until: null, reason: 'confirmed C2 by the IR team', keyID: writer.id } });
    expect(await scoreVersion()).toBe(version + 1);

    // Decay, sightings and a re-sent write leave it as set.
    expect((await explained('192.0.2.10', { at: at(Date.now() + 400 * DAY) })).score).toBe(90);
    await sight([{ type: 'IPAddress', value: '192.0.2.10', kind: 'falsePositive', count: 50 }]);
    await add({ ...ip('192.0.2.10'), context: { note: 're-asserted' } });
    expect(await explained('192.0.2.10')).toMatchObject({ score: 90, fp: 1 / 51, override: { score: 90 } });

    // The feed after the PUT holds the re-assertion only, no record of the override.
    const changes = await t
      .http()
      .get(`/intel/collections/${collection}/objects/changes?cursor=${encodeURIComponent(cursor)}`)
      .set('X-Api-Key', writer.key);
    expect(changes.status).toBe(200);
    expect((changes.body as { operation: string; object: { context: object } }[]).map((change) => [change.operation, change.object.context])).toEqual([
      ['Update', { note: 're-asserted' }],
    ]);

    // Audited (§11): the writes, by the key, on the object.
    const audit = await t.http().get(`/auth/audit?limit=1000&keyID=${writer.id}`).set('X-Api-Key', t.adminKey);
    expect(
      (audit.body as { method: string; route: string; target: string; status: number }[])
        .filter((entry) => entry.route.endsWith('/objects/score'))
        .map(({ method, target, status }) => ({ method, target, status })),
    ).toContainEqual({ method: 'PUT', target: `intel/${collection}/IPAddress:192.0.2.10`, status: 200 });

    // DELETE ends it (204, again 204), bumps the version; the computed score is back.
    const before = await scoreVersion();
    expect((await remove('192.0.2.10')).status).toBe(204);
    expect(await scoreVersion()).toBe(before + 1);
    expect((await remove('192.0.2.10')).status).toBe(204);
    expect(await explained('192.0.2.10')).toMatchObject({ override: null, score: Math.floor(50 / 51 + 0.5) });
    expectError(await remove('192.0.2.99'), 'ObjectNotFound');
    expectError(await put('192.0.2.99', { score: 1, reason: 'x' }), 'ObjectNotFound');
  });

  it('holds until `until`: the explanation at a later `at` shows the computed score, the stored override still there', async () => {
    await add(ip('192.0.2.20'));
    const until = at(Date.now() + 3_600_000);
    const set = await put('192.0.2.20', { score: 3, until, reason: 'sinkholed' });
    expect(set.status).toBe(200);
    expect((set.body as Explanation).override).toEqual({ score: 3, until, reason: 'sinkholed', keyID: writer.id });
    expect((await explained('192.0.2.20', { at: at(Date.parse(until) - 1) })).score).toBe(3);
    const after = await explained('192.0.2.20', { at: until });
    expect(after).toMatchObject({ override: { score: 3, until }, base: 50 });
    expect(after.score).toBe(tsScore(after));
    expect(after.score).toBeGreaterThan(3);
    // A threshold above the override: below it from the anchor on (an override has no start, only an end); a
    // threshold under it: from `until` on, once decayed.
    await setScoring({ threshold: 10 });
    const now = at(Date.now());
    const held = await explained('192.0.2.20', { at: now });
    expect(held.score).toBe(3);
    // The anchor shown is cut to the millisecond; the moment is counted from it rounded up, as the SQL counts.
    expect(Date.parse(held.belowThresholdAt as string) - Date.parse(held.anchorAt)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(held.belowThresholdAt as string) - Date.parse(held.anchorAt)).toBeLessThanOrEqual(1);
    await setScoring({ threshold: 2 });
    const e = await explained('192.0.2.20', { at: now });
    expect(Date.parse(e.belowThresholdAt as string)).toBeGreaterThan(Date.parse(until));
    expect((await explained('192.0.2.20', { at: e.belowThresholdAt as string })).score).toBeLessThan(2);
    await setScoring({});
  });

  it('refuses bad bodies with InvalidData naming the member, and changes nothing', async () => {
    await add(ip('192.0.2.30'));
    const version = await scoreVersion();
    const bodies: [object, string][] = [
      [{ score: 101, reason: 'r' }, 'score'],
      [{ score: -1, reason: 'r' }, 'score'],
      [{ score: 1.5, reason: 'r' }, 'score'],
      [{ score: '50', reason: 'r' }, 'score'],
      [{ reason: 'r' }, 'score'],
      [{ score: 50 }, 'reason'],
      [{ score: 50, reason: '' }, 'reason'],
      [{ score: 50, reason: 'x'.repeat(1025) }, 'reason'],
      [{ score: 50, reason: 'r', until: at(Date.now() - 1000) }, 'until'],
      [{ score: 50, reason: 'r', until: 'tomorrow' }, 'until'],
      [{ score: 50, reason: 'r', until: '2031-02-29T00:00:00Z' }, 'until'],
      [{ score: 50, reason: 'r', until: '9999-12-31T23:00:00-02:00' }, 'until'],
      [{ score: 50, reason: 'r', keyID: 1 }, 'keyID'],
    ];
    for (const [body, member] of bodies) {
      const response = await put('192.0.2.30', body);
      expectError(response, 'InvalidData');
      expect((response.body as { message: string }).message).toContain(member);
    }
    expect((await put('192.0.2.30', { score: 50, reason: 'x'.repeat(1024) })).status).toBe(200);
    expect(await scoreVersion()).toBe(version + 1);
    expect((await remove('192.0.2.30')).status).toBe(204);
  });

  it('two PUTs at once: both 200, each answering its own, the last one stays', async () => {
    await add(ip('192.0.2.40'));
    const answers = await Promise.all([10, 20, 30, 40].map((score) => put('192.0.2.40', { score, reason: `set to ${score}` })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((answer) => (answer.body as Explanation).override?.score)).toEqual([10, 20, 30, 40]);
    const final = await explained('192.0.2.40');
    expect([10, 20, 30, 40]).toContain(final.score);
    expect(final.override).toMatchObject({ score: final.score, reason: `set to ${final.score}` });
  });

  it('ends with the object: a removed and re-added object has no override', async () => {
    await add(ip('192.0.2.50'));
    expect((await put('192.0.2.50', { score: 77, reason: 'r' })).status).toBe(200);
    await t
      .http()
      .delete(`/intel/collections/${collection}/objects?${keyQuery('192.0.2.50')}`)
      .set('X-Api-Key', writer.key)
      .expect(204);
    expectError(await explain('192.0.2.50'), 'ObjectNotFound');
    await add(ip('192.0.2.50'));
    expect(await explained('192.0.2.50')).toMatchObject({ override: null, score: 50 });
  });
});
