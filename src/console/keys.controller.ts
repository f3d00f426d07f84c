import { Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiKeysService } from '../auth/api-keys.service.js';
import type { ApiKeyView, CreateApiKeyDto } from '../auth/dto/api-key.dto.js';
import { ApiError } from '../common/errors/api-error.js';
import { BUILTIN_RESOURCES, type Principal, RESOURCE_ACTIONS, type ResourceAction } from '../common/guard/access.js';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleController } from './console-controller.js';
import { cursorParam, nextCursor } from './paging.js';
import { ConsoleAccess, type ConsoleRequest } from './console-http.js';
import { ConsoleSessionsService } from './console-sessions.service.js';
import { html, type Html } from './html.js';
import { resourcePath, ResourceTree, type ResourceTreeNode } from './resource-tree.js';
import { alertOf, dateOf, page } from './views/layout.js';

const PAGE_SIZE = '50';

/** API keys for admins: list, generate (value shown once), revoke; the same checks as `/auth/keys`. */
@ConsoleController('keys')
export class KeysController {
  constructor(
    private readonly answers: ConsoleAnswers,
    private readonly keys: ApiKeysService,
    private readonly tree: ResourceTree,
    private readonly sessions: ConsoleSessionsService,
  ) {}

  @Get()
  @ConsoleAccess('auth', 'Read')
  async list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<Html> {
    const cursor = cursorParam(query);
    const result = await this.keys.list({ cursor, limit: PAGE_SIZE });
    const next = nextCursor(result);
    const canWrite = request.principal!.holds(BUILTIN_RESOURCES.auth, 'Write');
    return page(
      request,
      'API keys',
      html`${canWrite && html`<p><a href="/console/keys/new">Generate a key</a></p>`}
<table><caption>Keys, oldest first</caption><thead><tr><th scope="col">Id</th><th scope="col">Description</th><th scope="col">Created</th>
<th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Permissions</th><th scope="col">State</th></tr></thead>
<tbody>${result.items.map((key) => keyRow(key, canWrite))}</tbody></table>
${next && html`<p><a href="/console/keys?cursor=${encodeURIComponent(next)}" rel="next">Next page</a></p>`}`,
    );
  }

  @Get('new')
  @ConsoleAccess('auth', 'Write')
  async newKey(@Req() request: ConsoleRequest): Promise<Html> {
    return editorPage(request, await this.tree.read());
  }

  @Post()
  @ConsoleAccess('auth', 'Write')
  async create(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const form = request.form!;
    let created: { id: number; key: string };
    try {
      created = await this.keys.create(request.principal!, keyFormOf(form));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      return this.answers.html(request, response, error.status, editorPage(request, await this.tree.read(), form, error.message));
    }
    await this.answers.html(
      request,
      response,
      201,
      page(
        request,
        `Key ${created.id} generated`,
        html`<p>Copy the key now: it is shown only this once and cannot be read again.</p>
<p><label for="new-key">The new API key</label></p>
<p><input id="new-key" class="secret mono" readonly size="60" value="${created.key}"></p>
<p><a href="/console/keys">Back to the keys</a></p>`,
        { noHistory: true },
      ),
      { id: created.id },
    );
  }

  @Post(':id/revoke')
  @ConsoleAccess('auth', 'Write')
  async revoke(@Req() request: ConsoleRequest, @Res() response: Response, @Param('id') id: string): Promise<void> {
    if (!/^[1-9]\d{0,9}$/.test(id)) throw new ApiError('NotFound', 'No key has this id.');
    await this.keys.revoke({ api_key_id: id });
    // Its sessions would end at their next request anyway (the key is checked on each); this ends them now.
    await this.sessions.endKey(Number(id));
    await this.answers.seeOther(request, response, '/console/keys');
  }
}

function keyRow(key: ApiKeyView, canWrite: boolean): Html {
  const expired = key.expiresAt !== null && new Date(key.expiresAt).getTime() <= Date.now();
  const state = key.revoked ? 'revoked' : expired ? 'expired' : 'active';
  return html`<tr><td>${key.id}</td><td>${key.description ?? ''}</td><td>${dateOf(key.createdAt)}</td><td>${
    key.expiresAt ? dateOf(key.expiresAt) : 'never'
  }</td><td>${dateOf(key.lastUsedAt)}</td><td>${key.permissions.map(
    (permission) => html`${permission.resource.id}: ${permission.actions.join(', ')}<br>`,
  )}${key.requestLimits.map((limit) => html`limit ${limit.target.resource.id} ${limit.target.action}: ${limit.limit}/day<br>`)}</td><td>${state}${
    canWrite &&
    state === 'active' &&
    html`<form method="post" action="/console/keys/${key.id}/revoke"><button type="submit" class="secondary" aria-label="Revoke key ${key.id}">Revoke</button></form>`
  }</td></tr>`;
}

/** The form's `grant` checkboxes (`<id>:<action>`) and `limit:<id>:<action>` numbers as the API's key form. */
function keyFormOf(form: URLSearchParams): CreateApiKeyDto {
  const granted = new Map<number, Set<ResourceAction>>();
  for (const value of form.getAll('grant')) {
    const [id, action] = value.split(':');
    if (!/^\d{1,10}$/.test(id) || !RESOURCE_ACTIONS.includes(action as ResourceAction)) continue;
    const actions = granted.get(Number(id)) ?? new Set<ResourceAction>();
    actions.add(action as ResourceAction);
    granted.set(Number(id), actions);
  }
  const requestLimits: NonNullable<CreateApiKeyDto['requestLimits']> = [];
  for (const [name, value] of form) {
    const match = /^limit:(\d{1,10}):([A-Za-z]+)$/.exec(name);
    if (!match || value.trim() === '' || !RESOURCE_ACTIONS.includes(match[2] as ResourceAction)) continue;
    if (!/^\d{1,10}$/.test(value.trim())) throw new ApiError('InvalidRequestLimit', `a daily limit must be a whole number, got "${value}"`);
    requestLimits.push({
      target: { resource: { id: Number(match[1]) }, action: match[2] as ResourceAction },
      limit: Number(value.trim()),
      period: 'Day',
    });
  }
  const description = form.get('description')?.trim().slice(0, 1024);
  const expiresOn = form.get('expiresOn')?.trim();
  if (expiresOn && !/^\d{4}-\d{2}-\d{2}$/.test(expiresOn)) throw new ApiError('InvalidData', 'the expiry must be a date (YYYY-MM-DD)');
  return {
    permissions: [...granted].map(([id, actions]) => ({ resource: { id }, actions: [...actions] })),
    requestLimits,
    ...(expiresOn && { expiresAt: `${expiresOn}T00:00:00Z` }),
    ...(description && { description }),
  };
}

/** Columns the caller can grant on a node: `*Children` only on nodes that have children (the top level). */
function grantable(principal: Principal, node: ResourceTreeNode): ResourceAction[] {
  const actions: readonly ResourceAction[] = node.depth === 0 ? RESOURCE_ACTIONS : ['Read', 'Write'];
  return actions.filter((action) => principal.canGrant({ id: node.id, parentId: node.parent?.id ?? null }, action));
}

function editorPage(request: ConsoleRequest, nodes: ResourceTreeNode[], form?: URLSearchParams, message?: string): Html {
  const principal = request.principal!;
  const checked = new Set(form?.getAll('grant') ?? []);
  const rows = nodes
    .map((node) => ({ node, actions: grantable(principal, node) }))
    .filter((row) => row.actions.length > 0);
  return page(
    request,
    'Generate an API key',
    html`${alertOf(message)}
<form method="post" action="/console/keys" class="stack wide">
<label for="description">Description</label>
<input id="description" name="description" maxlength="1024" value="${form?.get('description') ?? ''}">
<label for="expiresOn">Expires on (UTC, optional)</label>
<input id="expiresOn" name="expiresOn" type="date" value="${form?.get('expiresOn') ?? ''}">
<table><caption>Permissions and optional daily limits (only what this key may hand out)</caption>
<thead><tr><th scope="col">Resource</th>${RESOURCE_ACTIONS.map((action) => html`<th scope="col">${action}</th>`)}</tr></thead>
<tbody>${rows.map(({ node, actions }) => {
      const path = resourcePath(nodes, node);
      return html`<tr><th scope="row">${path}</th>${RESOURCE_ACTIONS.map((action) => {
        if (!actions.includes(action)) return html`<td></td>`;
        const id = `${node.id}-${action}`;
        const value = `${node.id}:${action}`;
        return html`<td><input type="checkbox" id="grant-${id}" name="grant" value="${value}" aria-label="${action} on ${path}"${
          checked.has(value) ? html` checked` : ''
        }>
<input type="number" min="1" step="1" name="limit:${value}" aria-label="Daily limit of ${action} on ${path}" placeholder="no limit" value="${
          form?.get(`limit:${value}`) ?? ''
        }"></td>`;
      })}</tr>`;
    })}</tbody></table>
<p><button type="submit">Generate key</button></p>
</form>`,
  );
}
