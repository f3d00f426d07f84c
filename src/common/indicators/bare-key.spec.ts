import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { bareKey, refangValue } from './bare-key.js';

/** The fast paths of bare values (text already plain, a stored IPv4 address) against the full path. */
describe('bareKey', () => {
  it('refangs as the full path does', () => {
    // Pieces of every rule and what is near them; a leading space always takes the full path (it trims first).
    const piece = fc.oneof(
      fc.constantFrom(
        'hxxp',
        'HXXPS',
        'hxxp',
        '[.]',
        '(.)',
        '{.}',
        '[dot]',
        '(DOT)',
        '[:]',
        '[://]',
        '[at]',
        '(at)',
        '[@]',
        '[',
        '(',
        '{',
        ' ',
        '\t',
        '\n',
        '\u00a0',
        '\ufeff',
      ),
      fc.stringMatching(/^[a-z0-9.:/-]{0,5}$/),
    );
    const text = fc.array(piece, { maxLength: 6 }).map((pieces) => pieces.join(''));
    fc.assert(
      fc.property(text, (value) => {
        expect(refangValue(value)).toBe(refangValue(` ${value}`));
      }),
      { numRuns: 20000 },
    );
  });

  it('types a dotted quad as an address exactly when ipaddr takes it as one', () => {
    const octet = fc.oneof(fc.nat({ max: 300 }).map(String), fc.constantFrom('00', '01', '010', '256', '', 'a', '0x1', ' 1'));
    const quad = fc.array(octet, { minLength: 3, maxLength: 5 }).map((octets) => octets.join('.'));
    fc.assert(
      fc.property(quad, (value) => {
        const address = ipaddr.isValid(value.trim()) && ipaddr.IPv4.isValidFourPartDecimal(value.trim());
        expect(bareKey(value)).toEqual({ type: address ? 'IPAddress' : 'DomainName', value: value.trim() });
      }),
      { numRuns: 20000 },
    );
  });
});
