import { RESOURCE_ACTIONS, type ResourceAction } from '../../common/guard/access.js';
import type { Tlp } from '../../common/markings/tlp.js';
import { DEFAULT_RELIABILITY, RELIABILITIES, type Reliability } from '../../scoring/admiralty.js';
import { html, type Html } from '../html.js';
import { alert, dataTable, dateOf, expiryOf, formField, pager, tlpBadge, type SentForm } from './components.js';
import { Screen } from './layout.js';

/** Actions held on one resource, named by its path (`intel/phishing-domains`). */
export interface GrantLine {
  path: string;
  actions: readonly string[];
}

export interface LimitLine {
  path: string;
  action: string;
  limit: number;
}

export interface KeyRow {
  id: number;
  description: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  permissions: GrantLine[];
  limits: LimitLine[];
  state: 'active' | 'expired' | 'revoked';
  /** The most restrictive TLP marking the key may read. */
  maxTLP: Tlp;
  /** How reliable what the key writes counts in scores (Admiralty `A`…`F`). */
  reliability: Reliability;
}

const RELIABILITY_HELP =
  'How reliable what the key writes counts in scores (Admiralty A completely reliable … E unreliable, F cannot be judged; C and F count alike).';

/** The TLP ceilings the signed-in key may set (up to its own), and its own, the default of a new key. */
export interface Ceilings {
  choices: readonly Tlp[];
  own: Tlp;
}

export interface KeysModel {
  keys: KeyRow[];
  /** The signed-in key may generate, change and revoke keys. */
  canWrite: boolean;
  ceilings: Ceilings;
  next?: string;
}

export function keysView({ keys, canWrite, ceilings, next }: KeysModel): Screen {
  return new Screen(
    'API keys',
    html`${canWrite && html`<p><a href="/console/keys/new">Generate a key</a></p>`}
${dataTable({
  caption: 'Keys, oldest first',
  rows: keys,
  columns: [
    { header: 'Id', cell: (key) => key.id },
    { header: 'Description', cell: (key) => key.description ?? '' },
    { header: 'Created', cell: (key) => dateOf(key.createdAt) },
    { header: 'Expires', cell: (key) => expiryOf(key.expiresAt) },
    { header: 'Last used', cell: (key) => dateOf(key.lastUsedAt) },
    { header: 'Permissions', cell: grantsOf },
    {
      header: 'TLP ceiling',
      cell: (key) => html`${tlpBadge(key.maxTLP)}${canWrite && key.state === 'active' && ceilingForm(key, ceilings)}`,
    },
    {
      header: 'Reliability',
      cell: (key) => html`<span class="mono">${key.reliability}</span>${canWrite && key.state === 'active' && reliabilityForm(key)}`,
    },
    { header: 'State', cell: (key) => html`${key.state}${canWrite && key.state === 'active' && revokeButton(key.id)}` },
  ],
})}
${pager('/console/keys', next)}`,
  );
}

function grantsOf(key: KeyRow): Html {
  return html`${key.permissions.map((grant) => html`${grant.path}: ${grant.actions.join(', ')}<br>`)}${key.limits.map(
    (limit) => html`limit ${limit.path} ${limit.action}: ${limit.limit}/day<br>`,
  )}`;
}

/** Sets the key's ceiling to one the signed-in key may set; the one shown first is the key's, or the nearest below it. */
function ceilingForm(key: KeyRow, { choices }: Ceilings): Html {
  const selected = choices.includes(key.maxTLP) ? key.maxTLP : choices.at(-1);
  return html`<form method="post" action="/console/keys/${key.id}" class="row">
<select name="maxTLP" aria-label="TLP ceiling of key ${key.id}">${choices.map(
    (choice) => html`<option${choice === selected ? html` selected` : ''}>${choice}</option>`,
  )}</select>
<button type="submit" class="secondary" aria-label="Set the TLP ceiling of key ${key.id}">Set</button>
</form>`;
}

/** Sets the key's reliability, any of `A`…`F` (no rule limits it), the key's own shown first. */
function reliabilityForm(key: KeyRow): Html {
  return html`<form method="post" action="/console/keys/${key.id}" class="row">
<select name="reliability" aria-label="Reliability of key ${key.id}">${RELIABILITIES.map(
    (choice) => html`<option${choice === key.reliability ? html` selected` : ''}>${choice}</option>`,
  )}</select>
<button type="submit" class="secondary" aria-label="Set the reliability of key ${key.id}">Set</button>
</form>`;
}

function revokeButton(id: number): Html {
  return html`<form method="post" action="/console/keys/${id}/revoke"><button type="submit" class="secondary" aria-label="Revoke key ${id}">Revoke</button></form>`;
}

/** A resource the signed-in key may hand out actions on (only those columns get a checkbox). */
export interface GrantableRow {
  id: number;
  path: string;
  actions: readonly ResourceAction[];
}

export interface KeyEditorModel extends SentForm {
  rows: GrantableRow[];
  ceilings: Ceilings;
}

/**
 * The form's names: `grant` = `<id>:<action>` checkboxes, `limit:<id>:<action>` daily limits, `maxTLP` the
 * ceiling, `reliability` the key's Admiralty reliability.
 */
export function keyEditorView({ rows, ceilings, ...sent }: KeyEditorModel): Screen {
  const { form, refusal } = sent;
  const checked = new Set(form?.getAll('grant') ?? []);
  return new Screen(
    'Generate an API key',
    html`${alert(refusal?.message)}
<form method="post" action="/console/keys" class="stack wide">
${formField({ name: 'description', label: 'Description', attributes: html`maxlength="1024"` }, sent)}
${formField({ name: 'expiresOn', label: 'Expires on (UTC, optional)', type: 'date' }, sent)}
${formField(
  {
    name: 'maxTLP',
    label: 'TLP ceiling',
    type: 'select',
    choices: ceilings.choices,
    value: form?.get('maxTLP') ?? ceilings.own,
    help: 'The most restrictive marking the key may read: objects marked above it do not exist for it.',
  },
  sent,
)}
${formField(
  {
    name: 'reliability',
    label: 'Reliability',
    type: 'select',
    choices: RELIABILITIES,
    value: form?.get('reliability') ?? DEFAULT_RELIABILITY,
    help: RELIABILITY_HELP,
  },
  sent,
)}
${dataTable({
  caption: 'Permissions and optional daily limits (only what this key may hand out)',
  rows,
  columns: [
    { header: 'Resource', rowHeader: true, cell: (row) => row.path },
    ...RESOURCE_ACTIONS.map((action) => ({
      header: action,
      cell: (row: GrantableRow) => row.actions.includes(action) && grantCell(row, action, checked, form),
    })),
  ],
})}
<p><button type="submit">Generate key</button></p>
</form>`,
  );
}

function grantCell(row: GrantableRow, action: ResourceAction, checked: Set<string>, form: URLSearchParams | undefined): Html {
  const value = `${row.id}:${action}`;
  return html`<input type="checkbox" id="grant-${row.id}-${action}" name="grant" value="${value}" aria-label="${action} on ${row.path}"${
    checked.has(value) ? html` checked` : ''
  }>
<input type="number" min="1" step="1" name="limit:${value}" aria-label="Daily limit of ${action} on ${row.path}" placeholder="no limit" value="${
    form?.get(`limit:${value}`) ?? ''
  }">`;
}

/** The new key's value, shown this once (and kept out of htmx's history). */
export function keyCreatedView({ id, key }: { id: number; key: string }): Screen {
  return new Screen(
    `Key ${id} generated`,
    html`<p>Copy the key now: it is shown only this once and cannot be read again.</p>
<p><label for="new-key">The new API key</label></p>
<p><input id="new-key" class="secret mono" readonly size="60" value="${key}"></p>
<p><a href="/console/keys">Back to the keys</a></p>`,
    { noHistory: true },
  );
}
