// One throwaway PostgreSQL cluster for the whole run; each test file creates its own database on it.
// Jest loads this file outside its TypeScript transform, so it uses the build output (`npm test` builds first).
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../dist/database/data-source-options.js';
import { EmbeddedDatabase } from '../../dist/database/embedded-postgres.js';
import { runMigrationsExclusively } from '../../dist/database/run-migrations.js';

export default async function globalSetup() {
  const root = await mkdtemp(join(tmpdir(), 'ids-test-'));
  const cluster = await EmbeddedDatabase.start(join(root, 'pg'), { ephemeral: true });
  globalThis.__IDS_TEST_CLUSTER__ = { cluster, root };
  // Test workers start after this and inherit the environment.
  process.env.IDS_TEST_ADMIN_URL = cluster.adminUrl;
  process.env.IDS_TEST_TEMPLATE = await migratedTemplate(cluster.adminUrl);
  process.env.CHROMIUM_PATH ||= await unpackChromium();
}

/**
 * A database with every migration applied, which test apps copy (CREATE DATABASE … TEMPLATE) instead of
 * migrating an empty one each: the copy costs a third of the migrations, and a hundred-odd apps boot per run.
 * Each app still runs its migrations at start and finds none pending; tests of migrations themselves start
 * from an empty database (createDatabase()).
 */
async function migratedTemplate(adminUrl) {
  const name = 'ids_test_template';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  // Two connections: the migration lock holds one (runMigrationsExclusively).
  const dataSource = new DataSource(dataSourceOptions(adminUrl.replace(/\/postgres$/, `/${name}`), 2));
  await dataSource.initialize();
  try {
    await runMigrationsExclusively(dataSource);
  } finally {
    await dataSource.destroy();
  }
  return name;
}

/**
 * The browser tests' Chromium (test/support/browser.ts), unpacked from `@sparticuz/chromium` here, once,
 * before any worker starts: two workers unpacking it into one place at once could start a half-written
 * binary. The package unpacks into the temporary directory with mode 0700, so each user gets a folder of
 * their own there (another user's copy cannot be run).
 */
async function unpackChromium() {
  const { default: chromium } = await import('@sparticuz/chromium');
  const dir = join(tmpdir(), `ids-chromium-${process.getuid?.() ?? 'user'}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = process.env.TMPDIR;
  process.env.TMPDIR = dir; // where the package unpacks (os.tmpdir())
  try {
    return await chromium.executablePath();
  } finally {
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
  }
}
