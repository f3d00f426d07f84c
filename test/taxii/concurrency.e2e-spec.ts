import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';
import { createCollection, ROOT, TAXII } from './taxii-support.js';

type Stix = Record<string, unknown> & { id: string; type: string; modified?: string; revoked?: boolean };
interface Envelope {
  more: boolean;
  next?: string;
  objects?: Stix[];
}

const EXTENSION = 'extension-definition--4bf25bbc-6c10-46ee-9f8e-7fa8323f5b24';

/** Paging by next and polling by added_after, while two instances add, update and delete. */
describe('TAXII reads under concurrent writers on two instances', () => {
  let a: TestApp;
  let b: TestApp;
  let collection: string;

  beforeAll(async () => {
    [a, b] = await createInstances(2);
    collection = await createCollection(a, 'busy');
  });
  afterAll(() => closeInstances([a, b]));

  const taxiiGet = async (app: TestApp, query: string): Promise<{ envelope: Envelope; last?: string }> => {
    const response = await fetch(`${app.url}${ROOT}/collections/${collection}/objects/?${query}`, {
      headers: { Accept: TAXII, Authorization: `Basic ${Buffer.from(`reader:${a.adminKey}`).toString('base64')}` },
    });
    expect(response.status).toBe(200);
    return { envelope: (await response.json()) as Envelope, last: response.headers.get('x-taxii-date-added-last') ?? undefined };
  };

  /** One writer: adds (first or again: an Update), and deletes, of a few names, through one instance. */
  async function write(app: TestApp, writer: number): Promise<void> {
    for (let step = 0; step < 40; step++) {
      const name = `n${(step * 7 + writer) % 9}.example`;
      const headers = { 'X-Api-Key': a.adminKey, 'Content-Type': 'application/json' };
      const response =
        step % 4 === 3
          ? await fetch(`${app.url}/intel/collections/busy/objects?objectKeyType=DomainName&objectKey=${name}`, { method: 'DELETE', headers })
          : await fetch(`${app.url}/intel/collections/busy/objects`, {
              method: 'POST',
              headers,
              body: JSON.stringify({ type: 'DomainName', keys: [{ type: 'DomainName', value: name }], context: { writer, step } }),
            });
      expect(response.status).toBe(204);
    }
  }

  /**
   * A TAXII client reading the whole feed while it grows, in pages of `limit`: it follows `next` (sending
   * nothing else) while there is one (`followNext`), and otherwise polls with `added_after` = the last
   * `X-TAXII-Date-Added-Last`. Ends with a read that started after the writers finished and found no more.
   */
  async function readAll(app: TestApp, followNext: boolean, limit: number, running: () => boolean): Promise<Stix[]> {
    const seen: Stix[] = [];
    let query = `match[version]=all&limit=${limit}`;
    for (;;) {
      const stillRunning = running();
      const { envelope, last } = await taxiiGet(app, query);
      seen.push(...(envelope.objects ?? []));
      expect(envelope.more).toBe(envelope.next !== undefined);
      if (followNext && envelope.next) query = `next=${envelope.next}`;
      else if (envelope.objects?.length) query = `match[version]=all&limit=${limit}&added_after=${last}`;
      if (!stillRunning && !envelope.more) return seen;
    }
  }

  it('delivers each version exactly once, and the last version of each indicator matches the listing', async () => {
    let writing = true;
    const readers = Promise.all([readAll(a, true, 5, () => writing), readAll(b, false, 4, () => writing)]);
    await Promise.all([write(a, 1), write(b, 2), write(a, 3)]);
    writing = false;
    const [paged, polled] = await readers;

    // Both readers got exactly the whole feed, in order: nothing missed, nothing twice (an observable is
    // served again with each version of its indicator, so it may repeat; indicator versions may not).
    const complete = (await taxiiGet(a, 'match[version]=all&limit=10000')).envelope.objects!;
    // An indicator's `confidence` is its life's score now (docs/scoring.md), read when the version is served: a
    // version read while the writers ran may carry another one. Everything else of a version never changes.
    const unscored = (objects: Stix[]) => objects.map(({ confidence: _confidence, ...object }) => object);
    expect(unscored(paged)).toEqual(unscored(complete));
    expect(unscored(polled)).toEqual(unscored(complete));
    // Read after the writers: the admin key's objects score 50 while their life goes on, 0 once it ended.
    const liveUids = new Set(((await a.db.query(`SELECT uid::text FROM intel_object`)).rows as { uid: string }[]).map((row) => row.uid));
    for (const indicator of complete.filter((object) => object.type === 'indicator')) {
      expect([indicator.id, indicator.confidence]).toEqual([indicator.id, liveUids.has(indicator.id.replace('indicator--', '')) ? 50 : 0]);
    }
    const versions = complete.filter((object) => object.type === 'indicator').map((indicator) => `${indicator.id} ${indicator.modified}`);
    expect(new Set(versions).size).toBe(versions.length);
    // One indicator version per change record of the collection.
    const [{ count }] = (await a.db.query(`SELECT count(*)::int AS count FROM intel_change`)).rows as { count: number }[];
    expect(versions).toHaveLength(count);

    // The last version of each indicator, unrevoked, is exactly the listing.
    const last = (await taxiiGet(b, 'match[type]=indicator&limit=10000')).envelope.objects!.filter((indicator) => !indicator.revoked);
    const listed = (await (await fetch(`${a.url}/intel/collections/busy/objects?limit=1000`, { headers: { 'X-Api-Key': a.adminKey } })).json()) as {
      keys: { value: string }[];
      context: Record<string, unknown>;
    }[];
    const asListed = last.map((indicator) => ({
      keys: [{ type: 'DomainName', value: /'(.*)'/.exec(indicator.pattern as string)![1] }],
      context: (indicator.extensions as Record<string, { context: Record<string, unknown> }>)[EXTENSION].context,
    }));
    const byName = (x: { keys: { value: string }[] }, y: { keys: { value: string }[] }) => x.keys[0].value.localeCompare(y.keys[0].value);
    expect(asListed.sort(byName)).toEqual(listed.map(({ keys, context }) => ({ keys, context })).sort(byName));
  });
});
