import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from '@jest/globals';
import pg from 'pg';
import { createDatabase } from '../support/test-app.js';
import { ServiceProcess } from './service-process.js';

export interface SuiteService {
  service: ServiceProcess;
  /** A small pool on the service's database, for checking what it stored. */
  db: pg.Pool;
  dataDir: string;
}

/**
 * The built service as a process of its own on a fresh database and data directory for the calling describe
 * block (started before its tests, stopped and removed after them). The fields are set once `beforeAll` ran.
 */
export function serviceForSuite(dataDirPrefix: string): SuiteService {
  const suite = {} as SuiteService;
  beforeAll(async () => {
    const databaseUrl = await createDatabase({ migrated: true });
    suite.dataDir = await mkdtemp(join(tmpdir(), dataDirPrefix));
    suite.service = await ServiceProcess.start({ DATABASE_URL: databaseUrl, DATA_DIR: suite.dataDir });
    suite.db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  });
  afterAll(async () => {
    await suite.service?.stop();
    await suite.db?.end();
    if (suite.dataDir) await rm(suite.dataDir, { recursive: true, force: true });
  });
  return suite;
}
