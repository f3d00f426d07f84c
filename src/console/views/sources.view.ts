import type { RunView, SourceView } from '../../sources/dto/source.dto.js';
import { html, type Html } from '../html.js';
import { collectionHref } from './collections.view.js';
import { alert, dataTable, dateOf, pager } from './components.js';
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

/** The sources of the collections the key may read: state, last and next run, claims, and "Run now". */
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
${pager('/console/sources', next)}`,
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
<dt>Removal</dt><dd>${source.removal.policy}${source.removal.runs !== undefined && ` after ${source.removal.runs} missed runs`}</dd>
${source.headers.length > 0 && html`<dt>Headers sent</dt><dd>${source.headers.join(', ')}</dd>`}
<dt>State</dt><dd>${stateOf(source)}</dd>
<dt>Last run</dt><dd>${dateOf(source.lastRunAt)}</dd>
<dt>Last success</dt><dd>${dateOf(source.lastSuccessAt)}</dd>
<dt>Next run</dt><dd>${nextRunOf(source, now)}</dd>
<dt>Claims</dt><dd>${source.claims}</dd>
</dl>
${canRun && runNowButton(source.name)}
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
