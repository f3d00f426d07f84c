import { existsSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { parseCidr } from '../common/http/client-address.js';
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
  /** A lease never runs past its take + this, however often heartbeats extend it. */
  taskMaxLeaseSeconds: number;
  /** Back-off of a transient failure: min(max, base × 2^(attempt−1)) × a random factor in [0.5, 1]. */
  taskRetryBaseSeconds: number;
  taskRetryMaxSeconds: number;
  changesRetentionDays: number;
  /** How long change records are kept for object history (extensions §14); never less than the feed's retention. */
  historyRetentionDays: number;
  uploadSessionTtlHours: number;
  fileboxMaxFileBytes: number;
  /** How often the background jobs (change pruning, session expiry) run. */
  jobIntervalSeconds: number;
  /** EMBEDDED_PG_SETTINGS: overrides of the embedded PostgreSQL's machine-derived settings. */
  embeddedPgSettings: PgSettings;
  /** As root: where the embedded cluster goes when its `postgres` user cannot reach DATA_DIR (cluster-location.ts). */
  embeddedPgFallbackDir: string;
  /** Most bytes of one page of any list (its JSON array); one item larger than this still goes out alone. */
  pageMaxBytes: number;
  /** Largest number of pooled PostgreSQL connections of this instance. */
  databasePoolSize: number;
  /** Connections of the separate pool that streaming exports hold for their whole body (one each). */
  exportPoolSize: number;
  /** HTTP server bounds against clients that hold connections (README "Timeouts and connection bounds"). */
  server: ServerLimits;
  /** FILEBOX_STORAGE: where file content lives (extensions §6). */
  fileboxStorage: FileboxStorageConfig;
  /** How often the expiry job removes expired objects (each with a `Remove` change, reason Expired). */
  expiryIntervalSeconds: number;
  /** Extension module files (absolute paths), loaded at start in this order. */
  extensions: string[];
  /** Every `EXT_*` setting, for extensions (injected as EXTENSION_SETTINGS). */
  extensionSettings: Readonly<Record<string, string>>;
  /** Port of the separate `GET /metrics` listener (Prometheus text); 0 turns metrics off. */
  metricsPort: number;
  logLevel: LogLevel;
  /** `json`: one JSON object per line, for log pipelines; `pretty`: coloured lines for a terminal. */
  logFormat: LogFormat;
  /** On SIGTERM/SIGINT, how long requests in flight may take to finish before their connections are cut. */
  shutdownGraceSeconds: number;
  /** How long an instance may spend request-limit units granted to it ahead of use before it gives them back. */
  requestLimitLeaseMs: number;
  /** AUDIT: `off` for installations that audit at their proxy; every write then goes unrecorded here. */
  audit: boolean;
  /** AUDIT_READS: reads are recorded too (not the public health checks). */
  auditReads: boolean;
  /** How long audit entries are kept. */
  auditRetentionDays: number;
  /** Sources (extensions §13): fetch limits, the outbound address policy and the schedule's lease. */
  sources: SourcesConfig;
  /**
   * TRUST_PROXY: the reverse proxies (addresses or CIDRs, or Express's `loopback`, `linklocal`, `uniquelocal`)
   * whose `X-Forwarded-For` gives the client address; empty: the peer's own address, the header ignored.
   */
  trustProxy: string[];
  /** The web console under `/console` (src/console). */
  console: ConsoleSettings;
  /** Sightings (src/sightings). */
  sightings: SightingSettings;
}

export interface SightingSettings {
  /** SIGHTING_RAW_DAYS: items older than this are rolled up into hourly sums per key, source and kind. */
  rawDays: number;
  /** SIGHTING_RETENTION_DAYS: items and roll-ups older than this are removed; older items are refused. */
  retentionDays: number;
}

export interface SourcesConfig {
  /** SOURCE_TIMEOUT_SECONDS: the most one fetch (headers and body) may take. */
  timeoutSeconds: number;
  /** SOURCE_MAX_BYTES: the most bytes of one body, decoded. */
  maxBytes: number;
  /** SOURCE_DENY_NETWORKS: CIDRs no fetch may connect to (checked on the resolved address, each redirect too). */
  denyNetworks: string[];
  /** SOURCE_LEASE_SECONDS: how long a run's lease lasts unrenewed; another instance takes over after it. */
  leaseSeconds: number;
  /** SOURCE_POLL_SECONDS: how often each instance looks for due sources. */
  pollSeconds: number;
}

/** Link-local and the cloud metadata addresses (extensions §13). */
export const DEFAULT_DENY_NETWORKS = '169.254.0.0/16,fe80::/10,fd00:ec2::254/128';

function denyNetworks(env: Env): string[] {
  const raw = optionalString(env, 'SOURCE_DENY_NETWORKS') ?? DEFAULT_DENY_NETWORKS;
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((cidr) => {
      if (parseCidr(cidr) === undefined) throw new ConfigError(`SOURCE_DENY_NETWORKS: "${cidr}" is not a CIDR`);
      return cidr;
    });
}

export interface ConsoleSettings {
  enabled: boolean;
  /** A session unused this long ends. */
  sessionIdleMinutes: number;
  /** A session ends this long after sign-in, however busy. */
  sessionMaxHours: number;
}

export interface ServerLimits {
  /** A request's headers must have arrived within this. */
  headersTimeoutSeconds: number;
  /** A whole request (headers and body) must have arrived within this. */
  requestTimeoutSeconds: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutSeconds: number;
  /** Connections beyond this many open ones are closed on arrival. */
  maxConnections: number;
}

/**
 * `local` (under `dataDir/files`) or an S3 bucket. For S3 the endpoint, region and credentials come from the
 * AWS SDK's standard variables; read here (the one place that reads the environment) and handed to the client.
 */
export type FileboxStorageConfig =
  | { kind: 'local' }
  | {
      kind: 's3';
      bucket: string;
      /** Empty or ending in `/`. */
      prefix: string;
      /** AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL; when set, path-style addressing (MinIO, Ceph RGW...). */
      endpoint: string | undefined;
      region: string;
      /** Static keys when both variables are set; otherwise the SDK's default provider chain. */
      credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
    };
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

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

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = optionalString(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
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

/** EXTENSIONS: comma-separated module files, relative to the working directory; each must exist. */
function extensionFiles(env: Env): string[] {
  const raw = optionalString(env, 'EXTENSIONS');
  if (raw === undefined) return [];
  return raw.split(',').map((entry) => {
    const path = resolve(entry.trim());
    if (entry.trim() === '' || !existsSync(path) || !statSync(path).isFile()) {
      throw new ConfigError(`EXTENSIONS names "${entry.trim()}", which is not a file`);
    }
    return path;
  });
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
    taskMaxLeaseSeconds: integer(env, 'TASK_MAX_LEASE_SECONDS', 3600, 1),
    taskRetryBaseSeconds: integer(env, 'TASK_RETRY_BASE_SECONDS', 10, 0),
    taskRetryMaxSeconds: integer(env, 'TASK_RETRY_MAX_SECONDS', 3600, 0),
    changesRetentionDays: integer(env, 'CHANGES_RETENTION_DAYS', 30, 1),
    historyRetentionDays: integer(env, 'HISTORY_RETENTION_DAYS', 365, 1),
    uploadSessionTtlHours: integer(env, 'UPLOAD_SESSION_TTL_HOURS', 24, 1),
    fileboxMaxFileBytes: integer(env, 'FILEBOX_MAX_FILE_BYTES', 1073741824, 1),
    jobIntervalSeconds: integer(env, 'JOB_INTERVAL_SECONDS', 300, 1),
    embeddedPgSettings: pgSettings(env, 'EMBEDDED_PG_SETTINGS'),
    embeddedPgFallbackDir: resolve(optionalString(env, 'EMBEDDED_PG_FALLBACK_DIR') ?? '/var/lib/intel-data-service'),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 24, 1, 1000),
    exportPoolSize: integer(env, 'EXPORT_POOL_SIZE', 4, 1, 100),
    server: serverLimits(env),
    expiryIntervalSeconds: integer(env, 'EXPIRY_INTERVAL_SECONDS', 30, 1),
    extensions: extensionFiles(env),
    extensionSettings: Object.freeze(
      Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[0].startsWith('EXT_') && entry[1] !== undefined)),
    ),
    pageMaxBytes: integer(env, 'PAGE_MAX_BYTES', 8 * 1024 * 1024, 1024),
    fileboxStorage: fileboxStorage(env),
    metricsPort: integer(env, 'METRICS_PORT', 9464, 0, 65535),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', LOG_FORMATS, 'json'),
    shutdownGraceSeconds: integer(env, 'SHUTDOWN_GRACE_SECONDS', 10, 0, 3600),
    requestLimitLeaseMs: integer(env, 'REQUEST_LIMIT_LEASE_MS', 250, 10, 60_000),
    audit: oneOf(env, 'AUDIT', ['on', 'off'], 'on') === 'on',
    auditReads: oneOf(env, 'AUDIT_READS', ['true', 'false'], 'false') === 'true',
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 365, 1),
    trustProxy: trustedProxies(env),
    sources: {
      timeoutSeconds: integer(env, 'SOURCE_TIMEOUT_SECONDS', 300, 1, 86400),
      maxBytes: integer(env, 'SOURCE_MAX_BYTES', 256 * 1024 * 1024, 1),
      denyNetworks: denyNetworks(env),
      leaseSeconds: integer(env, 'SOURCE_LEASE_SECONDS', 120, 1, 86400),
      pollSeconds: integer(env, 'SOURCE_POLL_SECONDS', 10, 1, 3600),
    },
    console: {
      enabled: oneOf(env, 'CONSOLE_ENABLED', ['true', 'false'], 'true') === 'true',
      sessionIdleMinutes: integer(env, 'CONSOLE_SESSION_IDLE_MINUTES', 30, 1, 24 * 60),
      sessionMaxHours: integer(env, 'CONSOLE_SESSION_MAX_HOURS', 12, 1, 24 * 30),
    },
    sightings: sightingSettings(env),
  };
}

function sightingSettings(env: Env): SightingSettings {
  const settings = {
    rawDays: integer(env, 'SIGHTING_RAW_DAYS', 7, 1, 3650),
    retentionDays: integer(env, 'SIGHTING_RETENTION_DAYS', 365, 1, 36500),
  };
  // Roll-ups of items already removed would be empty: raw items must be kept no longer than anything.
  if (settings.rawDays > settings.retentionDays) {
    throw new ConfigError('SIGHTING_RAW_DAYS must not exceed SIGHTING_RETENTION_DAYS');
  }
  return settings;
}

/** S3 bucket naming rules (general purpose buckets): 3-63 of a-z 0-9 . -, starting and ending alphanumeric. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function fileboxStorage(env: Env): FileboxStorageConfig {
  const raw = optionalString(env, 'FILEBOX_STORAGE') ?? 'local';
  if (raw === 'local') return { kind: 'local' };
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(raw);
  if (!match) throw new ConfigError(`FILEBOX_STORAGE must be "local" or "s3://<bucket>[/<prefix>]", got "${raw}"`);
  const [, bucket, rawPrefix = ''] = match;
  if (!BUCKET.test(bucket) || bucket.includes('..')) {
    throw new ConfigError(`FILEBOX_STORAGE names an invalid S3 bucket "${bucket}" (3-63 characters: a-z, 0-9, dots, hyphens)`);
  }
  const prefix = rawPrefix.replace(/\/+$/, '');
  if (prefix !== '' && prefix.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new ConfigError(`FILEBOX_STORAGE has an invalid key prefix "${rawPrefix}" (no empty, "." or ".." segments)`);
  }
  const endpoint = optionalString(env, 'AWS_ENDPOINT_URL_S3') ?? optionalString(env, 'AWS_ENDPOINT_URL');
  if (endpoint !== undefined && !/^https?:\/\/[^/\s]+/.test(endpoint)) {
    throw new ConfigError(`the S3 endpoint must be an http:// or https:// URL, got "${endpoint}"`);
  }
  const accessKeyId = optionalString(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = optionalString(env, 'AWS_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together');
  }
  const sessionToken = optionalString(env, 'AWS_SESSION_TOKEN');
  return {
    kind: 's3',
    bucket,
    prefix: prefix === '' ? '' : `${prefix}/`,
    endpoint,
    region: optionalString(env, 'AWS_REGION') ?? optionalString(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1',
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } : undefined,
  };
}

function serverLimits(env: Env): ServerLimits {
  const limits = {
    headersTimeoutSeconds: integer(env, 'HEADERS_TIMEOUT_SECONDS', 20, 1, 3600),
    requestTimeoutSeconds: integer(env, 'REQUEST_TIMEOUT_SECONDS', 600, 1, 86400),
    keepAliveTimeoutSeconds: integer(env, 'KEEP_ALIVE_TIMEOUT_SECONDS', 5, 1, 3600),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 1000, 1, 1_000_000),
  };
  // The request deadline includes the headers: a shorter one would make the headers deadline meaningless.
  if (limits.headersTimeoutSeconds > limits.requestTimeoutSeconds) {
    throw new ConfigError('HEADERS_TIMEOUT_SECONDS must not exceed REQUEST_TIMEOUT_SECONDS');
  }
  return limits;
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: comma-separated addresses, CIDRs or Express's names for address ranges. */
function trustedProxies(env: Env): string[] {
  const raw = optionalString(env, 'TRUST_PROXY');
  if (raw === undefined) return [];
  return raw.split(',').map((entry) => {
    const proxy = entry.trim();
    if (!PROXY_NAMES.includes(proxy) && isIP(proxy) === 0 && parseCidr(proxy) === undefined) {
      throw new ConfigError(`TRUST_PROXY: "${proxy}" is not an IP address, a CIDR, or one of ${PROXY_NAMES.join(', ')}`);
    }
    return proxy;
  });
}

/** The only place that reads the process environment. */
export function loadConfigFromEnv(): AppConfig {
  return loadConfig(process.env);
}
