import type { ObjectKey } from '../../common/indicators/index.js';
import type { CollectionView } from '../../intel/dto/collection.dto.js';
import type { ObjectChangeView, ObjectView } from '../../intel/dto/object.dto.js';
import { html, type Html } from '../html.js';
import { dataTable, expiryOf, pager } from './components.js';
import { Screen } from './layout.js';

export function collectionHref(name: string): string {
  return `/console/collections/${encodeURIComponent(name)}`;
}

export function objectHref(collection: string, key: ObjectKey): string {
  const query = new URLSearchParams({ type: key.type, value: key.value });
  return `${collectionHref(collection)}/object?${query.toString()}`;
}

function changesHref(collection: string, cursor: string): string {
  return `${collectionHref(collection)}/changes?${new URLSearchParams({ cursor }).toString()}`;
}

export interface CollectionsModel {
  collections: CollectionView[];
  /** This page follows another (an empty one then says "after this point"). */
  paged: boolean;
  next?: string;
}

export function collectionsView({ collections, paged, next }: CollectionsModel): Screen {
  return new Screen(
    'Collections',
    html`${
      collections.length === 0
        ? html`<p>This key may read no collections${paged ? ' after this point' : ''}.</p>`
        : dataTable({
            caption: 'Collections this key may read',
            rows: collections,
            columns: [
              { header: 'Name', cell: (collection) => html`<a href="${collectionHref(collection.name)}">${collection.name}</a>` },
              { header: 'Schema', cell: (collection) => collection.schemaID },
            ],
          })
    }
${pager('/console/collections', next)}`,
  );
}

export interface CollectionModel {
  name: string;
  schema: { id: string; title?: string };
  objects: ObjectView[];
  paged: boolean;
  next?: string;
  /** The change feed's cursor as of this page (the live tail starts there). */
  changesCursor?: string;
}

/** A collection's objects in insertion order, and below them its live changes. */
export function collectionView({ name, schema, objects, paged, next, changesCursor }: CollectionModel): Screen {
  return new Screen(
    `Collection ${name}`,
    html`<p>Schema <code>${schema.id}</code>${schema.title !== undefined && html`: ${schema.title}`}</p>
${
  objects.length === 0
    ? html`<p>No objects${paged ? ' after this point' : ''}.</p>`
    : dataTable({
        caption: 'Objects',
        rows: objects,
        columns: [
          { header: 'Type', cell: (object) => object.type },
          {
            header: 'Keys',
            cell: (object) => object.keys.map((key) => html`<a class="mono" href="${objectHref(name, key)}">${key.value}</a> `),
          },
          { header: 'Expires', cell: (object) => expiryOf(object.expiresAt) },
        ],
      })
}
${pager(collectionHref(name), next)}
${
  changesCursor !== undefined &&
  html`<section aria-labelledby="live"><h2 id="live">Changes since this page was read</h2>
<p class="note">New changes appear here as they happen. Without JavaScript, <a href="${changesHref(name, changesCursor)}">show the changes since then</a>.</p>
<ol id="tail" aria-live="polite">${tailPoller(name, changesCursor)}</ol></section>`
}`,
  );
}

export interface ChangesModel {
  name: string;
  changes: ObjectChangeView[];
  /** The cursor after the last change shown. */
  next: string;
}

/** The live tail's answer: the new entries, then the poller that asks for the ones after them. */
export function changesFragment({ name, changes, next }: ChangesModel): Html {
  return html`${changes.map((change) => changeEntry(name, change))}${tailPoller(name, next)}`;
}

/** The changes without JavaScript: a page of them and a link to the newer ones. */
export function changesView({ name, changes, next }: ChangesModel): Screen {
  return new Screen(
    `Changes of ${name}`,
    html`${changes.length === 0 ? html`<p>No changes yet.</p>` : html`<ol>${changes.map((change) => changeEntry(name, change))}</ol>`}
<p><a href="${changesHref(name, next)}">Newer changes</a> ·
<a href="${collectionHref(name)}">Back to ${name}</a></p>`,
  );
}

function changeEntry(collection: string, change: ObjectChangeView): Html {
  const [first] = change.object.keys;
  return html`<li><strong>${change.operation}</strong>${change.reason ? html` (${change.reason})` : ''} ${change.object.type}
${first && html`<a class="mono" href="${objectHref(collection, first)}">${first.value}</a>`}</li>`;
}

/** Invisible: asks for the changes after `cursor` as soon as it is on the page, and is replaced by them. */
function tailPoller(collection: string, cursor: string): Html {
  return html`<li hidden hx-get="${changesHref(collection, cursor)}" hx-trigger="load" hx-swap="outerHTML"></li>`;
}

export interface ObjectModel {
  collection: string;
  object: ObjectView;
}

/** One object: its collection, type, expiry, keys and context. */
export function objectView({ collection, object }: ObjectModel): Screen {
  return new Screen(
    `Object in ${collection}`,
    html`<dl>
<dt>Collection</dt><dd><a href="${collectionHref(collection)}">${collection}</a></dd>
<dt>Type</dt><dd>${object.type}</dd>
<dt>Expires</dt><dd>${expiryOf(object.expiresAt)}</dd>
</dl>
${dataTable({
  caption: 'Keys',
  rows: object.keys,
  columns: [
    { header: 'Type', cell: (key) => key.type },
    { header: 'Value', className: 'mono', cell: (key) => key.value },
  ],
})}
<h2>Context</h2>
<pre>${JSON.stringify(object.context, null, 2)}</pre>`,
  );
}
