import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ServiceProcess } from '../fault/service-process.js';
import { sizeSchema } from '../intel/objects.helpers.js';
import { eventually } from '../support/eventually.js';
import { createDatabase } from '../support/test-app.js';
import { FeedServer } from './feed-server.js';

const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/**
 * kill -9 of the instance running a source (extensions §13): its run's transaction (the staged body and
 * every chunk written so far) dies with its connection, and once the lease expires another instance runs
 * the source whole.
 */
describe('a source run cut by kill -9', () => {
  let service: ServiceProcess;
  let db: pg.Pool;
  let dataDir: string;
  let feed: FeedServer;

  beforeAll(async () => {
    const databaseUrl = await createDatabase({ migrated: true });
    dataDir = await mkdtemp(join(tmpdir(), 'ids-source-kill-'));
    // The schedule looks every second; a lease nobody renews expires after 3 s.
    service = await ServiceProcess.start({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, SOURCE_POLL_SECONDS: '1', SOURCE_LEASE_SECONDS: '3' });
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    feed = await new FeedServer().start();
  });
  afterAll(async () => {
    await service?.stop();
    await db?.end();
    await feed?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const post = (path: string, json: unknown) =>
    fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { 'X-Api-Key': service.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(json),
    });
  const count = async (sql: string) => (await db.query(sql)).rows[0].n as number;
  const written = async () => ({
    objects: await count(`SELECT count(*)::int AS n FROM intel_object`),
    records: await count(`SELECT count(*)::int AS n FROM intel_change`),
    claims: await count(`SELECT count(*)::int AS n FROM sources_claim`),
  });

  it('killed while its chunks are written: nothing of the run stays; another instance takes the lease over and applies the body whole', async () => {
    const size = 12_000;
    feed.list('/killed.txt', Array.from({ length: size }, (_, i) => address(i)).join('\n') + '\n');
    expect((await post('/intel/schemas', sizeSchema('kill-schema'))).status).toBe(201);
    expect((await post('/intel/collections', { name: 'killed', schemaID: 'kill-schema' })).status).toBe(201);
    // A new source is due at once: the instance's schedule runs it.
    expect((await post('/intel/sources', { name: 'killed', collection: 'killed', kind: 'text', url: feed.url('/killed.txt') })).status).toBe(201);

    // The run is writing its chunks (the batch statement in flight, inside the run's transaction): kill -9.
    // Told by the statement's first CTE: pg_stat_activity keeps only the text's first 1024 bytes.
    await eventually(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
                AND query LIKE '%WITH ctx AS MATERIALIZED%'`,
          )
        ).rows.length > 0,
      { timeoutMs: 120_000, intervalMs: 10 },
    );
    await service.kill();
    // Once the dead connection's transaction is gone (its statement ends, then it rolls back): nothing of the run.
    await eventually(
      async () =>
        (await count(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`)) ===
        0,
      { timeoutMs: 60_000 },
    );
    expect(await written()).toEqual({ objects: 0, records: 0, claims: 0 });
    const [dead] = (await db.query(`SELECT id, finished_at, outcome FROM sources_run`)).rows;
    expect(dead).toMatchObject({ finished_at: null, outcome: null });
    expect((await db.query(`SELECT body_digest, last_success_at FROM sources_source`)).rows).toEqual([{ body_digest: null, last_success_at: null }]);

    // Another instance (on the same database): the lease expires, the run is taken over and completed.
    await service.restart();
    const runs = await eventually(
      async () => {
        const rows = (await db.query(`SELECT id, outcome, error->>'code' AS code FROM sources_run ORDER BY started_at`)).rows as {
          id: string;
          outcome: string | null;
          code: string | null;
        }[];
        return rows.length === 2 && rows.every((row) => row.outcome !== null) ? rows : false;
      },
      { timeoutMs: 240_000, intervalMs: 200 },
    );
    expect(runs).toEqual([
      { id: dead.id, outcome: 'failed', code: 'LeaseExpired' },
      { id: expect.any(String), outcome: 'ok', code: null },
    ]);
    expect(await written()).toEqual({ objects: size, records: size, claims: size });
    expect(service.errors).toEqual([]);
  }, 600_000);
});
