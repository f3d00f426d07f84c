import type { Tlp } from '../../common/markings/tlp.js';
import type { Refusal } from '../forms.js';
import { html, type Html, type Value } from '../html.js';

/**
 * The pieces every console screen is built from. Each is a pure function of its arguments; every string
 * they are given is escaped by `html` (only `Html` built by our own templates passes as markup).
 */

export interface Column<Row> {
  header: string;
  cell: (row: Row) => Value;
  /** A `<th scope="row">` naming the row (the editor's resource), instead of a plain cell. */
  rowHeader?: boolean;
  /** The cells' class (`mono` for keys and hashes). */
  className?: string;
}

export interface TableOptions<Row> {
  caption: string;
  columns: readonly Column<Row>[];
  rows: readonly Row[];
  /** For a page with several tables that tests or links address. */
  id?: string;
}

/** A data table with its caption (its accessible name) and column headers. */
export function dataTable<Row>({ caption, columns, rows, id }: TableOptions<Row>): Html {
  return html`<table${id ? html` id="${id}"` : ''}><caption>${caption}</caption><thead><tr>${columns.map(
    (column) => html`<th scope="col">${column.header}</th>`,
  )}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${columns.map((column) => cellOf(column, row))}</tr>`)}</tbody></table>`;
}

function cellOf<Row>(column: Column<Row>, row: Row): Html {
  const classes = column.className ? html` class="${column.className}"` : '';
  return column.rowHeader ? html`<th scope="row"${classes}>${column.cell(row)}</th>` : html`<td${classes}>${column.cell(row)}</td>`;
}

/**
 * The "Next page" link of a cursor-paged list (no count, no "last page"): `path` with the list's own
 * filters and the cursor; nothing when there is no next page.
 */
export function pager(path: string, next: string | undefined, filters: Record<string, string | undefined> = {}): Html | '' {
  if (next === undefined) return '';
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined && value !== '') query.set(name, value);
  query.set('cursor', next);
  return html`<p><a href="${path}?${query.toString()}" rel="next">Next page</a></p>`;
}

export interface FieldOptions {
  /** The control's `id` and `name`. */
  name: string;
  label: string;
  value?: string;
  /** The refusal of this field, shown under it and tied to it (`aria-describedby`, `aria-invalid`). */
  error?: string;
  /** A note under the control, tied to it too. */
  help?: Html | string;
  /** `textarea` for a multi-line field, `select` for one of `choices`; otherwise an `input` of this type (default text). */
  type?: 'text' | 'password' | 'date' | 'file' | 'textarea' | 'select';
  /** The options of a `select`, as sent and shown. */
  choices?: readonly string[];
  /** Further attributes of the control, fixed markup of our own (`required maxlength="128"`). */
  attributes?: Html;
}

/** A form shown again after a post: the values as sent and, when it was refused, the problems by field. */
export interface SentForm {
  form?: URLSearchParams;
  refusal?: Refusal;
}

/**
 * A labelled form control with its help and its error, as siblings (the `.stack` layout). With `sent`, the
 * value and the error default to the sent form's (by the field's name).
 */
export function formField(options: FieldOptions, { form, refusal }: SentForm = {}): Html {
  const { name, label, help, type = 'text', attributes } = options;
  const value = options.value ?? form?.get(name) ?? '';
  const error = options.error ?? refusal?.fields[name];
  const described = [help !== undefined && `${name}-help`, error !== undefined && `${name}-error`].filter(Boolean).join(' ');
  const common = html` id="${name}" name="${name}"${described && html` aria-describedby="${described}"`}${
    error !== undefined && html` aria-invalid="true"`
  }${attributes ? html` ${attributes}` : ''}`;
  const control =
    type === 'textarea'
      ? html`<textarea${common}>${value}</textarea>`
      : type === 'select'
        ? html`<select${common}>${(options.choices ?? []).map((choice) => html`<option${choice === value ? html` selected` : ''}>${choice}</option>`)}</select>`
        : html`<input${type === 'text' ? '' : html` type="${type}"`}${common}${type === 'file' || type === 'password' ? '' : html` value="${value}"`}>`;
  return html`<label for="${name}">${label}</label>
${control}${
    help !== undefined &&
    html`
<p id="${name}-help" class="note">${help}</p>`
  }${
    error !== undefined &&
    html`
<p id="${name}-error" class="error">${error}</p>`
  }`;
}

/** A message above a form or as a page's whole content (role=alert: screen readers announce it after a swap). */
export function alert(message: string | undefined): Html | '' {
  return message ? html`<p role="alert" class="error">${message}</p>` : '';
}

const TLP_CLASSES: Record<Tlp, string> = {
  'TLP:CLEAR': 'tlp-clear',
  'TLP:GREEN': 'tlp-green',
  'TLP:AMBER': 'tlp-amber',
  'TLP:AMBER+STRICT': 'tlp-amber',
  'TLP:RED': 'tlp-red',
};

/** A TLP marking as a badge: the level's text on its TLP 2.0 colour (console.css), so it reads without the colour too. */
export function tlpBadge(tlp: Tlp): Html {
  return html`<span class="tlp ${TLP_CLASSES[tlp]}">${tlp}</span>`;
}

/** The bands of the score badge: the number says it all, the colour only repeats it (console.css). */
const scoreBand = (score: number) => (score >= 70 ? 'score-high' : score >= 40 ? 'score-medium' : 'score-low');

/** An object's score (extensions §18) as a badge: "Score 82"; nothing when it is not known. */
export function scoreBadge(score: number | undefined): Html | '' {
  return score === undefined ? '' : html`<span class="score ${scoreBand(score)}">Score ${score}</span>`;
}

/** A stored time as people read it, in UTC; '—' for none. */
export function dateOf(value: Date | string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return new Date(value)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

/** An expiry: its time, or "never". */
export function expiryOf(value: Date | string | null | undefined): string {
  return value ? dateOf(value) : 'never';
}
