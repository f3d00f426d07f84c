import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { StartupError } from '../common/startup-error.js';

const run = promisify(execFile);
const NAME = 'postgres';

/** A system account a child process can be started as (`spawn`'s uid/gid). */
export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

async function lookUp(): Promise<SystemUser> {
  const [uid, gid] = await Promise.all([run('id', ['-u', NAME]), run('id', ['-g', NAME])]);
  return { name: NAME, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function firstLine(error: unknown): string {
  const text = (error as { stderr?: string }).stderr || (error instanceof Error ? error.message : String(error));
  return text.trim().split('\n')[0];
}

/** PostgreSQL refuses to run as root: as root the embedded cluster runs as this user, created when missing. */
export async function postgresSystemUser(): Promise<SystemUser> {
  try {
    return await lookUp();
  } catch {
    // Missing: create it below.
  }
  try {
    // The group may exist without the user (exit code 9): useradd below then joins it.
    await run('groupadd', ['--system', NAME]).catch((error: { code?: unknown }) => {
      if (error.code !== 9) throw error;
    });
    await run('useradd', ['--system', '--gid', NAME, '--no-create-home', '--shell', '/usr/sbin/nologin', NAME]);
    return await lookUp();
  } catch (error) {
    throw new StartupError(
      `running as root, the embedded PostgreSQL must run as a system user "${NAME}" and creating it failed ` +
        `(${firstLine(error)}): create it (useradd --system ${NAME}), run as a non-root user, or set DATABASE_URL`,
    );
  }
}

/**
 * The first directory on the way to `path` (inclusive) that `user` may not enter, judged by the mode bits as
 * a child started with `spawn`'s uid/gid sees them (primary group only: no supplementary groups are set).
 */
export async function firstDirectoryClosedTo(path: string, user: SystemUser): Promise<string | undefined> {
  const chain: string[] = [];
  for (let dir = await realpath(path); ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of chain) {
    const info = await stat(dir);
    const searchBit = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
    if ((info.mode & searchBit) === 0) return dir;
  }
  return undefined;
}
