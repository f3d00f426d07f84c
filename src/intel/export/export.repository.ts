import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { KeyType, ObjectKey } from '../../common/indicators/indicators.js';
import type { TlpRank } from '../../common/markings/tlp.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { ObjectConditions } from '../../read-policy/read-policy.js';
import { SCORE_VERSION } from '../../scoring/score-sql.js';
import { SIGHTING_VERSION } from '../../sightings/sighting-sql.js';
import type { ExportFormat, ExportParams } from './export-formats.js';
import { EXPORT_STATEMENTS } from './export-statements.js';

/**
 * What an export shows, as cheap numbers: the collection's numbered feed position, how many committed
 * change records it has that the sequencer has not numbered yet, and how many of its objects are past
 * their expiry but not removed yet. Two reads with equal numbers see exactly the same live objects (the
 * argument is in CONTRIBUTING.md, "Exports"), so they make a strong ETag. `lastModified`: the newest of
 * those changes and expiries.
 */
export interface ExportPosition {
  lastSeq: string;
  pending: number;
  expired: number;
  lastModified: Date;
  /** The version of all sighting summaries (SIGHTING_VERSION), for exports filtered by sightings or scores. */
  sightingVersion: string;
  /** The version of every other score input (SCORE_VERSION), for exports filtered by scores. */
  scoreVersion: string;
}

/** $1 collection id. Indexes: the pending partial index, the expiry index, the (collection_id, seq) key. */
const POSITION = `
  SELECT c.last_seq::text AS "lastSeq",
         (SELECT count(*) FROM intel_change p WHERE p.seq IS NULL AND p.collection_id = c.id)::int AS pending,
         (SELECT count(*) FROM intel_object o WHERE o.expires_at <= now() AND o.collection_id = c.id)::int AS expired,
         GREATEST((SELECT created_at FROM intel_change WHERE collection_id = c.id AND seq = c.last_seq),
                  (SELECT max(created_at) FROM intel_change WHERE seq IS NULL AND collection_id = c.id),
                  (SELECT max(expires_at) FROM intel_object WHERE expires_at <= now() AND collection_id = c.id),
                  c.created_at) AS "lastModified",
         ${SIGHTING_VERSION} AS "sightingVersion", ${SCORE_VERSION} AS "scoreVersion"
    FROM intel_collection c WHERE c.id = $1`;

/** Keys per FETCH of an export's first pass (EXPORT_STATEMENTS.listableKeys). */
const LISTABLE_BATCH = 10_000;

/** What the service keeps of a state (ExportStates): read in a snapshot once, then known at its position. */
export interface StateFact<T> {
  /** What was found before at this position (read in the snapshot), when kept: then it is not read again. */
  known: (position: ExportPosition) => T | undefined;
  /** Told what a snapshot at this position found. */
  found: (position: ExportPosition, value: T) => void;
}

/** What an export leaves out: the key types to read, whether a key puts its object on an excluding list, and the ids kept. */
export interface Exclusion extends StateFact<readonly string[]> {
  keyTypes: readonly string[];
  excludes: (key: ObjectKey) => boolean;
}

/** What an export knows of its state besides its rows: the marking, and the objects a list leaves out (none without `exclusion`). */
export interface StateFacts {
  marking: StateFact<TlpRank>;
  exclusion?: Exclusion;
}

/** An export's state as its headers show it: the position (the tag), the objects left out, the most restrictive marking held. */
export interface ExportState {
  position: ExportPosition;
  excluded: number;
  marking: TlpRank;
}

/** Rows per FETCH: values are short; rows with contexts may be large, so fewer of them at a time. */
const BATCH_ROWS: Record<ExportFormat, number> = { txt: 2000, csv: 500, ndjson: 500, stix: 250 };

/**
 * One export's read: a READ ONLY REPEATABLE READ transaction on a connection of the export pool, whose
 * one snapshot gives both the position (the ETag) and every row, read through a server-side cursor in
 * batches. `cancel` (the client went away) stops a FETCH under way; `close` ends the transaction and
 * gives the connection back (or drops it after a cancel, which could otherwise hit its next statement).
 */
export class ExportSnapshot {
  private fetching = false;
  private cancelled = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly cancelBackend: (pid: number) => Promise<unknown>,
    private readonly format: ExportFormat,
    /** The snapshot's state: its position (the body's tag), how many live objects it leaves out (warninglists), its marking. */
    readonly state: ExportState,
  ) {}

  /** The rows in batches; arrays of one value for txt, objects otherwise. */
  async *batches(): AsyncGenerator<unknown[]> {
    for (;;) {
      const text = `FETCH ${BATCH_ROWS[this.format]} FROM export_rows`;
      this.fetching = true;
      let rows: unknown[];
      try {
        rows = this.format === 'txt' ? (await this.client.query({ text, rowMode: 'array' })).rows : (await this.client.query(text)).rows;
      } finally {
        this.fetching = false;
      }
      if (rows.length === 0) return;
      yield rows;
    }
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    const pid = (this.client as unknown as { processID: number | null }).processID;
    if (this.fetching && pid !== null) this.cancelBackend(pid).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.cancelled) {
      this.client.release(true);
      return;
    }
    try {
      await this.client.query('ROLLBACK');
      this.client.release();
    } catch (error) {
      this.client.release(error as Error);
    }
  }
}

/**
 * The reads of exports. Exports hold a connection for as long as their client reads, so they take it from
 * a pool of their own (EXPORT_POOL_SIZE): a slow firewall never starves the API's pool.
 */
@Injectable()
export class ExportRepository implements OnModuleDestroy {
  private readonly logger = new Logger(ExportRepository.name);
  private readonly pool: pg.Pool;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: config.exportPoolSize,
      // As the main pool: a saturated pool answers 503 within seconds instead of hanging.
      connectionTimeoutMillis: 5_000,
      application_name: 'ids-export',
    });
    this.pool.on('error', (error) => this.logger.warn(`idle export connection lost: ${error.message}`));
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.end();
  }

  /** The position now (outside any transaction): for HEAD and conditional requests, one statement. */
  async position(collectionId: number): Promise<ExportPosition> {
    const [row]: ExportPosition[] = await this.dataSource.query(POSITION, [collectionId]);
    return row;
  }

  /** Opens the snapshot: BEGIN, its state (position, exclusions, marking), the cursor. The caller closes it. */
  async open(collectionId: number, params: ExportParams, policy: ObjectConditions, facts: StateFacts): Promise<ExportSnapshot> {
    const client = await this.pool.connect();
    try {
      const { state, excluded } = await this.begin(client, collectionId, params, policy, facts);
      const statement = EXPORT_STATEMENTS.rows(collectionId, params, policy, excluded);
      await client.query(`DECLARE export_rows NO SCROLL CURSOR FOR ${statement.text}`, statement.values);
      return new ExportSnapshot(client, (pid) => this.dataSource.query('SELECT pg_cancel_backend($1)', [pid]), params.format, state);
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  /**
   * For the answers without a body (HEAD, 304) when the service does not know their state yet: the state of
   * a snapshot (its position: the tag it belongs to), read as the export's first statements read it.
   */
  async stateAt(collectionId: number, params: ExportParams, policy: ObjectConditions, facts: StateFacts): Promise<ExportState> {
    const client = await this.pool.connect();
    try {
      const { state } = await this.begin(client, collectionId, params, policy, facts);
      await client.query('ROLLBACK');
      client.release();
      return state;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  /**
   * BEGIN, then the position, the objects to leave out and the marking, of one snapshot. What is kept for the
   * position read here stands for what this snapshot would read: that position is the one the body's ETag is
   * made of, read in the snapshot the body is read in, so the kept ids and marking are those it would find (a
   * write or a list change since is another position or another set of lists, never a stale hit).
   */
  private async begin(client: pg.PoolClient, collectionId: number, params: ExportParams, policy: ObjectConditions, facts: StateFacts) {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // The first statement takes the transaction's snapshot: the position and every later read see the same data.
    const { rows } = await client.query<ExportPosition>(POSITION, [collectionId]);
    const position = rows[0];
    const { exclusion } = facts;
    let excluded: readonly string[] = [];
    if (exclusion !== undefined) {
      const known = exclusion.known(position);
      excluded = known ?? (await this.listedObjects(client, collectionId, params, policy, exclusion));
      if (known === undefined) exclusion.found(position, excluded);
    }
    let marking = facts.marking.known(position);
    if (marking === undefined) {
      const statement = EXPORT_STATEMENTS.marking(collectionId, params.keyType, policy, excluded);
      marking = (await client.query<{ tlp: TlpRank }>(statement.text, statement.values)).rows[0].tlp;
      facts.marking.found(position, marking);
    }
    return { state: { position, excluded: excluded.length, marking }, excluded };
  }

  /**
   * The ids of the live objects the export would hold that have a key on an excluding list, read in batches
   * (memory: the ids found and two batches): the next batch is asked for before this one is matched, so the
   * database reads while keys match.
   */
  private async listedObjects(
    client: pg.PoolClient,
    collectionId: number,
    params: ExportParams,
    policy: ObjectConditions,
    exclusion: Exclusion,
  ): Promise<string[]> {
    const listed = new Set<string>();
    const statement = EXPORT_STATEMENTS.listableKeys(collectionId, params.keyType, policy, exclusion.keyTypes);
    await client.query(`DECLARE listable_keys NO SCROLL CURSOR FOR ${statement.text}`, statement.values);
    const fetch = (): Promise<pg.QueryArrayResult<[string, KeyType, string]>> =>
      client.query<[string, KeyType, string]>({ text: `FETCH ${LISTABLE_BATCH} FROM listable_keys`, rowMode: 'array' });
    let next: Promise<pg.QueryArrayResult<[string, KeyType, string]>> | undefined = fetch();
    while (next !== undefined) {
      const { rows }: { rows: [string, KeyType, string][] } = await next;
      next = rows.length < LISTABLE_BATCH ? undefined : fetch();
      // A failed read ahead is met by the next await; never an unhandled rejection if matching throws first.
      next?.catch(() => undefined);
      for (const [id, type, value] of rows) if (!listed.has(id) && exclusion.excludes({ type, value })) listed.add(id);
    }
    await client.query('CLOSE listable_keys');
    return [...listed];
  }
}
