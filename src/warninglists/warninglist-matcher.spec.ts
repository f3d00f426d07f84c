import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { CompiledEntries, EntryError, normalizeEntry } from './warninglist-matcher.js';

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
          expect(table.match({ type: 'IPAddress', value: address })?.match === 'contained').toBe(held);
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
        expect(table.match({ type: 'IPNetwork', value: key })?.match).toBe(inside ? 'contained' : holds ? 'overlap' : undefined);
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
    for (const [kind, entry] of [['cidr', 'example.com'], ['cidr', '10.0.0.0/33'], ['hostname', 'a b'], ['values', ''], ['values', 7]] as const) {
      expect(() => normalizeEntry(kind, entry)).toThrow(EntryError);
    }
  });
});
