import { resolve } from 'node:path';
import { StartupError } from '../common/startup-error.js';
import { parsePgSettings, type PgSettings } from '../database/embedded-tuning.js';

/** Settings of decisions §1, read and validated once at start-up. */
export interface AppConfig {
  port: number;
  /** Unset: the service runs an embedded PostgreSQL under `dataDir/pg`. */
  databaseUrl: string | undefined;
  /** How long start-up waits for an unreachable DATABASE_URL before giving up. */
  databaseWaitSeconds: number;
  dataDir: string;
  adminApiKey: string | undefined;
  tokenTtlSeconds: number;
  taskLeaseSeconds: number;
  taskMaxDeliveries: number;
  changesRetentionDays: number;
  uploadSessionTtlHours: number;
  fileboxMaxFileBytes: number;
  /** How often the background jobs (change pruning, session expiry) run. */
  jobIntervalSeconds: number;
  /** EMBEDDED_PG_SETTINGS: overrides of the embedded PostgreSQL's machine-derived settings. */
  embeddedPgSettings: PgSettings;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** A bad setting: start-up stops with its one-line message. */
export class ConfigError extends StartupError {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function optionalString(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function pgSettings(env: Env, name: string): PgSettings {
  try {
    return parsePgSettings(env[name] ?? '');
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
}

export function loadConfig(env: Env): AppConfig {
  const databaseUrl = optionalString(env, 'DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const adminApiKey = optionalString(env, 'ADMIN_API_KEY');
  if (adminApiKey !== undefined && adminApiKey.length < 16) {
    throw new ConfigError('ADMIN_API_KEY must be at least 16 characters long');
  }
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    databaseUrl,
    databaseWaitSeconds: integer(env, 'DATABASE_WAIT_SECONDS', 30, 0, 3600),
    dataDir: resolve(optionalString(env, 'DATA_DIR') ?? './data'),
    adminApiKey,
    tokenTtlSeconds: integer(env, 'TOKEN_TTL_SECONDS', 3600, 1),
    taskLeaseSeconds: integer(env, 'TASK_LEASE_SECONDS', 300, 1),
    taskMaxDeliveries: integer(env, 'TASK_MAX_DELIVERIES', 5, 1),
    changesRetentionDays: integer(env, 'CHANGES_RETENTION_DAYS', 30, 1),
    uploadSessionTtlHours: integer(env, 'UPLOAD_SESSION_TTL_HOURS', 24, 1),
    fileboxMaxFileBytes: integer(env, 'FILEBOX_MAX_FILE_BYTES', 1073741824, 1),
    jobIntervalSeconds: integer(env, 'JOB_INTERVAL_SECONDS', 300, 1),
    embeddedPgSettings: pgSettings(env, 'EMBEDDED_PG_SETTINGS'),
  };
}

/** The only place that reads the process environment. */
export function loadConfigFromEnv(): AppConfig {
  return loadConfig(process.env);
}
