import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { SizedRow } from '../common/pagination/page.js';
import { sizeBoundedPage } from '../common/pagination/size-bounded-page.js';
import type { SchemaCommonView } from './dto/schema.dto.js';
import type { SchemaNamespace } from './schema-registry.service.js';

/** A checked schema document as it is stored: its text (JSON) and its title. */
export interface StoredSchema {
  text: string;
  title: string;
}

/** The statements of `schemas` (SchemaRegistryService holds the rules, the caches and the validators). */
@Injectable()
export class SchemasRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** False when the id is taken: ON CONFLICT keeps a concurrent duplicate registration a clean 409 instead of a constraint error. */
  async insert(namespace: SchemaNamespace, schemaId: string, schema: StoredSchema): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO schemas (namespace, schema_id, document, version, title) VALUES ($1, $2, $3::json, 1, $4)
       ON CONFLICT DO NOTHING RETURNING version`,
      [namespace, schemaId, schema.text, schema.title],
    );
    return rows.length > 0;
  }

  /** The schema's version and document text, its row locked to the end of the manager's transaction. */
  async lock(manager: EntityManager, namespace: SchemaNamespace, schemaId: string): Promise<{ version: number; text: string } | undefined> {
    const rows: { version: number; text: string }[] = await manager.query(
      `SELECT version, document::text AS text FROM schemas WHERE namespace = $1 AND schema_id = $2 FOR UPDATE`,
      [namespace, schemaId],
    );
    return rows[0];
  }

  /** Writes the next version of the schema. */
  async update(manager: EntityManager, namespace: SchemaNamespace, schemaId: string, schema: StoredSchema): Promise<void> {
    await manager.query(
      `UPDATE schemas SET document = $3::json, title = $4, version = version + 1, updated_at = now()
        WHERE namespace = $1 AND schema_id = $2`,
      [namespace, schemaId, schema.text, schema.title],
    );
  }

  async document(namespace: SchemaNamespace, schemaId: string): Promise<{ document: Record<string, unknown>; version: number } | undefined> {
    const rows: { document: Record<string, unknown>; version: number }[] = await this.dataSource.query(
      `SELECT document, version FROM schemas WHERE namespace = $1 AND schema_id = $2`,
      [namespace, schemaId],
    );
    return rows[0];
  }

  async version(namespace: SchemaNamespace, schemaId: string): Promise<number | undefined> {
    const rows: { version: number }[] = await this.dataSource.query(`SELECT version FROM schemas WHERE namespace = $1 AND schema_id = $2`, [
      namespace,
      schemaId,
    ]);
    return rows[0]?.version;
  }

  /**
   * A page of ids and titles after `after` in byte order (schema_id is COLLATE "C"). Titles are free text of
   * any length, so the fetch is bounded by size too (octet_length of text reads only its header, never the value).
   */
  page(namespace: SchemaNamespace, after: string, take: number, maxBytes: number): Promise<(SchemaCommonView & SizedRow)[]> {
    return this.dataSource.query(
      `${sizeBoundedPage(
        {
          select: 'schema_id AS "schemaID", title',
          from: 'FROM schemas WHERE namespace = $1 AND schema_id > $2',
          orderBy: 'schema_id',
          rowBytes: 'octet_length(schema_id) + octet_length(title)',
        },
        '$3',
        '$4',
      )} ORDER BY "schemaID"`,
      [namespace, after, take, maxBytes],
    );
  }

  /** Inside a transaction, pass its manager (see SchemaRegistryService.exists). */
  async exists(namespace: SchemaNamespace, schemaId: string, manager?: EntityManager): Promise<boolean> {
    const rows: unknown[] = await (manager ?? this.dataSource).query(`SELECT 1 FROM schemas WHERE namespace = $1 AND schema_id = $2`, [namespace, schemaId]);
    return rows.length > 0;
  }
}
