import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import type pg from 'pg';
import { sizeSchema } from '../intel/objects.helpers.js';
import { cursorOf, parseLinks } from '../support/factories.js';
import { sha256, type Workload } from './workload.js';

export interface Target {
  url: string;
  apiKey: string;
}

async function get(target: Target, path: string): Promise<Response> {
  return fetch(`${target.url}${path}`, { headers: { 'X-Api-Key': target.apiKey } });
}

async function post(target: Target, path: string, json?: unknown): Promise<Response> {
  return fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: { 'X-Api-Key': target.apiKey, ...(json === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
}

/** Registers a schema and a collection on it; returns the feed cursor of the (empty) collection. */
export async function prepareCollection(target: Target, collection: string): Promise<string> {
  expect((await post(target, '/intel/schemas', sizeSchema('fault-schema'))).status).toBe(201);
  expect((await post(target, '/intel/collections', { name: collection, schemaID: 'fault-schema' })).status).toBe(201);
  const first = await get(target, `/intel/collections/${collection}/objects`);
  expect(first.status).toBe(200);
  return cursorOf(parseLinks(first.headers.get('link') ?? undefined).related) as string;
}

interface Listed {
  type: string;
  keys: { type: string; value: string }[];
}

const md5Of = (object: Listed) => object.keys.find((key) => key.type === 'MD5Hash')?.value as string;

/** Every object of the collection, page by page. */
async function listAll(target: Target, collection: string): Promise<string[]> {
  const keys: string[] = [];
  let path: string | undefined = `/intel/collections/${collection}/objects?limit=1000`;
  while (path) {
    const response = await get(target, path);
    expect(response.status).toBe(200);
    keys.push(...((await response.json()) as Listed[]).map(md5Of));
    path = parseLinks(response.headers.get('link') ?? undefined).next;
  }
  return keys;
}

/** The whole feed from `cursor`, in order. */
async function followAll(target: Target, collection: string, cursor: string): Promise<{ operation: string; key: string }[]> {
  const changes: { operation: string; key: string }[] = [];
  let saved = cursor;
  for (;;) {
    const response = await get(target, `/intel/collections/${collection}/objects/changes?cursor=${saved}&limit=1000`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { operation: string; object: Listed }[];
    if (page.length === 0) return changes;
    changes.push(...page.map((change) => ({ operation: change.operation, key: md5Of(change.object) })));
    saved = cursorOf(parseLinks(response.headers.get('link') ?? undefined).next as string) as string;
  }
}

const duplicates = (values: string[]) => values.filter((value, index) => values.indexOf(value) !== index);

/**
 * What must hold after a crash and restart, whatever was in flight: every acknowledged object exactly once in
 * the listing and its Add exactly once in the feed, the feed in acknowledgement order and matching the
 * listing, every acknowledged file byte-identical, no file row whose blob is missing or partial, and every
 * session whose parts were acknowledged still completable.
 */
export async function verifyAcknowledgedWrites(
  target: Target,
  collection: string,
  startCursor: string,
  workload: Workload,
  db: pg.Pool,
  dataDir: string,
): Promise<void> {
  const listed = await listAll(target, collection);
  expect(duplicates(listed)).toEqual([]);
  const present = new Set(listed);
  expect(workload.objects.filter((object) => !present.has(object.key))).toEqual([]);

  // Each object is added once under its own key: the feed holds exactly one Add per listed object, no more.
  const feed = await followAll(target, collection, startCursor);
  expect(feed.filter((change) => change.operation !== 'Add')).toEqual([]);
  const fed = feed.map((change) => change.key);
  expect(duplicates(fed)).toEqual([]);
  expect([...fed].sort()).toEqual([...listed].sort());
  // A write acknowledged before another was sent precedes it in the feed.
  const position = new Map(fed.map((key, index) => [key, index]));
  const outOfOrder: string[] = [];
  for (const a of workload.objects) {
    for (const b of workload.objects) {
      if (a.acked < b.sent && (position.get(a.key) as number) > (position.get(b.key) as number)) {
        outOfOrder.push(`${a.key} after ${b.key}`);
      }
    }
  }
  expect(outOfOrder).toEqual([]);

  for (const file of workload.files) {
    const response = await get(target, `/filebox/files/${file.fileId}/content`);
    expect(response.status).toBe(200);
    expect({ id: file.fileId, sha256: sha256(Buffer.from(await response.arrayBuffer())) }).toEqual({
      id: file.fileId,
      sha256: file.sha256,
    });
  }

  // No half-written file is visible: every recorded file, acknowledged or not, has its whole content.
  const rows = (
    await db.query<{ id: string; size: string; sha256: Buffer; part_keys: string[] | null }>('SELECT id, size, sha256, part_keys FROM filebox_file')
  ).rows;
  const broken: string[] = [];
  for (const row of rows) {
    // A direct upload is the blob named by its id; a session file is its part blobs in order.
    const pieces = await Promise.all((row.part_keys ?? [row.id]).map((key) => readFile(join(dataDir, 'files', 'objects', key)).catch(() => undefined)));
    const blob = pieces.every((piece) => piece !== undefined) ? Buffer.concat(pieces as Buffer[]) : undefined;
    if (!blob || blob.length !== Number(row.size) || sha256(blob) !== row.sha256.toString('hex')) broken.push(row.id);
  }
  expect(broken).toEqual([]);
  expect(rows.length).toBeGreaterThanOrEqual(workload.files.length);

  for (const session of workload.uncompleted) {
    const completed = await post(target, `/filebox/sessions/${session.sessionId}/completed`);
    expect(completed.status).toBe(201);
    const { fileID } = (await completed.json()) as { fileID: string };
    const content = await get(target, `/filebox/files/${fileID}/content`);
    expect(sha256(Buffer.from(await content.arrayBuffer()))).toBe(session.sha256);
  }

  // The restarted service takes writes again, and they follow in the feed.
  const after = await post(target, `/intel/collections/${collection}/objects`, {
    type: 'File',
    keys: [{ type: 'MD5Hash', value: 'f'.repeat(32) }],
    context: { after: true },
  });
  expect(after.status).toBe(204);
  expect((await followAll(target, collection, startCursor)).map((change) => change.key).at(-1)).toBe('f'.repeat(32));
}
