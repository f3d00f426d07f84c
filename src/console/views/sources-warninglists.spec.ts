import { describe, expect, it } from '@jest/globals';
import type { RunView, SourceView } from '../../sources/dto/source.dto.js';
import type { WarninglistView } from '../../warninglists/dto/warninglist.dto.js';
import { escapeHtml } from '../html.js';
import type { Screen } from './layout.js';
import { HOSTILE, itShowsStoredTextAsText } from './screens.spec-helpers.js';
import { sourcesView, sourceView } from './sources.view.js';
import { warninglistsView, warninglistView } from './warninglists.view.js';

const source = {
  name: HOSTILE,
  collection: HOSTILE,
  kind: 'text',
  url: `https://feed.example/${HOSTILE}`,
  enabled: true,
  intervalSeconds: 3600,
  mode: 'snapshot',
  removal: { policy: 'afterMissedRuns', runs: 3 },
  context: { [HOSTILE]: HOSTILE },
  headers: [HOSTILE],
  maxRemovalRatio: 0.5,
  minItems: 1,
  tlp: 'TLP:AMBER',
  reliability: 'B',
  credibility: 2,
  state: 'failing',
  lastRunAt: '2026-01-02T03:04:05.678Z',
  lastSuccessAt: null,
  nextRunAt: null,
  consecutiveFailures: 2,
  claims: 7,
} as SourceView;

/** When the views are rendered in these tests. */
const NOW = Date.parse('2026-06-01T00:00:00Z');

const run: RunView = {
  runID: '3f1e2d4c-0000-4000-8000-000000000001',
  trigger: 'manual',
  startedAt: '2026-01-02T03:04:05.678Z',
  finishedAt: null,
  outcome: 'failed',
  httpStatus: 500,
  bytes: 12,
  items: 3,
  added: 1,
  updated: 0,
  withdrawn: 0,
  rejected: 1,
  rejections: [{ line: 2, value: HOSTILE, reason: HOSTILE }],
  error: { code: HOSTILE, message: HOSTILE },
};

const list: WarninglistView = {
  name: HOSTILE,
  description: HOSTILE,
  kind: 'hostname',
  keyTypes: ['DomainName', 'URL'],
  action: 'excludeFromExport',
  enabled: true,
  entryCount: 1234,
  version: HOSTILE,
  sha256: HOSTILE,
  createdAt: '2026-01-02T03:04:05.678Z',
  updatedAt: '2026-01-02T03:04:05.678Z',
};

const form = new URLSearchParams({ name: HOSTILE, action: 'rejectOnIngest' });
const refusal = { status: 400, message: HOSTILE, fields: { name: HOSTILE } };

const SCREENS: Array<[string, Screen]> = [
  ['sources', sourcesView({ sources: [source], canRun: true, paged: true, next: HOSTILE, now: NOW })],
  ['source', sourceView({ source, runs: [run], canRun: true, paged: false, next: HOSTILE, message: HOSTILE, now: NOW })],
  ['warninglists', warninglistsView({ lists: [list], canWrite: true, form, refusal })],
  ['warninglist', warninglistView({ list, entries: [HOSTILE], canWrite: true, paged: false, next: HOSTILE })],
];

describe('console views of sources and warninglists', () => {
  itShowsStoredTextAsText(SCREENS);

  it('shows a source\'s state, next run and claims, and "Run now" only to a key that may run it', () => {
    const readable = { ...source, name: 'urlhaus', collection: 'feeds' };
    const withRun = sourcesView({ sources: [readable], canRun: true, paged: false, now: NOW }).body.text;
    expect(withRun).toContain('<td>failing (2 failures in a row)</td>');
    expect(withRun).toContain('<td>due now</td><td>7</td>');
    expect(withRun).toContain('<form method="post" action="/console/sources/urlhaus">');
    const readOnly = sourcesView({ sources: [readable], canRun: false, paged: false, now: NOW }).body.text;
    expect(readOnly).not.toContain('Run now');
    expect(
      sourcesView({ sources: [{ ...readable, enabled: false, state: 'disabled', consecutiveFailures: 0 }], canRun: false, paged: false, now: NOW }).body.text,
    ).toContain('<td>disabled</td>');
    // A next run at or before the page's time is due now (a new source shows when it became due), a later one its time.
    const at = (nextRunAt: string) => sourcesView({ sources: [{ ...readable, nextRunAt }], canRun: false, paged: false, now: NOW }).body.text;
    expect(at('2026-06-01T00:00:00.000Z')).toContain('<td>due now</td>');
    expect(at('2026-06-01T00:00:01.000Z')).toContain('<td>2026-06-01 00:00:01 UTC</td>');
    // Secrets are write-only: the view names the headers sent, never a value (the view model has none).
    expect(sourceView({ source: readable, runs: [], canRun: false, paged: false, now: NOW }).body.text).toContain(
      `<dt>Headers sent</dt><dd>${escapeHtml(HOSTILE)}</dd>`,
    );
  });

  it("shows a run's rejections and error, and a run under way as running", () => {
    const text = sourceView({ source, runs: [{ ...run, outcome: null }], canRun: false, paged: false, now: NOW }).body.text;
    expect(text).toContain('<td>running</td>');
    expect(text).toContain(`<li>line 2: <span class="mono">${escapeHtml(HOSTILE)}</span> — ${escapeHtml(HOSTILE)}</li>`);
  });

  it('offers enable/disable, the action and the import only to a key that may write', () => {
    const named = { ...list, name: 'public-dns-resolvers' };
    const writer = warninglistsView({ lists: [named], canWrite: true }).body.text;
    expect(writer).toContain('<input type="hidden" name="enabled" value="false">');
    expect(writer).toContain('aria-label="Disable public-dns-resolvers">Disable</button>');
    expect(writer).toContain('<option value="excludeFromExport" selected>');
    expect(writer).toContain('enctype="multipart/form-data"');
    expect(warninglistsView({ lists: [{ ...named, enabled: false }], canWrite: true }).body.text).toContain('>Enable</button>');
    const reader = warninglistsView({ lists: [named], canWrite: false }).body.text;
    expect(reader).not.toContain('<form');
    expect(reader).toContain('excludeFromExport <span class="note">(also keep out of exports and TAXII)</span>');
  });

  it('shows a refused import again with its settings and the problem', () => {
    const text = warninglistsView({
      lists: [],
      canWrite: true,
      form: new URLSearchParams({ name: 'Bad Name', action: 'rejectOnIngest' }),
      refusal: { status: 400, message: 'The form was not accepted: see the marked fields.', fields: { name: 'name must be 1-128 of a-z 0-9 . _ -' } },
    }).body.text;
    expect(text).toContain('<p role="alert" class="error">The form was not accepted: see the marked fields.</p>');
    expect(text).toContain('value="Bad Name"');
    expect(text).toContain('<p id="name-error" class="error">name must be 1-128 of a-z 0-9 . _ -</p>');
    expect(text).toContain('<option value="rejectOnIngest" selected>');
    // The box was not sent: unchecked as it was.
    expect(text).toContain('<input type="checkbox" id="import-enabled" name="enabled" value="true"> ');
  });
});
