import { Get, Param, Query, Req } from '@nestjs/common';
import type { ObjectKey } from '../common/indicators/index.js';
import { ClientGone } from '../common/http/long-poll.js';
import { ChangesService } from '../intel/changes.service.js';
import { CollectionsService } from '../intel/collections.service.js';
import type { ObjectChangeView, ObjectView } from '../intel/dto/object.dto.js';
import { LookupService } from '../intel/lookup/lookup.service.js';
import { ObjectsService } from '../intel/objects.service.js';
import { ApiError } from '../common/errors/api-error.js';
import { ConsoleController } from './console-controller.js';
import { cursorParam, nextCursor } from './paging.js';
import { ConsoleAccess, type ConsoleRequest, wantsFragment } from './console-http.js';
import { html, type Html } from './html.js';
import { dateOf, page } from './views/layout.js';

const PAGE_SIZE = '50';
/** How long one live-tail request waits for a change before htmx asks again. */
const TAIL_WAIT_SECONDS = '25';
const COLLECTION = { parent: 'intel', param: 'name' } as const;

export function collectionHref(name: string): string {
  return `/console/collections/${encodeURIComponent(name)}`;
}

export function objectHref(collection: string, key: ObjectKey): string {
  const query = new URLSearchParams({ type: key.type, value: key.value });
  return `${collectionHref(collection)}/object?${query.toString()}`;
}

/** Collections the key may read, a collection's objects (cursor pages), its live change feed, one object. */
@ConsoleController('collections')
export class CollectionsController {
  constructor(
    private readonly collections: CollectionsService,
    private readonly objects: ObjectsService,
    private readonly changes: ChangesService,
    private readonly lookups: LookupService,
  ) {}

  @Get()
  async list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<Html> {
    const result = await this.collections.list(request.principal!, { cursor: cursorParam(query), limit: PAGE_SIZE });
    const next = nextCursor(result);
    return page(
      request,
      'Collections',
      html`${
        result.items.length === 0
          ? html`<p>This key may read no collections${cursorParam(query) ? ' after this point' : ''}.</p>`
          : html`<table><caption>Collections this key may read</caption><thead><tr><th scope="col">Name</th><th scope="col">Schema</th></tr></thead>
<tbody>${result.items.map(
              (collection) =>
                html`<tr><td><a href="${collectionHref(collection.name)}">${collection.name}</a></td><td>${collection.schemaID}</td></tr>`,
            )}</tbody></table>`
      }
${next && html`<p><a href="/console/collections?cursor=${encodeURIComponent(next)}" rel="next">Next page</a></p>`}`,
    );
  }

  @Get(':name')
  @ConsoleAccess(COLLECTION, 'Read')
  async objectsPage(@Req() request: ConsoleRequest, @Param('name') name: string, @Query() query: Record<string, unknown>): Promise<Html> {
    const result = await this.objects.list(name, { cursor: cursorParam(query), limit: PAGE_SIZE });
    const schema = (await this.collections.schemaOf(name)).body;
    const next = nextCursor(result);
    const base = collectionHref(name);
    return page(
      request,
      `Collection ${name}`,
      html`<p>Schema <code>${String(schema.schemaID)}</code>${typeof schema.title === 'string' && html`: ${schema.title}`}</p>
${
        result.items.length === 0
          ? html`<p>No objects${cursorParam(query) ? ' after this point' : ''}.</p>`
          : objectsTable(name, result.items, 'Objects')
      }
${next && html`<p><a href="${base}?cursor=${encodeURIComponent(next)}" rel="next">Next page</a></p>`}
${
  result.related &&
  html`<section aria-labelledby="live"><h2 id="live">Changes since this page was read</h2>
<p class="note">New changes appear here as they happen. Without JavaScript, <a href="${base}/changes?cursor=${encodeURIComponent(result.related.cursor)}">show the changes since then</a>.</p>
<ol id="tail" aria-live="polite">${tailPoller(name, result.related.cursor)}</ol></section>`
}`,
    );
  }

  /**
   * The change feed after `cursor`. From htmx (the live tail): a long-poll through the feed's own wait,
   * answered with the new entries and the next poller. Otherwise a page of the changes, at once.
   */
  @Get(':name/changes')
  @ConsoleAccess(COLLECTION, 'Read')
  async changesPage(
    @Req() request: ConsoleRequest,
    @Param('name') name: string,
    @Query() query: Record<string, unknown>,
    @ClientGone() gone: AbortSignal,
  ): Promise<Html> {
    const cursor = cursorParam(query);
    if (!cursor) throw new ApiError('InvalidQueryArgument', 'a changes cursor is required');
    const live = wantsFragment(request);
    const result = await this.changes.page(name, { cursor, limit: '100', wait: live ? TAIL_WAIT_SECONDS : '0' }, gone);
    const next = result.items.length > 0 ? result.cursorAfter(result.items.length - 1) : cursor;
    const entries = result.items.map((change) => changeEntry(name, change));
    if (live) return html`${entries}${tailPoller(name, next)}`;
    return page(
      request,
      `Changes of ${name}`,
      html`${entries.length === 0 ? html`<p>No changes yet.</p>` : html`<ol>${entries}</ol>`}
<p><a href="${collectionHref(name)}/changes?cursor=${encodeURIComponent(next)}">Newer changes</a> ·
<a href="${collectionHref(name)}">Back to ${name}</a></p>`,
    );
  }

  @Get(':name/object')
  @ConsoleAccess(COLLECTION, 'Read')
  async objectPage(@Req() request: ConsoleRequest, @Param('name') name: string, @Query() query: Record<string, unknown>): Promise<Html> {
    const { type, value } = query;
    if (typeof type !== 'string' || typeof value !== 'string') throw new ApiError('NotFound', 'No such object.');
    // Throws NotFound for an unknown collection, like the API.
    await this.collections.findByName(name);
    const [result] = await this.lookups.lookup(request.principal!, {
      keys: [{ type: type as ObjectKey['type'], value }],
      collections: [name],
    });
    const object = result?.matches[0]?.object;
    if (!object) throw new ApiError('NotFound', 'No object of this collection has that key (it may have expired or been deleted).');
    return page(
      request,
      `Object in ${name}`,
      html`<dl>
<dt>Collection</dt><dd><a href="${collectionHref(name)}">${name}</a></dd>
<dt>Type</dt><dd>${object.type}</dd>
<dt>Expires</dt><dd>${object.expiresAt ? dateOf(object.expiresAt) : 'never'}</dd>
</dl>
<table><caption>Keys</caption><thead><tr><th scope="col">Type</th><th scope="col">Value</th></tr></thead>
<tbody>${object.keys.map((key) => html`<tr><td>${key.type}</td><td class="mono">${key.value}</td></tr>`)}</tbody></table>
<h2>Context</h2>
<pre>${JSON.stringify(object.context, null, 2)}</pre>`,
    );
  }
}

function objectsTable(collection: string, objects: ObjectView[], caption: string): Html {
  return html`<table><caption>${caption}</caption><thead><tr><th scope="col">Type</th><th scope="col">Keys</th><th scope="col">Expires</th></tr></thead>
<tbody>${objects.map(
    (object) => html`<tr><td>${object.type}</td><td>${object.keys.map(
      (key) => html`<a class="mono" href="${objectHref(collection, key)}">${key.value}</a> `,
    )}</td><td>${object.expiresAt ? dateOf(object.expiresAt) : 'never'}</td></tr>`,
  )}</tbody></table>`;
}

function changeEntry(collection: string, change: ObjectChangeView): Html {
  const [first] = change.object.keys;
  return html`<li><strong>${change.operation}</strong>${change.reason ? html` (${change.reason})` : ''} ${change.object.type}
${first && html`<a class="mono" href="${objectHref(collection, first)}">${first.value}</a>`}</li>`;
}

/** Invisible: asks for the changes after `cursor` as soon as it is on the page, and is replaced by them. */
function tailPoller(collection: string, cursor: string): Html {
  return html`<li hidden hx-get="${collectionHref(collection)}/changes?cursor=${encodeURIComponent(cursor)}" hx-trigger="load" hx-swap="outerHTML"></li>`;
}
