import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { normalizeKey } from '../common/indicators/indicators.js';
import { cut, indicatorArb } from './arbitraries.spec-helpers.js';

describe('format spec generators', () => {
  it('make keys the intel rules accept, and chunks that join to the text', () => {
    fc.assert(fc.property(indicatorArb, (key) => expect(normalizeKey(key).type).toBe(key.type)));
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.array(fc.nat()), fc.boolean(), (text, places, bytes) => {
        const chunks = cut(text, places, bytes);
        expect(bytes ? new TextDecoder().decode(Buffer.concat(chunks as Uint8Array[])) : chunks.join('')).toBe(text);
      }),
    );
  });
});
