import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { inferObjectType, normalizeKey } from '../common/indicators/indicators.js';
import type { TlpRank } from '../common/markings/tlp.js';
import { SERVICE_IDENTITY, toIndicator, toSco } from '../stix/stix-projection.js';
import { indicatorArb } from './arbitraries.spec-helpers.js';
import { parseStixDocument, parseTaxiiEnvelope, stixItems, taxiiItem } from './stix.js';

describe('STIX documents', () => {
  it('never throws on any body or any objects', () => {
    fc.assert(fc.property(fc.string(), (text) => void parseStixDocument(text, 10)));
    fc.assert(fc.property(fc.array(fc.anything()), (objects) => expect(stixItems(objects)).toHaveLength(objects.length)));
    fc.assert(fc.property(fc.jsonValue(), (value) => void parseStixDocument(JSON.stringify(value), 10)));
  });

  it('maps what the projection serves back to the same object and marking, its observable carried', () => {
    const tlpArb = fc.integer({ min: 0, max: 4 }) as fc.Arbitrary<TlpRank>;
    fc.assert(
      fc.property(indicatorArb, fc.dictionary(fc.string(), fc.jsonValue()), fc.uuid({ version: 4 }), tlpArb, (key, context, uuid, tlp) => {
        const object = { type: inferObjectType([key]), keys: [normalizeKey(key)], context };
        const time = '2026-01-01T00:00:00.000Z';
        const indicator = toIndicator({ indicatorUuid: uuid, collection: 'c', object, firstAdded: time, modified: time, tlp, confidence: 50 });
        expect(stixItems([SERVICE_IDENTITY, indicator, toSco(object, tlp)])).toEqual([
          { kind: 'carried' },
          { kind: 'form', form: object, sco: false, tlp },
          { kind: 'carried' },
        ]);
      }),
    );
  });

  it('refuses the body as a whole by code, and objects it cannot store one by one', () => {
    expect(parseStixDocument('{', 10)).toEqual({ ok: false, failure: { code: 'NotJson', message: 'the body is not valid JSON' } });
    expect(parseStixDocument('{"objects": []}', 10)).toEqual({
      ok: false,
      failure: { code: 'NoItems', message: 'the body has no "objects"', member: 'objects' },
    });
    expect(parseStixDocument('{"objects": [1, 2]}', 1)).toMatchObject({ ok: false, failure: { code: 'TooManyItems' } });
    const lone = { type: 'domain-name', spec_version: '2.1', id: 'domain-name--6f1ab6a6-3b8a-5f2b-8d1c-0d0f3c1a2b3c', value: 'evil-example.com' };
    expect(
      stixItems([
        { type: 'relationship', id: 'relationship--44298a74-ba52-4f0c-87a3-1824e67d7fad' },
        {
          type: 'indicator',
          id: 'indicator--44298a74-ba52-4f0c-87a3-1824e67d7fad',
          pattern_type: 'stix',
          pattern: "[ipv4-addr:value = '198.51.100.7']",
          revoked: true,
        },
        lone,
      ]),
    ).toEqual([
      { kind: 'refused', reason: 'objects of type relationship are not stored (only indicators and file, domain-name, url, ipv4-addr, ipv6-addr)' },
      { kind: 'refused', reason: 'a revoked indicator is not stored' },
      { kind: 'form', form: { type: 'DomainName', keys: [{ type: 'DomainName', value: 'evil-example.com' }], context: {} }, sco: true },
    ]);
  });

  it('carries marking definitions (stored as nothing, refused as nothing); a form takes the marking of its object_marking_refs', () => {
    const amber = 'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421';
    const definition = { type: 'marking-definition', spec_version: '2.1', id: amber, name: 'TLP:AMBER', extensions: {} };
    const statement = { type: 'marking-definition', id: 'marking-definition--1d7a6c1f-0b1c-4a5e-9f3d-2b8e7c6a5d4f', definition_type: 'statement' };
    const indicator = {
      type: 'indicator',
      id: 'indicator--44298a74-ba52-4f0c-87a3-1824e67d7fad',
      pattern_type: 'stix',
      pattern: "[ipv4-addr:value = '198.51.100.7']",
      object_marking_refs: [amber, statement.id],
    };
    expect(stixItems([definition, statement, indicator])).toEqual([
      { kind: 'carried' },
      { kind: 'carried' },
      { kind: 'form', form: { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '198.51.100.7' }], context: {} }, sco: false, tlp: 2 },
    ]);
  });
});

describe('TAXII envelopes and the items a source takes from them', () => {
  const now = new Date('2026-06-01T00:00:00.000Z');

  it('never throws on any body or any object', () => {
    fc.assert(fc.property(fc.string(), (text) => void parseTaxiiEnvelope(text)));
    fc.assert(fc.property(fc.jsonValue(), (value) => void parseTaxiiEnvelope(JSON.stringify(value))));
    fc.assert(fc.property(fc.anything(), fc.dictionary(fc.string(), fc.jsonValue()), (object, context) => void taxiiItem(object, context, now)));
  });

  it('reads an envelope, an empty one too, and refuses JSON of another shape as NotTaxii', () => {
    expect(parseTaxiiEnvelope('{}')).toEqual({ ok: true, envelope: { objects: [], more: false } });
    expect(parseTaxiiEnvelope('{"more": true, "next": "n1", "objects": [{"type": "x"}], "x_vendor": 1}')).toEqual({
      ok: true,
      envelope: { objects: [{ type: 'x' }], more: true, next: 'n1' },
    });
    expect(parseTaxiiEnvelope('<html>')).toMatchObject({ ok: false, failure: { code: 'NotJson' } });
    for (const body of [
      '[]',
      '"objects"',
      '{"title": "Not Found", "http_status": "404"}',
      '{"objects": {}}',
      '{"objects": [1]}',
      '{"more": "yes"}',
      '{"more": true, "next": ""}',
    ]) {
      expect(parseTaxiiEnvelope(body)).toMatchObject({ ok: false, failure: { code: 'NotTaxii' } });
    }
  });

  it('an indicator is a form with its keys normalised under the source context; revoked or past valid_until it ends its keys; others are skipped', () => {
    const indicator = {
      type: 'indicator',
      id: 'indicator--44298a74-ba52-4f0c-87a3-1824e67d7fad',
      pattern_type: 'stix',
      pattern: "[domain-name:value = 'Evil-Example.COM']",
      name: 'n',
    };
    expect(taxiiItem(indicator, { feed: 'p', name: 'kept' }, now)).toEqual({
      kind: 'form',
      form: { type: 'DomainName', keys: [{ type: 'DomainName', value: 'evil-example.com' }], context: { feed: 'p', name: 'n' } },
    });
    const ended = { kind: 'withdrawn', keys: [{ type: 'DomainName', value: 'evil-example.com' }] };
    expect(taxiiItem({ ...indicator, revoked: true }, {}, now)).toEqual(ended);
    expect(taxiiItem({ ...indicator, valid_until: '2026-05-31T23:59:59.999999Z' }, {}, now)).toEqual(ended);
    expect(taxiiItem({ ...indicator, valid_until: '2026-06-02T00:00:00Z' }, {}, now)).toMatchObject({
      kind: 'form',
      form: { expiresAt: '2026-06-02T00:00:00Z' },
    });
    // Unreadable: refused, neither written nor ending its keys (revoked still ends them).
    expect(taxiiItem({ ...indicator, valid_until: 'next tuesday' }, {}, now)).toEqual({
      kind: 'refused',
      id: indicator.id,
      reason: 'valid_until is not a timestamp',
    });
    expect(taxiiItem({ ...indicator, revoked: true, valid_until: 'next tuesday' }, {}, now)).toEqual(ended);
    expect(taxiiItem({ ...indicator, pattern: "[process:name = 'x']" }, {}, now)).toMatchObject({ kind: 'refused', id: indicator.id });
    expect(taxiiItem({ ...indicator, pattern: "[process:name = 'x']", revoked: true }, {}, now)).toEqual({ kind: 'withdrawn', keys: [] });
    expect(taxiiItem({ type: 'domain-name', id: 'domain-name--6f1ab6a6-3b8a-5f2b-8d1c-0d0f3c1a2b3c', value: 'a.example' }, {}, now)).toEqual({
      kind: 'skipped',
    });
  });

  it("an indicator's form carries the marking of its object_marking_refs: TLP 1.0 and 2.0, the most restrictive of several, others ignored", () => {
    const indicator = {
      type: 'indicator',
      id: 'indicator--44298a74-ba52-4f0c-87a3-1824e67d7fad',
      pattern_type: 'stix',
      pattern: "[ipv4-addr:value = '192.0.2.1']",
    };
    const markingOf = (refs: unknown) => {
      const item = taxiiItem({ ...indicator, object_marking_refs: refs }, {}, now);
      return item.kind === 'form' ? (item.tlp ?? 'none') : item.kind;
    };
    const other = 'marking-definition--1d7a6c1f-0b1c-4a5e-9f3d-2b8e7c6a5d4f';
    expect(markingOf(['marking-definition--f88d31f6-486f-44da-b317-01333bde0b82'])).toBe(2); // TLP 1.0 AMBER
    expect(markingOf(['marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003'])).toBe(3); // TLP 2.0 AMBER+STRICT
    expect(markingOf(['marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb', 'marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed', other])).toBe(4);
    expect(markingOf([other])).toBe('none');
    expect(markingOf(undefined)).toBe('none');
  });
});
