import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection, md5, sha1 } from '../intel/objects.helpers.js';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';

const OBJECTS = 40;
const CLIENTS = 8;
const ROUNDS = 6;
const ITEMS = 400;
const BASE = Date.now() - 3_600_000;

interface Item {
  type: string;
  value: string;
  kind: 'sighting' | 'falsePositive';
  source: string;
  at: string;
  count: number;
  id?: string;
}

/**
 * Item j of round r of client c. Even items carry an id and are the same for every client (so each id
 * arrives up to eight times at once, on both instances); odd ones have no id and differ per client.
 */
function itemOf(c: number, r: number, j: number): { item: Item; n: number } {
  const shared = j % 2 === 0;
  const n = ((shared ? r * 13 + j : c * 7 + r * 13 + j) % OBJECTS) + 1;
  const item: Item = {
    type: j % 4 < 2 ? 'MD5Hash' : 'SHA1Hash',
    value: j % 4 < 2 ? md5(n) : sha1(n),
    kind: !shared && j % 7 === 1 ? 'falsePositive' : 'sighting',
    source: shared ? 'shared' : `s-${c % 3}`,
    at: new Date(BASE - (((shared ? 0 : c) + r * 3 + j) % 50) * 60_000).toISOString(),
    count: (j % 5) + 1,
  };
  if (shared) item.id = `00000000-0000-4000-8000-${(r * 1000 + j).toString(16).padStart(12, '0')}`;
  return { item, n };
}

describe('sightings from 8 concurrent clients on two instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await createInstances(2);
    await createCollection(a, 'watched');
    const objects = Array.from({ length: OBJECTS }, (_, i) => ({
      type: 'File',
      keys: [
        { type: 'MD5Hash', value: md5(i + 1) },
        { type: 'SHA1Hash', value: sha1(i + 1) },
      ],
      context: {},
    }));
    const added = await a.intel.batch('watched', objects);
    expect(added.body.added).toBe(OBJECTS);
  });
  afterAll(() => closeInstances([a, b]));

  it('counts every item exactly once (ids once across clients and instances) and every source once per object', async () => {
    const statuses = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const app = c % 2 === 0 ? a : b;
        const seen: string[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          const items = Array.from({ length: ITEMS }, (_, j) => itemOf(c, r, j).item);
          const response = await fetch(`${app.url}/intel/sightings`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-Api-Key': app.adminKey },
            body: JSON.stringify(items),
          });
          expect(response.status).toBe(200);
          const results = (await response.json()) as { status: string }[];
          results.forEach((result, j) => seen.push(`${result.status} ${items[j].id ?? ''}`));
        }
        return seen;
      }),
    );

    // Each id was recorded by exactly one of the clients; every item without an id was recorded.
    const recordedIds = statuses
      .flat()
      .filter((s) => s.startsWith('Recorded ') && s.length > 'Recorded '.length)
      .map((s) => s.slice(9));
    expect(new Set(recordedIds).size).toBe(recordedIds.length);
    expect(recordedIds.length).toBe((ROUNDS * ITEMS) / 2);
    expect(statuses.flat().filter((s) => s === 'Recorded ').length).toBe((CLIENTS * ROUNDS * ITEMS) / 2);
    expect(statuses.flat().filter((s) => s.startsWith('Duplicate')).length).toBe(((CLIENTS - 1) * ROUNDS * ITEMS) / 2);

    // The summaries expected from the items, ids counted once.
    const expected = new Map<number, { count: number; falsePositives: number; first: number; last: number; sources: Set<string> }>();
    const ids = new Set<string>();
    for (let c = 0; c < CLIENTS; c++) {
      for (let r = 0; r < ROUNDS; r++) {
        for (let j = 0; j < ITEMS; j++) {
          const { item, n } = itemOf(c, r, j);
          if (item.id !== undefined) {
            if (ids.has(item.id)) continue;
            ids.add(item.id);
          }
          const sum = expected.get(n) ?? { count: 0, falsePositives: 0, first: Infinity, last: -Infinity, sources: new Set<string>() };
          if (item.kind === 'sighting') {
            sum.count += item.count;
            sum.first = Math.min(sum.first, Date.parse(item.at));
            sum.last = Math.max(sum.last, Date.parse(item.at));
          } else {
            sum.falsePositives += item.count;
          }
          sum.sources.add(item.source);
          expected.set(n, sum);
        }
      }
    }
    const keys = Array.from({ length: OBJECTS }, (_, i) => ({ type: 'MD5Hash', value: md5(i + 1) }));
    const lookup = await b.intel.lookup({ keys });
    expect(lookup.status).toBe(200);
    const answered = (lookup.body as { matches: { sightings: unknown }[] }[]).map((entry) => entry.matches[0].sightings);
    expect(answered).toEqual(
      keys.map((_, i) => {
        const sum = expected.get(i + 1)!;
        return {
          count: sum.count,
          falsePositives: sum.falsePositives,
          firstAt: new Date(sum.first).toISOString(),
          lastAt: new Date(sum.last).toISOString(),
          sources: sum.sources.size,
        };
      }),
    );
  });
});
