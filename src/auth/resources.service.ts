import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { BUILTIN_RESOURCES, type BuiltinResource, type ResourceNode } from '../common/guard/access.js';
import { afterIdCursor, afterIdFromCursor } from '../common/pagination/cursor.js';
import { keysetPage, type PageResult, pageRequestOf } from '../common/pagination/page.js';
import { AuthErrors } from './auth.errors.js';
import type { ListResourcesQueryDto, ResourceView } from './dto/resource.dto.js';

interface ResourceRow {
  id: number;
  name: string;
  parentId: number | null;
}

@Injectable()
export class ResourcesService {
  /**
   * Child resources are never renamed or re-parented, so a found (parent, name) → node entry stays true and
   * can be shared by every request; misses are not cached (the child may be created a moment later).
   */
  private readonly childCache = new Map<string, ResourceNode>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findChild(parent: BuiltinResource, name: string): Promise<ResourceNode | undefined> {
    const parentId = BUILTIN_RESOURCES[parent].id;
    const cacheKey = `${parentId}/${name}`;
    const cached = this.childCache.get(cacheKey);
    if (cached) return cached;
    // PostgreSQL text cannot hold U+0000, so such a name cannot exist (and must not reach the query).
    if (name.includes('\u0000')) return undefined;
    const rows: { id: number }[] = await this.dataSource.query(
      `SELECT id FROM auth_resource WHERE parent_id = $1 AND name = $2`,
      [parentId, name],
    );
    if (rows.length === 0) return undefined;
    const node = { id: rows[0].id, parentId };
    this.childCache.set(cacheKey, node);
    return node;
  }

  /** The nodes of the given ids that exist. */
  async findByIds(ids: number[]): Promise<Map<number, ResourceNode>> {
    const rows: ResourceRow[] = await this.dataSource.query(
      `SELECT id, parent_id AS "parentId" FROM auth_resource WHERE id = ANY($1::int[])`,
      [storableIds(ids)],
    );
    return new Map(rows.map((row) => [row.id, { id: row.id, parentId: row.parentId }]));
  }

  /**
   * How people name the given resources that exist: `parent/name` (`intel/phishing-domains`), or `name` at
   * the top level. The tree has two levels (the built-ins and their children), so one join gives every path.
   */
  async pathsOf(ids: number[]): Promise<Map<number, string>> {
    const rows: { id: number; path: string }[] = await this.dataSource.query(
      `SELECT r.id, CASE WHEN p.id IS NULL THEN r.name ELSE p.name || '/' || r.name END AS path
         FROM auth_resource r LEFT JOIN auth_resource p ON p.id = r.parent_id
        WHERE r.id = ANY($1::int[])`,
      [storableIds(ids)],
    );
    return new Map(rows.map((row) => [row.id, row.path]));
  }

  /** Creates the resource of a new child (a collection) inside the caller's transaction. */
  async createChild(manager: EntityManager, parent: BuiltinResource, name: string): Promise<ResourceNode> {
    const parentId = BUILTIN_RESOURCES[parent].id;
    const [{ id }]: { id: number }[] = await manager.query(
      `INSERT INTO auth_resource (name, parent_id) VALUES ($1, $2) RETURNING id`,
      [name, parentId],
    );
    return { id, parentId };
  }

  async list(query: ListResourcesQueryDto): Promise<PageResult<ResourceView>> {
    const page = pageRequestOf(query);
    const afterId = afterIdFromCursor(page.cursor);
    const parentId = query.parentID === undefined ? null : Number(query.parentID);
    if (parentId !== null) {
      const parents = await this.findByIds([parentId]);
      if (!parents.has(parentId)) throw AuthErrors.resourceNotFound(parentId);
    }
    // One walk of the children index from (parent, cursor), top level as parent 0: the row comparison on
    // the index's full key and the ORDER BY on exactly its columns leave the planner no other plan.
    const rows: ResourceRow[] = await this.dataSource.query(
      `SELECT id, name, parent_id AS "parentId" FROM auth_resource
        WHERE (COALESCE(parent_id, 0), id) > ($1::int, $2::bigint) AND COALESCE(parent_id, 0) <= $1::int
        ORDER BY COALESCE(parent_id, 0), id LIMIT $3`,
      [parentId ?? 0, afterId, page.limit + 1],
    );
    return keysetPage(
      rows,
      page.limit,
      (row) => afterIdCursor(row.id),
      (row) => (row.parentId === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, parent: { id: row.parentId } }),
    );
  }
}

/** Ids an integer column can hold (others name nothing, and would make PostgreSQL refuse the parameter). */
function storableIds(ids: number[]): number[] {
  return ids.filter((id) => Number.isSafeInteger(id) && id > 0 && id <= 2147483647);
}
