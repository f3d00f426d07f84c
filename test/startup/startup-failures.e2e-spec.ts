import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { LOCK_FILE } from '../../src/startup/data-dir-lock.js';
import { dataDir, freePort, runBuilt, startService, type Finished, type RunningService } from '../support/processes.js';

/** A failed start: exit code 1, one line on stderr naming what to fix, no stack trace, nothing on stdout. */
function expectOneLineFailure(run: Finished, ...fragments: string[]): void {
  expect(run.code).toBe(1);
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^Start-up failed: /);
  for (const fragment of fragments) expect(lines[0]).toContain(fragment);
  // Nothing was started or printed: no admin key, never "successfully started".
  expect(run.stdout).toBe('');
}

describe('start-up failures of the built service (real processes)', () => {
  it('a port in use stops it before anything is created or printed', async () => {
    const blocker = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, () => resolve()));
    const directory = await dataDir();
    try {
      const run = await runBuilt('main.js', [], { PORT: String(port), DATA_DIR: directory });
      expectOneLineFailure(run, `port ${port} is already in use`, 'set PORT');
      expect(readdirSync(directory)).toEqual([]);
    } finally {
      blocker.close();
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('an unreachable database is named by host and port after the bounded wait, without its password', async () => {
    const closed = await freePort();
    const run = await runBuilt('main.js', [], {
      PORT: String(await freePort()),
      DATABASE_URL: `postgres://ids:s3cret-word@127.0.0.1:${closed}/intel`,
      DATABASE_WAIT_SECONDS: '1',
    });
    expectOneLineFailure(run, `cannot reach the database at 127.0.0.1:${closed}`, 'after waiting 1 s', 'DATABASE_URL');
    expect(run.stderr).not.toContain('s3cret-word');
  });

  it('credentials the database refuses fail at once, naming host and port', async () => {
    const url = new URL(process.env.IDS_TEST_ADMIN_URL!);
    url.password = 'not-the-password';
    // A wait this long would exceed the test's timeout: the refusal must not be waited through.
    const run = await runBuilt('main.js', [], { PORT: String(await freePort()), DATABASE_URL: url.href, DATABASE_WAIT_SECONDS: '600' });
    expectOneLineFailure(run, `the database at 127.0.0.1:${url.port} refused the connection`, 'password authentication failed');
  });

  it('a bad setting', async () => {
    expectOneLineFailure(await runBuilt('main.js', [], { PORT: 'http' }), 'PORT must be a whole number');
  });

  it('a parameter PostgreSQL refuses in EMBEDDED_PG_SETTINGS is named, with what PostgreSQL said', async () => {
    const directory = await dataDir();
    try {
      const run = await runBuilt('main.js', [], { PORT: String(await freePort()), DATA_DIR: directory, EMBEDDED_PG_SETTINGS: 'shared_bufers=1GB' });
      expect(run.code).toBe(1);
      // Progress went to stdout (the cluster was being started); the failure is the one line on stderr.
      expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^Start-up failed: the embedded PostgreSQL in .* did not start: /)]);
      expect(run.stderr).toContain('unrecognized configuration parameter "shared_bufers"');
      expect(run.stderr).toContain('EMBEDDED_PG_SETTINGS');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('the embedded PostgreSQL of a DATA_DIR: one instance at a time, and the admin CLI on it', () => {
  let directory: string;
  let service: RunningService | undefined;

  beforeAll(async () => {
    directory = await dataDir();
    service = await startService({ DATA_DIR: directory });
  });

  afterAll(async () => {
    await service?.stop();
    await rm(directory, { recursive: true, force: true });
  });

  const admin = (command: string) => runBuilt('admin/cli.js', [command], { DATA_DIR: directory });

  async function expectAccepted(url: string, key: string): Promise<void> {
    const response = await fetch(`${url}/auth/keys`, { headers: { 'X-Api-Key': key } });
    expect(response.status).toBe(200);
    const keys = (await response.json()) as { description: string }[];
    expect(keys.map((k) => k.description)).toContain('admin (npm run admin -- create-admin-key)');
  }

  function lastLine(output: string): string {
    return output.trimEnd().split('\n').at(-1)!;
  }

  it('a second instance on the same DATA_DIR names the directory and the running instance pid', async () => {
    const run = await runBuilt('main.js', [], { PORT: String(await freePort()), DATA_DIR: directory });
    expectOneLineFailure(run, `DATA_DIR ${directory} is in use`, `pid ${service!.process.pid}`);
  });

  it('while the service runs, the CLI works on its cluster: a new admin key the service accepts, every migration applied', async () => {
    const created = await admin('create-admin-key');
    expect(created.code).toBe(0);
    await expectAccepted(service!.url, lastLine(created.stdout));

    const listed = await admin('migrations');
    expect(listed.code).toBe(0);
    expect(listed.stdout.trimEnd().split('\n')).toEqual(MIGRATIONS.map((migration) => `applied  ${migration.name}`));
  });

  it('once the service stopped, the CLI starts the embedded PostgreSQL itself, over a stale lock, and stops it', async () => {
    const stopped = await service!.stop();
    service = undefined;
    expect(stopped.code).toBe(0);
    expect(existsSync(join(directory, LOCK_FILE))).toBe(false);

    // The lock of an instance that died without cleaning up (a process that has exited).
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(join(directory, LOCK_FILE), `${dead}\n`);
    const created = await admin('create-admin-key');
    expect(created.code).toBe(0);
    expect(existsSync(join(directory, LOCK_FILE))).toBe(false);
    const migrated = await admin('migrate');
    expect(migrated.stdout).toBe('no pending migrations\n');

    // The key made while the service was stopped works once it runs again (so the cluster was let go too).
    service = await startService({ DATA_DIR: directory });
    await expectAccepted(service.url, lastLine(created.stdout));
  });
});
