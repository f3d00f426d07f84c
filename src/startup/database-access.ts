import { StartupError } from '../common/startup-error.js';
import type { AppConfig } from '../config/app-config.js';
import { clusterLocation, existingClusterDirectory } from '../database/cluster-location.js';
import { describeSettings, tunedSettings, visibleMemoryBytes } from '../database/embedded-tuning.js';
import { DataDirLock, liveHolder } from './data-dir-lock.js';
import { databaseAddress, waitForDatabase } from './database-wait.js';

/** A database ready for use, and how to let go of it. */
export interface DatabaseAccess {
  url: string;
  /** Where it is, for messages. */
  description: string;
  close(): Promise<void>;
}

/** DATABASE_URL, once it accepts sessions (see waitForDatabase). */
async function external(url: string, waitSeconds: number): Promise<DatabaseAccess> {
  await waitForDatabase(url, waitSeconds);
  return { url, description: `the database at ${databaseAddress(url)}`, close: async () => undefined };
}

/** Starts the embedded PostgreSQL of DATA_DIR, held by this process (DataDirLock) until `close`. */
async function startEmbedded(config: AppConfig, log: (message: string) => void): Promise<DatabaseAccess> {
  const { dataDir } = config;
  const lock = DataDirLock.acquire(dataDir);
  try {
    const { directory, notice, record } = await clusterLocation(dataDir, config.embeddedPgFallbackDir);
    if (notice !== undefined) log(notice);
    log(`DATABASE_URL is not set: starting the embedded PostgreSQL in ${directory}`);
    const memory = visibleMemoryBytes();
    const settings = { ...tunedSettings(memory), ...config.embeddedPgSettings };
    log(`Embedded PostgreSQL settings for ${(memory / 2 ** 30).toFixed(1)} GiB of memory: ${describeSettings(settings)}`);
    // Loaded only when used, so that an image running against an external database can omit the binaries.
    const { EmbeddedDatabase } = await import('../database/embedded-postgres.js');
    const embedded = await EmbeddedDatabase.start(directory, { settings }).catch((error: unknown) => {
      // The overrides are the likeliest cause of a refused start: name them beside PostgreSQL's words.
      const overrides = describeSettings(config.embeddedPgSettings);
      if (error instanceof StartupError && overrides !== '') throw new StartupError(`${error.message} (EMBEDDED_PG_SETTINGS: ${overrides})`);
      throw error;
    });
    await record?.();
    return {
      url: embedded.url,
      description: `the embedded PostgreSQL in ${directory}`,
      close: async () => {
        await embedded.stop();
        lock.release();
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** The service's database: DATABASE_URL, or the embedded PostgreSQL of DATA_DIR, which the service runs. */
export function openServiceDatabase(config: AppConfig, log: (message: string) => void): Promise<DatabaseAccess> {
  return config.databaseUrl !== undefined ? external(config.databaseUrl, config.databaseWaitSeconds) : startEmbedded(config, log);
}

/**
 * The database an admin command works on: DATABASE_URL; else the embedded PostgreSQL of DATA_DIR, joined
 * while the instance holding DATA_DIR runs it, or started for the command (and stopped by `close`) when no
 * instance runs.
 */
export async function openAdminDatabase(config: AppConfig, log: (message: string) => void): Promise<DatabaseAccess> {
  if (config.databaseUrl !== undefined) return external(config.databaseUrl, config.databaseWaitSeconds);
  const holder = liveHolder(config.dataDir);
  if (holder === undefined) return startEmbedded(config, log);
  const directory = await existingClusterDirectory(config.dataDir);
  const { EmbeddedDatabase } = await import('../database/embedded-postgres.js');
  const url = await EmbeddedDatabase.runningUrl(directory);
  if (url === undefined) {
    throw new StartupError(
      `the instance holding DATA_DIR ${config.dataDir} (pid ${holder}) has not started its embedded PostgreSQL yet: try again in a moment`,
    );
  }
  await waitForDatabase(url, config.databaseWaitSeconds);
  return { url, description: `the embedded PostgreSQL in ${directory} (run by pid ${holder})`, close: async () => undefined };
}
