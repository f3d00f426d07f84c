import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../common/errors/api-error.js';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import type { TlpRank } from '../../common/markings/tlp.js';
import { prepareObject } from '../object-rules.js';
import { planBatch, type BatchPlan, type ClaimMarkings, type OwningObject, type PreparedItem } from './batch-plan.js';

const LATER = '2099-01-01T00:00:00.000Z';
const OTHER_LATER = '2099-06-01T00:00:00.000Z';

/** Hash keys named by one letter (`md5('a')`: 32 × a), so that plans read short. */
const md5 = (letter: string): ObjectKey => ({ type: 'MD5Hash', value: letter.repeat(32) });
const sha1 = (letter: string): ObjectKey => ({ type: 'SHA1Hash', value: letter.repeat(40) });
const label = (key: ObjectKey) => `${key.type === 'MD5Hash' ? 'md5' : 'sha1'}:${key.value[0]}`;
const labels = (keys: ObjectKey[]) => keys.map(label).join(' ');

const add = (
  keys: ObjectKey[],
  context: Record<string, unknown> = {},
  expiresAt?: string,
  ttl: number | null = null,
  tlp: TlpRank | null = 0,
): PreparedItem => ({
  kind: 'add',
  object: prepareObject({ type: 'File', keys, context, ...(expiresAt !== undefined && { expiresAt }) }, ttl, tlp),
});
/** An add of `md5(letter)` marked `tlp` (null: a source's item). */
const marked = (letter: string, tlp: TlpRank | null) => add([md5(letter)], {}, undefined, null, tlp);
const remove = (key: ObjectKey): PreparedItem => ({ kind: 'remove', key });
const failed: PreparedItem = { kind: 'failed', error: new ApiError('InvalidData', 'checked before the lock') };

/** A stored File owning some of the batch's keys, claimed by the api (CLEAR) only, by an F key within the hour. */
const stored = (id: string, keys: ObjectKey[], context: Record<string, unknown> = {}, expiresAt: string | null = null): OwningObject => ({
  id,
  type: 'File',
  keys,
  context,
  expiresAt,
  expired: false,
  decidedAt: '2026-01-01 00:00:00+00',
  uid: `uid-${id}`,
  addedAt: '2026-01-01 00:00:00+00',
  apiTlp: 0,
  claimedTlp: null,
  apiReliability: 50,
  apiSeenLately: true,
});

/** The markings of source claims on keys, as BatchRepository.claimMarkings reads them. */
const claimsOf = (...claims: [ObjectKey, TlpRank][]): ClaimMarkings => new Map(claims.map(([key, tlp]) => [`${key.type}\n${key.value}`, tlp]));

/** A plan as short text: item statuses, records, and the net writes. */
function summary(plan: BatchPlan) {
  return {
    outcomes: plan.outcomes.map((outcome) => (outcome.status === 'Failed' ? `Failed ${outcome.error.code}` : outcome.status)),
    changes: plan.changes.map((change) => `${change.operation} ${labels(change.keys)}`),
    deletes: plan.deletes,
    updates: plan.updates.map((update) => `${update.id}: ${labels(update.keys)} (new: ${labels(update.newKeys)})`),
    inserts: plan.inserts.map((insert) => labels(insert.keys)),
  };
}

const NOTHING = { deletes: [], updates: [], inserts: [] };

describe('planBatch: the items replayed in order over the stored objects', () => {
  const cases: { name: string; owners: OwningObject[]; items: PreparedItem[]; expected: ReturnType<typeof summary> }[] = [
    {
      name: 'new objects: inserted, recorded in item order',
      owners: [],
      items: [add([md5('a')]), add([md5('b')])],
      expected: { ...NOTHING, outcomes: ['Added', 'Added'], changes: ['Add md5:a', 'Add md5:b'], inserts: ['md5:a', 'md5:b'] },
    },
    {
      name: 'a re-send of a stored object: unchanged, nothing recorded',
      owners: [stored('1', [md5('a')], { n: 1 })],
      items: [add([md5('a')], { n: 1 })],
      expected: { ...NOTHING, outcomes: ['Unchanged'], changes: [] },
    },
    {
      name: 'the same object twice in one batch: the second is a re-send',
      owners: [],
      items: [add([md5('a')]), add([md5('a')])],
      expected: { ...NOTHING, outcomes: ['Added', 'Unchanged'], changes: ['Add md5:a'], inserts: ['md5:a'] },
    },
    {
      name: 'another context for a stored object: updated',
      owners: [stored('1', [md5('a')], { n: 1 })],
      items: [add([md5('a')], { n: 2 })],
      expected: { ...NOTHING, outcomes: ['Updated'], changes: ['Update md5:a'], updates: ['1: md5:a (new: )'] },
    },
    {
      name: 'a key merged into a stored object: its new key row only',
      owners: [stored('1', [md5('a')])],
      items: [add([md5('a'), sha1('c')])],
      expected: { ...NOTHING, outcomes: ['Updated'], changes: ['Update md5:a sha1:c'], updates: ['1: md5:a sha1:c (new: sha1:c)'] },
    },
    {
      name: 'merges within the batch: one insert of the merged object, each step recorded',
      owners: [],
      items: [add([md5('a')]), add([sha1('c'), md5('a')], { n: 1 })],
      expected: { ...NOTHING, outcomes: ['Added', 'Updated'], changes: ['Add md5:a', 'Update md5:a sha1:c'], inserts: ['md5:a sha1:c'] },
    },
    {
      name: 'a key clashing with a stored one of its type: that item fails, the others are applied',
      owners: [stored('1', [md5('a'), sha1('c')])],
      items: [add([md5('b'), sha1('c')]), add([md5('d')])],
      expected: { ...NOTHING, outcomes: ['Failed KeySetConflict', 'Added'], changes: ['Add md5:d'], inserts: ['md5:d'] },
    },
    {
      name: 'keys of two stored objects: a conflict',
      owners: [stored('1', [md5('a')]), stored('2', [sha1('c')])],
      items: [add([md5('a'), sha1('c')])],
      expected: { ...NOTHING, outcomes: ['Failed KeySetConflict'], changes: [] },
    },
    {
      name: 'keys of two objects of the batch: a conflict too',
      owners: [],
      items: [add([md5('a')]), add([sha1('c')]), add([md5('a'), sha1('c')])],
      expected: { ...NOTHING, outcomes: ['Added', 'Added', 'Failed KeySetConflict'], changes: ['Add md5:a', 'Add sha1:c'], inserts: ['md5:a', 'sha1:c'] },
    },
    {
      name: 'an item that failed its checks before the lock keeps its error; the rest goes on',
      owners: [],
      items: [failed, add([md5('a')])],
      expected: { ...NOTHING, outcomes: ['Failed InvalidData', 'Added'], changes: ['Add md5:a'], inserts: ['md5:a'] },
    },
    {
      name: 'removing an absent key: a success without a record',
      owners: [],
      items: [remove(md5('a'))],
      expected: { ...NOTHING, outcomes: ['Absent'], changes: [] },
    },
    {
      name: 'a remove by any key of a stored object deletes it whole',
      owners: [stored('1', [md5('a'), sha1('c')])],
      items: [remove(sha1('c'))],
      expected: { ...NOTHING, outcomes: ['Removed'], changes: ['Remove md5:a sha1:c'], deletes: ['1'] },
    },
    {
      name: 'remove then re-add a stored key: the old object deleted, a new one inserted',
      owners: [stored('1', [md5('a')], { n: 1 })],
      items: [remove(md5('a')), add([md5('a')], { n: 1 })],
      expected: { ...NOTHING, outcomes: ['Removed', 'Added'], changes: ['Remove md5:a', 'Add md5:a'], deletes: ['1'], inserts: ['md5:a'] },
    },
    {
      name: 'an object added and removed by the batch: both recorded, nothing left to write',
      owners: [],
      items: [add([md5('a')]), remove(md5('a')), remove(md5('a'))],
      expected: { ...NOTHING, outcomes: ['Added', 'Removed', 'Absent'], changes: ['Add md5:a', 'Remove md5:a'] },
    },
    {
      name: 'the same fixed expiry again: a re-send',
      owners: [stored('1', [md5('a')], {}, LATER)],
      items: [add([md5('a')], {}, LATER)],
      expected: { ...NOTHING, outcomes: ['Unchanged'], changes: [] },
    },
    {
      name: 'another fixed expiry, or none: updated',
      owners: [stored('1', [md5('a')], {}, LATER), stored('2', [md5('b')], {}, LATER)],
      items: [add([md5('a')], {}, OTHER_LATER), add([md5('b')])],
      expected: { ...NOTHING, outcomes: ['Updated', 'Updated'], changes: ['Update md5:a', 'Update md5:b'], updates: ['1: md5:a (new: )', '2: md5:b (new: )'] },
    },
    {
      name: "the collection's time to live: each add moves the expiry, a re-send included",
      owners: [stored('1', [md5('a')])],
      items: [add([md5('a')], {}, undefined, 60), add([md5('a')], {}, undefined, 60)],
      expected: { ...NOTHING, outcomes: ['Updated', 'Updated'], changes: ['Update md5:a', 'Update md5:a'], updates: ['1: md5:a (new: )'] },
    },
  ];

  it.each(cases)('$name', ({ owners, items, expected }) => {
    expect(summary(planBatch(items, owners, new Map()))).toEqual(expected);
  });

  it("records carry the object's life: a stored one's, and a new one for a re-add", () => {
    const plan = planBatch([add([md5('a')], { n: 2 }), remove(md5('a')), add([md5('a')])], [stored('1', [md5('a')], { n: 1 })], new Map());
    const [updated, removed, readded] = plan.changes;
    expect([updated, removed].map(({ uid, addedAt }) => ({ uid, addedAt }))).toEqual([
      { uid: 'uid-1', addedAt: '2026-01-01 00:00:00+00' },
      { uid: 'uid-1', addedAt: '2026-01-01 00:00:00+00' },
    ]);
    // A new life: its own uid, first added by this statement (null: the statement's time).
    expect(readded.uid).not.toBe('uid-1');
    expect(readded.addedAt).toBeNull();
    expect(plan.inserts[0].uid).toBe(readded.uid);
  });

  it("records carry the object's marking after and before each change, replayed from the claims as read", () => {
    const owner = { ...stored('1', [md5('a')]), apiTlp: 2 as const, claimedTlp: 1 as const };
    const plan = planBatch(
      [marked('a', 4), marked('a', 0), marked('a', 0), marked('a', null), remove(md5('a')), marked('a', 3), marked('b', 1), marked('c', 0)],
      [owner, { ...stored('2', [md5('c')]), apiTlp: null, claimedTlp: 3 }],
      claimsOf([md5('a'), 1], [md5('c'), 3]),
    );
    expect(plan.outcomes.map((outcome) => outcome.status)).toEqual(['Updated', 'Updated', 'Unchanged', 'Unchanged', 'Removed', 'Added', 'Added', 'Updated']);
    // Lowered to CLEAR, the source claim (GREEN) still marks it; a source's re-send leaves the api claim alone;
    // the first api claim of an object only a source claims is an Update that leaves its marking (AMBER+STRICT).
    expect(plan.changes.map(({ operation, tlp, wasTlp }) => [operation, tlp, wasTlp])).toEqual([
      ['Update', 4, 2],
      ['Update', 1, 4],
      ['Remove', 1, 1],
      ['Add', 3, null],
      ['Add', 1, null],
      ['Update', 3, 3],
    ]);
    expect(plan.inserts.map((insert) => insert.tlp)).toEqual([3, 1]);
    expect(plan.updates.map((update) => [update.id, update.tlp])).toEqual([['2', 0]]);
    expect(plan.deletes).toEqual(['1']);
  });

  it("a stored object's net update writes the api claim's last marking", () => {
    const plan = planBatch([marked('a', 4), marked('a', 1)], [stored('1', [md5('a')])], new Map());
    expect(plan.updates.map((update) => update.tlp)).toEqual([1]);
    expect(plan.changes.map(({ tlp, wasTlp }) => [tlp, wasTlp])).toEqual([
      [4, 0],
      [1, 4],
    ]);
  });

  it('records and net writes carry the expiry each add asked for', () => {
    const plan = planBatch([add([md5('a')], {}, LATER), add([md5('b')], {}, undefined, 60)], [], new Map());
    expect(plan.changes.map((change) => change.expiry)).toEqual([
      { at: LATER, ttlSeconds: null },
      { at: null, ttlSeconds: 60 },
    ]);
    expect(plan.inserts.map((insert) => insert.expiry)).toEqual(plan.changes.map((change) => change.expiry));
  });

  describe('an identical native re-send refreshes the api claim only when it is behind (extensions §18, the anchor)', () => {
    const owners = () => [
      stored('1', [md5('a')]),
      { ...stored('2', [md5('b')]), apiSeenLately: false },
      { ...stored('3', [md5('c')]), apiReliability: 100 },
      { ...stored('4', [md5('d')]), apiReliability: null, apiSeenLately: null, apiTlp: null, claimedTlp: 0 as const },
    ];
    const resend = ['a', 'b', 'c'].map((letter) => marked(letter, 0));

    it('within the hour by a key no more reliable: nothing; past the hour: refreshed', () => {
      const plan = planBatch(resend, owners(), new Map(), 50);
      expect(plan.outcomes.map((outcome) => outcome.status)).toEqual(['Unchanged', 'Unchanged', 'Unchanged']);
      expect([plan.changes, plan.updates, plan.refreshes]).toEqual([[], [], ['2']]);
    });

    it('by a more reliable key: every claim below it refreshed', () => {
      expect(planBatch(resend, owners(), new Map(), 75).refreshes).toEqual(['1', '2']);
      expect(planBatch(resend, owners(), new Map(), 100).refreshes).toEqual(['1', '2']);
    });

    it("never for a source's items, an object the batch also changes, removes or creates, nor a failed item", () => {
      expect(
        planBatch(
          ['a', 'b'].map((letter) => marked(letter, null)),
          owners(),
          new Map(),
          null,
        ).refreshes,
      ).toEqual([]);
      const plan = planBatch(
        [marked('b', 0), add([md5('b')], { n: 1 }), marked('a', 0), remove(md5('a')), marked('e', 0), marked('e', 0), failed],
        owners(),
        new Map(),
        100,
      );
      expect(plan.outcomes.map((outcome) => outcome.status)).toEqual(['Unchanged', 'Updated', 'Unchanged', 'Removed', 'Added', 'Unchanged', 'Failed']);
      expect([plan.refreshes, plan.updates.map((update) => update.id), plan.deletes]).toEqual([[], ['2'], ['1']]);
    });

    it('an object only a source claimed: the native re-send is its first api claim, an Update (no refresh needed)', () => {
      const plan = planBatch([marked('d', 0)], owners(), new Map(), 100);
      expect([plan.outcomes[0].status, plan.refreshes]).toEqual(['Updated', []]);
    });
  });
});
