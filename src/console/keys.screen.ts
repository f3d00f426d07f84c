import { Injectable } from '@nestjs/common';
import { ApiKeysService } from '../auth/api-keys.service.js';
import { CreateApiKeyDto, UpdateApiKeyDto, type ApiKeyView } from '../auth/dto/api-key.dto.js';
import { ResourcesService } from '../auth/resources.service.js';
import { ApiError } from '../common/errors/api-error.js';
import { BUILTIN_RESOURCES, RESOURCE_ACTIONS, type Principal, type ResourceAction } from '../common/guard/access.js';
import { TLP_LEVELS, tlpOf, type TlpRank } from '../common/markings/tlp.js';
import type { FormAnswer } from './console-answers.js';
import { ConsoleSessionsService } from './console-sessions.service.js';
import { refusalOf, validatedForm, type Refusal } from './forms.js';
import { cursorParam, nextCursor } from './paging.js';
import { resourcePath, ResourceTree, type ResourceTreeNode } from './resource-tree.js';
import { keyCreatedView, keyEditorView, keysView, type Ceilings, type KeyRow } from './views/keys.view.js';
import type { Screen } from './views/layout.js';

const PAGE_SIZE = '50';

/** The form fields that show the key form's problems (the rest go to the page's message). */
const KEY_FIELDS = { description: 'description', expiresAt: 'expiresOn', maxTLP: 'maxTLP', reliability: 'reliability' };

/** API keys for admins through the auth area's services: the same checks as `/auth/keys`. */
@Injectable()
export class KeysScreen {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly resources: ResourcesService,
    private readonly tree: ResourceTree,
    private readonly sessions: ConsoleSessionsService,
  ) {}

  async list(principal: Principal, query: Record<string, unknown>): Promise<Screen> {
    const result = await this.keys.list({ cursor: cursorParam(query), limit: PAGE_SIZE });
    // Permissions name resources by id; a person reads them by path (`intel/phishing-domains`).
    const ids = result.items.flatMap((key) => [
      ...key.permissions.map((permission) => permission.resource.id),
      ...key.requestLimits.map((limit) => limit.target.resource.id),
    ]);
    const paths = await this.resources.pathsOf([...new Set(ids)]);
    const pathOf = (id: number) => paths.get(id) ?? `resource ${id}`;
    return keysView({
      keys: result.items.map((key) => keyRow(key, pathOf)),
      canWrite: principal.holds(BUILTIN_RESOURCES.auth, 'Write'),
      ceilings: ceilingsOf(principal),
      next: nextCursor(result),
    });
  }

  async editor(principal: Principal, form?: URLSearchParams, refusal?: Refusal): Promise<Screen> {
    const nodes = await this.tree.read();
    const rows = nodes
      .map((node) => ({ id: node.id, path: resourcePath(nodes, node), actions: grantable(principal, node) }))
      .filter((row) => row.actions.length > 0);
    return keyEditorView({ rows, ceilings: ceilingsOf(principal), form, refusal });
  }

  /** The editor's form as the API's key form, by the API's rules; the value is shown once. */
  async create(principal: Principal, form: URLSearchParams): Promise<FormAnswer> {
    try {
      const created = await this.keys.create(principal, await validatedForm(CreateApiKeyDto, keyBodyOf(form)));
      return { status: 201, screen: keyCreatedView(created), created: { id: created.id } };
    } catch (error) {
      const refusal = refusalOf(error, KEY_FIELDS);
      return { status: refusal.status, screen: await this.editor(principal, form, refusal) };
    }
  }

  /**
   * The ceiling or the reliability set in a key's row, as `PATCH /auth/keys/{id}` sets them (by its DTO and
   * rules; no tag: each form sets one member).
   */
  async update(principal: Principal, id: string, form: URLSearchParams): Promise<FormAnswer> {
    const changes = await validatedForm(UpdateApiKeyDto, { maxTLP: form.get('maxTLP') ?? undefined, reliability: form.get('reliability') ?? undefined });
    await this.keys.update(principal, keyParam(id), undefined, changes);
    return { seeOther: '/console/keys' };
  }

  async revoke(id: string): Promise<FormAnswer> {
    await this.keys.revoke(keyParam(id));
    // Its sessions would end at their next request anyway (the key is checked on each); this ends them now.
    await this.sessions.endKey(Number(id));
    return { seeOther: '/console/keys' };
  }
}

/** A key id from the console's path, checked as the API's path DTO checks it (anything else: no such key). */
function keyParam(id: string): { api_key_id: string } {
  if (!/^[1-9]\d{0,9}$/.test(id)) throw new ApiError('NotFound', 'No key has this id.');
  return { api_key_id: id };
}

/** The ceilings the signed-in key may set: up to its own, by the API's rule. */
function ceilingsOf(principal: Principal): Ceilings {
  return { choices: TLP_LEVELS.filter((_level, rank) => principal.canGrantTlp(rank as TlpRank)), own: tlpOf(principal.maxTlp) };
}

function keyRow(key: ApiKeyView, pathOf: (id: number) => string): KeyRow {
  const expired = key.expiresAt !== null && new Date(key.expiresAt).getTime() <= Date.now();
  return {
    id: key.id,
    description: key.description,
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
    lastUsedAt: key.lastUsedAt,
    permissions: key.permissions.map((permission) => ({ path: pathOf(permission.resource.id), actions: permission.actions })),
    limits: key.requestLimits.map((limit) => ({ path: pathOf(limit.target.resource.id), action: limit.target.action, limit: limit.limit })),
    state: key.revoked ? 'revoked' : expired ? 'expired' : 'active',
    maxTLP: key.maxTLP,
    reliability: key.reliability,
  };
}

/**
 * The editor's fields in the shape of the API's key body (`grant` = `<id>:<action>`, `limit:<id>:<action>`
 * a daily limit, `expiresOn` a UTC date); blank fields are left out. Only reshaping: the DTO checks the values.
 */
function keyBodyOf(form: URLSearchParams): object {
  const granted = new Map<string, Set<string>>();
  for (const value of form.getAll('grant')) {
    const [id, action] = value.split(':');
    granted.set(id, (granted.get(id) ?? new Set()).add(action));
  }
  const requestLimits = [...form]
    .map(([name, value]) => ({ target: /^limit:([^:]*):(.*)$/.exec(name), value: value.trim() }))
    .filter(({ target, value }) => target !== null && value !== '')
    .map(({ target, value }) => ({
      target: { resource: { id: Number(target![1]) }, action: target![2] },
      limit: Number(value),
      period: 'Day',
    }));
  const description = form.get('description')?.trim();
  const expiresOn = form.get('expiresOn')?.trim();
  const maxTLP = form.get('maxTLP')?.trim();
  const reliability = form.get('reliability')?.trim();
  return {
    permissions: [...granted].map(([id, actions]) => ({ resource: { id: Number(id) }, actions: [...actions] })),
    requestLimits,
    ...(expiresOn && { expiresAt: `${expiresOn}T00:00:00Z` }),
    ...(description && { description }),
    ...(maxTLP && { maxTLP }),
    ...(reliability && { reliability }),
  };
}

/** Columns the caller can grant on a node: `*Children` only on nodes that have children (the top level). */
function grantable(principal: Principal, node: ResourceTreeNode): ResourceAction[] {
  const actions: readonly ResourceAction[] = node.depth === 0 ? RESOURCE_ACTIONS : ['Read', 'Write'];
  return actions.filter((action) => principal.canGrant({ id: node.id, parentId: node.parent?.id ?? null }, action));
}
