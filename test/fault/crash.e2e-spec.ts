import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { EmbeddedDatabase } from '../../src/database/embedded-postgres.js';
import { ServiceProcess } from './service-process.js';
import { serviceForSuite } from './suite-service.js';
import { prepareCollection, verifyAcknowledgedWrites } from './verify.js';
import { pause, Workload } from './workload.js';

/** The workload has made this much progress since `base` (so that writes of every kind are in flight). */
const progressed =
  (workload: Workload, base = { objects: 0, files: 0 }) =>
  () =>
    workload.objects.length >= base.objects + 30 && workload.files.length >= base.files + 4;

const snapshot = (workload: Workload) => ({ objects: workload.objects.length, files: workload.files.length });

describe('kill -9 of the service under concurrent writes', () => {
  const suite = serviceForSuite('ids-fault-');

  it('keeps every acknowledged object, change and file exactly once across two kills and restarts', async () => {
    const target = { url: suite.service.url, apiKey: suite.service.adminKey };
    const cursor = await prepareCollection(target, 'crash');
    const workload = new Workload(suite.service.url, suite.service.adminKey, 'crash');
    workload.start();
    try {
      for (let round = 0; round < 2; round++) {
        await workload.until(progressed(workload, snapshot(workload)), `progress before kill ${round + 1}`);
        await suite.service.kill();
        await suite.service.restart();
      }
      // The clients carry on against the restarted service.
      await workload.until(progressed(workload, snapshot(workload)), 'progress after the last restart');
    } catch (error) {
      throw new Error(`${(error as Error).message}\nthe service's last output:\n${suite.service.log}`);
    } finally {
      await workload.stop();
    }
    expect(workload.files.length).toBeGreaterThan(0);
    await verifyAcknowledgedWrites(target, 'crash', cursor, workload, suite.db, suite.dataDir);
    // An outage of the service is seen by clients as refused or cut connections, never as a wrong answer.
    expect({ answers: workload.errorAnswers, logged: suite.service.errors }).toEqual({ answers: [], logged: [] });
  });
});

/** The postmaster (from its lock file) and its children, as a crash of the database server would take them. */
function killPostgres(dataDirectory: string): number[] {
  const postmaster = Number(readFileSync(join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return (
          Number(
            readFileSync(`/proc/${pid}/stat`, 'utf8')
              .replace(/^.*\) /s, '')
              .split(' ')[1],
          ) === postmaster
        );
      } catch {
        return false; // exited meanwhile
      }
    })
    .map(Number);
  const all = [postmaster, ...children];
  for (const pid of all) process.kill(pid, 'SIGKILL');
  return all;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('kill -9 of PostgreSQL under concurrent writes', () => {
  let root: string;
  let cluster: EmbeddedDatabase;
  let service: ServiceProcess;
  let db: pg.Pool;
  let dataDir: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ids-fault-pg-'));
    // A cluster of its own, with PostgreSQL's durable defaults (the shared test cluster runs without fsync).
    cluster = await EmbeddedDatabase.start(join(root, 'pg'));
    const databaseUrl = await cluster.createDatabase('fault');
    dataDir = join(root, 'data');
    service = await ServiceProcess.start({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir });
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    db.on('error', () => undefined); // its idle connections die with the server
  });
  afterAll(async () => {
    await service?.stop();
    await db?.end();
    await cluster?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('keeps every acknowledged write exactly once, and the running service recovers when PostgreSQL is back', async () => {
    const target = { url: service.url, apiKey: service.adminKey };
    const cursor = await prepareCollection(target, 'pgcrash');
    const workload = new Workload(service.url, service.adminKey, 'pgcrash');
    workload.start();
    try {
      await workload.until(progressed(workload), 'progress before the kill');
      const killed = killPostgres(join(root, 'pg'));
      for (let attempt = 0; attempt < 100 && killed.some(alive); attempt++) await pause(50);
      expect(killed.filter(alive)).toEqual([]);
      // Clients meet the outage for a while before the database comes back.
      const errorsBefore = workload.errorAnswers.length;
      await workload.until(() => workload.errorAnswers.length >= errorsBefore + 10, 'error answers during the outage');
      const port = Number(new URL(cluster.adminUrl).port);
      cluster = await EmbeddedDatabase.start(join(root, 'pg'), { port });
      // The same service process, never restarted, takes writes of every kind again.
      await workload.until(progressed(workload, snapshot(workload)), 'progress after PostgreSQL is back');
    } catch (error) {
      throw new Error(`${(error as Error).message}\nthe service's last output:\n${service.log}`);
    } finally {
      await workload.stop();
    }
    await verifyAcknowledgedWrites(target, 'pgcrash', cursor, workload, db, dataDir);
    // While the database was away, every request got a coded JSON error, not a hang or a crash.
    expect(workload.errorAnswers.filter((answer) => answer.code === undefined)).toEqual([]);
    expect({
      answers: [...new Set(workload.errorAnswers.map((answer) => `${answer.status} ${answer.code}`))],
      logged: service.errors,
    }).toEqual({ answers: ['503 ServiceUnavailable'], logged: [] });
  });
});
