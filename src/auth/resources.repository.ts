import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

export interface ResourceRow {
  id: number;
  name: string;
  parentId: number | null;
}

/** The statements of `auth_resource` (ResourcesService holds the rules and the cache). */
@Injectable()
export class ResourcesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async childId(parentId: number, name: string): Promise<number | undefined> {
    const rows: { id: number }[] = await this.dataSource.query(`SELECT id FROM auth_resource WHERE parent_id = $1 AND name = $2`, [parentId, name]);
    return rows[0]?.id;
  }

  byIds(ids: number[]): Promise<Pick<ResourceRow, 'id' | 'parentId'>[]> {
    return this.dataSource.query(`SELECT id, parent_id AS "parentId" FROM auth_resource WHERE id = ANY($1::int[])`, [ids]);
  }

  /** `parent/name`, or `name` at the top level: the tree has two levels, so one join gives every path. */
  paths(ids: number[]): Promise<{ id: number; path: string }[]> {
    return this.dataSource.query(
      `SELECT r.id, CASE WHEN p.id IS NULL THEN r.name ELSE p.name || '/' || r.name END AS path
         FROM auth_resource r LEFT JOIN auth_resource p ON p.id = r.parent_id
        WHERE r.id = ANY($1::int[])`,
      [ids],
    );
  }

  async insertChild(manager: EntityManager, parentId: number, name: string): Promise<number> {
    const [{ id }]: { id: number }[] = await manager.query(`INSERT INTO auth_resource (name, parent_id) VALUES ($1, $2) RETURNING id`, [name, parentId]);
    return id;
  }

  /**
   * One walk of the children index from (parent, cursor), top level as parent 0: the row comparison on the
   * index's full key and the ORDER BY on exactly its columns leave the planner no other plan.
   */
  childrenPage(parentId: number, afterId: number, take: number): Promise<ResourceRow[]> {
    return this.dataSource.query(
      `SELECT id, name, parent_id AS "parentId" FROM auth_resource
        WHERE (COALESCE(parent_id, 0), id) > ($1::int, $2::bigint) AND COALESCE(parent_id, 0) <= $1::int
        ORDER BY COALESCE(parent_id, 0), id LIMIT $3`,
      [parentId, afterId, take],
    );
  }
}
