import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const MiB = 1024 * 1024;
/** The byte cap of these apps' pages (PAGE_MAX_BYTES; 8 MiB by default). */
const CAP = 3 * MiB;

interface Walked {
  items: unknown[];
  /** Per page: its size in bytes and how many items it held. */
  pages: { bytes: number; count: number }[];
}

/**
 * Follows `rel="next"` from `path` as the client does (the link verbatim) until a page has none, checking
 * that no page passes the cap unless it holds a single item.
 */
async function walk(t: TestApp, path: string, cap = CAP): Promise<Walked> {
  const walked: Walked = { items: [], pages: [] };
  for (let next: string | undefined = path; next !== undefined;) {
    const response = await t.http().get(next).set('X-Api-Key', t.adminKey).buffer(true);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const bytes = Number(response.headers['content-length']);
    expect(bytes).toBe(Buffer.byteLength(response.text));
    const items = JSON.parse(response.text) as unknown[];
    walked.pages.push({ bytes, count: items.length });
    if (items.length > 1) expect(bytes).toBeLessThanOrEqual(cap);
    walked.items.push(...items);
    next = parseLinks(response.headers.link as string | undefined).next;
    if (walked.pages.length > 100) throw new Error('the walk does not end');
  }
  return walked;
}

describe('pages bounded in bytes as well as in items', () => {
  let t: TestApp;
  /** Keys (MD5 values) of the objects in insertion order: twenty of about 1 MiB, one of 5 MiB among them. */
  const added: string[] = [];
  let changesBefore: string;

  beforeAll(async () => {
    t = await createTestApp({ PAGE_MAX_BYTES: String(CAP) });
    const post = (path: string, body: object) => t.http().post(path).set('X-Api-Key', t.adminKey).send(body);
    expect((await post('/intel/schemas', { schemaID: 'any', type: 'object' })).status).toBe(201);
    expect((await post('/intel/collections', { name: 'big', schemaID: 'any' })).status).toBe(201);
    const empty = await t.http().get('/intel/collections/big/objects').set('X-Api-Key', t.adminKey);
    changesBefore = cursorOf(parseLinks(empty.headers.link as string).related) as string;
    for (let i = 0; i < 21; i++) {
      const md5 = i.toString(16).padStart(32, '0');
      // The 8th is larger than the cap: it must go out alone, on a page of its own.
      const blob = String.fromCharCode(97 + i).repeat(i === 7 ? 5 * MiB : MiB - 200 * i);
      expect((await post('/intel/collections/big/objects', { type: 'File', keys: [{ type: 'MD5Hash', value: md5 }], context: { blob } })).status).toBe(204);
      added.push(md5);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const keyOf = (object: unknown) => (object as { keys: { value: string }[] }).keys[0].value;

  it('GET .../objects?limit=1000 answers short pages whose next links walk every object exactly once', async () => {
    const walked = await walk(t, '/intel/collections/big/objects?limit=1000');
    expect(walked.items.map(keyOf)).toEqual(added);
    // About two objects of 1 MiB per 3 MiB page, the large one alone.
    expect(walked.pages.length).toBeGreaterThanOrEqual(9);
    expect(walked.pages).toContainEqual({ bytes: expect.any(Number), count: 1 });
    const large = walked.pages.find((page) => page.bytes > CAP);
    expect(large).toEqual({ bytes: expect.any(Number), count: 1 });
  });

  it('GET .../objects/changes?limit=1000: every non-empty page links on, each change comes once, the end is an empty page', async () => {
    const walked = await walk(t, `/intel/collections/big/objects/changes?cursor=${changesBefore}&limit=1000`);
    const changes = walked.items as { operation: string; object: unknown }[];
    expect(changes.map((change) => change.operation)).toEqual(added.map(() => 'Add'));
    expect(changes.map((change) => keyOf(change.object))).toEqual(added);
    // wire-contract §3.2: the walk ends on an empty page, the only one without a next link.
    expect(walked.pages.at(-1)).toEqual({ bytes: 2, count: 0 });
    expect(walked.pages.slice(0, -1).every((page) => page.count > 0)).toBe(true);
  });

  it('POST /intel/lookup answers keys in order while their matches start within the cap; the rest are answered when asked again', async () => {
    type Entry = { key: { value: string }; error?: { code: string; message: string }; matches: { collection: string; object: unknown }[] };
    const found: string[] = [];
    let pending = [...added];
    let requests = 0;
    while (pending.length > 0 && requests++ < 30) {
      const response = await t
        .http()
        .post('/intel/lookup')
        .set('X-Api-Key', t.adminKey)
        .send({ keys: pending.map((value) => ({ type: 'MD5Hash', value })) });
      expect(response.status).toBe(200);
      const entries = response.body as Entry[];
      expect(entries.map((entry) => entry.key.value)).toEqual(pending);
      // Answered keys come first (the first one always, even alone past the cap), the others after them.
      const answered = entries.findIndex((entry) => entry.error !== undefined);
      const cut = answered === -1 ? entries.length : answered;
      expect(cut).toBeGreaterThanOrEqual(1);
      for (const entry of entries.slice(cut)) {
        expect(entry).toEqual({
          key: entry.key,
          error: { code: 'RequestEntityTooLarge', message: expect.stringContaining('another request') },
          matches: [],
          warnings: [],
        });
      }
      for (const entry of entries.slice(0, cut)) {
        expect(entry.matches.map((match) => [match.collection, keyOf(match.object)])).toEqual([['big', entry.key.value]]);
        found.push(entry.key.value);
      }
      // Every answered key but the last started within the cap (sizes are estimated from the stored JSON,
      // so the views' few wrapping bytes per match are allowed on top).
      expect(Buffer.byteLength(JSON.stringify(entries.slice(0, cut - 1)))).toBeLessThanOrEqual(CAP + 1024);
      pending = pending.slice(cut);
    }
    expect(found).toEqual(added);
    // About three objects of 1 MiB per answer of 3 MiB: several keys per request, never all at once.
    expect(requests).toBeGreaterThan(3);
    expect(requests).toBeLessThan(added.length);
  });

  it('bounds the schema list too (titles are free text)', async () => {
    for (const id of ['t1', 't2', 't3', 't4', 't5']) {
      const response = await t
        .http()
        .post('/insight/schemas')
        .set('X-Api-Key', t.adminKey)
        .send({ schemaID: id, title: id.repeat(MiB / 2) });
      expect(response.status).toBe(201);
    }
    const walked = await walk(t, '/insight/schemas?limit=1000');
    expect(walked.items.map((schema) => (schema as { schemaID: string }).schemaID)).toEqual(['t1', 't2', 't3', 't4', 't5']);
    expect(walked.pages.map((page) => page.count)).toEqual([2, 2, 1]);
  });
});

describe('the byte cap applies to every list', () => {
  let t: TestApp;
  const cap = 4096;
  beforeAll(async () => {
    t = await createTestApp({ PAGE_MAX_BYTES: String(cap) });
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /auth/keys with filters: short pages, filters kept in the links, every key once', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push((await createKey(t, { permissions: [], description: `bulk ${i} ${'d'.repeat(1000)}` })).id);
    const walked = await walk(t, '/auth/keys?limit=1000&revoked=false&description=bulk', cap);
    expect(walked.items.map((key) => (key as { id: number }).id)).toEqual(ids);
    expect(walked.pages.length).toBeGreaterThanOrEqual(4);
  });
});
