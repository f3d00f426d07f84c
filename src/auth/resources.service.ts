import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { BUILTIN_RESOURCES, type BuiltinResource, type ResourceNode } from '../common/guard/access.js';
import { afterIdCursor, afterIdFromCursor } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../common/pagination/page.js';
import { AuthErrors } from './auth.errors.js';
import type { ListResourcesQueryDto, ResourceView } from './dto/resource.dto.js';
import { ResourcesRepository } from './resources.repository.js';

@Injectable()
export class ResourcesService {
  /**
   * Child resources are never renamed or re-parented, so a found (parent, name) → node entry stays true and
   * can be shared by every request; misses are not cached (the child may be created a moment later).
   */
  private readonly childCache = new Map<string, ResourceNode>();

  constructor(private readonly repository: ResourcesRepository) {}

  async findChild(parent: BuiltinResource, name: string): Promise<ResourceNode | undefined> {
    const parentId = BUILTIN_RESOURCES[parent].id;
    const cacheKey = `${parentId}/${name}`;
    const cached = this.childCache.get(cacheKey);
    if (cached) return cached;
    // PostgreSQL text cannot hold U+0000, so such a name cannot exist (and must not reach the query).
    if (name.includes('\u0000')) return undefined;
    const id = await this.repository.childId(parentId, name);
    if (id === undefined) return undefined;
    const node = { id, parentId };
    this.childCache.set(cacheKey, node);
    return node;
  }

  /** The nodes of the given ids that exist. */
  async findByIds(ids: number[]): Promise<Map<number, ResourceNode>> {
    const rows = await this.repository.byIds(storableIds(ids));
    return new Map(rows.map((row) => [row.id, { id: row.id, parentId: row.parentId }]));
  }

  /**
   * How people name the given resources that exist: `parent/name` (`intel/phishing-domains`), or `name` at
   * the top level. The tree has two levels (the built-ins and their children), so one join gives every path.
   */
  async pathsOf(ids: number[]): Promise<Map<number, string>> {
    const rows = await this.repository.paths(storableIds(ids));
    return new Map(rows.map((row) => [row.id, row.path]));
  }

  /** Creates the resource of a new child (a collection) inside the caller's transaction. */
  async createChild(manager: EntityManager, parent: BuiltinResource, name: string): Promise<ResourceNode> {
    const parentId = BUILTIN_RESOURCES[parent].id;
    return { id: await this.repository.insertChild(manager, parentId, name), parentId };
  }

  async list(query: ListResourcesQueryDto): Promise<PageResult<ResourceView>> {
    const page = pageRequestOf(query);
    const afterId = afterIdFromCursor(page.cursor);
    const parentId = query.parentID === undefined ? null : Number(query.parentID);
    if (parentId !== null) {
      const parents = await this.findByIds([parentId]);
      if (!parents.has(parentId)) throw AuthErrors.resourceNotFound(parentId);
    }
    const rows = await this.repository.childrenPage(parentId ?? 0, afterId, page.limit + 1);
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
