import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { StartupError } from '../common/startup-error.js';
import { firstDirectoryClosedTo, postgresSystemUser } from './postgres-user.js';

/** Where the embedded cluster of a DATA_DIR lives when it is not `DATA_DIR/pg` (written as root only). */
const locationFileOf = (dataDir: string) => join(dataDir, 'pg.location');

/** The embedded cluster's data directory, and what to do once it has started there. */
export interface ClusterLocation {
  directory: string;
  /** A line for the start-up banner when the cluster lives outside DATA_DIR. */
  notice?: string;
  /** Records a new outside location in DATA_DIR once a cluster has been created there. */
  record?: () => Promise<void>;
}

/** The recorded outside location of DATA_DIR's cluster, if any. */
async function recordedLocation(dataDir: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(locationFileOf(dataDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const directory = text.trim();
  if (!isAbsolute(directory)) {
    throw new StartupError(`${locationFileOf(dataDir)} must hold the absolute path of the embedded PostgreSQL's data directory, got "${directory}"`);
  }
  return directory;
}

/** The directory of a running or stopped cluster of DATA_DIR (admin commands joining a running instance). */
export async function existingClusterDirectory(dataDir: string): Promise<string> {
  return (await recordedLocation(dataDir)) ?? join(dataDir, 'pg');
}

/**
 * Where DATA_DIR's embedded cluster is, or is to be created. Normally `DATA_DIR/pg`. As root the cluster runs
 * as the `postgres` system user, which must be able to enter every directory above DATA_DIR; when one of them
 * is closed (a checkout inside a mode-700 directory, `mktemp -d`, /root) and no cluster exists there yet, a
 * new cluster is placed in `fallbackDir` instead (root-owned, not writable by others) and its path recorded
 * in `DATA_DIR/pg.location`, so that every later start, admin command and backup finds it.
 */
export async function clusterLocation(dataDir: string, fallbackDir: string): Promise<ClusterLocation> {
  const recorded = await recordedLocation(dataDir);
  if (recorded !== undefined) {
    if (!existsSync(join(recorded, 'PG_VERSION'))) {
      throw new StartupError(
        `the embedded PostgreSQL of DATA_DIR ${dataDir} is recorded in ${locationFileOf(dataDir)} as ${recorded}, which holds no cluster: ` +
          `restore it there, or remove ${locationFileOf(dataDir)} to start with an empty database`,
      );
    }
    return { directory: recorded, notice: `The embedded PostgreSQL of DATA_DIR ${dataDir} lives in ${recorded} (${locationFileOf(dataDir)})` };
  }
  const inside = join(dataDir, 'pg');
  if (process.getuid?.() !== 0 || existsSync(join(inside, 'PG_VERSION'))) return { directory: inside };

  const user = await postgresSystemUser();
  await mkdir(dataDir, { recursive: true });
  // DATA_DIR itself is opened for passage when the cluster starts; the directories above it are not ours to change.
  const closed = await firstDirectoryClosedTo(dirname(dataDir), user);
  if (closed === undefined) return { directory: inside };

  await trustedFallback(fallbackDir, dataDir, closed);
  const reach = await firstDirectoryClosedTo(dirname(fallbackDir), user);
  if (reach !== undefined) {
    throw new StartupError(
      `the embedded PostgreSQL runs as the system user "${user.name}", which can reach neither DATA_DIR ${dataDir} (${closed} is closed to it) ` +
        `nor EMBEDDED_PG_FALLBACK_DIR ${fallbackDir} (${reach} is closed to it): set one of them to a directory it can reach, or set DATABASE_URL`,
    );
  }
  const directory = join(fallbackDir, `cluster-${randomBytes(6).toString('hex')}`);
  return {
    directory,
    notice:
      `DATA_DIR ${dataDir} is out of reach of the "${user.name}" user the embedded PostgreSQL runs as (${closed} is closed to it): ` +
      `its cluster is created in ${directory}, recorded in ${locationFileOf(dataDir)}; back both up together`,
    record: async () => {
      const staging = `${locationFileOf(dataDir)}.${process.pid}`;
      await writeFile(staging, `${directory}\n`, { mode: 0o644 });
      await rename(staging, locationFileOf(dataDir));
    },
  };
}

/**
 * The fallback directory holds clusters and their superuser passwords: it must be root's alone (created
 * mode 755 when missing), or a user could swap a cluster or read a password.
 */
async function trustedFallback(fallbackDir: string, dataDir: string, closed: string): Promise<void> {
  await mkdir(fallbackDir, { recursive: true, mode: 0o755 });
  const info = await lstat(fallbackDir);
  if (info.isDirectory() && info.uid === 0 && (info.mode & 0o022) === 0) return;
  throw new StartupError(
    `DATA_DIR ${dataDir} is out of reach of the embedded PostgreSQL's system user (${closed} is closed to it), and ` +
      `EMBEDDED_PG_FALLBACK_DIR ${fallbackDir}, where its cluster would go instead, is not a directory owned by root ` +
      `and writable by root only (owner uid ${info.uid}, mode ${(info.mode & 0o7777).toString(8)}): fix it (chown root ${fallbackDir}; ` +
      `chmod go-w ${fallbackDir}), set EMBEDDED_PG_FALLBACK_DIR or DATA_DIR elsewhere, or set DATABASE_URL`,
  );
}
