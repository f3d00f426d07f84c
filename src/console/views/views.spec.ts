import { describe, expect, it } from '@jest/globals';
import { TLP_LEVELS } from '../../common/markings/tlp.js';
import type { TaskView } from '../../insight/dto/task.dto.js';
import type { ObjectView } from '../../intel/dto/object.dto.js';
import type { HistoryEntryView } from '../../intel/history/history.dto.js';
import { DEFAULT_SCORING } from '../../scoring/scoring-config.js';
import { changesFragment, changesView, collectionsView, collectionView, objectView, whatChanged } from './collections.view.js';
import { filesView, fileView } from './files.view.js';
import { keyCreatedView, keyEditorView, keysView } from './keys.view.js';
import type { Screen } from './layout.js';
import { lookupView } from './lookup.view.js';
import { HOSTILE, itShowsStoredTextAsText } from './screens.spec-helpers.js';
import { homeView, signInView } from './session.view.js';
import { registerTaskView, tasksView, taskView } from './tasks.view.js';

const object: ObjectView = {
  type: 'DomainName',
  keys: [{ type: 'DomainName', value: HOSTILE }],
  context: { [HOSTILE]: HOSTILE },
  expiresAt: '2030-01-02T00:00:00.000Z',
  tlp: 'TLP:CLEAR',
} as ObjectView;

const entry = (operation: HistoryEntryView['operation'], obj: ObjectView, extra: Partial<HistoryEntryView> = {}): HistoryEntryView => ({
  position: 1,
  at: '2026-01-02T03:04:05.678Z',
  operation,
  reason: null,
  keyID: 7,
  requestID: HOSTILE,
  via: 'api',
  source: null,
  obj,
  ...extra,
});

const task = {
  id: '3f1e2d4c-0000-4000-8000-000000000001',
  params: { schemaID: HOSTILE, objectKeys: [{ type: 'DomainName', value: HOSTILE }], fileID: HOSTILE },
  state: 'Failed',
  result: { type: 'DomainName', keys: [], context: { note: HOSTILE } },
  error: { code: HOSTILE, message: HOSTILE },
} as unknown as TaskView;

const RED_CEILINGS = { choices: TLP_LEVELS, own: 'TLP:RED' } as const;

const form = new URLSearchParams({ description: HOSTILE, expiresOn: HOSTILE, schemaID: HOSTILE, objectKeys: HOSTILE, fileID: HOSTILE });
const refusal = { status: 400, message: HOSTILE, fields: { description: HOSTILE, schemaID: HOSTILE, objectKeys: HOSTILE } };

/** Every screen, with hostile text in each string it shows that comes from data or from the user. */
const SCREENS: Array<[string, Screen | { text: string }]> = [
  ['sign-in', signInView(HOSTILE)],
  ['home', homeView({ keyId: 1, expiresAt: null, permissions: [{ path: HOSTILE, actions: ['Read'] }], limits: [{ path: HOSTILE, action: 'Read', limit: 5 }] })],
  [
    'keys',
    keysView({
      keys: [
        {
          id: 7,
          description: HOSTILE,
          createdAt: new Date(0),
          expiresAt: null,
          lastUsedAt: null,
          permissions: [{ path: HOSTILE, actions: ['Read'] }],
          limits: [{ path: HOSTILE, action: 'Read', limit: 5 }],
          state: 'active',
          maxTLP: 'TLP:RED',
          reliability: 'B',
        },
      ],
      canWrite: true,
      ceilings: RED_CEILINGS,
      next: HOSTILE,
    }),
  ],
  ['key editor', keyEditorView({ rows: [{ id: 9, path: HOSTILE, actions: ['Read'] }], ceilings: RED_CEILINGS, form, refusal })],
  ['key created', keyCreatedView({ id: 7, key: HOSTILE })],
  [
    'collections',
    collectionsView({ collections: [{ name: HOSTILE, schemaID: HOSTILE, defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING }], paged: true, next: HOSTILE }),
  ],
  [
    'collection',
    collectionView({ name: HOSTILE, schema: { id: HOSTILE, title: HOSTILE }, objects: [object], paged: false, next: HOSTILE, changesCursor: HOSTILE }),
  ],
  ['changes', changesView({ name: HOSTILE, changes: [{ operation: 'Add', object } as never], next: HOSTILE })],
  ['live changes', changesFragment({ name: HOSTILE, changes: [{ operation: 'Remove', reason: 'Expired', object } as never], next: HOSTILE })],
  [
    'object',
    objectView({
      collection: HOSTILE,
      object,
      sightings: null,
      latestSightings: [],
      key: object.keys[0],
      history: [entry('Update', object, { source: HOSTILE }), entry('Add', { ...object, context: {} })],
      olderHistory: HOSTILE,
    }),
  ],
  [
    'lookup',
    lookupView({
      text: HOSTILE,
      message: HOSTILE,
      outcome: {
        known: [
          { key: { type: 'DomainName', value: HOSTILE }, matches: [{ collection: HOSTILE, object: { ...object, score: 50 }, sightings: null }], warnings: [] },
        ],
        unknown: [HOSTILE],
        unknownWarned: [],
        invalid: [{ line: HOSTILE, message: HOSTILE }],
      },
    }),
  ],
  ['tasks', tasksView({ tasks: [task], canWrite: true, next: HOSTILE })],
  ['task', taskView(task)],
  ['register a task', registerTaskView({ form, refusal })],
  ['files', filesView(HOSTILE)],
  ['file', fileView({ fileID: HOSTILE, name: HOSTILE, size: 1, sha256: HOSTILE })],
];

describe('console views', () => {
  itShowsStoredTextAsText(SCREENS);

  it("names a key's resources by path, with their actions and daily limits", () => {
    const text = keysView({
      keys: [
        {
          id: 3,
          description: null,
          createdAt: new Date(0),
          expiresAt: null,
          lastUsedAt: null,
          permissions: [{ path: 'intel/phishing-domains', actions: ['Read', 'Write'] }],
          limits: [{ path: 'intel/phishing-domains', action: 'Read', limit: 1000 }],
          state: 'revoked',
          maxTLP: 'TLP:RED',
          reliability: 'F',
        },
      ],
      canWrite: true,
      ceilings: RED_CEILINGS,
    }).body.text;
    expect(text).toContain('<td>intel/phishing-domains: Read, Write<br>limit intel/phishing-domains Read: 1000/day<br></td>');
    // A revoked key offers no Revoke button, nor a ceiling or a reliability to set.
    expect(text).not.toContain('Revoke key 3');
    expect(text).not.toContain('TLP ceiling of key 3');
    expect(text).not.toContain('Reliability of key 3');
    expect(text).toContain('<span class="mono">F</span>');
  });

  it("shows a key's ceiling as a badge and offers the ceilings the signed-in key may set, the key's own (or the nearest below) chosen", () => {
    const key = {
      description: null,
      createdAt: new Date(0),
      expiresAt: null,
      lastUsedAt: null,
      permissions: [],
      limits: [],
      state: 'active' as const,
      reliability: 'F' as const,
    };
    const text = keysView({
      keys: [
        { ...key, id: 4, maxTLP: 'TLP:CLEAR' },
        { ...key, id: 5, maxTLP: 'TLP:AMBER+STRICT' },
      ],
      canWrite: true,
      ceilings: { choices: ['TLP:CLEAR', 'TLP:GREEN'], own: 'TLP:GREEN' },
    }).body.text;
    expect(text).toContain('<span class="tlp tlp-clear">TLP:CLEAR</span>');
    expect(text).toContain('<span class="tlp tlp-amber">TLP:AMBER+STRICT</span>');
    const options = (id: number) => /aria-label="TLP ceiling of key (\d+)">(.*?)<\/select>/gs.exec(text.slice(text.indexOf(`/console/keys/${id}"`)))![2];
    expect(options(4)).toBe('<option selected>TLP:CLEAR</option><option>TLP:GREEN</option>');
    expect(options(5)).toBe('<option>TLP:CLEAR</option><option selected>TLP:GREEN</option>');
    const editor = keyEditorView({ rows: [], ceilings: { choices: ['TLP:CLEAR', 'TLP:GREEN'], own: 'TLP:GREEN' } }).body.text;
    expect(editor).toContain(
      '<select id="maxTLP" name="maxTLP" aria-describedby="maxTLP-help"><option>TLP:CLEAR</option><option selected>TLP:GREEN</option></select>',
    );
  });

  it("shows a key's reliability and offers every letter, the key's own chosen; the editor defaults to F", () => {
    const key = { description: null, createdAt: new Date(0), expiresAt: null, lastUsedAt: null, permissions: [], limits: [], state: 'active' as const };
    const text = keysView({ keys: [{ ...key, id: 6, maxTLP: 'TLP:RED', reliability: 'B' }], canWrite: true, ceilings: RED_CEILINGS }).body.text;
    expect(text).toContain('<span class="mono">B</span>');
    expect(/aria-label="Reliability of key 6">(.*?)<\/select>/s.exec(text)![1]).toBe(
      '<option>A</option><option selected>B</option><option>C</option><option>D</option><option>E</option><option>F</option>',
    );
    const reader = keysView({ keys: [{ ...key, id: 6, maxTLP: 'TLP:RED', reliability: 'B' }], canWrite: false, ceilings: RED_CEILINGS }).body.text;
    expect(reader).not.toContain('Reliability of key 6');
    const editor = keyEditorView({ rows: [], ceilings: RED_CEILINGS }).body.text;
    expect(editor).toContain('<select id="reliability" name="reliability" aria-describedby="reliability-help"><option>A</option>');
    expect(editor).toContain('<option selected>F</option></select>');
  });

  it("marks every object it shows with its TLP badge: a collection's objects, its changes, one object, the lookup", () => {
    const amber = { ...object, tlp: 'TLP:AMBER+STRICT' } as ObjectView;
    const badge = '<span class="tlp tlp-amber">TLP:AMBER+STRICT</span>';
    const texts = [
      collectionView({ name: 'c', schema: { id: 's' }, objects: [amber], paged: false }).body.text,
      changesFragment({ name: 'c', changes: [{ operation: 'Update', object: amber } as never], next: 'n' }).text,
      objectView({ collection: 'c', object: amber, sightings: null, latestSightings: [], key: amber.keys[0], history: [] }).body.text,
      lookupView({
        text: '',
        outcome: {
          known: [{ key: amber.keys[0], matches: [{ collection: 'c', object: { ...amber, score: 50 }, sightings: null }], warnings: [] }],
          unknown: [],
          unknownWarned: [],
          invalid: [],
        },
      }).body.text,
    ];
    for (const text of texts) expect(text).toContain(badge);
  });

  it("says what each change of an object's history did, against the change before it", () => {
    const md5 = { type: 'MD5Hash', value: 'a'.repeat(32) } as const;
    const sha1 = { type: 'SHA1Hash', value: 'b'.repeat(40) } as const;
    const first = { type: 'File', keys: [md5], context: { a: 1, b: 1 }, tlp: 'TLP:CLEAR' } as ObjectView;
    const second = { ...first, keys: [md5, sha1], context: { a: 1, b: 2, c: 3 }, expiresAt: '2030-01-02T00:00:00.000Z' } as ObjectView;
    expect(whatChanged(entry('Add', first), undefined)).toBe(`added with ${md5.value}`);
    expect(whatChanged(entry('Update', second), entry('Add', first))).toBe(`keys ${sha1.value} joined; context b, c; expiry 2030-01-02 00:00:00 UTC`);
    expect(whatChanged(entry('Update', second), undefined)).toBe('updated');
    expect(whatChanged(entry('Remove', second, { reason: 'Expired' }), entry('Update', second))).toBe('removed');
    const text = objectView({
      collection: 'c',
      object: second,
      sightings: null,
      latestSightings: [],
      key: sha1,
      history: [entry('Remove', second, { reason: 'Deleted', keyID: null, via: 'expiry' })],
    }).body.text;
    expect(text).toContain('<td>Remove (Deleted)</td><td>removed</td><td>expiry</td><td>the service</td>');
  });

  it("shows a refused form again with its values and each field's problem", () => {
    const text = registerTaskView({
      form: new URLSearchParams({ schemaID: 'bad id', objectKeys: 'a.example' }),
      refusal: { status: 400, message: 'The form was not accepted: see the marked fields.', fields: { schemaID: 'schemaID must be a schema identifier' } },
    }).body.text;
    expect(text).toContain('<p role="alert" class="error">The form was not accepted: see the marked fields.</p>');
    expect(text).toContain('aria-describedby="schemaID-error" aria-invalid="true" required maxlength="128" value="bad id">');
    expect(text).toContain('<p id="schemaID-error" class="error">schemaID must be a schema identifier</p>');
    expect(text).toContain('>a.example</textarea>');
  });
});
