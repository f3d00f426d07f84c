import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from '../common/startup-error.js';

/** The one process that runs the embedded PostgreSQL of a DATA_DIR: the pid of the holder. */
export const LOCK_FILE = 'embedded-postgres.lock';

/** DATA_DIR is held by a live process (a running instance, or an admin command working on it). */
export class DataDirInUse extends StartupError {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`DATA_DIR ${dataDir} is in use by another running instance (pid ${pid}): stop it, or give this one its ` + 'own DATA_DIR or a DATABASE_URL');
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a lock file, when that process is still running (and is not this one: a reused pid after a crash). */
export function liveHolder(dataDir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(join(dataDir, LOCK_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(text, 10);
  return Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : undefined;
}

/**
 * Exclusive use of a DATA_DIR's embedded PostgreSQL, so that a second instance started on the same DATA_DIR
 * stops with a message naming the holder, instead of failing inside PostgreSQL. The lock file holds the
 * holder's pid; a file whose process is gone (a crash, a kill -9) is stale and taken over. PostgreSQL's own
 * postmaster.pid still guards the data files themselves.
 */
export class DataDirLock {
  private released = false;
  private readonly releaseOnExit = () => this.release();

  private constructor(private readonly file: string) {
    process.once('exit', this.releaseOnExit);
  }

  static acquire(dataDir: string): DataDirLock {
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, LOCK_FILE);
    // Two rounds: a stale file is removed once, then the exclusive create decides between racing starters.
    for (let round = 0; ; round++) {
      try {
        writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
        return new DataDirLock(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = liveHolder(dataDir);
      if (holder !== undefined || round > 0) throw new DataDirInUse(dataDir, holder ?? Number.parseInt(readFileSync(file, 'utf8'), 10));
      try {
        unlinkSync(file);
      } catch {
        // Removed by a racing starter: the next exclusive create decides.
      }
    }
  }

  /** Removes the file if it is still ours (synchronous: also runs on process exit). */
  release(): void {
    if (this.released) return;
    this.released = true;
    process.removeListener('exit', this.releaseOnExit);
    try {
      if (Number.parseInt(readFileSync(this.file, 'utf8'), 10) === process.pid) unlinkSync(this.file);
    } catch {
      // Already gone.
    }
  }
}
