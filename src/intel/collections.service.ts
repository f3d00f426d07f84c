import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import { v5 as uuidv5 } from 'uuid';
import { ResourcesService } from '../auth/resources.service.js';
import { CommonErrors } from '../common/errors/api-error.js';
import { BUILTIN_RESOURCES, type Principal } from '../common/guard/access.js';
import { CLEAR, rankOf, tlpOf, type TlpRank } from '../common/markings/tlp.js';
import { afterIdCursor, afterIdFromCursor } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageQueryDto, type PageResult } from '../common/pagination/page.js';
import { isoMicros } from '../common/sql/timestamps.js';
import { assertTagMatches, TaggedResult } from '../common/tags/tag.js';
import { isUuid } from '../common/validation/uuid.js';
import { TAXII_ALIAS_LOCK } from '../database/advisory-locks.js';
import { InvalidatedCache } from '../database/invalidated-cache.js';
import { InvalidationBus } from '../database/invalidation-bus.js';
import { readScopeOf } from '../read-policy/read-policy.js';
import { SchemaRegistryErrors } from '../schema-registry/schema-registry.errors.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import { ScoringFormError, scoringOf, type Scoring } from '../scoring/scoring-config.js';
import type { CollectionRegistrationView, CollectionView, CreateCollectionDto, UpdateCollectionDto } from './dto/collection.dto.js';
import { IntelErrors } from './intel.errors.js';

/** What other intel services need to know about a collection. */
export interface CollectionRecord {
  id: number;
  name: string;
  schemaId: string;
  resourceId: number;
  /** Objects written without their own expiry expire this long after the write; null: never. */
  objectTtlSeconds: number | null;
  /** The marking of native writes that name none (extensions §19). */
  defaultTlp: TlpRank;
  /** Its scoring (extensions §18), stored whole with the defaults filled in. */
  scoring: Scoring;
}

/** The cached row: the record plus its version (the tag) and what a standard feed names it by. */
type CollectionRow = CollectionRecord & { version: number; taxiiId: string; createdAt: string };

/** A collection as a standard feed (TAXII) lists it for a key: visible when the key may read or write it. */
export interface FeedCollection {
  name: string;
  taxiiId: string;
  canRead: boolean;
  canWrite: boolean;
  /** Its TAXII views (extensions §18): read-only collections of its objects scoring at least `minScore`. */
  views: Scoring['taxiiViews'];
}

/** A TAXII view (extensions §18) of a collection: its own TAXII id (stable: UUIDv5 of the collection's id and the alias). */
export interface FeedView {
  collection: string;
  taxiiId: string;
  alias: string;
  minScore: number;
}

/** A view's TAXII id: the same across restarts and PATCHes for the same collection and alias. */
export const viewTaxiiId = (collectionTaxiiId: string, alias: string) => uuidv5(alias, collectionTaxiiId);

/** A collection's identity in a standard feed: its TAXII id and its creation time (UTC, microseconds). */
export interface FeedIdentity {
  taxiiId: string;
  createdAt: string;
}

/** Either unique index a concurrent registration of the same name can hit first. */
const NAME_CONSTRAINTS = new Set(['UQ_auth_resource_parent_name', 'UQ_intel_collection_name']);

function isNameTaken(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && NAME_CONSTRAINTS.has(driverError.constraint ?? '');
}

function collectionView(name: string, schemaID: string, objectTtlSeconds: number | null, defaultTlp: TlpRank, scoring: Scoring): CollectionView {
  return { name, schemaID, ...(objectTtlSeconds !== null && { objectTTLSeconds: objectTtlSeconds }), defaultTLP: tlpOf(defaultTlp), scoring };
}

/** A form's `scoring` as stored (undefined when absent); 400 InvalidData naming the bad member. */
function scoringOfForm(form: { scoring?: unknown }): Scoring | undefined {
  if (form.scoring === undefined) return undefined;
  try {
    return scoringOf(form.scoring);
  } catch (error) {
    if (error instanceof ScoringFormError) throw CommonErrors.invalidData(error.message);
    throw error;
  }
}

/**
 * TAXII aliases are unique together: every collection's name (its TAXII alias) and every view's alias. Checked
 * under TAXII_ALIAS_LOCK, which every registration and every change of views takes, so two racing requests
 * cannot both take one alias. `name`: the collection registering or changing (its own name and views are no
 * conflict, except a view named as the collection itself); `aliases`: its new view aliases, if they change.
 */
async function assertAliasesFree(manager: EntityManager, name: string, aliases: string[], registering: boolean): Promise<void> {
  await manager.query('SELECT pg_advisory_xact_lock($1)', [TAXII_ALIAS_LOCK]);
  if (registering) {
    const views: unknown[] = await manager.query(
      `SELECT 1 FROM intel_collection WHERE scoring->'taxiiViews' @> jsonb_build_array(jsonb_build_object('alias', $1::text)) LIMIT 1`,
      [name],
    );
    if (views.length > 0) throw IntelErrors.nameIsTaxiiAlias(name);
  }
  if (aliases.includes(name)) throw IntelErrors.duplicateTaxiiAlias(name);
  const taken: { alias: string }[] = await manager.query(
    `SELECT a.alias FROM unnest($2::text[]) a(alias)
      WHERE EXISTS (SELECT 1 FROM intel_collection c
                     WHERE c.name <> $1 AND (c.name = a.alias OR c.scoring->'taxiiViews' @> jsonb_build_array(jsonb_build_object('alias', a.alias))))
      LIMIT 1`,
    [name, aliases],
  );
  if (taken.length > 0) throw IntelErrors.duplicateTaxiiAlias(taken[0].alias);
}

const aliasesOf = (scoring: Scoring) => scoring.taxiiViews.map((view) => view.alias);

/** A form's `defaultTLP` (already checked by its DTO) as the rank stored; undefined when absent. */
const defaultTlpOf = (form: { defaultTLP?: string }): TlpRank | undefined => (form.defaultTLP === undefined ? undefined : rankOf(form.defaultTLP));

@Injectable()
export class CollectionsService {
  /** Every object request and collection read needs the row; only a PATCH changes it. */
  private readonly rows: InvalidatedCache<CollectionRow>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly schemas: SchemaRegistryService,
    private readonly resources: ResourcesService,
    bus: InvalidationBus,
  ) {
    this.rows = new InvalidatedCache(bus, 'collection');
  }

  /** The collection and its auth resource are created together or not at all. */
  async create(form: CreateCollectionDto): Promise<CollectionRegistrationView> {
    const scoring = scoringOfForm(form) ?? scoringOf(undefined);
    try {
      await this.dataSource.transaction(async (manager) => {
        if (!(await this.schemas.exists('intel', form.schemaID, manager))) throw SchemaRegistryErrors.schemaNotFound('intel', form.schemaID);
        await assertAliasesFree(manager, form.name, aliasesOf(scoring), true);
        const resource = await this.resources.createChild(manager, 'intel', form.name);
        await manager.query(
          `INSERT INTO intel_collection (name, schema_id, version, resource_id, object_ttl_seconds, default_tlp, scoring) VALUES ($1, $2, 1, $3, $4, $5, $6)`,
          [form.name, form.schemaID, resource.id, form.objectTTLSeconds ?? null, defaultTlpOf(form) ?? CLEAR, JSON.stringify(scoring)],
        );
      });
    } catch (error) {
      // No pre-check for the name: the unique indexes decide, so a concurrent race ends the same way.
      if (isNameTaken(error)) throw IntelErrors.duplicateCollection(form.name);
      throw error;
    }
    return { name: form.name };
  }

  /** 404 NotFound when absent. */
  async findByName(name: string): Promise<CollectionRecord> {
    const { id, schemaId, resourceId, objectTtlSeconds, defaultTlp, scoring } = await this.row(name);
    return { id, name, schemaId, resourceId, objectTtlSeconds, defaultTlp, scoring };
  }

  /** 404 NotFound when absent. */
  async feedIdentity(name: string): Promise<FeedIdentity> {
    const { taxiiId, createdAt } = await this.row(name);
    return { taxiiId, createdAt };
  }

  /** The name of the collection with this TAXII id, if any (a malformed id names none). */
  async nameOfTaxiiId(taxiiId: string): Promise<string | undefined> {
    if (!isUuid(taxiiId)) return undefined;
    const rows: { name: string }[] = await this.dataSource.query(`SELECT name FROM intel_collection WHERE taxii_id = $1`, [taxiiId]);
    return rows[0]?.name;
  }

  /** The TAXII view with this id, if any: among the views of the collections that have some (few). */
  async viewOfTaxiiId(taxiiId: string): Promise<FeedView | undefined> {
    if (!isUuid(taxiiId)) return undefined;
    const rows: { name: string; taxiiId: string; views: Scoring['taxiiViews'] }[] = await this.dataSource.query(
      `SELECT name, taxii_id AS "taxiiId", scoring->'taxiiViews' AS views FROM intel_collection WHERE scoring->'taxiiViews' <> '[]'::jsonb`,
    );
    for (const row of rows) {
      const view = row.views.find((candidate) => viewTaxiiId(row.taxiiId, candidate.alias) === taxiiId.toLowerCase());
      if (view) return { collection: row.name, taxiiId: viewTaxiiId(row.taxiiId, view.alias), alias: view.alias, minScore: view.minScore };
    }
    return undefined;
  }

  /**
   * Every collection the key may read or write (decisions §3 for each action), in registration order, with
   * what it may do: a standard feed lists these and nothing else.
   */
  async feedCollections(principal: Principal): Promise<FeedCollection[]> {
    const rows: { name: string; taxiiId: string; resourceId: number; views: Scoring['taxiiViews'] }[] = await this.dataSource.query(
      `SELECT name, taxii_id AS "taxiiId", resource_id AS "resourceId", scoring->'taxiiViews' AS views FROM intel_collection ORDER BY id`,
    );
    return rows
      .map(({ name, taxiiId, resourceId, views }) => {
        const resource = { id: resourceId, parentId: BUILTIN_RESOURCES.intel.id };
        return { name, taxiiId, canRead: principal.holds(resource, 'Read'), canWrite: principal.holds(resource, 'Write'), views };
      })
      .filter((collection) => collection.canRead || collection.canWrite);
  }

  async view(name: string): Promise<TaggedResult<CollectionView>> {
    const row = await this.row(name);
    return new TaggedResult(collectionView(row.name, row.schemaId, row.objectTtlSeconds, row.defaultTlp, row.scoring), row.version);
  }

  private async row(name: string): Promise<CollectionRow> {
    const row = await this.rows.get(name, async () => {
      const found: CollectionRow[] = await this.dataSource.query(
        `SELECT id, name, schema_id AS "schemaId", resource_id AS "resourceId", version,
                object_ttl_seconds AS "objectTtlSeconds", default_tlp AS "defaultTlp", scoring, taxii_id AS "taxiiId", ${isoMicros('created_at')} AS "createdAt"
           FROM intel_collection WHERE name = $1`,
        [name],
      );
      return found[0];
    });
    if (!row) throw IntelErrors.collectionNotFound(name);
    return row;
  }

  /** The collection's schema document with the schema's own tag, so that it can be used for a schema PUT. */
  async schemaOf(name: string): Promise<TaggedResult<Record<string, unknown>>> {
    const collection = await this.findByName(name);
    return this.schemas.view('intel', collection.schemaId);
  }

  /**
   * `{}` and the current values change nothing and keep the tag; a real change increments it.
   * `objectTTLSeconds: null` removes the time to live. A new `defaultTLP` marks the writes made after it
   * commits; objects already stored keep their marking. `scoring` replaces the scoring whole (`null`: the
   * defaults); new TAXII view aliases must be free (409 DuplicateTaxiiAlias).
   */
  async update(name: string, ifMatch: string, form: UpdateCollectionDto): Promise<void> {
    const formScoring = scoringOfForm(form);
    await this.dataSource.transaction(async (manager) => {
      const rows: { schemaId: string; version: number; ttl: number | null; defaultTlp: TlpRank; scoring: Scoring }[] = await manager.query(
        `SELECT schema_id AS "schemaId", version, object_ttl_seconds AS ttl, default_tlp AS "defaultTlp", scoring
           FROM intel_collection WHERE name = $1 FOR UPDATE`,
        [name],
      );
      if (rows.length === 0) throw IntelErrors.collectionNotFound(name);
      assertTagMatches(ifMatch, rows[0].version);
      const schemaId = form.schemaID ?? rows[0].schemaId;
      const ttl = form.objectTTLSeconds === undefined ? rows[0].ttl : form.objectTTLSeconds;
      const defaultTlp = defaultTlpOf(form) ?? rows[0].defaultTlp;
      const scoring = formScoring ?? rows[0].scoring;
      const sameScoring = isDeepStrictEqual(scoring, rows[0].scoring);
      if (schemaId === rows[0].schemaId && ttl === rows[0].ttl && defaultTlp === rows[0].defaultTlp && sameScoring) return;
      if (schemaId !== rows[0].schemaId && !(await this.schemas.exists('intel', schemaId, manager))) {
        throw SchemaRegistryErrors.schemaNotFound('intel', schemaId);
      }
      const added = aliasesOf(scoring).filter((alias) => !aliasesOf(rows[0].scoring).includes(alias));
      if (added.length > 0) await assertAliasesFree(manager, name, added, false);
      await manager.query(
        `UPDATE intel_collection SET schema_id = $2, object_ttl_seconds = $3, default_tlp = $4, scoring = $5, version = version + 1, updated_at = now()
          WHERE name = $1`,
        [name, schemaId, ttl, defaultTlp, JSON.stringify(scoring)],
      );
      await this.rows.publish(manager, name);
    });
    this.rows.evictLocally(name);
  }

  /** decisions §3: only the collections the key may read (ReadChildren on intel, or Read on the collection). */
  async list(principal: Principal, query: PageQueryDto): Promise<PageResult<CollectionView>> {
    const page = pageRequestOf(query);
    const afterId = afterIdFromCursor(page.cursor);
    const { readsAll, readable } = readScopeOf(principal);
    const rows: { id: number; name: string; schemaID: string; ttl: number | null; defaultTlp: TlpRank; scoring: Scoring }[] = await this.dataSource.query(
      `SELECT id, name, schema_id AS "schemaID", object_ttl_seconds AS ttl, default_tlp AS "defaultTlp", scoring FROM intel_collection
        WHERE id > $1::bigint AND ($2 OR resource_id = ANY($3::int[])) ORDER BY id LIMIT $4`,
      [afterId, readsAll, readable, page.limit + 1],
    );
    return keysetPage(
      rows,
      page.limit,
      (row) => afterIdCursor(row.id),
      ({ name, schemaID, ttl, defaultTlp, scoring }) => collectionView(name, schemaID, ttl, defaultTlp, scoring),
    );
  }
}
