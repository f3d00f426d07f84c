import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import request from 'supertest';
import { AppModule } from '../../src/app.module.js';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { configureApp } from '../../src/configure-app.js';
import { AuthClient } from './clients/auth.js';
import { FileboxClient } from './clients/filebox.js';
import { InsightClient } from './clients/insight.js';
import { IntelClient } from './clients/intel.js';
import { SightingsClient } from './clients/sightings.js';
import { SourcesClient } from './clients/sources.js';
import { WarninglistsClient } from './clients/warninglists.js';

export interface TestApp {
  app: NestExpressApplication;
  /** Base URL of the listening server, for clients other than supertest (concurrency tests). */
  url: string;
  /** Value of the admin key (ADMIN_API_KEY) of this app. */
  adminKey: string;
  /** The database this app runs on, for assertions that look behind the API. */
  databaseUrl: string;
  /** A pool on that database (connects on first use; ended by `close`). */
  db: pg.Pool;
  dataDir: string;
  http: () => ReturnType<typeof request>;
  /** Typed clients of each area, calling as the admin (`.as(key)` for another caller). */
  intel: IntelClient;
  insight: InsightClient;
  auth: AuthClient;
  filebox: FileboxClient;
  sources: SourcesClient;
  sightings: SightingsClient;
  warninglists: WarninglistsClient;
  close: () => Promise<void>;
}

/**
 * Boots the real AppModule, with the production guard, pipes, filter and interceptors, on a fresh
 * database of the run's test cluster, listening on a free port. `sharing` boots a second instance on
 * another instance's database (and admin key), as several instances of one deployment would run.
 */
export async function createTestApp(settings: Record<string, string> = {}, sharing?: TestApp): Promise<TestApp> {
  const databaseUrl = sharing?.databaseUrl ?? settings.DATABASE_URL ?? (await createDatabase({ migrated: true }));
  const dataDir = await mkdtemp(join(tmpdir(), 'ids-data-'));
  const adminKey = sharing?.adminKey ?? randomBytes(32).toString('base64url');
  // Quiet by default (request lines are info) and no metrics listener unless a test asks for one.
  const config: AppConfig = loadConfig({
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
    ...settings,
    DATA_DIR: dataDir,
    ADMIN_API_KEY: adminKey,
  });
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot({ ...config, databaseUrl })],
  }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: ['error', 'warn'] });
  configureApp(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;

  const db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const served = { adminKey, http: () => request(app.getHttpServer()) };
  return {
    ...served,
    intel: new IntelClient(served),
    insight: new InsightClient(served),
    auth: new AuthClient(served),
    filebox: new FileboxClient(served),
    sources: new SourcesClient(served),
    sightings: new SightingsClient(served),
    warninglists: new WarninglistsClient(served),
    app,
    url: `http://127.0.0.1:${port}`,
    databaseUrl,
    db,
    dataDir,
    close: async () => {
      await db.end();
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `count` instances of one deployment, all with `settings`: the first on a fresh database, the others sharing
 * it (and its admin key), booted one after another. Close them with `closeInstances`.
 */
export async function createInstances(count: number, settings: Record<string, string> = {}): Promise<TestApp[]> {
  const first = await createTestApp(settings);
  const apps = [first];
  while (apps.length < count) apps.push(await createTestApp(settings, first));
  return apps;
}

/** Closes instances sharing a database, the last booted first; skips those a failed boot left undefined. */
export async function closeInstances(apps: readonly (TestApp | undefined)[]): Promise<void> {
  for (const app of [...apps].reverse()) await app?.close();
}

/**
 * A fresh database on the run's test cluster; returns its URL. Empty, or with `migrated` a copy of the run's
 * template on which every migration has been applied (test/support/global-setup.js).
 */
export async function createDatabase({ migrated = false } = {}): Promise<string> {
  const adminUrl = process.env.IDS_TEST_ADMIN_URL;
  const template = process.env.IDS_TEST_TEMPLATE;
  if (!adminUrl || !template) throw new Error('IDS_TEST_ADMIN_URL is not set: run the tests through jest (global setup)');
  const name = `test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}${migrated ? ` TEMPLATE ${template}` : ''}`);
  await admin.end();
  return adminUrl.replace(/\/postgres$/, `/${name}`);
}
