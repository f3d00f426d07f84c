import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { namedParameters } from '../common/sql/named-parameters.js';

/** The settings of a list as the matcher needs them. */
export interface ListState {
  id: number;
  name: string;
  kind: string;
  keyTypes: string[] | null;
  action: string;
  revision: string;
  entriesRevision: string;
}

/** A list's row as the views show it. */
export interface ListRow extends ListState {
  description: string;
  enabled: boolean;
  entryCount: number;
  version: string | null;
  sha256: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What a write stores: the settings and, when given, the entries (already normalised). */
export interface ListRecord {
  name: string;
  description: string;
  kind: string;
  keyTypes: string[] | null;
  action: string;
  enabled: boolean;
  version: string | null;
  sha256: string | null;
}

/** Entries per JSON array when a list's entries are read for matching. */
const ENTRY_CHUNK = 10_000;

const ROW = `id, name, description, kind, key_types AS "keyTypes", action, enabled, entry_count AS "entryCount", version,
             document_sha256 AS sha256, revision::text, entries_revision::text AS "entriesRevision", created_at AS "createdAt",
             updated_at AS "updatedAt"`;

/** A list's settings as a write stores them (INSERT, UPDATE); a list keeps its name (UPDATE names none). */
const SETTING_NAMES = ['description', 'kind', 'keyTypes', 'action', 'enabled', 'version', 'sha256'] as const;

const INSERT_PARAMETERS = namedParameters(['name', ...SETTING_NAMES, 'entries']);
const I = INSERT_PARAMETERS.$;

/**
 * A new list and its entries in one statement. The name's unique index settles a race: a concurrent insert
 * of the same name makes this one wait for its commit and then insert nothing (no row: 409).
 */
const INSERT = `
  WITH list AS (
    INSERT INTO warninglist (name, description, kind, key_types, action, enabled, version, document_sha256, entry_count)
    VALUES (${I.name}, ${I.description}, ${I.kind}, ${I.keyTypes}, ${I.action}, ${I.enabled}, ${I.version}, ${I.sha256},
            cardinality(${I.entries}::text[]))
    ON CONFLICT (name) DO NOTHING
    RETURNING id
  ), entries AS (
    INSERT INTO warninglist_entry (list_id, position, value)
    SELECT list.id, e.n, e.value FROM list, unnest(${I.entries}::text[]) WITH ORDINALITY AS e(value, n)
  )
  SELECT id FROM list`;

const UPDATE_PARAMETERS = namedParameters(['id', ...SETTING_NAMES, 'entriesChanged', 'entryCount']);
const U = UPDATE_PARAMETERS.$;

/** The settings of a list, a new revision, and a new entries revision and count when its entries were replaced. */
const UPDATE = `
  UPDATE warninglist
     SET description = ${U.description}, kind = ${U.kind}, key_types = ${U.keyTypes}, action = ${U.action}, enabled = ${U.enabled},
         version = ${U.version}, document_sha256 = ${U.sha256}, revision = nextval('warninglist_revision'), updated_at = now(),
         entries_revision = CASE WHEN ${U.entriesChanged} THEN nextval('warninglist_revision') ELSE entries_revision END,
         entry_count = COALESCE(${U.entryCount}, entry_count)
   WHERE id = ${U.id}`;

/** The short statements name their values too: one rule for every statement, none left to renumber when it grows. */
const BY_NAME = namedParameters(['name']);
const BY_LIST = namedParameters(['listId']);
const ENTRIES_REPLACED = namedParameters(['listId', 'entries']);
const ENTRIES_PAGE = namedParameters(['listId', 'afterPosition', 'limit']);

@Injectable()
export class WarninglistsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** The enabled lists, in creation order: one small statement per request that asks (see WarninglistMatcherService). */
  enabledStates(): Promise<ListState[]> {
    return this.dataSource.query(
      `SELECT id, name, kind, key_types AS "keyTypes", action, revision::text, entries_revision::text AS "entriesRevision"
         FROM warninglist WHERE enabled ORDER BY id`,
    );
  }

  /**
   * The entries of list `id` as of `entriesRevision`, or undefined when the list has moved on (replaced or
   * deleted meanwhile): one statement, so the revision checked and the entries read are of one snapshot.
   * Read as JSON arrays of ENTRY_CHUNK entries each (positions run from 1 without gaps), so a million entries
   * leave a few large texts to collect, not a row and a revision string each; a chunk stays far below
   * PostgreSQL's 1 GB limit of a text whatever the entries' lengths.
   */
  async entries(id: number, entriesRevision: string): Promise<string[] | undefined> {
    const rows = await this.arrayRows(
      `SELECT l.entries_revision::text, chunk.entries
         FROM warninglist l
         LEFT JOIN LATERAL (
           SELECT (e.position - 1) / ${ENTRY_CHUNK} AS part, json_agg(e.value ORDER BY e.position)::text AS entries
             FROM warninglist_entry e WHERE e.list_id = l.id GROUP BY part
         ) chunk ON true
        WHERE l.id = ${BY_LIST.$.listId} ORDER BY chunk.part`,
      BY_LIST.values({ listId: id }),
    );
    if (rows.length === 0 || rows[0][0] !== entriesRevision) return undefined;
    const entries: string[] = [];
    for (const [, chunk] of rows) if (chunk !== null) for (const value of JSON.parse(chunk) as string[]) entries.push(value);
    return entries;
  }

  /** Rows as arrays. */
  private async arrayRows(text: string, values: unknown[]): Promise<[string, string | null][]> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const client = (await runner.connect()) as { query: (config: object) => Promise<{ rows: [string, string | null][] }> };
      return (await client.query({ text, values, rowMode: 'array' })).rows;
    } finally {
      await runner.release();
    }
  }

  all(): Promise<ListRow[]> {
    return this.dataSource.query(`SELECT ${ROW} FROM warninglist ORDER BY id`);
  }

  async byName(name: string, manager: EntityManager = this.dataSource.manager, forUpdate = false): Promise<ListRow | undefined> {
    const [row]: ListRow[] = await manager.query(
      `SELECT ${ROW} FROM warninglist WHERE name = ${BY_NAME.$.name} ${forUpdate ? 'FOR UPDATE' : ''}`,
      BY_NAME.values({ name }),
    );
    return row;
  }

  /** The new list's id, or undefined when the name is taken. */
  async insert(manager: EntityManager, record: ListRecord, entries: string[]): Promise<number | undefined> {
    const rows: { id: number }[] = await manager.query(INSERT, INSERT_PARAMETERS.values({ ...record, entries }));
    return rows[0]?.id;
  }

  /** Settings of list `id` (held FOR UPDATE by the caller), and its entries when given; a new revision either way. */
  async update(manager: EntityManager, id: number, record: ListRecord, entries?: string[]): Promise<void> {
    if (entries !== undefined) {
      await manager.query(`DELETE FROM warninglist_entry WHERE list_id = ${BY_LIST.$.listId}`, BY_LIST.values({ listId: id }));
      const E = ENTRIES_REPLACED.$;
      await manager.query(
        `INSERT INTO warninglist_entry (list_id, position, value)
         SELECT ${E.listId}, e.n, e.value FROM unnest(${E.entries}::text[]) WITH ORDINALITY AS e(value, n)`,
        ENTRIES_REPLACED.values({ listId: id, entries }),
      );
    }
    await manager.query(UPDATE, UPDATE_PARAMETERS.values({ id, ...record, entriesChanged: entries !== undefined, entryCount: entries?.length ?? null }));
  }

  async delete(manager: EntityManager, name: string): Promise<boolean> {
    // A CTE: TypeORM answers a bare DELETE ... RETURNING with [rows, count].
    const [{ gone }]: { gone: number }[] = await manager.query(
      `WITH deleted AS (DELETE FROM warninglist WHERE name = ${BY_NAME.$.name} RETURNING id) SELECT count(*)::int AS gone FROM deleted`,
      BY_NAME.values({ name }),
    );
    return gone > 0;
  }

  /** Entries after position `afterPosition` of list `id`, at most `limit`, in list order (the primary key's order). */
  entriesPage(id: number, afterPosition: number, limit: number): Promise<{ position: number; value: string }[]> {
    const P = ENTRIES_PAGE.$;
    return this.dataSource.query(
      `SELECT position, value FROM warninglist_entry WHERE list_id = ${P.listId} AND position > ${P.afterPosition} ORDER BY position LIMIT ${P.limit}`,
      ENTRIES_PAGE.values({ listId: id, afterPosition, limit }),
    );
  }
}
