import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { freePort, runBuilt } from '../support/processes.js';
import { createDatabase, createTestApp, type TestApp } from '../support/test-app.js';

/** `npm run admin -- <command>` (dist/admin/cli.js) with DATABASE_URL; the embedded cases are in startup-failures. */
describe('the admin CLI on DATABASE_URL', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app.close());

  const admin = (args: string[], env: Record<string, string>) => runBuilt('admin/cli.js', args, env);

  it('lists migrations as pending on an empty database, applies them once, then lists them as applied', async () => {
    const env = { DATABASE_URL: await createDatabase() };
    const names = MIGRATIONS.map((migration) => migration.name);

    const before = await admin(['migrations'], env);
    expect(before.code).toBe(0);
    expect(before.stdout.trimEnd().split('\n')).toEqual(names.map((name) => `pending  ${name}`));

    const migrated = await admin(['migrate'], env);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout.trimEnd().split('\n')).toEqual(names.map((name) => `applied  ${name}`));

    const after = await admin(['migrations'], env);
    expect(after.stdout.trimEnd().split('\n')).toEqual(names.map((name) => `applied  ${name}`));
    expect((await admin(['migrate'], env)).stdout).toBe('no pending migrations\n');
  });

  it('two instances and the CLI migrating one fresh database at once: none loses a race, each migration applied once', async () => {
    const env = { DATABASE_URL: await createDatabase() };
    // A start that lost a race over a migration went through the connection retries, logging an error.
    const logged: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      logged.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof process.stderr.write;
    let apps: TestApp[] = [];
    try {
      const [started, cli] = await Promise.all([Promise.all([createTestApp(env), createTestApp(env)]), admin(['migrate'], env)]);
      apps = started;
      expect(cli.code).toBe(0);
      expect(logged.join('')).not.toMatch(/Unable to connect|already exists/);
      const { rows } = await apps[0].db.query(`SELECT name FROM typeorm_migrations ORDER BY id`);
      expect(rows.map((row: { name: string }) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    } finally {
      process.stderr.write = write;
      await Promise.all(apps.map((other) => other.close()));
    }
  });

  it('create-admin-key prints a new admin key alone on its last line; the service accepts it for every area', async () => {
    const run = await admin(['create-admin-key'], { DATABASE_URL: app.databaseUrl });
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const key = lines.at(-1)!;
    expect(key).toMatch(/^\S{20,}$/);
    for (const path of ['/auth/keys', '/intel/collections', '/insight/schemas']) {
      expect((await app.http().get(path).set('X-Api-Key', key)).status).toBe(200);
    }
    // Another call, another key: a lost key is replaced, not shown again.
    const again = await admin(['create-admin-key'], { DATABASE_URL: app.databaseUrl });
    expect(again.stdout.trimEnd().split('\n').at(-1)).not.toBe(key);
  });

  it('refuses a missing or unknown command with the usage (exit 2), and names an unreachable database (exit 1)', async () => {
    for (const args of [[], ['drop-everything']]) {
      const run = await admin(args, { DATABASE_URL: app.databaseUrl });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('usage: npm run admin -- <command>');
    }
    const closed = await freePort();
    const run = await admin(['migrations'], { DATABASE_URL: `postgres://u:p@127.0.0.1:${closed}/x`, DATABASE_WAIT_SECONDS: '0' });
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining(`admin: cannot reach the database at 127.0.0.1:${closed}`)]);
  });
});
