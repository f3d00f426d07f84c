import http from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection } from './objects.helpers.js';

const OBJECTS = 200_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MiB = 1024 * 1024;

// A full collection on demand (the service runs in this process): what the process keeps, not the garbage V8
// has not collected yet, is what bounded memory means. RSS alone measured that garbage: +82 MB on Node 24 for
// this 20 MB body, +40 on Node 22, depending on when each line's GC ran.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const retained = () => {
  collectGarbage();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
};

/**
 * Exports of a large collection: memory stays bounded whatever the size, and a client that leaves
 * mid-body gives its database connection back at once. The export pool has ONE connection here, so a
 * connection held by an abandoned export would make the next export wait and fail.
 */
describe('export of a large collection', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ EXPORT_POOL_SIZE: '1' });
    await createCollection(t, 'big');
    // One object through the API, the rest written beside it in SQL: 200,000 objects through the batch
    // endpoint took a minute of the suite, and what is under test is the export's reading, not ingest. The
    // rows are what the batch statement writes for such an object (keys and their index rows); the export
    // reads nothing else.
    expect((await t.intel.add('big', { type: 'DomainName', keys: [{ type: 'DomainName', value: 'host-0.big.example' }], context: { n: 0 } })).status).toBe(204);
    await t.db.query(
      `WITH c AS (SELECT id FROM intel_collection WHERE name = 'big'),
            o AS (INSERT INTO intel_object (collection_id, type, keys, context, api_first_seen_at, api_last_seen_at)
                  SELECT c.id, 'DomainName', jsonb_build_array(jsonb_build_object('type', 'DomainName', 'value', 'host-' || n || '.big.example')),
                         jsonb_build_object('n', n), now(), now()
                    FROM c, generate_series(1, $1::int - 1) AS n
                   ORDER BY n
                  RETURNING id, collection_id, keys)
       INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
       SELECT o.collection_id, 'DomainName', o.keys -> 0 ->> 'value', o.id FROM o`,
      [OBJECTS],
    );
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM intel_object WHERE collection_id = (SELECT id FROM intel_collection WHERE name = 'big')`);
    expect(rows[0].n).toBe(OBJECTS);
  }, 180_000);
  afterAll(async () => {
    await t.close();
  });

  /** GETs an export, handing each chunk to `onChunk`; resolves with the response once it ended or was aborted. */
  function get(query: string, onChunk: (chunk: Buffer, request: http.ClientRequest) => void): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const request = http.get(`${t.url}/intel/collections/big/export?${query}`, { headers: { 'X-Api-Key': t.adminKey } }, (response) => {
        response.on('data', (chunk: Buffer) => onChunk(chunk, request));
        response.on('end', () => resolve(response));
        response.on('close', () => resolve(response));
      });
      request.on('error', (error) => (request.destroyed ? resolve({} as http.IncomingMessage) : reject(error)));
    });
  }

  it(`streams ${OBJECTS} objects with bounded memory`, async () => {
    // A first export, not measured: the heap left by the set-up shrinks meanwhile (by about 18 MB in one run),
    // which would hide an export that holds its rows.
    await get('format=ndjson', () => {});
    const before = retained();
    let held = 0;
    let lines = 0;
    let bytes = 0;
    let nextSample = 0;
    let last = '';
    const response = await get('format=ndjson', (chunk) => {
      bytes += chunk.length;
      for (const byte of chunk) if (byte === 0x0a) lines++;
      last = (last + chunk.toString('latin1')).slice(-200);
      // Every MiB of body: what the process holds while the export runs.
      if (bytes >= nextSample) {
        held = Math.max(held, retained() - before);
        nextSample += MiB;
      }
    });
    expect(response.statusCode).toBe(200);
    expect(lines).toBe(OBJECTS);
    expect(JSON.parse(last.trimEnd().split('\n').pop()!).keys[0].value).toBe(`host-${OBJECTS - 1}.big.example`);
    // The body (about 20 MB, far more as rows and strings) is several times what the service may hold at once.
    expect(bytes).toBeGreaterThan(16 * MiB);
    expect(held).toBeLessThan(8 * MiB);
  }, 120_000);

  it('gives the connection back at once when the client leaves mid-body', async () => {
    const busy = async () =>
      (await t.db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'ids-export' AND state IN ('active', 'idle in transaction')`))
        .rows[0].n as number;
    let received = 0;
    await get('format=txt&keyType=DomainName', (chunk, request) => {
      received += chunk.length;
      // Gone after the first chunk: the rest of the list is still to be read on the server.
      if (!request.destroyed) request.destroy();
    });
    expect(received).toBeGreaterThan(0);
    for (let tries = 0; (await busy()) > 0; tries++) {
      expect(tries).toBeLessThan(100);
      await sleep(50);
    }
    // The pool's one connection is free: a whole export goes through (it would time out otherwise).
    let lines = 0;
    const response = await get('format=txt&keyType=DomainName', (chunk) => {
      for (const byte of chunk) if (byte === 0x0a) lines++;
    });
    expect(response.statusCode).toBe(200);
    expect(lines).toBe(OBJECTS);
  }, 60_000);
});
