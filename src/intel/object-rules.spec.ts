import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import type { ObjectKey } from '../common/indicators/indicators.js';
import type { TlpRank } from '../common/markings/tlp.js';
import type { KeyHit } from './object-rows.js';
import { addOutcome, planAdd, prepareObject } from './object-rules.js';

const MD5 = 'a'.repeat(32);
const OTHER_MD5 = 'b'.repeat(32);
const SHA1 = 'c'.repeat(40);
const LATER = '2099-01-01T00:00:00.000Z';

const md5 = (value = MD5): ObjectKey => ({ type: 'MD5Hash', value });
const sha1 = (value = SHA1): ObjectKey => ({ type: 'SHA1Hash', value });

/** A submitted File; `ttl` is the collection's time to live, `tlp` the write's marking (null: a source's). */
const file = (keys: ObjectKey[], context: Record<string, unknown> = {}, expiresAt?: string, ttl: number | null = null, tlp: TlpRank | null = 0) =>
  prepareObject({ type: 'File', keys, context, ...(expiresAt !== undefined && { expiresAt }) }, ttl, tlp);

/** A stored object found by a key, compared with the submitted one as findHits compares it; `apiTlp` its api claim's marking. */
const hit = (keys: ObjectKey[], sameContext = true, sameExpiry: boolean | null = true, apiTlp: TlpRank | null = 0): KeyHit => ({
  id: '7',
  keys,
  sameContext,
  sameExpiry,
  expired: false,
  apiTlp,
});

/** planAdd's answer as data: the write with its outcome, or the error code it throws. */
function decide(object: ReturnType<typeof file>, hits: KeyHit[]) {
  try {
    const write = planAdd(object, hits);
    return { outcome: addOutcome(write), write };
  } catch (error) {
    if (error instanceof ApiError) return { error: error.code };
    throw error;
  }
}

describe('planAdd (decisions §7)', () => {
  const cases: { name: string; object: ReturnType<typeof file>; hits: KeyHit[]; expected: unknown }[] = [
    {
      name: 'no stored object holds a key: a new object, as submitted',
      object: file([md5()], { a: 1 }),
      hits: [],
      expected: {
        outcome: 'Added',
        write: { kind: 'insert', type: 'File', keys: [md5()], context: '{"a":1}', expiry: { at: null, ttlSeconds: null }, tlp: 0 },
      },
    },
    {
      name: 'a new object keeps its keys in the one stable order, whatever the order sent',
      object: file([sha1(), md5()]),
      hits: [],
      expected: { outcome: 'Added', write: expect.objectContaining({ keys: [md5(), sha1()] }) },
    },
    {
      name: 'an identical re-send (same keys, context and expiry): nothing to write',
      object: file([md5()]),
      hits: [hit([md5()])],
      expected: { outcome: 'Unchanged', write: null },
    },
    {
      name: 're-sent keys the object holds among others: nothing to write (an add never removes keys)',
      object: file([md5()]),
      hits: [hit([md5(), sha1()])],
      expected: { outcome: 'Unchanged', write: null },
    },
    {
      name: 'another context: the context is replaced',
      object: file([md5()], { a: 2 }),
      hits: [hit([md5()], false)],
      expected: {
        outcome: 'Updated',
        write: {
          kind: 'update',
          objectId: '7',
          keys: [md5()],
          newKeys: [],
          context: '{"a":2}',
          expiry: { at: null, ttlSeconds: null },
          tlp: 0,
          decidedOnKeys: [md5()],
        },
      },
    },
    {
      name: 'a key of another type: merged into the object, the new key listed to be inserted',
      object: file([md5(), sha1()]),
      hits: [hit([md5()])],
      expected: {
        outcome: 'Updated',
        write: expect.objectContaining({ kind: 'update', keys: [md5(), sha1()], newKeys: [sha1()], decidedOnKeys: [md5()] }),
      },
    },
    {
      name: 'merged keys are sorted, the stored ones as decided on',
      object: file([md5()]),
      hits: [hit([sha1()], false)],
      expected: { outcome: 'Updated', write: expect.objectContaining({ keys: [md5(), sha1()], newKeys: [md5()], decidedOnKeys: [sha1()] }) },
    },
    {
      name: 'another fixed expiry: an update that sets it',
      object: file([md5()], {}, LATER),
      hits: [hit([md5()], true, false)],
      expected: { outcome: 'Updated', write: expect.objectContaining({ kind: 'update', expiry: { at: LATER, ttlSeconds: null } }) },
    },
    {
      name: "the collection's time to live: every add moves the expiry (sameExpiry is not compared), an update",
      object: file([md5()], {}, undefined, 3600),
      hits: [hit([md5()], true, null)],
      expected: { outcome: 'Updated', write: expect.objectContaining({ kind: 'update', newKeys: [], expiry: { at: null, ttlSeconds: 3600 } }) },
    },
    {
      name: "an object's own expiresAt wins over the collection's time to live",
      object: file([md5()], {}, LATER, 3600),
      hits: [],
      expected: { outcome: 'Added', write: expect.objectContaining({ expiry: { at: LATER, ttlSeconds: null } }) },
    },
    {
      name: 'a new object carries the marking of its write',
      object: file([md5()], {}, undefined, null, 2),
      hits: [],
      expected: { outcome: 'Added', write: expect.objectContaining({ kind: 'insert', tlp: 2 }) },
    },
    {
      name: 'an identical re-send with the marking of the api claim: nothing to write',
      object: file([md5()], {}, undefined, null, 2),
      hits: [hit([md5()], true, true, 2)],
      expected: { outcome: 'Unchanged', write: null },
    },
    {
      name: 'a re-send with another marking (lower included): an update of the marking alone',
      object: file([md5()], {}, undefined, null, 1),
      hits: [hit([md5()], true, true, 2)],
      expected: { outcome: 'Updated', write: expect.objectContaining({ kind: 'update', newKeys: [], tlp: 1 }) },
    },
    {
      name: 'a native re-send of an object no native write claims yet: an update (the api claim is new)',
      object: file([md5()]),
      hits: [hit([md5()], true, true, null)],
      expected: { outcome: 'Updated', write: expect.objectContaining({ kind: 'update', tlp: 0 }) },
    },
    {
      name: "a source's re-send (no marking of its own): the api claim's marking is not compared",
      object: file([md5()], {}, undefined, null, null),
      hits: [hit([md5()], true, true, 3)],
      expected: { outcome: 'Unchanged', write: null },
    },
    {
      name: 'the keys name two stored objects: a conflict',
      object: file([md5(), sha1()]),
      hits: [hit([md5()]), { ...hit([sha1()]), id: '8' }],
      expected: { error: 'KeySetConflict' },
    },
    {
      name: 'a key clashes with a stored one of the same type: a conflict',
      object: file([md5(OTHER_MD5), sha1()]),
      hits: [hit([md5(), sha1()])],
      expected: { error: 'KeySetConflict' },
    },
  ];

  it.each(cases)('$name', ({ object, hits, expected }) => {
    expect(decide(object, hits)).toEqual(expected);
  });
});
