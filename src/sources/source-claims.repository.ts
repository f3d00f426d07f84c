import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoUtc } from '../common/sql/timestamps.js';
import { BUMP_SCORE_VERSION } from '../scoring/score-sql.js';
import { lastSeenOf } from './claim-times.js';
import { isSuspect, missesToEnd, type Removal } from './removal.js';
import { LeaseLost } from './run-failures.js';
import type { ObjectSourceClaim } from './source-claims.service.js';

export interface ClaimRow {
  type: string;
  value: string;
  firstSeenAt: string;
  lastSeenAt: string;
  missedRuns: number;
}

const CLAIMS_OF_PARAMETERS = namedParameters(['collection', 'types', 'values']);
const C = CLAIMS_OF_PARAMETERS.$;

/** Per source of the collection, the claims of any of the keys (given as two arrays: types, values), by source name. */
const CLAIMS_OF = `SELECT s.name AS source, ${isoUtc('min(c.first_seen_at)')} AS "firstSeenAt", ${isoUtc(`max(${lastSeenOf('c', 's')})`)} AS "lastSeenAt"
    FROM sources_claim c JOIN sources_source s ON s.id = c.source_id
   WHERE s.collection = ${C.collection} AND (c.key_type, c.value) IN (SELECT * FROM unnest(${C.types}::text[], ${C.values}::text[]))
   GROUP BY s.name ORDER BY s.name`;

/** The run's tables (BatchService's StagedRun) that receive the keys of the claims it ends. */
interface EndedTables {
  /** `(key_type, value)`: the keys whose last claim in the collection ended. */
  ended: string;
  /** `(key_type, value)`: the keys whose claims changed in a way that may move a marking (every ended one included). */
  remarked: string;
}

/** How a run's claims move (extensions §13 "Runs"). */
export interface ClaimSettlement extends EndedTables {
  sourceId: number;
  collection: string;
  /** The run's lease: the settlement writes nothing unless the run still holds it; null for a dry run. */
  runID: string | null;
  /**
   * A relation `(key_type, value, tlp, credibility)` of the keys the body lists (each claimed at that marking
   * and credibility, its missed runs reset), or null when the body is the previous one (304, or the same
   * normalised objects): then the claims it did not list are missed once more, and every claim keeps its
   * marking and credibility.
   */
  seen: string | null;
  snapshot: boolean;
  /** Keys whose claim the run ends itself (a feed kind's revoked or deleted items), not among `seen`. */
  withdrawn: ObjectKey[];
  policy: Removal;
  maxRemovalRatio: number;
  /** Fewer items than the source's minItems: suspect whatever the removals. */
  tooFew: boolean;
}

/**
 * A claim held before the run settling now: not first seen by it. A run's transaction started after the
 * previous run of its source committed (one lease at a time), so its now() is later than every older claim's.
 */
const HELD_BEFORE = `first_seen_at < now()`;

/** A snapshot run's temporary tables (of its transaction): the keys its body lists, and the claims it misses. */
const RUN_SEEN = 'source_run_seen';
const RUN_MISSED = 'source_run_missed';

/** Whether another source of the collection still claims the key of row `g` (a source other than `sourceId`). */
const CLAIMED_ELSEWHERE = (g: string, sourceId: string, collection: string) => `EXISTS (
  SELECT 1 FROM sources_claim o JOIN sources_source os ON os.id = o.source_id
   WHERE o.key_type = ${g}.key_type AND o.value = ${g}.value AND o.source_id <> ${sourceId} AND os.collection = ${collection})`;

const LEASE_PARAMETERS = namedParameters(['sourceId', 'runID']);

/** The source row locked by the run that still holds its lease (no row: the lease was taken over). */
const HOLD_LEASE = `SELECT 1 FROM sources_source WHERE id = ${LEASE_PARAMETERS.$.sourceId} AND lease_run_id = ${LEASE_PARAMETERS.$.runID} FOR UPDATE`;

const SOURCE_PARAMETERS = namedParameters(['sourceId']);
const S = SOURCE_PARAMETERS.$;

/** The body's keys once, for the upsert and, in a snapshot, the claims it misses (`seen`: the staged relation). */
const STAGE_SEEN = (seen: string) => `CREATE TEMP TABLE ${RUN_SEEN} ON COMMIT DROP AS SELECT s.key_type, s.value, s.tlp, s.credibility FROM ${seen} s`;

/**
 * The claims of the keys listed, each at the marking and credibility of this listing. A snapshot rewrites
 * only the claims whose state changes (new, listed again after a miss, marked otherwise, or of another
 * credibility): a claim listed run after run keeps its row, and its lastSeenAt is the source's last success
 * (lastSeenOf). A delta body lists few keys, each seen now. The keys of every claim written go to `remarked`:
 * a rewritten one's marking may differ, and a new one, even at TLP:CLEAR, gives an object the run does not
 * rewrite (one the api added before) its first source claim, which `claimed_tlp` (set from NULL) tells the
 * score (src/scoring/score-sql.ts reads claims only then). A snapshot that lists the same million keys run after run
 * re-marks nothing; a first run's objects are written by the run, marked already, so its re-mark updates none.
 * Answers how many claims it wrote (`touched`).
 */
const UPSERT_SEEN = (snapshot: boolean, remarked: string) => `WITH listed AS (
    INSERT INTO sources_claim (source_id, key_type, value, first_seen_at, last_seen_at, missed_runs, tlp, credibility)
    SELECT ${S.sourceId}::int, s.key_type, s.value, now(), now(), 0, s.tlp, s.credibility FROM ${RUN_SEEN} s
    ON CONFLICT (source_id, key_type, value) DO UPDATE SET last_seen_at = now(), missed_runs = 0, tlp = EXCLUDED.tlp, credibility = EXCLUDED.credibility${
      snapshot
        ? ' WHERE sources_claim.missed_runs > 0 OR sources_claim.tlp <> EXCLUDED.tlp OR sources_claim.credibility IS DISTINCT FROM EXCLUDED.credibility'
        : ''
    }
    RETURNING key_type, value
  ),
  remark AS (INSERT INTO ${remarked} (key_type, value) SELECT key_type, value FROM listed)
  SELECT count(*)::int AS touched FROM listed`;

/**
 * Missed by this run: not listed by its body (an anti-join with the keys it lists), or, for a repeat of the
 * previous body, already missed by it. Held in a table of their own: usually few, read three times.
 */
const STAGE_MISSED = (listed: boolean) => `CREATE TEMP TABLE ${RUN_MISSED} ON COMMIT DROP AS SELECT c.key_type, c.value FROM sources_claim c
  WHERE c.source_id = ${S.sourceId} AND ${listed ? `NOT EXISTS (SELECT 1 FROM ${RUN_SEEN} s WHERE s.key_type = c.key_type AND s.value = c.value)` : 'c.missed_runs > 0'}`;
const STAGE_MISSED_OF_BODY = STAGE_MISSED(true);
const STAGE_MISSED_OF_REPEAT = STAGE_MISSED(false);

const JUDGE_PARAMETERS = namedParameters(['sourceId', 'missesToEnd']);
const J = JUDGE_PARAMETERS.$;

/**
 * The removal judgement's count (removal.ts: endsWithThisMiss, isSuspect): the claims held before this run,
 * and those its miss ends, `missesToEnd` (null: never) bound as a value. The ratio is of the claims held
 * before this run: those its upsert just made (first seen at this transaction's now()) do not count, or a
 * body of all new values would dilute its own removals.
 */
const COUNT_ENDING = `SELECT (SELECT count(*) FROM sources_claim c WHERE c.source_id = ${J.sourceId} AND c.${HELD_BEFORE})::int AS held,
    (SELECT count(*) FROM sources_claim c JOIN ${RUN_MISSED} m USING (key_type, value)
      WHERE c.source_id = ${J.sourceId} AND c.missed_runs + 1 >= ${J.missesToEnd}::int)::int AS ending`;

/**
 * A missed claim is missed once more. A claim missed for the first time was last listed by the source's last
 * successful run (its row was not rewritten since): that time becomes its own. Answers how many it missed.
 */
const COUNT_MISS = `WITH missed AS (UPDATE sources_claim c SET missed_runs = c.missed_runs + 1,
         last_seen_at = CASE WHEN c.missed_runs = 0 THEN GREATEST(c.last_seen_at, s.last_success_at) ELSE c.last_seen_at END
  FROM sources_source s, ${RUN_MISSED} m WHERE s.id = c.source_id AND c.source_id = ${S.sourceId} AND c.key_type = m.key_type AND c.value = m.value
  RETURNING 1)
  SELECT count(*)::int AS touched FROM missed`;

const END_PARAMETERS = namedParameters(['sourceId', 'collection', 'missesToEnd']);
const E = END_PARAMETERS.$;

/**
 * Ends the claims `deleting` deletes (a DELETE of sources_claim returning `key_type, value`) of the source
 * `sourceId`: every key into `remarked`, and those no other source of the collection claims into `ended`.
 * Answers how many claims ended (`touched`).
 */
const ENDING = (deleting: string, tables: EndedTables, sourceId: string, collection: string) => `WITH gone AS (${deleting}),
  remark AS (INSERT INTO ${tables.remarked} (key_type, value) SELECT g.key_type, g.value FROM gone g),
  ended AS (INSERT INTO ${tables.ended} (key_type, value) SELECT g.key_type, g.value FROM gone g WHERE NOT ${CLAIMED_ELSEWHERE('g', sourceId, collection)})
  SELECT count(*)::int AS touched FROM gone`;

/** Ends the claims whose misses (this one now counted) reach the policy's threshold. */
const END_MISSED = (tables: EndedTables) =>
  ENDING(
    `DELETE FROM sources_claim c WHERE c.source_id = ${E.sourceId} AND c.missed_runs > 0 AND c.missed_runs >= ${E.missesToEnd}::int RETURNING c.key_type, c.value`,
    tables,
    E.sourceId,
    E.collection,
  );

/** The claims of the keys a delta run withdraws itself, given as two arrays (types, values). */
const LISTED = (types: string, values: string) => `(key_type, value) IN (SELECT * FROM unnest(${types}::text[], ${values}::text[]))`;

const COUNT_WITHDRAWN_PARAMETERS = namedParameters(['sourceId', 'types', 'values']);
const CW = COUNT_WITHDRAWN_PARAMETERS.$;

/** The claims held before this run, and those its withdrawals would end (isSuspect weighs them). */
const COUNT_WITHDRAWN = `SELECT count(*) FILTER (WHERE ${HELD_BEFORE})::int AS held, count(*) FILTER (WHERE ${LISTED(CW.types, CW.values)})::int AS ending
  FROM sources_claim WHERE source_id = ${CW.sourceId}`;

const WITHDRAW_PARAMETERS = namedParameters(['sourceId', 'types', 'values', 'collection']);
const W = WITHDRAW_PARAMETERS.$;

const WITHDRAW = (tables: EndedTables) =>
  ENDING(
    `DELETE FROM sources_claim WHERE source_id = ${W.sourceId} AND ${LISTED(W.types, W.values)} RETURNING key_type, value`,
    tables,
    W.sourceId,
    W.collection,
  );

const DELETE_PARAMETERS = namedParameters(['sourceId', 'collection']);
const X = DELETE_PARAMETERS.$;

/** Every claim of a source being deleted ends. */
const END_ALL = (tables: EndedTables) =>
  ENDING(`DELETE FROM sources_claim WHERE source_id = ${X.sourceId} RETURNING key_type, value`, tables, X.sourceId, X.collection);

const PAGE_PARAMETERS = namedParameters(['sourceId', 'afterType', 'afterValue', 'limit']);
const P = PAGE_PARAMETERS.$;

/** A page of a source's claims by (type, value), after the keyset unless it is null. */
const CLAIMS_PAGE = `SELECT c.key_type AS type, c.value, ${isoUtc('c.first_seen_at')} AS "firstSeenAt", ${isoUtc(lastSeenOf('c', 's'))} AS "lastSeenAt",
         c.missed_runs AS "missedRuns"
    FROM sources_claim c JOIN sources_source s ON s.id = c.source_id
   WHERE c.source_id = ${P.sourceId} AND (${P.afterType}::text IS NULL OR (c.key_type, c.value) > (${P.afterType}::text, ${P.afterValue}::text))
   ORDER BY c.key_type, c.value LIMIT ${P.limit}`;

/** Runs a statement that answers how many claims it wrote (`touched`). */
async function touched(manager: EntityManager, statement: string, parameters: unknown[]): Promise<number> {
  const [row]: { touched: number }[] = await manager.query(statement, parameters);
  return row.touched;
}

/**
 * The score version moves (once per transaction that needs it) when claims were made, ended, re-dated or
 * given another credibility: scores move with them, and the objects' change records need not (extensions §18).
 */
async function scoresMoved(manager: EntityManager, moved: boolean): Promise<void> {
  if (moved) await manager.query(BUMP_SCORE_VERSION);
}

/**
 * The claims of sources: how a run settles them (extensions §13 "Runs"), how a deletion ends them, and the
 * claims page. The statements that end claims fill a staged table (BatchService's RunStage) with the keys
 * whose last claim in the collection ended, which the batch path then withdraws.
 */
@Injectable()
export class SourceClaimsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The claims of the sources of `collection` on any of `keys`, by source name (provenance). */
  claimsOf(collection: string, keys: readonly ObjectKey[]): Promise<ObjectSourceClaim[]> {
    return this.dataSource.query(
      CLAIMS_OF,
      CLAIMS_OF_PARAMETERS.values({ collection, types: keys.map((key) => key.type), values: keys.map((key) => key.value) }),
    );
  }

  /**
   * The claims of a run, inside its write's transaction, set-based over the staged body (BatchService's
   * RunStage): under the collection's exclusive writer lock, so runs of sources of one collection settle one
   * after the other and each sees the claims the other ended, and under the source row's lock, which its
   * deletion takes too. Native writes touch no claim row (theirs is a column of the object, read under the
   * same collection lock when withdrawals are decided). Fills `ended` with the keys whose last claim in the
   * collection ended, and says whether the run is suspect.
   */
  async settle(manager: EntityManager, run: ClaimSettlement): Promise<{ suspect: boolean }> {
    if (run.runID !== null) {
      const held: unknown[] = await manager.query(HOLD_LEASE, LEASE_PARAMETERS.values({ sourceId: run.sourceId, runID: run.runID }));
      if (held.length === 0) throw new LeaseLost();
    }
    const source = SOURCE_PARAMETERS.values({ sourceId: run.sourceId });
    let listed = 0;
    if (run.seen !== null) {
      await manager.query(STAGE_SEEN(run.seen));
      await manager.query(`ANALYZE ${RUN_SEEN}`);
      listed = await touched(manager, UPSERT_SEEN(run.snapshot, run.remarked), source);
    }
    if (!run.snapshot) {
      const withdrawn = await this.withdraw(manager, run);
      await scoresMoved(manager, listed + withdrawn.ended > 0);
      return { suspect: withdrawn.suspect };
    }
    await manager.query(run.seen !== null ? STAGE_MISSED_OF_BODY : STAGE_MISSED_OF_REPEAT, source);
    const threshold = missesToEnd(run.policy);
    const [{ held, ending }]: { held: number; ending: number }[] = await manager.query(
      COUNT_ENDING,
      JUDGE_PARAMETERS.values({ sourceId: run.sourceId, missesToEnd: threshold }),
    );
    const suspect = isSuspect({ held, ending, maxRemovalRatio: run.maxRemovalRatio, tooFew: run.tooFew });
    if (suspect) {
      await scoresMoved(manager, listed > 0);
      return { suspect };
    }
    const missed = await touched(manager, COUNT_MISS, source);
    const ended = await touched(
      manager,
      END_MISSED(run),
      END_PARAMETERS.values({ sourceId: run.sourceId, collection: run.collection, missesToEnd: threshold }),
    );
    // A successful snapshot run re-dates every claim it lists, rewritten or not (lastSeenOf: the source's last success).
    await scoresMoved(manager, listed + missed + ended + held > 0);
    return { suspect };
  }

  /**
   * A delta run's own withdrawals (a feed kind's revoked or deleted items): its claims of those keys end,
   * unless that is more than maxRemovalRatio of its claims (suspect: none ends), and the keys whose last
   * claim in the collection ended go to `run.ended`. Under the same locks as `settle`, so the count and the
   * deletion see the same claims.
   */
  private async withdraw(manager: EntityManager, run: ClaimSettlement): Promise<{ suspect: boolean; ended: number }> {
    if (run.tooFew || run.withdrawn.length === 0) return { suspect: run.tooFew, ended: 0 };
    const keys = { sourceId: run.sourceId, types: run.withdrawn.map((key) => key.type), values: run.withdrawn.map((key) => key.value) };
    const [{ held, ending }]: { held: number; ending: number }[] = await manager.query(COUNT_WITHDRAWN, COUNT_WITHDRAWN_PARAMETERS.values(keys));
    if (isSuspect({ held, ending, maxRemovalRatio: run.maxRemovalRatio, tooFew: false })) return { suspect: true, ended: 0 };
    const ended = await touched(manager, WITHDRAW(run), WITHDRAW_PARAMETERS.values({ ...keys, collection: run.collection }));
    return { suspect: false, ended };
  }

  /**
   * The claims of a source being deleted end, in its deletion's transaction (under the collection's exclusive
   * writer lock and the source row's lock); the keys whose last claim in the collection ended go into `ended`,
   * every key into `remarked`.
   */
  async endAll(manager: EntityManager, source: { id: number; collection: string }, tables: EndedTables): Promise<void> {
    const ended = await touched(manager, END_ALL(tables), DELETE_PARAMETERS.values({ sourceId: source.id, collection: source.collection }));
    await scoresMoved(manager, ended > 0);
  }

  async claims(sourceId: number, after: { type: string; value: string } | null, limit: number): Promise<ClaimRow[]> {
    return this.dataSource.query(CLAIMS_PAGE, PAGE_PARAMETERS.values({ sourceId, afterType: after?.type ?? null, afterValue: after?.value ?? null, limit }));
  }
}
