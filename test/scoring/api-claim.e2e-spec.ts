import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { scoreSql } from '../../src/scoring/score-sql.js';
import { domain, writePaths } from '../intel/write-paths.helpers.js';
import { eventually } from '../support/eventually.js';
import { createKey } from '../support/factories.js';
import { closeInstances, createInstances, createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, resourceIdOf } from '../taxii/taxii-support.js';

/**
 * The api claim's reliability and anchor (extensions §18 "Inputs", "Score"): every native write gives the
 * claim the highest reliability among the keys that added, updated or re-sent the object; an identical re-send
 * changes no object and writes no change record, but still refreshes the claim's last time (kept to the hour)
 * and raises its reliability. Scores are read in SQL (`scoreSql`), at the claim's last time.
 */
describe('the api claim: its reliability and its anchor', () => {
  let t: TestApp;
  let taxiiId: string;
  let resource: number;
  const C = 'claimed';
  let n = 0;
  /** A domain no other test names. */
  const fresh = (label: string) => `${label}-${++n}.com`;

  beforeAll(async () => {
    t = await createTestApp();
    taxiiId = await createCollection(t, C);
    resource = await resourceIdOf(t, C);
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every native write path as a new key of `reliability` that may read and write the collection. */
  const writer = async (reliability?: string) => {
    const { key } = await createKey(t, { permissions: [{ resource, actions: ['Read', 'Write'] }], ...(reliability && { reliability }) });
    return writePaths(t, C, taxiiId, key);
  };

  /** The api claim of the object holding the domain `value`, and its score at the claim's last time. */
  const claim = async (value: string) => {
    const { rows } = await t.db.query<{ reliability: number | null; lastSeenAt: Date; firstSeenAt: Date; score: number }>(
      `SELECT (ARRAY[0, 25, 50, 50, 75, 100])[o.api_reliability + 1] AS reliability, o.api_last_seen_at AS "lastSeenAt", o.api_first_seen_at AS "firstSeenAt",
              ${scoreSql('o', 'o.api_last_seen_at')} AS score
         FROM intel_object o WHERE o.keys @> $1::jsonb`,
      [JSON.stringify([{ type: 'DomainName', value }])],
    );
    expect(rows).toHaveLength(1);
    return rows[0];
  };
  const records = async () => Number((await t.db.query('SELECT count(*) FROM intel_change')).rows[0].count);
  const scoreVersion = async () => Number((await t.db.query('SELECT coalesce(sum(total), 0) AS v FROM score_tally')).rows[0].v);
  /** The feed from the collection's current end: what a polling client sees next. */
  const feedEnd = async () => {
    const listed = await t.http().get(`/intel/collections/${C}/objects?limit=1`).set('X-Api-Key', t.adminKey).expect(200);
    const related = /<([^>]*)>;\s*rel="related"/.exec(listed.headers.link as string)![1];
    return new URL(related, 'http://x').searchParams.get('cursor')!;
  };
  const feedAfter = async (cursor: string) =>
    (await t.http().get(`/intel/collections/${C}/objects/changes?cursor=${cursor}`).set('X-Api-Key', t.adminKey).expect(200)).body as unknown[];
  /**
   * Simulates the passing of `hours`: moves the claim's last time back (no test sleeps an hour; the service
   * compares it with now(), so this is exactly what an hour later looks like to it).
   */
  const age = (value: string, hours: number) =>
    t.db.query(`UPDATE intel_object SET api_last_seen_at = api_last_seen_at - $2 * interval '1 hour' WHERE keys @> $1::jsonb`, [
      JSON.stringify([{ type: 'DomainName', value }]),
      hours,
    ]);

  it("every native write path gives the claim its key's reliability (F, 50, without one set)", async () => {
    const a = await writer('A');
    const e = await writer('E');
    const plain = await writer();
    const written: [string, number][] = [];
    for (const [paths, value] of [
      [a, 100],
      [e, 0],
      [plain, 50],
    ] as const) {
      const names = ['add', 'batch', 'import', 'bundle', 'taxii'].map((path) => fresh(path));
      await paths.add(domain(names[0]));
      await paths.batch([domain(names[1])]);
      await paths.importText(names[2]);
      await paths.importBundle(names[3], `domain-name--${crypto.randomUUID()}`);
      await paths.taxiiAdd(names[4], `indicator--${crypto.randomUUID()}`);
      written.push(...names.map((name): [string, number] => [name, value]));
    }
    for (const [value, reliability] of written) expect([value, (await claim(value)).reliability]).toEqual([value, reliability]);
  });

  it('an A key with the default credibility scores 75 (strength (100 + 50) / 2); a later write by a less reliable key keeps it', async () => {
    const a = await writer('A');
    const d = await writer('D');
    const value = fresh('scored');
    await a.add(domain(value));
    expect(await claim(value)).toMatchObject({ reliability: 100, score: 75 });

    // A real change (another context) by a D key: an Update, recorded; the claim stays as reliable as it was.
    const before = await records();
    await d.add(domain(value, { context: { seen: 'again' } }));
    expect(await records()).toBe(before + 1);
    expect(await claim(value)).toMatchObject({ reliability: 100, score: 75 });
    // And an identical re-send by it: nothing at all.
    const seen = await claim(value);
    await d.batch([domain(value, { context: { seen: 'again' } })]);
    expect(await claim(value)).toEqual(seen);
    expect(await records()).toBe(before + 1);
  });

  it('an update by a more reliable key raises the claim with the change it records', async () => {
    const e = await writer('E');
    const b = await writer('B');
    const value = fresh('raised');
    await e.batch([domain(value)]);
    // (0 + 50) / 2 = 25.
    expect(await claim(value)).toMatchObject({ reliability: 0, score: 25 });
    await b.batch([domain(value, { context: { more: true } })]);
    // (75 + 50) / 2 = 62.5, rounded half up.
    expect(await claim(value)).toMatchObject({ reliability: 75, score: 63 });
  });

  describe('an identical re-send by a more reliable key raises the claim, with no change record', () => {
    it.each<[string, 'add' | 'batch' | 'importText' | 'taxiiAdd']>([
      ['a single add', 'add'],
      ['a batch', 'batch'],
      ['an import', 'importText'],
      ['a TAXII write', 'taxiiAdd'],
    ])('through %s', async (_name, path) => {
      const d = await writer('D');
      const a = await writer('A');
      const value = fresh(path.toLowerCase());
      const stixID = `indicator--${crypto.randomUUID()}`;
      const send = (paths: ReturnType<typeof writePaths>) =>
        path === 'add'
          ? paths.add(domain(value))
          : path === 'batch'
            ? paths.batch([domain(value)])
            : path === 'importText'
              ? paths.importText(value)
              : paths.taxiiAdd(value, stixID);
      await send(d);
      const first = await claim(value);
      // (25 + 50) / 2 = 37.5, rounded half up.
      expect(first).toMatchObject({ reliability: 25, score: 38 });
      const [cursor, count, version] = [await feedEnd(), await records(), await scoreVersion()];

      await send(a);
      const raised = await claim(value);
      expect(raised).toMatchObject({ reliability: 100, score: 75, firstSeenAt: first.firstSeenAt });
      expect(raised.lastSeenAt.getTime()).toBeGreaterThan(first.lastSeenAt.getTime());
      expect(await records()).toBe(count);
      expect(await feedAfter(cursor)).toEqual([]);
      // The score moved without a change record: its version did.
      expect(await scoreVersion()).toBeGreaterThan(version);

      // The less reliable key re-sending within the hour: nothing moves, not even the version.
      const version2 = await scoreVersion();
      await send(d);
      expect(await claim(value)).toEqual(raised);
      expect(await scoreVersion()).toBe(version2);
    });
  });

  describe('the anchor, kept to the hour', () => {
    it.each<[string, 'add' | 'batch']>([
      ['a single add', 'add'],
      ['a batch', 'batch'],
    ])('through %s: a re-send within the hour writes nothing; one after the hour moves the last time to now', async (_name, path) => {
      const f = await writer();
      const value = fresh(`hour-${path}`);
      const send = () => (path === 'add' ? f.add(domain(value)) : f.batch([domain(value), domain(fresh('beside'))]));
      await send();
      const first = await claim(value);
      const [count, version] = [await records(), await scoreVersion()];

      await send();
      expect(await claim(value)).toEqual(first);
      // The batch's other item is a new object each time: one Add.
      expect(await records()).toBe(count + (path === 'batch' ? 1 : 0));
      expect(await scoreVersion()).toBe(version);

      await age(value, 1.5);
      const aged = await claim(value);
      const [count2, cursorBefore] = [await records(), await feedEnd()];
      const sentAt = Date.now();
      await send();
      const refreshed = await claim(value);
      expect(refreshed.reliability).toBe(50);
      expect(refreshed.lastSeenAt.getTime()).toBeGreaterThan(aged.lastSeenAt.getTime() + 3_600_000);
      expect(Math.abs(refreshed.lastSeenAt.getTime() - sentAt)).toBeLessThan(10_000);
      expect(await scoreVersion()).toBeGreaterThan(version);
      if (path === 'add') {
        expect(await records()).toBe(count2);
        expect(await feedAfter(cursorBefore)).toEqual([]);
      } else {
        expect(((await feedAfter(cursorBefore)) as { operation: string }[]).map((change) => change.operation)).toEqual(['Add']);
      }
    });

    it('an object decays from its refreshed anchor: the re-send after the hour lifts the score back', async () => {
      // IPAddress: 60 days, speed 2. Aged 30 days, then re-sent: the score at now is the undecayed 50 again.
      const f = await writer();
      const ip = { type: 'IPAddress', keys: [{ type: 'IPAddress', value: `198.51.100.${n++ % 250}` }], context: {} };
      await f.add(ip);
      const scoreNow = async () =>
        Number((await t.db.query(`SELECT ${scoreSql('o', 'now()')} AS s FROM intel_object o WHERE o.keys @> $1::jsonb`, [JSON.stringify(ip.keys)])).rows[0].s);
      expect(await scoreNow()).toBe(50);
      await t.db.query(`UPDATE intel_object SET api_last_seen_at = api_last_seen_at - interval '30 days' WHERE keys @> $1::jsonb`, [JSON.stringify(ip.keys)]);
      // 1 − (30/60)^(1/2) ≈ 0.29: 50 × 0.29 = 14.6.
      expect(await scoreNow()).toBe(15);
      await f.add(ip);
      expect(await scoreNow()).toBe(50);
    });
  });

  it('concurrent writers with keys of different reliabilities leave the highest', async () => {
    const letters = ['E', 'D', 'F', 'B', 'A', 'C'];
    const writers = await Promise.all(letters.map((letter) => writer(letter)));
    const resent = fresh('concurrent-resend');
    const updated = fresh('concurrent-update');
    await writers[0].add(domain(resent));
    await writers[0].add(domain(updated));
    const count = await records();
    await Promise.all(
      writers.flatMap((paths, at) => [
        // Identical re-sends (refreshes) through both paths, and real updates of another object.
        paths.add(domain(resent)),
        paths.batch([domain(resent)]),
        paths.add(domain(updated, { context: { by: letters[at] } })),
        paths.batch([domain(updated, { context: { by: `${letters[at]}-batch` } })]),
      ]),
    );
    expect(await claim(resent)).toMatchObject({ reliability: 100, score: 75 });
    expect(await claim(updated)).toMatchObject({ reliability: 100, score: 75 });
    // The re-sends recorded nothing; each update one record.
    expect(await records()).toBe(count + 2 * letters.length);
  });

  it('a PATCH of the key reliability counts on its next write', async () => {
    const { id, key } = await createKey(t, { permissions: [{ resource, actions: ['Read', 'Write'] }] });
    const paths = writePaths(t, C, taxiiId, key);
    const value = fresh('patched');
    await paths.add(domain(value));
    expect((await claim(value)).reliability).toBe(50);
    await t.auth.updateKey(id, { reliability: 'B' }).expect(200);
    await paths.add(domain(value));
    expect((await claim(value)).reliability).toBe(75);
    // Lowered again: the claim keeps the highest it had.
    await t.auth.updateKey(id, { reliability: 'E' }).expect(200);
    await paths.add(domain(value, { context: { lower: true } }));
    expect((await claim(value)).reliability).toBe(75);
  });
});

describe('the api claim across instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await createInstances(2);
  });
  afterAll(() => closeInstances([a, b]));

  it("writes on instance B with a key's reliability changed through instance A", async () => {
    const taxiiId = await createCollection(a, 'across');
    const resource = await resourceIdOf(a, 'across');
    const { id, key } = await createKey(a, { permissions: [{ resource, actions: ['Read', 'Write'] }] });
    const onB = writePaths(b, 'across', taxiiId, key);
    const reliabilityOf = async (value: string) =>
      (
        await a.db.query(`SELECT (ARRAY[0, 25, 50, 50, 75, 100])[api_reliability + 1] AS r FROM intel_object WHERE keys @> $1::jsonb`, [
          JSON.stringify([{ type: 'DomainName', value }]),
        ])
      ).rows[0].r as number;
    // B has the key cached now, with its reliability.
    await onB.add(domain('before.example'));
    expect(await reliabilityOf('before.example')).toBe(50);

    await a.auth.updateKey(id, { reliability: 'A' }).expect(200);
    let n = 0;
    await eventually(async () => {
      const value = `after-${++n}.example`;
      await onB.batch([domain(value)]);
      return (await reliabilityOf(value)) === 100;
    });
  });
});
