import { describe, expect, it } from '@jest/globals';
import type { TaskDetailView } from '../../insight/dto/task.dto.js';
import type { ScoredObjectView } from '../../intel/dto/object.dto.js';
import type { LookupResultView } from '../../intel/lookup/lookup.dto.js';
import type { WarningView } from '../../warninglists/dto/warninglist.dto.js';
import { escapeHtml } from '../html.js';
import { objectView, sightingSummaryOf } from './collections.view.js';
import type { Screen } from './layout.js';
import { lookupView } from './lookup.view.js';
import { HOSTILE, itShowsStoredTextAsText } from './screens.spec-helpers.js';
import { taskView } from './tasks.view.js';

const key = { type: 'DomainName', value: HOSTILE } as const;
const object = { type: 'DomainName', keys: [key], context: {} } as unknown as ScoredObjectView;
const summary = { count: 12345, falsePositives: 2, firstAt: '2026-01-02T03:04:05.000Z', lastAt: '2026-01-03T00:00:00.000Z', sources: 1 };
const warning = { list: HOSTILE, entry: HOSTILE, action: HOSTILE, match: HOSTILE } as unknown as WarningView;

const task = (extra: Partial<TaskDetailView> = {}): TaskDetailView => ({
  id: '3f1e2d4c-0000-4000-8000-000000000001',
  params: { schemaID: 'verdict', objectKeys: [key] },
  state: 'Pending',
  progress: { percent: 40, message: HOSTILE },
  attempts: [
    {
      attempt: 1,
      executor: HOSTILE,
      keyID: 7,
      takenAt: '2026-01-02T03:04:05.000Z',
      endedAt: '2026-01-02T03:05:00.000Z',
      outcome: 'transient',
      error: { code: HOSTILE, message: HOSTILE },
    },
    { attempt: 2, executor: null, keyID: 7, takenAt: '2026-01-02T03:06:00.000Z', endedAt: null, outcome: null, error: null },
  ],
  ...extra,
});

const found: LookupResultView = {
  key,
  matches: [
    { collection: HOSTILE, object, sightings: summary },
    { collection: 'other', object, sightings: null },
  ],
  warnings: [warning],
};

/** The screens this work added to, with hostile text in each string they now show. */
const SCREENS: Array<[string, Screen]> = [
  ['task with attempts, progress and a refusal', taskView(task(), { canWrite: true, message: HOSTILE })],
  [
    'lookup with sightings and warnings',
    lookupView({ text: '', outcome: { known: [found], unknown: [HOSTILE], unknownWarned: [{ key, matches: [], warnings: [warning] }], invalid: [] } }),
  ],
  [
    'object with sightings',
    objectView({
      collection: 'c',
      object,
      sightings: summary,
      latestSightings: [{ at: '2026-01-03T00:00:00.000Z', kind: 'sighting', source: HOSTILE, count: 3, key }],
      key,
      history: [],
    }),
  ],
];

describe('console views of attempts, sightings and warnings', () => {
  itShowsStoredTextAsText(SCREENS);

  it('offers cancel while a task is pending and retry once it failed, only to a key that may write tasks', () => {
    const buttons = (view: TaskDetailView, canWrite = true) => [...taskView(view, { canWrite }).body.text.matchAll(/<button[^>]*>([^<]*)</g)].map((m) => m[1]);
    expect(buttons(task())).toEqual(['Cancel task']);
    expect(buttons(task({ cancelRequested: true }))).toEqual([]);
    expect(buttons(task({ state: 'Failed', progress: undefined, error: { code: 'Cancelled', message: 'cancelled' } }))).toEqual(['Retry task']);
    expect(buttons(task({ state: 'Completed', progress: undefined }))).toEqual([]);
    expect(buttons(task(), false)).toEqual([]);
    expect(buttons(task({ state: 'Failed' }), false)).toEqual([]);
  });

  it("shows a task's attempts in order, the running one as running, and its progress", () => {
    const text = taskView(task({ cancelRequested: true })).body.text;
    expect(text).toContain('<td>2</td><td>—</td><td>key 7</td><td>2026-01-02 03:06:00 UTC</td><td>running</td><td>running</td><td>—</td>');
    expect(text).toContain('<progress max="100" value="40" aria-label="Progress"></progress> 40 %');
    expect(text).toContain('Pending (cancel requested: its executor is asked to stop)');
    expect(taskView(task({ attempts: [] })).body.text).toContain('No executor has taken it yet.');
  });

  it('says a sighting summary in words', () => {
    expect(sightingSummaryOf(null)).toBe('Never sighted.');
    expect(sightingSummaryOf(summary)).toBe('Seen 12,345 times, 2026-01-02 03:04:05 UTC to 2026-01-03 00:00:00 UTC, 2 false positives, from 1 source.');
    expect(sightingSummaryOf({ count: 0, falsePositives: 1, firstAt: null, lastAt: null, sources: 2 })).toBe('Not seen, 1 false positive, from 2 sources.');
  });

  it('names each collection beside its summary when a key is found in several, and says when a key is on no list', () => {
    const text = lookupView({ text: '', outcome: { known: [{ ...found, warnings: [] }], unknown: [], unknownWarned: [], invalid: [] } }).body.text;
    expect(text).toContain(`${escapeHtml(HOSTILE)}: ${sightingSummaryOf(summary)}<br>other: Never sighted.<br></td><td>none</td>`);
  });
});
