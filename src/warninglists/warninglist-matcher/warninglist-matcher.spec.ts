import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import type { KeyType } from '../../common/indicators/indicators.js';
import { CompiledEntries, EntryError, KIND_KEY_TYPES, ListIndex, ListSet, normalizeEntry, type ActiveList, type ListKind } from './index.js';

const octet = fc.integer({ min: 0, max: 255 });
const v4 = fc.tuple(octet, octet, octet, octet).map((parts) => parts.join('.'));
const v4Network = fc.tuple(v4, fc.integer({ min: 0, max: 32 })).map(([address, prefix]) => normalizeEntry('cidr', `${address}/${prefix}`));

describe('warninglist matcher (pure)', () => {
  it('cidr: an address is contained exactly when ipaddr says one of the listed networks holds it', () => {
    fc.assert(
      fc.property(fc.array(v4Network, { minLength: 1, maxLength: 20 }), fc.array(v4, { maxLength: 20 }), (networks, addresses) => {
        const table = new CompiledEntries('cidr', networks);
        for (const address of addresses) {
          const held = networks.some((network) => ipaddr.parse(address).match(ipaddr.parseCIDR(network)));
          const found = table.match({ type: 'IPAddress', value: address });
          expect(found?.match === 'contained').toBe(held);
          // The entry named is one listed, as stored (IPv4 networks are written back from their numbers).
          if (found) expect(networks).toContain(found.entry);
        }
      }),
      { seed: 20261127, numRuns: 200 },
    );
  });

  it('cidr: a network overlaps exactly when it holds a listed network it is not inside', () => {
    fc.assert(
      fc.property(fc.array(v4Network, { minLength: 1, maxLength: 20 }), v4Network, (networks, key) => {
        const table = new CompiledEntries('cidr', networks);
        const [start, prefix] = ipaddr.parseCIDR(key);
        const inside = networks.some((network) => prefix >= ipaddr.parseCIDR(network)[1] && start.match(ipaddr.parseCIDR(network)));
        const holds = networks.some((network) => {
          const [other, length] = ipaddr.parseCIDR(network);
          return length >= prefix && other.match(start, prefix);
        });
        const found = table.match({ type: 'IPNetwork', value: key });
        expect(found?.match).toBe(inside ? 'contained' : holds ? 'overlap' : undefined);
        if (found) expect(networks).toContain(found.entry);
      }),
      { seed: 20261127, numRuns: 200 },
    );
  });

  it('normalises entries as keys and refuses what a kind cannot hold', () => {
    expect(normalizeEntry('cidr', '10.1.2.3/8')).toBe('10.0.0.0/8');
    expect(normalizeEntry('cidr', '2001:DB8::1')).toBe('2001:db8::1/128');
    expect(normalizeEntry('hostname', '*.Bücher.Example.')).toBe('xn--bcher-kva.example');
    expect(normalizeEntry('values', '.Google.COM')).toBe('.google.com');
    expect(normalizeEntry('values', 'free text, as MISP lists hold')).toBe('free text, as MISP lists hold');
    expect(normalizeEntry('substring', ' EVIL ')).toBe('evil');
    for (const [kind, entry] of [
      ['cidr', 'example.com'],
      ['cidr', '10.0.0.0/33'],
      ['hostname', 'a b'],
      ['values', ''],
      ['values', 7],
    ] as const) {
      expect(() => normalizeEntry(kind, entry)).toThrow(EntryError);
    }
  });

  // Small pools, so that lists share entries and a key meets several lists and several entries of one.
  const pools: Record<ListKind, string[]> = {
    values: ['a.example', '.example', '.b.a.example', 'free text', '10.1.2.3', 'd41d8cd98f00b204e9800998ecf8427e'],
    hostname: ['example', 'a.example', 'b.a.example', 'other.test'],
    cidr: ['10.0.0.0/8', '10.1.0.0/16', '10.1.2.0/24', '10.1.2.3/32', '192.168.0.0/16', '2001:db8::/32', '::ffff:10.1.2.3/128', '::ffff:0:0/96'],
    substring: ['a.ex', 'exam', 'b', 'ample', '.a.', 'test'],
  };
  const listSpec = fc
    .constantFrom<ListKind>('values', 'hostname', 'cidr', 'substring')
    .chain((kind) => fc.tuple(fc.constant(kind), fc.shuffledSubarray(pools[kind], { minLength: 1 })));
  const keys = fc.constantFrom(
    { type: 'DomainName', value: 'b.a.example' },
    { type: 'DomainName', value: 'a.example' },
    { type: 'URL', value: 'https://b.a.example/ample?x=test' },
    { type: 'URL', value: 'http://10.1.2.3/' },
    { type: 'IPAddress', value: '10.1.2.3' },
    { type: 'IPAddress', value: '::ffff:10.1.2.3' },
    { type: 'IPNetwork', value: '10.1.0.0/16' },
    { type: 'IPNetwork', value: '10.0.0.0/7' },
    { type: 'IPNetwork', value: '2001:db8::/16' },
    { type: 'MD5Hash', value: 'd41d8cd98f00b204e9800998ecf8427e' },
  ) as fc.Arbitrary<{ type: KeyType; value: string }>;
  const activeList = ([kind, entries]: [ListKind, string[]], index: number): ActiveList => ({
    name: `l${index}`,
    revision: `${index}`,
    action: index % 2 === 0 ? 'annotate' : 'excludeFromExport',
    keyTypes: new Set(KIND_KEY_TYPES[kind]),
    entries: new CompiledEntries(
      kind,
      entries.map((entry) => normalizeEntry(kind, entry)),
    ),
  });
  /** Every answer of a set to `asked`, to compare two sets. */
  const answers = (set: ListSet, asked: { type: KeyType; value: string }[]) => ({
    warnings: asked.map((key) => set.warningsOf(key)),
    first: set.firstOf(asked, 'excludeFromExport'),
  });

  it('lists indexed together answer each as it answers alone, in list order', () => {
    fc.assert(
      fc.property(fc.array(listSpec, { minLength: 1, maxLength: 6 }), fc.array(keys, { minLength: 1, maxLength: 4 }), (specs, asked) => {
        const lists = specs.map(activeList);
        const set = new ListSet(lists);
        const alone = (key: { type: KeyType; value: string }) =>
          lists.flatMap((each) => {
            const found = each.keyTypes.has(key.type) ? each.entries.match(key) : undefined;
            return found ? [{ list: each.name, entry: found.entry, action: each.action, match: found.match }] : [];
          });
        for (const key of asked) expect(set.warningsOf(key)).toEqual(alone(key));
        const first = lists.flatMap((each) =>
          asked.flatMap((key) => alone(key).filter((warning) => warning.list === each.name && warning.action === 'excludeFromExport')),
        );
        expect(set.firstOf(asked, 'excludeFromExport')).toEqual(first[0]);
      }),
      { seed: 20261128, numRuns: 300 },
    );
  });

  it('an index changed one list at a time answers as one built afresh, and a set still in use answers as before', () => {
    // A run of sets of lists drawn from a pool (in any order, any subset), as the enabled lists move: each
    // set's new lists join the shared index, and lists no set in use reads leave it.
    const pool = fc.array(listSpec, { minLength: 1, maxLength: 6 });
    const steps = fc.array(fc.tuple(fc.array(fc.nat(), { maxLength: 6 }), fc.boolean()), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(pool, steps, fc.array(keys, { minLength: 1, maxLength: 4 }), (specs, moves, asked) => {
        const lists = specs.map(activeList);
        const index = new ListIndex();
        const slots = new Map<ActiveList, number>();
        let held: { set: ListSet; lists: ActiveList[]; answers: ReturnType<typeof answers> }[] = [];
        for (const [picks, keepOld] of moves) {
          const chosen = [...new Set(picks.map((pick) => lists[pick % lists.length]))];
          for (const list of chosen) if (!slots.has(list)) slots.set(list, index.add(list.entries));
          const set = new ListSet(chosen, { index, slots: chosen.map((list) => slots.get(list)!) });
          expect(answers(set, asked)).toEqual(answers(new ListSet(chosen), asked));
          // An export still streaming keeps the set it read (keepOld); the others are gone.
          held = [...(keepOld ? held : []), { set, lists: chosen, answers: answers(set, asked) }];
          const read = new Set(held.flatMap((each) => each.lists));
          for (const [list, slot] of slots) {
            if (read.has(list)) continue;
            index.remove(slot);
            slots.delete(list);
          }
          for (const each of held) expect(answers(each.set, asked)).toEqual(each.answers);
        }
      }),
      { seed: 20261128, numRuns: 300 },
    );
  });

  it('a list names the entry it listed first among those holding a key, whatever other lists hold', () => {
    const make = (name: string, kind: ListKind, entries: string[]) => ({
      name,
      revision: name,
      action: 'annotate' as const,
      keyTypes: new Set(KIND_KEY_TYPES[kind]),
      entries: new CompiledEntries(kind, entries),
    });
    const set = new ListSet([
      make('wide', 'cidr', ['10.0.0.0/8', '10.1.0.0/16']),
      make('narrow', 'cidr', ['10.1.0.0/16', '10.0.0.0/8']),
      make('sub', 'substring', ['ample', 'a.ex', 'b.a']),
    ]);
    expect(set.warningsOf({ type: 'IPAddress', value: '10.1.2.3' }).map((warning) => warning.entry)).toEqual(['10.0.0.0/8', '10.1.0.0/16']);
    expect(set.warningsOf({ type: 'DomainName', value: 'b.a.example' })).toEqual([{ list: 'sub', entry: 'ample', action: 'annotate', match: 'substring' }]);
  });
});
