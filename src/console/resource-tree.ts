import { Injectable } from '@nestjs/common';
import type { ResourceView } from '../auth/dto/resource.dto.js';
import { ResourcesService } from '../auth/resources.service.js';

/** The editor and the permission summary list at most this many resources (built-ins first, then collections). */
export const MAX_TREE_RESOURCES = 2000;

export interface ResourceTreeNode extends ResourceView {
  depth: number;
}

/** The resource tree of `GET /auth/resources`, read through the auth area's service, parents before children. */
@Injectable()
export class ResourceTree {
  constructor(private readonly resources: ResourcesService) {}

  async read(): Promise<ResourceTreeNode[]> {
    const nodes: ResourceTreeNode[] = [];
    const walk = async (parentID: number | undefined, depth: number): Promise<void> => {
      let cursor: string | undefined;
      do {
        const page = await this.resources.list({ parentID: parentID?.toString(), cursor, limit: '1000' });
        for (const item of page.items) {
          if (nodes.length >= MAX_TREE_RESOURCES) return;
          nodes.push({ ...item, depth });
          // Only the built-ins have children (the collections under intel).
          if (depth === 0) await walk(item.id, 1);
        }
        cursor = page.hasNext && page.items.length > 0 ? page.cursorAfter(page.items.length - 1) : undefined;
      } while (cursor !== undefined && nodes.length < MAX_TREE_RESOURCES);
    };
    await walk(undefined, 0);
    return nodes;
  }
}

/** `parent/name` of a node of the tree (`name` for a top-level one). */
export function resourcePath(nodes: ResourceTreeNode[], node: ResourceTreeNode | undefined): string {
  if (!node) return 'unknown resource';
  const parent = node.parent && nodes.find((candidate) => candidate.id === node.parent!.id);
  return parent ? `${parent.name}/${node.name}` : node.name;
}
