import type { EntityManager } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import type { TlpRank } from '../../common/markings/tlp.js';
import { namedParameters } from '../../common/sql/named-parameters.js';
import { isoUtc } from '../../common/sql/timestamps.js';
import { insertChanges, ORIGIN_PARAMETERS, PREVIOUS_MARKING, type RecordedIds } from '../change-records.js';
import { CLAIMED_MARKING } from '../claimed-marking.js';
import type { PreparedObject } from '../object-rules.js';
import { LIVE_AT_DECISION } from '../object-statements.js';
import type { WriteOrigin } from '../write-origin.js';

/** A checked item: the object its form prepared to, or null when it failed its checks. */
export type CheckedObject = PreparedObject | null;

/** An item read back for the batch path: its place in the body, its line, and its object. */
export interface StagedItem {
  n: number;
  line: number;
  object: PreparedObject;
}

/** The tables of one run, temporary: dropped with its transaction, whether it commits or not. */
const ITEMS = 'run_item';
const PENDING = 'run_pending';
const ENDED = 'run_ended';
const REMARKED = 'run_remarked';

/**
 * The distinct keys of the staged items that passed their checks, as a relation `(key_type, value, tlp,
 * credibility)` that the run's settlement reads (the claims its body makes): a key listed by several items
 * takes the most restrictive of their markings and the highest credibility they give (NULL: none gives one).
 */
const SEEN_KEYS = `(SELECT k.type AS key_type, k.value, max(i.tlp) AS tlp, max(i.credibility) AS credibility FROM ${ITEMS} i, jsonb_to_recordset(i.keys) AS k(type text, value text)
  WHERE i.keys IS NOT NULL GROUP BY 1, 2)`;

const REMARK_PARAMETERS = namedParameters(['collectionId', 'collection', ...ORIGIN_PARAMETERS]);
const R = REMARK_PARAMETERS.$;

/**
 * The re-mark of the objects holding the keys in `run_remarked`: each one's `claimed_tlp` set to the marking
 * of the source claims on its keys now (claimed-marking.ts) where it differs, and an `Update` record (the
 * object as it is, its marking after and before) for each live one whose marking (`tlp`) that moved. Objects
 * the run wrote already carry it (the batch statement marked them): only the others are updated.
 */
const REMARK = `
    WITH held AS MATERIALIZED (
      SELECT DISTINCT k.object_id AS id FROM ${REMARKED} r
        JOIN intel_object_key k ON k.collection_id = ${R.collectionId}::int AND k.key_type = r.key_type AND k.value = r.value
    ),
    marked AS MATERIALIZED (
      SELECT o.id, ${CLAIMED_MARKING('o.keys', `${R.collection}::text`)} AS claimed
        FROM held JOIN intel_object o ON o.id = held.id
    ),
    upd AS (
      UPDATE intel_object o SET claimed_tlp = m.claimed, ${PREVIOUS_MARKING('o')}
        FROM marked m WHERE o.id = m.id AND o.claimed_tlp IS DISTINCT FROM m.claimed
      RETURNING o.id, o.type, o.keys, o.context, o.expires_at, o.uid, o.added_at, o.tlp, o.was_tlp
    ),
    change AS (
      ${insertChanges(
        {
          record: {
            order: 'u.id',
            operation: `'Update'`,
            reason: 'NULL::text',
            type: 'u.type',
            keys: 'u.keys',
            context: 'u.context',
            expiresAt: 'u.expires_at',
            uid: 'u.uid',
            addedAt: 'u.added_at',
            tlp: 'u.tlp',
            wasTlp: 'u.was_tlp',
          },
          from: `FROM upd u WHERE u.tlp <> u.was_tlp AND ${LIVE_AT_DECISION('u')}`,
        },
        R,
      )}
      RETURNING id
    )
    SELECT min(id) AS "firstId", max(id) AS "lastId" FROM change`;

/**
 * A source run's body staged in PostgreSQL (extensions §13: memory bounded whatever the body's size): the
 * items as they are parsed and checked, chunk by chunk, in temporary tables of the run's transaction, so a
 * run that dies (its instance killed) leaves nothing behind: its connection ends, its transaction rolls
 * back, its tables go with it. The body's digest and the set difference against the collection are
 * statements over these tables; only chunks of the items that may change something come back to the service.
 */
export class RunStage {
  private staged = 0;
  /** Whether `pending` narrowed the items to write to the set difference (else: every checked item). */
  private narrowed = false;

  private constructor(private readonly manager: EntityManager) {}

  static async open(manager: EntityManager): Promise<RunStage> {
    // `keys` NULL: the item failed its checks. `tlp`: the marking its claim takes; `credibility` its record's own (NULL: none).
    await manager.query(
      `CREATE TEMP TABLE ${ITEMS} (n int PRIMARY KEY, line int NOT NULL, digest bytea NOT NULL, tlp smallint NOT NULL, credibility smallint, type text, keys jsonb, context jsonb,
                                   expires_at text, ttl int) ON COMMIT DROP`,
    );
    await manager.query(`CREATE TEMP TABLE ${ENDED} (key_type text NOT NULL, value text NOT NULL, PRIMARY KEY (key_type, value)) ON COMMIT DROP`);
    await manager.query(`CREATE TEMP TABLE ${REMARKED} (key_type text NOT NULL, value text NOT NULL) ON COMMIT DROP`);
    return new RunStage(manager);
  }

  /**
   * The relation of the keys the body lists, the table its settlement fills with the keys whose last claim
   * ended, and the one it fills with the keys whose claims' markings may have moved (`remark`).
   */
  readonly tables = { seenKeys: SEEN_KEYS, endedKeys: ENDED, remarkedKeys: REMARKED };

  /** The number of items staged. */
  get size(): number {
    return this.staged;
  }

  /** One chunk of forms, in body order, already checked (`objects`, in the same order), in one statement. */
  async add(forms: { line: number; digest: Buffer; tlp: TlpRank; credibility: number | null }[], objects: CheckedObject[]): Promise<void> {
    const first = this.staged;
    this.staged += forms.length;
    const of = <T>(pick: (object: PreparedObject) => T) => objects.map((object) => (object === null ? null : pick(object)));
    await this.manager.query(
      `INSERT INTO ${ITEMS} (n, line, digest, tlp, credibility, type, keys, context, expires_at, ttl)
       SELECT $1::int + i.n, i.line, i.digest, i.tlp, i.credibility, i.type, i.keys::jsonb, i.context::jsonb, i.at, i.ttl
         FROM unnest($2::int[], $3::bytea[], $4::smallint[], $5::smallint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[])
              WITH ORDINALITY AS i(line, digest, tlp, credibility, type, keys, context, at, ttl, n)`,
      [
        first,
        forms.map((form) => form.line),
        forms.map((form) => form.digest),
        forms.map((form) => form.tlp),
        forms.map((form) => form.credibility),
        of((object) => object.type),
        of((object) => JSON.stringify(object.keys)),
        of((object) => object.contextJson),
        of((object) => object.expiry.at),
        of((object) => object.expiry.ttlSeconds),
      ],
    );
  }

  /**
   * The body's digest: of the distinct forms as parsed, whatever their order, duplicates or comment lines
   * (what "the same body" means, extensions §13).
   */
  async digest(): Promise<string> {
    const [{ digest }]: { digest: string }[] = await this.manager.query(
      `SELECT encode(sha256(COALESCE(string_agg(d, ''::bytea ORDER BY d), ''::bytea)), 'hex') AS digest FROM (SELECT DISTINCT digest AS d FROM ${ITEMS}) x`,
    );
    return digest;
  }

  /**
   * The set difference against the collection, under its exclusive writer lock: the items that may change
   * something, kept in `run_pending`, and how many are certainly `Unchanged` and skipped. An item is skipped
   * only when the single add would decide `Unchanged` for it whatever the other items do: its keys are
   * exactly those of one live object with its context and its fixed expiry (or both none), no time to live
   * (which always moves the expiry), and no other item that passed its checks names one of its keys with
   * anything else (those are replayed in order by the batch path, as a batch would). No pending item names
   * a skipped item's object (it would name one of its keys), and no withdrawal does (a withdrawn key is one
   * the body does not list), so skipping them changes no other item's outcome.
   *
   * Why this is correct beside native writes: the statement runs after the run took the collection's
   * exclusive writer lock (ObjectsRepository.lockCollection), which every writer of the collection's
   * objects holds (shared or exclusive) while it writes; under READ COMMITTED it sees every write committed
   * before the lock was granted, and none can commit until this transaction does. What it decided still
   * holds when the chunks are written, except for time: an object expiring meanwhile is judged as of each
   * statement's start, as the batch path judges it (LIVE_AT_DECISION).
   */
  async pending(collectionId: number): Promise<{ unchanged: number }> {
    // The staged items' statistics, for the joins below (taken only here: a repeat or a first run never joins them).
    await this.manager.query(`ANALYZE ${ITEMS}`);
    // Set operations and hash joins over materialised parts: each part is computed once, whatever the size.
    await this.manager.query(
      `CREATE TEMP TABLE ${PENDING} ON COMMIT DROP AS
       WITH item_key AS MATERIALIZED (
         SELECT i.n, k.type AS key_type, k.value, (i.type, i.keys::text, i.context::text, i.expires_at, i.ttl) AS item
           FROM ${ITEMS} i CROSS JOIN LATERAL jsonb_to_recordset(i.keys) AS k(type text, value text) WHERE i.keys IS NOT NULL
       ),
       contested AS MATERIALIZED (
         SELECT key_type, value FROM item_key GROUP BY 1, 2 HAVING count(DISTINCT item) > 1
       ),
       same AS MATERIALIZED (
         SELECT i.n FROM ${ITEMS} i
           JOIN intel_object_key ok ON ok.collection_id = $1 AND ok.key_type = i.keys->0->>'type' AND ok.value = i.keys->0->>'value'
           JOIN intel_object o ON o.id = ok.object_id
          WHERE i.keys IS NOT NULL AND i.ttl IS NULL AND o.keys = i.keys AND o.context = i.context
            AND ${isoUtc('o.expires_at')} IS NOT DISTINCT FROM i.expires_at AND ${LIVE_AT_DECISION('o')}
       )
       SELECT n FROM ${ITEMS} WHERE keys IS NOT NULL
       EXCEPT (SELECT n FROM same EXCEPT SELECT ik.n FROM item_key ik JOIN contested c ON c.key_type = ik.key_type AND c.value = ik.value)`,
      [collectionId],
    );
    await this.manager.query(`ALTER TABLE ${PENDING} ADD PRIMARY KEY (n)`);
    this.narrowed = true;
    const [{ pending, checked }]: { pending: number; checked: number }[] = await this.manager.query(
      `SELECT (SELECT count(*)::int FROM ${PENDING}) AS pending, (SELECT count(*)::int FROM ${ITEMS} WHERE keys IS NOT NULL) AS checked`,
    );
    return { unchanged: checked - pending };
  }

  /** The next pending items after item `after`, in body order: of the set difference, or every checked item without it. */
  async nextPending(after: number, limit: number): Promise<StagedItem[]> {
    const rows: {
      n: number;
      line: number;
      type: PreparedObject['type'];
      keys: ObjectKey[];
      context: Record<string, unknown>;
      at: string | null;
      ttl: number | null;
    }[] = await this.manager.query(
      `SELECT i.n, i.line, i.type, i.keys, i.context, i.expires_at AS at, i.ttl FROM ${this.narrowed ? `${PENDING} p JOIN ${ITEMS} i ON i.n = p.n` : `${ITEMS} i`}
          WHERE i.n > $1 AND i.keys IS NOT NULL ORDER BY i.n LIMIT $2`,
      [after, limit],
    );
    return rows.map((row) => ({
      n: row.n,
      line: row.line,
      // A source's item makes no api claim, so it carries no marking (PreparedObject.tlp).
      object: {
        type: row.type,
        keys: row.keys,
        context: row.context,
        contextJson: JSON.stringify(row.context),
        expiry: { at: row.at, ttlSeconds: row.ttl },
        tlp: null,
      },
    }));
  }

  /**
   * The re-mark of the objects whose source claims the run's settlement changed (`remarkedKeys`: a claim
   * ended, marked otherwise, or new above TLP:CLEAR) and that its writes left as they were: an item unchanged
   * (its object listed again by another source at another marking), a claim ended while another source or
   * the api still claims the object. Under the collection's exclusive writer lock, after the run's writes and
   * withdrawals, attributed to the run's `origin`. One statement over the keys noted (none for a run that
   * repeats its body and ends nothing); the ids of its records, or null when it wrote none.
   */
  async remark(collection: { id: number; name: string }, origin: WriteOrigin): Promise<RecordedIds | null> {
    const [recorded]: { firstId: string | null; lastId: string | null }[] = await this.manager.query(
      REMARK,
      REMARK_PARAMETERS.values({ collectionId: collection.id, collection: collection.name, ...origin }),
    );
    return recorded.firstId === null ? null : (recorded as RecordedIds);
  }

  /**
   * The next keys whose last claim the run ended (after `after`, in key order) that no native write
   * claims (`api_first_seen_at`, see api-claim.ts): those are withdrawn. Read under the collection's
   * exclusive writer lock, so no native write lands between this read and the withdrawal it decides.
   */
  async nextWithdrawals(collectionId: number, after: ObjectKey | null, limit: number): Promise<ObjectKey[]> {
    return this.manager.query(
      `SELECT e.key_type AS type, e.value FROM ${ENDED} e
        WHERE ($2::text IS NULL OR (e.key_type, e.value) > ($2::text, $3::text))
          AND NOT EXISTS (SELECT 1 FROM intel_object_key k JOIN intel_object o ON o.id = k.object_id
                           WHERE k.collection_id = $1 AND k.key_type = e.key_type AND k.value = e.value AND o.api_first_seen_at IS NOT NULL)
        ORDER BY e.key_type, e.value LIMIT $4`,
      [collectionId, after?.type ?? null, after?.value ?? null, limit],
    );
  }
}
