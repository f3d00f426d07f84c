import type { ObjectKey } from '../../common/indicators/index.js';
import type { CollectionView } from '../../intel/dto/collection.dto.js';
import type { ObjectChangeView, ObjectView } from '../../intel/dto/object.dto.js';
import type { HistoryEntryView } from '../../intel/history/history.dto.js';
import type { ScoreExplanationView } from '../../scoring/dto/score.dto.js';
import type { SightingSummaryView, SightingView } from '../../sightings/dto/sighting.dto.js';
import { html, type Html } from '../html.js';
import { dataTable, dateOf, expiryOf, pager, scoreBadge, tlpBadge } from './components.js';
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
          { header: 'Marking', cell: (object) => tlpBadge(object.tlp) },
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
${first && html`<a class="mono" href="${objectHref(collection, first)}">${first.value}</a>`} ${tlpBadge(change.object.tlp)}</li>`;
}

/** Invisible: asks for the changes after `cursor` as soon as it is on the page, and is replaced by them. */
function tailPoller(collection: string, cursor: string): Html {
  return html`<li hidden hx-get="${changesHref(collection, cursor)}" hx-trigger="load" hx-swap="outerHTML"></li>`;
}

/** A recorded sighting (or hourly roll-up) with the key of the object it names. */
export interface KeyedSighting extends SightingView {
  key: ObjectKey;
}

export interface ObjectModel {
  collection: string;
  object: ObjectView;
  /** Its sighting summary over all its keys; null when never sighted. */
  sightings: SightingSummaryView | null;
  /** Its latest recorded sightings, of any of its keys, newest first. */
  latestSightings: KeyedSighting[];
  /** Why it has its score now (the screen always reads it; absent, nothing of the score is shown). */
  score?: ScoreExplanationView;
  /** The key the screen was opened by, whose history it shows. */
  key: ObjectKey;
  /** A page of the key's history, newest first. */
  history: HistoryEntryView[];
  /** The cursor of the older history, when there is more. */
  olderHistory?: string;
}

/** One object: its collection, type, expiry, keys, context, its sightings, and who changed it how (its history). */
export function objectView({ collection, object, sightings, latestSightings, score, key, history, olderHistory }: ObjectModel): Screen {
  return new Screen(
    `Object in ${collection}`,
    html`<dl>
<dt>Collection</dt><dd><a href="${collectionHref(collection)}">${collection}</a></dd>
<dt>Type</dt><dd>${object.type}</dd>
<dt>Marking</dt><dd>${tlpBadge(object.tlp)}</dd>
${score && html`<dt>Score</dt><dd>${scoreBadge(score.score)}</dd>`}
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
<pre>${JSON.stringify(object.context, null, 2)}</pre>
${score && scoreSection(score)}
<h2 id="sightings-heading">Sightings</h2>
<p>${sightingSummaryOf(sightings)}</p>
${
  latestSightings.length > 0 &&
  dataTable({
    caption: 'Latest sightings of its keys, newest first',
    id: 'sightings',
    rows: latestSightings,
    columns: [
      { header: 'When', cell: (sighting) => dateOf(sighting.at) },
      { header: 'Kind', cell: (sighting) => (sighting.kind === 'falsePositive' ? 'false positive' : 'sighting') },
      { header: 'Source', cell: (sighting) => sighting.source },
      { header: 'Count', cell: (sighting) => sighting.count.toLocaleString('en') },
      { header: 'Key', className: 'mono', cell: (sighting) => sighting.key.value },
    ],
  })
}
<h2 id="history-heading">History</h2>
${dataTable({
  caption: `Changes of every life of ${key.value}, newest first`,
  id: 'history',
  rows: history.map((entry, index) => ({ entry, older: history[index + 1] })),
  columns: [
    { header: 'When', cell: ({ entry }) => dateOf(entry.at) },
    { header: 'Change', cell: ({ entry }) => (entry.reason ? `${entry.operation} (${entry.reason})` : entry.operation) },
    { header: 'What changed', cell: ({ entry, older }) => whatChanged(entry, older) },
    { header: 'Via', cell: ({ entry }) => entry.source ?? entry.via ?? 'unrecorded' },
    { header: 'Who', cell: ({ entry }) => (entry.keyID === null ? 'the service' : `key ${entry.keyID}`) },
    { header: 'Request', className: 'mono', cell: ({ entry }) => entry.requestID ?? '—' },
  ],
})}
${pager(`${collectionHref(collection)}/object`, olderHistory, { type: key.type, value: key.value })}`,
  );
}

const ANCHORS = { claim: 'the latest claim', sighting: 'the last sighting' } as const;

/** How the score is made (extensions §18 "Explanation"): its factors, what anchors the decay, its claims, the override. */
function scoreSection(e: ScoreExplanationView): Html {
  const { override } = e;
  const factors: { name: string; value: Html | string }[] = [
    { name: 'Score', value: html`${scoreBadge(e.score)} at ${dateOf(e.at)}` },
    { name: 'Base (claims)', value: e.base.toFixed(1) },
    {
      name: 'False-positive factor',
      value: `${e.fp.toFixed(3)} (${times(e.sightings.count, 'sighting')}, ${times(e.sightings.falsePositives, 'false positive')})`,
    },
    {
      name: 'Decay',
      value: e.lifetimeDays === null ? 'none: this type never decays here' : `${e.decay.toFixed(3)} (lifetime ${e.lifetimeDays} days, speed ${e.speed})`,
    },
    { name: 'Anchor', value: `${dateOf(e.anchorAt)}, ${ANCHORS[e.anchor]}` },
    { name: `Below the threshold (${e.threshold})`, value: e.belowThresholdAt === null ? 'never' : dateOf(e.belowThresholdAt) },
    {
      name: 'Override',
      value:
        override === null
          ? 'none'
          : `${override.score} ${override.until === null ? 'until removed' : `until ${dateOf(override.until)}`}, by key ${override.keyID ?? '—'}: ${override.reason}`,
    },
  ];
  return html`<h2 id="score-heading">Score</h2>
${dataTable({
  caption: 'How the score is made',
  id: 'score',
  rows: factors,
  columns: [
    { header: 'Factor', rowHeader: true, cell: (row) => row.name },
    { header: 'Value', cell: (row) => row.value },
  ],
})}
${
  e.claims.length > 0 &&
  dataTable({
    caption: 'Claims it counts',
    id: 'score-claims',
    rows: e.claims,
    columns: [
      { header: 'Origin', cell: (claim) => claim.source ?? 'api' },
      { header: 'Reliability', cell: (claim) => claim.reliability },
      { header: 'Credibility', cell: (claim) => claim.credibility },
      { header: 'Strength', cell: (claim) => claim.strength },
      { header: 'Last seen', cell: (claim) => dateOf(claim.lastSeenAt) },
    ],
  })
}`;
}

/**
 * A sighting summary (extensions §14) as a sentence: how often and between when it was seen, false
 * positives, and from how many sources.
 */
export function sightingSummaryOf(summary: SightingSummaryView | null): string {
  if (summary === null) return 'Never sighted.';
  const seen = summary.count > 0 ? `Seen ${times(summary.count, 'time')}, ${dateOf(summary.firstAt)} to ${dateOf(summary.lastAt)}` : 'Not seen';
  const falsePositives = summary.falsePositives > 0 ? `, ${times(summary.falsePositives, 'false positive')}` : '';
  return `${seen}${falsePositives}, from ${times(summary.sources, 'source')}.`;
}

function times(count: number, noun: string): string {
  return `${count.toLocaleString('en')} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * What a change did, against the change before it on the page (`older`): the keys it added, the context
 * fields it changed, a moved expiry. A first Update of a page has no older entry to compare with.
 */
export function whatChanged(entry: HistoryEntryView, older: HistoryEntryView | undefined): string {
  const { obj } = entry;
  if (entry.operation === 'Add') return `added with ${obj.keys.map((key) => key.value).join(', ')}`;
  if (entry.operation === 'Remove') return 'removed';
  if (older === undefined) return 'updated';
  const had = new Set(older.obj.keys.map((key) => `${key.type}:${key.value}`));
  const keys = obj.keys.filter((key) => !had.has(`${key.type}:${key.value}`)).map((key) => key.value);
  const names = new Set([...Object.keys(obj.context), ...Object.keys(older.obj.context)]);
  const fields = [...names].filter((name) => JSON.stringify(obj.context[name]) !== JSON.stringify(older.obj.context[name]));
  const parts = [
    ...(keys.length > 0 ? [`keys ${keys.join(', ')} joined`] : []),
    ...(fields.length > 0 ? [`context ${fields.join(', ')}`] : []),
    ...(obj.expiresAt !== older.obj.expiresAt ? [`expiry ${expiryOf(obj.expiresAt)}`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : 'updated';
}
