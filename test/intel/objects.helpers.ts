import { expect } from '@jest/globals';
import { cursorOf, parseLinks } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';

export interface ObjectViewBody {
  type: string;
  keys: { type: string; value: string }[];
  context: Record<string, unknown>;
  /** Its marking, as every view shows it (forms sent leave it out). */
  tlp?: string;
  /** Its score, in listings and lookups only (extensions §18). */
  score?: number;
}

export interface ChangeBody {
  operation: 'Add' | 'Update' | 'Remove';
  object: ObjectViewBody;
  reason?: string;
}

/** A schema over the whole object: context.size, when present, is an integer ≥ 0. */
export function sizeSchema(schemaID: string) {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    schemaID,
    type: 'object',
    properties: { context: { type: 'object', properties: { size: { type: 'integer', minimum: 0 } } } },
  };
}

/** Registers a schema (if new) and a collection on it, through the API. */
export async function createCollection(t: TestApp, name: string, schemaID = 'size-schema'): Promise<void> {
  const schema = await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send(sizeSchema(schemaID));
  expect([201, 409]).toContain(schema.status);
  const collection = await t.http().post('/intel/collections').set('X-Api-Key', t.adminKey).send({ name, schemaID });
  expect(collection.status).toBe(201);
}

/** A new collection per call (`<prefix>-1`, `<prefix>-2`, …) on the app `app()` gives at that moment. */
export function freshCollections(app: () => TestApp, prefix: string): () => Promise<string> {
  let count = 0;
  return async () => {
    const name = `${prefix}-${++count}`;
    await createCollection(app(), name);
    return name;
  };
}

export const md5 = (n: number) => n.toString(16).padStart(32, '0');
export const sha1 = (n: number) => n.toString(16).padStart(40, '0');

/** The keys `md5(n)` and `sha1(n)`, in this order. */
export const hashKeys = (n: number) => [
  { type: 'MD5Hash', value: md5(n) },
  { type: 'SHA1Hash', value: sha1(n) },
];

/** The File object keyed by `hashKeys(n)`, with an empty context. */
export const hashedFile = (n: number) => ({ type: 'File', keys: hashKeys(n), context: {} });

/** Every page of the listing, following `rel="next"` verbatim; the changes cursor from the first page. */
export async function listAll(t: TestApp, collection: string, limit = 3, key = t.adminKey) {
  let path: string | undefined = `/intel/collections/${collection}/objects?limit=${limit}`;
  const objects: ObjectViewBody[] = [];
  let changesCursor: string | null = null;
  let first = true;
  while (path) {
    const response = await t.http().get(path).set('X-Api-Key', key);
    expect(response.status).toBe(200);
    const links = parseLinks(response.headers.link as string | undefined);
    if (first) changesCursor = cursorOf(links.related);
    else expect(links.related).toBeUndefined();
    first = false;
    objects.push(...(response.body as ObjectViewBody[]));
    path = links.next;
  }
  expect(changesCursor).toEqual(expect.any(String));
  return { objects, changesCursor: changesCursor as string };
}

/** Follows the feed from `cursor` until an empty page, as the SDK's polling loop does. */
export async function followAll(t: TestApp, collection: string, cursor: string, limit = 4) {
  const changes: ChangeBody[] = [];
  let saved = cursor;
  for (;;) {
    const response = await t.http().get(`/intel/collections/${collection}/objects/changes?cursor=${saved}&limit=${limit}`).set('X-Api-Key', t.adminKey);
    expect(response.status).toBe(200);
    const next = parseLinks(response.headers.link as string | undefined).next;
    const page = response.body as ChangeBody[];
    // wire-contract §3.2: a next link exactly on the non-empty pages.
    expect(next !== undefined).toBe(page.length > 0);
    if (page.length === 0) return { changes, cursor: saved };
    changes.push(...page);
    saved = cursorOf(next) as string;
  }
}

/**
 * Follows the feed of `collection` on `app` from `cursor` as a polling client does, while writers run:
 * an empty page without a next link waits (`wait=1` with `longPoll`, else a short sleep) until `done()`; only
 * such a page read after `done()` proves it caught up. Every page is checked to carry a next link exactly when
 * it is not empty; as `key` with a `maxTLP` below RED (`restricted`), an empty page may link next too (it read
 * only records the key may not see).
 */
export async function follow(
  app: TestApp,
  collection: string,
  cursor: string,
  done: () => boolean,
  { limit, longPoll, key = app.adminKey, restricted = false }: { limit: number; longPoll: boolean; key?: string; restricted?: boolean },
) {
  const seen: ChangeBody[] = [];
  let saved = cursor;
  for (;;) {
    const finished = done();
    const wait = longPoll && !finished ? '&wait=1' : '';
    const response = await fetch(`${app.url}/intel/collections/${collection}/objects/changes?cursor=${saved}&limit=${limit}${wait}`, {
      headers: { 'X-Api-Key': key },
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as ChangeBody[];
    const next = parseLinks(response.headers.get('link') ?? undefined).next;
    if (page.length > 0 || !restricted) expect(next !== undefined).toBe(page.length > 0);
    seen.push(...page);
    if (next) saved = cursorOf(next) as string;
    if (!next && finished) return seen;
    if (!next && !longPoll) await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const keyIds = (object: ObjectViewBody) => object.keys.map((key) => `${key.type}:${key.value}`);

/** Applies changes to a listing: each change carries the object's whole state, identified by its keys. */
export function replay(objects: ObjectViewBody[], changes: ChangeBody[]): ObjectViewBody[] {
  let state = [...objects];
  for (const change of changes) {
    const ids = new Set(keyIds(change.object));
    state = state.filter((object) => !keyIds(object).some((id) => ids.has(id)));
    if (change.operation !== 'Remove') state.push(change.object);
  }
  return state;
}

/** Order-independent comparison form of a set of objects. */
export function canonical(objects: ObjectViewBody[]): string[] {
  const sortDeep = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sortDeep)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, v]) => [k, sortDeep(v)]),
          )
        : value;
  return objects.map((object) => JSON.stringify(sortDeep(object))).sort();
}

/** The view of an object stored from `form` (its members in form order) and marked `tlp`: what the feed, history and network search show. */
export const viewOf = <Form extends object>(form: Form, tlp = 'TLP:CLEAR') => ({ ...form, tlp });

/**
 * What listings and lookups show of it: the view and its score (extensions §18). A native write by the admin key
 * (reliability F) claims with strength (50 + 50) / 2 = 50, so 50 at once, whatever the type.
 */
export const listedOf = <Form extends object>(form: Form, tlp = 'TLP:CLEAR', score = 50) => ({ ...viewOf(form, tlp), score });

/** A listed object without its score, to compare with the feed's or an export's view of it (scores are not in those). */
export const unscored = ({ score: _score, ...view }: ObjectViewBody) => view;

/** A listing's objects without their scores, once each is checked to be `score` (an admin key's native writes): to replay the feed over or compare with it. */
export function unscoredAll(objects: ObjectViewBody[], score = 50): ObjectViewBody[] {
  expect(objects.map((object) => object.score)).toEqual(objects.map(() => score));
  return objects.map(unscored);
}
