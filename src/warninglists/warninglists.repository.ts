import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

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

/**
 * A new list and its entries in one statement. The name's unique index settles a race: a concurrent insert
 * of the same name makes this one wait for its commit and then insert nothing (no row: 409).
 */
const INSERT = `
  WITH list AS (
    INSERT INTO warninglist (name, description, kind, key_types, action, enabled, version, document_sha256, entry_count)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, cardinality($9::text[]))
    ON CONFLICT (name) DO NOTHING
    RETURNING id
  ), entries AS (
    INSERT INTO warninglist_entry (list_id, position, value)
    SELECT list.id, e.n, e.value FROM list, unnest($9::text[]) WITH ORDINALITY AS e(value, n)
  )
  SELECT id FROM list`;

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
   * The entries of list $1 as of entries revision $2, or undefined when the list has moved on (replaced or
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
        WHERE l.id = $1 ORDER BY chunk.part`,
      [id],
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
    const [row]: ListRow[] = await manager.query(`SELECT ${ROW} FROM warninglist WHERE name = $1 ${forUpdate ? 'FOR UPDATE' : ''}`, [name]);
    return row;
  }

  /** The new list's id, or undefined when the name is taken. */
  async insert(manager: EntityManager, record: ListRecord, entries: string[]): Promise<number | undefined> {
    const rows: { id: number }[] = await manager.query(INSERT, [
      record.name, record.description, record.kind, record.keyTypes, record.action, record.enabled, record.version, record.sha256, entries,
    ]);
    return rows[0]?.id;
  }

  /** Settings of list $1 (held FOR UPDATE by the caller), and its entries when given; a new revision either way. */
  async update(manager: EntityManager, id: number, record: ListRecord, entries?: string[]): Promise<void> {
    if (entries !== undefined) {
      await manager.query(`DELETE FROM warninglist_entry WHERE list_id = $1`, [id]);
      await manager.query(
        `INSERT INTO warninglist_entry (list_id, position, value) SELECT $1, e.n, e.value FROM unnest($2::text[]) WITH ORDINALITY AS e(value, n)`,
        [id, entries],
      );
    }
    await manager.query(
      `UPDATE warninglist
          SET description = $2, kind = $3, key_types = $4, action = $5, enabled = $6, version = $7, document_sha256 = $8,
              revision = nextval('warninglist_revision'), updated_at = now(),
              entries_revision = CASE WHEN $9 THEN nextval('warninglist_revision') ELSE entries_revision END,
              entry_count = COALESCE($10, entry_count)
        WHERE id = $1`,
      [id, record.description, record.kind, record.keyTypes, record.action, record.enabled, record.version, record.sha256,
        entries !== undefined, entries?.length ?? null],
    );
  }

  async delete(manager: EntityManager, name: string): Promise<boolean> {
    // A CTE: TypeORM answers a bare DELETE ... RETURNING with [rows, count].
    const [{ gone }]: { gone: number }[] = await manager.query(
      `WITH deleted AS (DELETE FROM warninglist WHERE name = $1 RETURNING id) SELECT count(*)::int AS gone FROM deleted`,
      [name],
    );
    return gone > 0;
  }

  /** Entries after position $2 of list $1, at most $3, in list order (the primary key's order). */
  entriesPage(id: number, afterPosition: number, limit: number): Promise<{ position: number; value: string }[]> {
    return this.dataSource.query(
      `SELECT position, value FROM warninglist_entry WHERE list_id = $1 AND position > $2 ORDER BY position LIMIT $3`,
      [id, afterPosition, limit],
    );
  }
}
