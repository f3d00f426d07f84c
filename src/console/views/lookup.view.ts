import type { LookupResultView } from '../../intel/lookup/lookup.dto.js';
import type { WarningView } from '../../warninglists/dto/warninglist.dto.js';
import { MAX_FORM_BYTES } from '../console-http.js';
import { html, type Html } from '../html.js';
import { MAX_LOOKUP_LINES } from '../indicator-lines.js';
import { objectHref, sightingSummaryOf } from './collections.view.js';
import { alert, dataTable, formField, scoreBadge, tlpBadge, type Column } from './components.js';
import { Screen } from './layout.js';

export interface LookupOutcome {
  known: LookupResultView[];
  unknown: string[];
  /** The unknown keys that are on a warninglist (lists warn about a value whether it is stored or not). */
  unknownWarned: LookupResultView[];
  invalid: { line: string; message: string }[];
}

export interface LookupModel {
  /** The paste, shown again in the form. */
  text: string;
  outcome?: LookupOutcome;
  message?: string;
}

export function lookupView({ text, outcome, message }: LookupModel): Screen {
  return new Screen(
    'Lookup',
    html`${alert(message)}
<form method="post" action="/console/lookup" class="stack" hx-target="body">
${formField({
  name: 'indicators',
  label: 'Indicators',
  type: 'textarea',
  value: text,
  attributes: html`rows="6" spellcheck="false"`,
  help: html`One per line: hashes, domain names, URLs, IP addresses or networks. Defanged forms
(hxxp, [.], (.), [:], [at]) are accepted. Up to ${MAX_LOOKUP_LINES.toLocaleString('en')} lines and
${MAX_FORM_BYTES / 1024 / 1024} MiB a paste.`,
})}
<p class="row"><button type="submit">Look up</button><span class="busy" aria-hidden="true">Looking up…</span></p>
</form>
${outcome && results(outcome)}`,
  );
}

/** The first columns of the known and the unknown-but-warned tables: the key looked up. */
const KEY_COLUMNS: readonly Column<LookupResultView>[] = [
  { header: 'Indicator', className: 'mono', cell: (result) => result.key.value },
  { header: 'Type', cell: (result) => result.key.type },
];

function results({ known, unknown, unknownWarned, invalid }: LookupOutcome): Html {
  return html`<section aria-labelledby="summary"><h2 id="summary" tabindex="-1">${known.length} known, ${unknown.length} unknown${
    invalid.length > 0 ? html`, ${invalid.length} not indicators` : ''
  }</h2>
${
  known.length > 0 &&
  dataTable({
    id: 'known',
    caption: 'Known',
    rows: known,
    columns: [
      ...KEY_COLUMNS,
      {
        header: 'Found in',
        cell: (result) =>
          result.matches.map(
            (match) =>
              html`<a href="${objectHref(match.collection, result.key)}">${match.collection}</a> ${tlpBadge(match.object.tlp)} ${scoreBadge(match.object.score)}<br>`,
          ),
      },
      { header: 'Sightings', cell: sightingsOf },
      { header: 'Warninglists', cell: (result) => warningsOf(result.warnings) },
    ],
  })
}
${
  unknown.length > 0 &&
  html`<div class="stack"><label for="unknown">Unknown indicators (${unknown.length}), to copy</label>
<textarea id="unknown" readonly rows="8">${unknown.join('\n')}</textarea></div>`
}
${
  unknownWarned.length > 0 &&
  dataTable({
    id: 'unknown-warned',
    caption: 'Unknown indicators on warninglists',
    rows: unknownWarned,
    columns: [...KEY_COLUMNS, { header: 'Warninglists', cell: (result) => warningsOf(result.warnings) }],
  })
}
${
  invalid.length > 0 &&
  dataTable({
    id: 'invalid',
    caption: 'Not indicators',
    rows: invalid,
    columns: [
      { header: 'Line', className: 'mono', cell: (entry) => entry.line },
      { header: 'Why', cell: (entry) => entry.message },
    ],
  })
}
</section>`;
}

/** Each found object's sighting summary; by collection when the key is in several. */
function sightingsOf({ matches }: LookupResultView): Html {
  if (matches.length === 1) return html`${sightingSummaryOf(matches[0].sightings)}`;
  return html`${matches.map((match) => html`${match.collection}: ${sightingSummaryOf(match.sightings)}<br>`)}`;
}

/** The enabled warninglists a key is on (extensions §15): the list, the entry that matched, how, and what the list does. */
function warningsOf(warnings: readonly WarningView[]): Html | string {
  if (warnings.length === 0) return 'none';
  return html`${warnings.map((warning) => html`${warning.list}: <span class="mono">${warning.entry}</span> (${warning.match}, ${warning.action})<br>`)}`;
}
