import { TLP_LEVELS } from '../../common/markings/tlp.js';
import { CREDIBILITIES, CREDIBILITY_SCALES, RELIABILITIES } from '../../scoring/admiralty.js';
import { REMOVAL_POLICIES, SOURCE_KINDS, type RunView, type SourceView } from '../../sources/dto/source.dto.js';
import type { DraftRunView } from '../../sources/source-runs.service.js';
import { html, type Html } from '../html.js';
import { collectionHref } from './collections.view.js';
import { alert, dataTable, dateOf, formField, pager, type SentForm } from './components.js';
import { Screen } from './layout.js';

export function sourceHref(name: string): string {
  return `/console/sources/${encodeURIComponent(name)}`;
}

export interface SourcesModel {
  sources: SourceView[];
  /** The signed-in key may start runs (`Write` on `intel`, as `POST /intel/sources/{name}/runs`). */
  canRun: boolean;
  /** This page follows another (an empty one then says "after this point"). */
  paged: boolean;
  next?: string;
  /** When the page is rendered (ms since the epoch): a next run at or before it is due now. */
  now: number;
}

/** The sources of the collections the key may read: state, last and next run, claims, "Run now", and "Add a source". */
export function sourcesView({ sources, canRun, paged, next, now }: SourcesModel): Screen {
  return new Screen(
    'Sources',
    html`${
      sources.length === 0
        ? html`<p>No sources of the collections this key may read${paged ? ' after this point' : ''}.</p>`
        : dataTable({
            caption: 'Sources, in creation order',
            rows: sources,
            columns: [
              { header: 'Name', rowHeader: true, cell: (source) => html`<a href="${sourceHref(source.name)}">${source.name}</a>` },
              { header: 'Collection', cell: (source) => html`<a href="${collectionHref(source.collection)}">${source.collection}</a>` },
              { header: 'Kind', cell: (source) => source.kind },
              { header: 'State', cell: stateOf },
              { header: 'Last run', cell: (source) => dateOf(source.lastRunAt) },
              { header: 'Last success', cell: (source) => dateOf(source.lastSuccessAt) },
              { header: 'Next run', cell: (source) => nextRunOf(source, now) },
              { header: 'Claims', cell: (source) => source.claims },
              ...(canRun ? [{ header: 'Run', cell: (source: SourceView) => runNowButton(source.name) }] : []),
            ],
          })
    }
${pager('/console/sources', next)}
${canRun && html`<h2>Add a source</h2>${sourceForm({})}`}`,
  );
}

export interface SourceModel {
  source: SourceView;
  runs: RunView[];
  canRun: boolean;
  /** This page of the run log follows another. */
  paged: boolean;
  next?: string;
  /** Why "Run now" was refused (a run under way). */
  message?: string;
  now: number;
}

/** One source: its settings (header names only: their values are write-only), state, and its run log. */
export function sourceView({ source, runs, canRun, paged, next, message, now }: SourceModel): Screen {
  return new Screen(
    `Source ${source.name}`,
    html`${alert(message)}
<dl>
<dt>Collection</dt><dd><a href="${collectionHref(source.collection)}">${source.collection}</a></dd>
<dt>Kind</dt><dd>${source.kind} (${source.mode})</dd>
<dt>URL</dt><dd class="mono">${source.url}</dd>
<dt>Interval</dt><dd>${source.intervalSeconds} s</dd>
<dt>Marking</dt><dd>${source.tlp}</dd>
<dt>Reliability</dt><dd>${source.reliability}</dd>
<dt>Credibility</dt><dd>${source.credibility}${
      source.credibilityField !== undefined && ` unless a record's ${source.credibilityField} gives its own (${source.credibilityScale})`
    }</dd>
<dt>Removal</dt><dd>${source.removal.policy}${source.removal.runs !== undefined && ` after ${source.removal.runs} missed runs`}</dd>
${source.headers.length > 0 && html`<dt>Headers sent</dt><dd>${source.headers.join(', ')}</dd>`}
<dt>State</dt><dd>${stateOf(source)}</dd>
<dt>Last run</dt><dd>${dateOf(source.lastRunAt)}</dd>
<dt>Last success</dt><dd>${dateOf(source.lastSuccessAt)}</dd>
<dt>Next run</dt><dd>${nextRunOf(source, now)}</dd>
<dt>Claims</dt><dd>${source.claims}</dd>
</dl>
${canRun && html`${runNowButton(source.name)}<p><a href="${sourceHref(source.name)}/edit">Edit this source</a></p>`}
<h2>Runs</h2>
${
  runs.length === 0
    ? html`<p>No runs${paged ? ' after this point' : ' in the last 30 days'}.</p>`
    : dataTable({
        id: 'runs',
        caption: 'Runs, newest first',
        rows: runs,
        columns: [
          { header: 'Started', cell: (run) => dateOf(run.startedAt) },
          { header: 'Trigger', cell: (run) => run.trigger },
          { header: 'Outcome', cell: (run) => run.outcome ?? 'running' },
          { header: 'HTTP', cell: (run) => run.httpStatus ?? '—' },
          { header: 'Bytes', cell: (run) => run.bytes ?? '—' },
          { header: 'Items', cell: (run) => run.items },
          { header: 'Added', cell: (run) => run.added },
          { header: 'Updated', cell: (run) => run.updated },
          { header: 'Withdrawn', cell: (run) => run.withdrawn },
          { header: 'Rejected', cell: rejectedOf },
          { header: 'Error', cell: (run) => run.error && html`<strong>${run.error.code}</strong>: ${run.error.message}` },
        ],
      })
}
${pager(sourceHref(source.name), next)}
<p><a href="/console/sources">All sources</a></p>`,
  );
}

function stateOf(source: SourceView): Html {
  return html`${source.state}${source.consecutiveFailures > 0 && ` (${source.consecutiveFailures} failures in a row)`}`;
}

/**
 * A disabled source has no next run; an enabled one whose time has come at `now` (a new or re-enabled source
 * shows when it became due) is due now.
 */
function nextRunOf(source: SourceView, now: number): string {
  if (!source.enabled) return '—';
  return source.nextRunAt === null || Date.parse(source.nextRunAt) <= now ? 'due now' : dateOf(source.nextRunAt);
}

/** The count, and the first rejected records (line, value, reason) behind a disclosure. */
function rejectedOf(run: RunView): Html {
  if (run.rejections.length === 0) return html`${run.rejected}`;
  return html`<details><summary>${run.rejected}</summary><ul>${run.rejections.map(
    (rejection) =>
      html`<li>${rejection.line !== undefined && `line ${rejection.line}: `}<span class="mono">${rejection.value}</span> — ${rejection.reason}</li>`,
  )}</ul></details>`;
}

/** Posts to the source's own page, so a refusal answered in place leaves the browser at an address it can reload. */
function runNowButton(name: string): Html {
  return html`<form method="post" action="${sourceHref(name)}"><button type="submit" class="secondary" aria-label="Run now: ${name}">Run now</button></form>`;
}

export interface SourceEditorModel extends SentForm {
  /** The source edited (its name and collection then cannot change), or none for a new source. */
  name?: string;
  /** The stored version the edit starts from (sent back as the change's If-Match). */
  version?: number;
  /** What a run of the form would do now ("Test"), shown above it. */
  preview?: DraftRunView;
}

/**
 * The form of a source (extensions §13, §18): its kind and feed, interval, Admiralty code, removal policy,
 * marking, and the members of its kind. "Test" shows what a run of it would do now, "Save" stores it.
 */
export function sourceEditorView(model: SourceEditorModel): Screen {
  const { name } = model;
  return new Screen(
    name === undefined ? 'Add a source' : `Edit source ${name}`,
    html`${alert(model.refusal?.message)}
${model.preview !== undefined && previewOf(model.preview)}
${sourceForm(model)}
<p><a href="${name === undefined ? '/console/sources' : sourceHref(name)}">Cancel</a></p>`,
  );
}

/** The form alone: on the sources page (a new source), and on the editor page with the sent values. */
function sourceForm({ name, version, ...sent }: SourceEditorModel): Html {
  const { form } = sent;
  const action = name === undefined ? '/console/sources' : `${sourceHref(name)}/edit`;
  const select = (field: string, label: string, choices: readonly (string | number)[], fallback: string, help?: string) =>
    formField(
      { name: field, label, type: 'select', choices: choices.map(String), value: form?.get(field) ?? fallback, ...(help !== undefined && { help }) },
      sent,
    );
  return html`<form method="post" action="${action}" class="stack wide">
${version !== undefined && html`<input type="hidden" name="version" value="${String(version)}">`}
${
  name === undefined
    ? html`${formField({ name: 'name', label: 'Name', attributes: html`required maxlength="128"`, help: 'a-z 0-9 . _ -' }, sent)}
${formField({ name: 'collection', label: 'Collection', attributes: html`required` }, sent)}`
    : ''
}
${select('kind', 'Kind', SOURCE_KINDS, 'text')}
${formField({ name: 'url', label: 'URL', attributes: html`required`, help: 'http or https; a taxii21 source names its API root, a misp source its feed folder.' }, sent)}
${formField({ name: 'intervalSeconds', label: 'Interval (seconds)', value: form?.get('intervalSeconds') ?? '3600', attributes: html`inputmode="numeric"` }, sent)}
${select('reliability', 'Reliability', RELIABILITIES, 'F', 'Admiralty code: A reliable … E unreliable, F cannot be judged.')}
${select('credibility', 'Credibility', CREDIBILITIES, '6', 'Admiralty code: 1 confirmed … 5 improbable, 6 cannot be judged.')}
${select('removal', 'Removal policy', REMOVAL_POLICIES, 'remove', 'When an indicator the feed stops listing loses its claim.')}
${formField({ name: 'removalRuns', label: 'Missed runs before removal (afterMissedRuns)', attributes: html`inputmode="numeric"` }, sent)}
${select('tlp', 'Marking', TLP_LEVELS, 'TLP:CLEAR')}
${formField({ name: 'valueColumn', label: 'Value column (csv)' }, sent)}
${formField({ name: 'valueField', label: 'Value field (ndjson)' }, sent)}
${formField({ name: 'collectionID', label: 'Collection id (taxii21)' }, sent)}
${formField({ name: 'credibilityField', label: 'Credibility column or field (csv, ndjson; optional)', help: "Each record's own credibility; missing or out of scale, the source's." }, sent)}
${select('credibilityScale', 'Credibility scale (with a credibility field)', CREDIBILITY_SCALES, 'admiralty')}
<p class="row"><button type="submit" name="action" value="test" class="secondary">Test</button> <button type="submit" name="action" value="save">Save</button></p>
</form>`;
}

/** A dry run's answer: the counts, a sample of the indicators read, the first rejections, or why a run would fail. */
function previewOf(preview: DraftRunView): Html {
  return html`<section id="preview" aria-labelledby="preview-title">
<h2 id="preview-title">Test: what a run would do now</h2>
${
  preview.error !== null
    ? html`<p class="error">A run would fail: <strong>${preview.error.code}</strong>: ${preview.error.message}</p>`
    : html`<dl>
<dt>HTTP status</dt><dd>${preview.httpStatus ?? '—'}</dd>
<dt>Items found</dt><dd>${preview.items}</dd>
<dt>Would add</dt><dd>${preview.added}</dd>
<dt>Would update</dt><dd>${preview.updated}</dd>
<dt>Unchanged</dt><dd>${preview.unchanged}</dd>
<dt>Would withdraw</dt><dd>${preview.withdrawn}</dd>
<dt>Rejected</dt><dd>${preview.rejected}</dd>
${preview.suspect && html`<dt>Suspect</dt><dd>yes: the run would be held back and end no claim</dd>`}
</dl>
${preview.sample.length > 0 && html`<p>Sample:</p><ul class="mono">${preview.sample.map((value) => html`<li>${value}</li>`)}</ul>`}
${
  preview.rejections.length > 0 &&
  html`<p>Rejections:</p><ul>${preview.rejections.map(
    (rejection) =>
      html`<li>${rejection.line !== undefined && `line ${rejection.line}: `}<span class="mono">${rejection.value}</span> — ${rejection.reason}</li>`,
  )}</ul>`
}`
}
</section>`;
}
