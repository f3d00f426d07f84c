import type { WarninglistView } from '../../warninglists/dto/warninglist.dto.js';
import { LIST_ACTIONS, type ListAction } from '../../warninglists/warninglist-matcher/index.js';
import { html, type Html } from '../html.js';
import { alert, dataTable, dateOf, formField, pager, type SentForm } from './components.js';
import { Screen } from './layout.js';

const LISTS = '/console/warninglists';

export function warninglistHref(name: string): string {
  return `${LISTS}/${encodeURIComponent(name)}`;
}

/** What each action does, in the words of §15 (each does what the ones before it do, and more). */
const ACTION_NOTES: Record<ListAction, string> = {
  annotate: 'warn in lookups',
  excludeFromExport: 'also keep out of exports and TAXII',
  rejectOnIngest: 'also refuse on every write',
};

export interface WarninglistsModel extends SentForm {
  lists: WarninglistView[];
  /** The signed-in key may change and import lists (`Write` on `intel`). */
  canWrite: boolean;
}

/** Every list with its kind, action and state; with `Write`, enable/disable, the action, and the MISP import. */
export function warninglistsView({ lists, canWrite, ...sent }: WarninglistsModel): Screen {
  return new Screen(
    'Warninglists',
    html`${
      lists.length === 0
        ? html`<p>No warninglists.</p>`
        : dataTable({
            caption: 'Warninglists, in creation order',
            rows: lists,
            columns: [
              { header: 'Name', rowHeader: true, cell: (list) => html`<a href="${warninglistHref(list.name)}">${list.name}</a>` },
              { header: 'Description', cell: (list) => list.description },
              { header: 'Kind', cell: (list) => list.kind },
              { header: 'Entries', cell: (list) => list.entryCount.toLocaleString('en') },
              { header: 'Action', cell: (list) => (canWrite ? actionForm(list, 'lists') : actionOf(list.action)) },
              { header: 'State', cell: (list) => html`${stateOf(list)}${canWrite && toggleForm(list, 'lists')}` },
            ],
          })
    }
${canWrite && importForm(sent)}`,
  );
}

export interface WarninglistModel {
  list: WarninglistView;
  entries: string[];
  canWrite: boolean;
  /** This page of entries follows another. */
  paged: boolean;
  next?: string;
}

/** One list: its settings, where it came from (a MISP version and the document's SHA-256), and its entries. */
export function warninglistView({ list, entries, canWrite, paged, next }: WarninglistModel): Screen {
  return new Screen(
    `Warninglist ${list.name}`,
    html`<dl>
<dt>Description</dt><dd>${list.description}</dd>
<dt>Kind</dt><dd>${list.kind}</dd>
<dt>Key types</dt><dd>${list.keyTypes.join(', ')}</dd>
<dt>Action</dt><dd>${canWrite ? actionForm(list, 'list') : actionOf(list.action)}</dd>
<dt>State</dt><dd>${stateOf(list)}${canWrite && toggleForm(list, 'list')}</dd>
<dt>Entries</dt><dd>${list.entryCount.toLocaleString('en')}</dd>
${list.version !== null && html`<dt>MISP version</dt><dd>${list.version}</dd>`}
${list.sha256 !== null && html`<dt>Document SHA-256</dt><dd class="mono">${list.sha256}</dd>`}
<dt>Updated</dt><dd>${dateOf(list.updatedAt)}</dd>
</dl>
<h2>Entries</h2>
${
  entries.length === 0
    ? html`<p>No entries${paged ? ' after this point' : ''}.</p>`
    : html`<ul class="mono" id="entries">${entries.map((entry) => html`<li>${entry}</li>`)}</ul>`
}
${pager(warninglistHref(list.name), next)}
<p><a href="${LISTS}">All warninglists</a></p>`,
  );
}

function stateOf(list: WarninglistView): string {
  return list.enabled ? 'enabled' : 'disabled';
}

function actionOf(action: ListAction): Html {
  return html`${action} <span class="note">(${ACTION_NOTES[action]})</span>`;
}

/** Which page a settings form returns to: the table of lists, or the list's own page. */
export type Back = 'lists' | 'list';

function backField(back: Back): Html {
  return html`<input type="hidden" name="back" value="${back}">`;
}

/** Posts `enabled` (the opposite of now). */
function toggleForm(list: WarninglistView, back: Back): Html {
  const verb = list.enabled ? 'Disable' : 'Enable';
  return html`<form method="post" action="${warninglistHref(list.name)}" class="row">
${backField(back)}<input type="hidden" name="enabled" value="${String(!list.enabled)}">
<button type="submit" class="secondary" aria-label="${verb} ${list.name}">${verb}</button>
</form>`;
}

function actionForm(list: WarninglistView, back: Back): Html {
  return html`<form method="post" action="${warninglistHref(list.name)}" class="row">
${backField(back)}<select name="action" aria-label="Action of ${list.name}">${LIST_ACTIONS.map(
    (action) => html`<option value="${action}"${action === list.action ? html` selected` : ''}>${action} (${ACTION_NOTES[action]})</option>`,
  )}</select>
<button type="submit" class="secondary" aria-label="Set the action of ${list.name}">Set</button>
</form>`;
}

/** A MISP warninglist file (misp-warninglists' `list.json`) and the settings a new list gets. */
function importForm(sent: SentForm): Html {
  const action = sent.form?.get('action') ?? 'annotate';
  const enabled = sent.form === undefined || sent.form.has('enabled');
  return html`<h2>Import a MISP warninglist</h2>
${alert(sent.refusal?.message)}
<form method="post" action="${LISTS}" enctype="multipart/form-data" hx-encoding="multipart/form-data" class="stack">
${formField({ name: 'file', label: 'MISP warninglist file (list.json)', type: 'file', attributes: html`required accept="application/json,.json"` }, sent)}
${formField(
  {
    name: 'name',
    label: 'Name (optional)',
    help: "Default: the document's name made URL-friendly. A list of that name gets the file's entries and keeps its settings.",
    attributes: html`maxlength="128"`,
  },
  sent,
)}
<label for="import-action">Action of a new list</label>
<select id="import-action" name="action">${LIST_ACTIONS.map(
    (option) => html`<option value="${option}"${option === action ? html` selected` : ''}>${option} (${ACTION_NOTES[option]})</option>`,
  )}</select>
<p><input type="checkbox" id="import-enabled" name="enabled" value="true"${enabled ? html` checked` : ''}> <label for="import-enabled">Enabled</label></p>
<p><button type="submit">Import</button></p>
</form>`;
}
