import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The service's statements, loaded from the service build under test (its `*-statements.ts` modules, which
 * import no framework), each with its parameter builder: the raw `pg` baselines, the stack floor and the
 * seeding run the very text the service runs, with the values built as the service builds them, whatever
 * the service changes. The bench keeps no copy of service SQL. The interfaces below describe only what the
 * bench uses of each module; a build that lacks one fails the run at load time, and a statement that drifted
 * from them fails its row (the parity check of bench/lib/row.ts, the quick bench test).
 */

/** Values by name (src/common/sql/named-parameters.ts). */
interface NamedParameters {
  values(named: Record<string, unknown>): unknown[];
}

export interface PreparedText {
  name: string;
  text: string;
}

/** src/intel/object-statements.ts: single adds and deletes, and the keyset pages of objects and changes. */
export interface ObjectStatements {
  OBJECT_STATEMENTS: { findHits: PreparedText; insert: PreparedText; update: PreparedText; remove: PreparedText };
  findHitsParameters(
    collectionId: number,
    keys: readonly { type: string; value: string }[],
    context: string | null,
    expiry: { at: string | null; ttlSeconds: number | null } | null,
  ): unknown[];
  WRITE_PARAMETERS: { insert: NamedParameters; update: NamedParameters; remove: NamedParameters };
  /** $1 collection, $2 after position, $3 rows, $4 byte cap, the listing's $5 the time of its scores (`parameters` names them). */
  FEED_STATEMENTS: { listPage: string; changesAfter: string; parameters: { listPage: NamedParameters; changesAfter: NamedParameters } };
}

/** The part of a batch plan (src/intel/batch/batch-plan.ts) the batch statement writes: new objects only, here. */
export interface NewObjectsPlan {
  changes: {
    operation: 'Add';
    type: string;
    keys: { type: string; value: string }[];
    contextJson: string;
    expiry: { at: null; ttlSeconds: null };
    uid: string;
    addedAt: null;
    /** The object's marking after the record (a TLP rank) and before it (none for an Add). */
    tlp: number;
    wasTlp: null;
  }[];
  updates: never[];
  /** `tlp`: the marking of the api claim the write makes (a rank); `claimedTlp` its source claims' (none here). */
  inserts: {
    type: string;
    keys: { type: string; value: string }[];
    contextJson: string;
    expiry: { at: null; ttlSeconds: null };
    uid: string;
    tlp: number;
    claimedTlp: null;
  }[];
}

/** src/intel/write-origin.ts. */
export interface WriteOrigin {
  via: string;
  keyID: number | null;
  requestID: string | null;
  source: string | null;
  /** The writer key's reliability, a rank (src/scoring/admiralty.ts's reliabilityRank; 2: F, every key's default). */
  reliability: number | null;
}

/** src/intel/batch/batch-statements.ts: a batch's write (the exclusive writer lock, then APPLY). */
export interface BatchStatements {
  BATCH_STATEMENTS: { lock: string; apply: string; parameters(collectionId: number, plan: NewObjectsPlan, origin: WriteOrigin): unknown[] };
}

/** src/insight/task-statements.ts: taking and completing tasks. */
export interface TaskStatements {
  TASK_STATEMENTS: {
    take: string;
    takeParameters(limit: number, maxDeliveries: number, leaseSeconds: number): unknown[];
    complete: string;
    completeParameters(id: string, maxDeliveries: number, result: unknown): unknown[];
  };
}

/** src/intel/lookup/lookup-statements.ts. */
export interface LookupStatements {
  LOOKUP_STATEMENT: { text: string; parameters: NamedParameters };
}

/** src/intel/network/network-statements.ts. */
export interface NetworkStatements {
  NETWORK_SEARCHES: { within: string; contains: string; parameters: NamedParameters };
}

/** src/intel/object-versions-statements.ts (TAXII's object versions). */
export interface VersionStatements {
  versionsStatement(
    collectionId: number,
    query: { afterSeq: number; versions: 'all' | { first: boolean; last: boolean; at: string[] }; limit: number },
    maxBytes: number,
  ): { text: string; values: unknown[] };
}

/** src/intel/export/export-statements.ts. */
/** What an export's statement is built from (src/intel/export/export-formats.ts, ExportParams). */
interface ExportParams {
  format: 'txt' | 'csv' | 'ndjson' | 'stix';
  keyType: string | null;
  urlScheme: 'keep' | 'omit';
}

/** The SQL part of a read policy (src/read-policy/read-policy.ts, ObjectConditions), as the statements take it. */
interface ObjectConditions {
  readonly parameterNames: string[];
  values(): Record<string, unknown>;
  conditions(o: string, $: Record<string, string>): string;
}

export interface ExportStatements {
  EXPORT_STATEMENTS: {
    rows(collectionId: number, params: ExportParams, policy: ObjectConditions): { text: string; values: unknown[] };
  };
}

/** The read policy of a request nothing narrows (an unrestricted key, no filter). */
export interface ReadPolicyModule {
  UNFILTERED: ObjectConditions;
}

export interface ServiceStatements {
  objects: ObjectStatements;
  batch: BatchStatements;
  tasks: TaskStatements;
  lookup: LookupStatements;
  network: NetworkStatements;
  versions: VersionStatements;
  export: ExportStatements;
  readPolicy: ReadPolicyModule;
}

/** The module `path` of the service build in `serviceDir` (a dist/ folder), checked to export `names`. */
async function loadFromBuild<Module>(serviceDir: string, path: string, names: string[]): Promise<Module> {
  const file = join(serviceDir, ...path.split('/'));
  const loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const missing = names.filter((name) => loaded[name] === undefined);
  if (missing.length > 0) throw new Error(`${file} exports no ${missing.join(', ')}: a service build older than the bench`);
  return loaded as Module;
}

/** Every statement module of the service build in `serviceDir`. */
export async function loadServiceStatements(serviceDir: string): Promise<ServiceStatements> {
  return {
    objects: await loadFromBuild(serviceDir, 'intel/object-statements.js', ['OBJECT_STATEMENTS', 'findHitsParameters', 'WRITE_PARAMETERS', 'FEED_STATEMENTS']),
    batch: await loadFromBuild(serviceDir, 'intel/batch/batch-statements.js', ['BATCH_STATEMENTS']),
    tasks: await loadFromBuild(serviceDir, 'insight/task-statements.js', ['TASK_STATEMENTS']),
    lookup: await loadFromBuild(serviceDir, 'intel/lookup/lookup-statements.js', ['LOOKUP_STATEMENT']),
    network: await loadFromBuild(serviceDir, 'intel/network/network-statements.js', ['NETWORK_SEARCHES']),
    versions: await loadFromBuild(serviceDir, 'intel/object-versions-statements.js', ['versionsStatement']),
    export: await loadFromBuild(serviceDir, 'intel/export/export-statements.js', ['EXPORT_STATEMENTS']),
    readPolicy: await loadFromBuild(serviceDir, 'read-policy/read-policy.js', ['UNFILTERED']),
  };
}

/**
 * The write origin of the raw baselines' single writes (src/intel/write-origin.ts), as an API request of one
 * key would give it.
 */
export const RAW_WRITE_ORIGIN: WriteOrigin = { via: 'api', keyID: 1, requestID: 'bench-raw-baseline', source: null, reliability: 2 };

/**
 * Settings the bench gives every service it starts (bench/lib/service.ts), and its baselines and floor run
 * with: set here, not copied from the service's defaults, so both sides agree whatever those become.
 */
export const SERVICE_SETTINGS = {
  /** The byte bound of every page (PAGE_MAX_BYTES). */
  pageMaxBytes: 8 * 1024 * 1024,
  taskMaxDeliveries: 5,
  taskLeaseSeconds: 300,
  databasePoolSize: 24,
  /**
   * Row 24d waits for the expiry job's next tick (untimed: its time is taken from the job's own records);
   * every 5 s instead of 30 keeps that wait short. A tick that finds nothing to remove costs one statement.
   */
  expiryIntervalSeconds: 5,
};

/** SERVICE_SETTINGS as the service's environment. */
export function serviceSettingsEnv(): Record<string, string> {
  return {
    PAGE_MAX_BYTES: String(SERVICE_SETTINGS.pageMaxBytes),
    TASK_MAX_DELIVERIES: String(SERVICE_SETTINGS.taskMaxDeliveries),
    TASK_LEASE_SECONDS: String(SERVICE_SETTINGS.taskLeaseSeconds),
    DATABASE_POOL_SIZE: String(SERVICE_SETTINGS.databasePoolSize),
    EXPIRY_INTERVAL_SECONDS: String(SERVICE_SETTINGS.expiryIntervalSeconds),
  };
}
