import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { TLP_LEVELS, type TlpRank } from '../common/markings/tlp.js';
import { CONTEXT_EXTENSION_ID, SERVICE_IDENTITY_ID } from './stix-ids.js';
import { CONTEXT_EXTENSION_DEFINITION, fromStix, SERVICE_IDENTITY, toIndicator, toSco, type ObjectVersion } from './stix-projection.js';

/**
 * UUIDv5 computed here by hand (RFC 9562 §5.5: SHA-1 of namespace bytes + name, version and variant bits
 * set), over canonical JSON written out by hand: independent of the module and of the `uuid` package.
 */
function uuidV5(name: string): string {
  const namespace = Buffer.from('00abedb4aa42466c9c01fed23315a9b7', 'hex');
  const hash = createHash('sha1')
    .update(Buffer.concat([namespace, Buffer.from(name, 'utf8')]))
    .digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const MD5 = '44d88612fea8a8f36de82e1278abb02f';
const SHA1 = '3395856ce81f2b7382dee72602f798b642f14140';
const SHA256 = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';
const SHA512 = 'cc805d5fab1fd71a4ab352a9c533e65fb2d5b885518f4e565e68847223b8e6b85cb48f3afad842726d99239c9e36505c64b0dc9a061d9e507d833277ada336ab';

const version = (object: ObjectVersion['object'], extra: Partial<ObjectVersion> = {}): ObjectVersion => ({
  indicatorUuid: '8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f',
  collection: 'feeds',
  object,
  firstAdded: '2026-11-25T10:00:00.123456Z',
  modified: '2026-11-25T10:00:01.000001Z',
  tlp: 0,
  confidence: 75,
  ...extra,
});

/** The TLP 2.0 marking definitions (STIX 2.1 common objects), written out here rather than read from the module. */
const CLEAR_MARKING = 'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487';

describe('SCO ids (UUIDv5 over the canonical JSON of the id-contributing properties)', () => {
  it('domain-name, url, ipv4-addr, ipv6-addr: the value', () => {
    expect(toSco({ type: 'DomainName', keys: [{ type: 'DomainName', value: 'example.com' }] }, 0)).toEqual({
      type: 'domain-name',
      spec_version: '2.1',
      id: `domain-name--${uuidV5('{"value":"example.com"}')}`,
      value: 'example.com',
      object_marking_refs: [CLEAR_MARKING],
    });
    const url = 'http://example.com/a\'b\\c?q="x"';
    expect(toSco({ type: 'URL', keys: [{ type: 'URL', value: url }] }, 0).id).toBe(`url--${uuidV5('{"value":"http://example.com/a\'b\\\\c?q=\\"x\\""}')}`);
    expect(toSco({ type: 'IPAddress', keys: [{ type: 'IPAddress', value: '198.51.100.7' }] }, 0)).toMatchObject({
      type: 'ipv4-addr',
      id: `ipv4-addr--${uuidV5('{"value":"198.51.100.7"}')}`,
    });
    expect(toSco({ type: 'IPAddress', keys: [{ type: 'IPAddress', value: '2001:db8::1' }] }, 0)).toMatchObject({
      type: 'ipv6-addr',
      id: `ipv6-addr--${uuidV5('{"value":"2001:db8::1"}')}`,
    });
    expect(toSco({ type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '10.0.0.0/8' }] }, 0)).toMatchObject({
      type: 'ipv4-addr',
      id: `ipv4-addr--${uuidV5('{"value":"10.0.0.0/8"}')}`,
      value: '10.0.0.0/8',
    });
    expect(toSco({ type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '2001:db8::/32' }] }, 0).type).toBe('ipv6-addr');
  });

  it('file: every hash served, one contributing to the id, chosen MD5, SHA-1, SHA-256, SHA-512', () => {
    const all = toSco(
      {
        type: 'File',
        keys: [
          { type: 'MD5Hash', value: MD5 },
          { type: 'SHA1Hash', value: SHA1 },
          { type: 'SHA256Hash', value: SHA256 },
          { type: 'SHA512Hash', value: SHA512 },
        ],
      },
      0,
    );
    expect(all).toEqual({
      type: 'file',
      spec_version: '2.1',
      id: `file--${uuidV5(`{"hashes":{"MD5":"${MD5}"}}`)}`,
      hashes: { MD5, 'SHA-1': SHA1, 'SHA-256': SHA256, 'SHA-512': SHA512 },
      object_marking_refs: [CLEAR_MARKING],
    });
    const withoutMd5 = [
      { type: 'SHA1Hash' as const, value: SHA1 },
      { type: 'SHA256Hash' as const, value: SHA256 },
    ];
    expect(toSco({ type: 'File', keys: withoutMd5 }, 0).id).toBe(`file--${uuidV5(`{"hashes":{"SHA-1":"${SHA1}"}}`)}`);
    expect(
      toSco(
        {
          type: 'File',
          keys: [
            { type: 'SHA256Hash', value: SHA256 },
            { type: 'SHA512Hash', value: SHA512 },
          ],
        },
        0,
      ).id,
    ).toBe(`file--${uuidV5(`{"hashes":{"SHA-256":"${SHA256}"}}`)}`);
    expect(toSco({ type: 'File', keys: [{ type: 'SHA512Hash', value: SHA512 }] }, 0).id).toBe(`file--${uuidV5(`{"hashes":{"SHA-512":"${SHA512}"}}`)}`);
  });
});

describe('indicators', () => {
  it('a file: every hash ORed in one observation, context in the property extension, versions by modified', () => {
    const indicator = toIndicator(
      version({
        type: 'File',
        keys: [
          { type: 'MD5Hash', value: MD5 },
          { type: 'SHA256Hash', value: SHA256 },
        ],
        context: { severity: 3, indicator_types: ['malicious-activity'] },
        expiresAt: '2030-01-01T00:00:00.000Z',
      }),
    );
    expect(indicator).toEqual({
      type: 'indicator',
      spec_version: '2.1',
      id: 'indicator--8e2e2d2b-17d4-4cbf-938f-98ee46b3cd3f',
      created_by_ref: SERVICE_IDENTITY_ID,
      created: '2026-11-25T10:00:00.123456Z',
      modified: '2026-11-25T10:00:01.000001Z',
      name: `File ${MD5}`,
      description: `File of the collection "feeds": ${MD5}, ${SHA256}.`,
      indicator_types: ['malicious-activity'],
      pattern: `[file:hashes.MD5 = '${MD5}' OR file:hashes.'SHA-256' = '${SHA256}']`,
      pattern_type: 'stix',
      pattern_version: '2.1',
      valid_from: '2026-11-25T10:00:00.123456Z',
      confidence: 75,
      valid_until: '2030-01-01T00:00:00.000Z',
      object_marking_refs: [CLEAR_MARKING],
      extensions: {
        [CONTEXT_EXTENSION_ID]: { extension_type: 'property-extension', context: { severity: 3, indicator_types: ['malicious-activity'] } },
      },
    });
  });

  it('each key type as its comparison; networks by ISSUBSET', () => {
    const pattern = (type: ObjectVersion['object']['type'], keyType: ObjectVersion['object']['keys'][0]['type'], value: string) =>
      toIndicator(version({ type, keys: [{ type: keyType, value }], context: {} })).pattern;
    expect(pattern('DomainName', 'DomainName', 'example.com')).toBe("[domain-name:value = 'example.com']");
    expect(pattern('URL', 'URL', 'http://example.com/')).toBe("[url:value = 'http://example.com/']");
    expect(pattern('IPAddress', 'IPAddress', '198.51.100.7')).toBe("[ipv4-addr:value = '198.51.100.7']");
    expect(pattern('IPAddress', 'IPAddress', '2001:db8::1')).toBe("[ipv6-addr:value = '2001:db8::1']");
    expect(pattern('IPNetwork', 'IPNetwork', '10.0.0.0/8')).toBe("[ipv4-addr:value ISSUBSET '10.0.0.0/8']");
    expect(pattern('IPNetwork', 'IPNetwork', '2001:db8::/32')).toBe("[ipv6-addr:value ISSUBSET '2001:db8::/32']");
    expect(pattern('File', 'SHA1Hash', SHA1)).toBe(`[file:hashes.'SHA-1' = '${SHA1}']`);
    expect(pattern('File', 'SHA512Hash', SHA512)).toBe(`[file:hashes.'SHA-512' = '${SHA512}']`);
  });

  it("escapes ' and \\ in values", () => {
    const indicator = toIndicator(version({ type: 'URL', keys: [{ type: 'URL', value: "http://example.com/it's\\x" }], context: {} }));
    expect(indicator.pattern).toBe("[url:value = 'http://example.com/it\\'s\\\\x']");
  });

  it('a removal is the last version, revoked; an expiry keeps valid_until at the expiry; indicator_types only when valid', () => {
    const deleted = toIndicator(version({ type: 'DomainName', keys: [{ type: 'DomainName', value: 'example.com' }], context: {} }, { removal: 'Deleted' }));
    expect(deleted.revoked).toBe(true);
    expect(deleted).not.toHaveProperty('valid_until');
    const expired = toIndicator(
      version(
        {
          type: 'DomainName',
          keys: [{ type: 'DomainName', value: 'example.com' }],
          context: { indicator_types: ['evil'] },
          expiresAt: '2026-11-25T11:00:00.000Z',
        },
        { removal: 'Expired' },
      ),
    );
    expect(expired).toMatchObject({ revoked: true, valid_until: '2026-11-25T11:00:00.000Z' });
    expect(expired).not.toHaveProperty('indicator_types');
    const live = toIndicator(version({ type: 'DomainName', keys: [{ type: 'DomainName', value: 'example.com' }], context: {} }));
    expect(live).not.toHaveProperty('revoked');
  });

  it("indicator and observable refer to the TLP 2.0 marking definition of the version's marking; the constant objects to none", () => {
    const ids = [
      CLEAR_MARKING,
      'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb',
      'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421',
      'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003',
      'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1',
    ];
    const object = { type: 'DomainName' as const, keys: [{ type: 'DomainName' as const, value: 'example.com' }], context: {} };
    TLP_LEVELS.forEach((_, rank) => {
      const tlp = rank as TlpRank;
      expect(toIndicator(version(object, { tlp })).object_marking_refs).toEqual([ids[rank]]);
      expect(toIndicator(version(object, { tlp, removal: 'Deleted' })).object_marking_refs).toEqual([ids[rank]]);
      expect(toSco(object, tlp).object_marking_refs).toEqual([ids[rank]]);
    });
    expect(SERVICE_IDENTITY).not.toHaveProperty('object_marking_refs');
    expect(CONTEXT_EXTENSION_DEFINITION).not.toHaveProperty('object_marking_refs');
  });

  it('the extension definition and the identity it names', () => {
    expect(CONTEXT_EXTENSION_DEFINITION).toMatchObject({
      type: 'extension-definition',
      id: CONTEXT_EXTENSION_ID,
      created_by_ref: SERVICE_IDENTITY.id,
      extension_types: ['property-extension'],
    });
    for (const id of [CONTEXT_EXTENSION_ID, SERVICE_IDENTITY_ID]) expect(id.split('--')[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab]/);
  });
});

describe('fromStix (writes)', () => {
  it('confidence is the version’s; valid_until is the earlier of the expiry and a view’s bound', () => {
    const object = { type: 'DomainName' as const, keys: [{ type: 'DomainName' as const, value: 'a.example' }], context: {} };
    expect(toIndicator(version(object, { confidence: 0 }))).toMatchObject({ confidence: 0 });
    expect(toIndicator(version(object, { validUntil: '2026-12-01T00:00:00.000Z' }))).toMatchObject({ valid_until: '2026-12-01T00:00:00.000Z' });
    const expiring = { ...object, expiresAt: '2026-11-30T00:00:00.000Z' };
    expect(toIndicator(version(expiring, { validUntil: '2026-12-01T00:00:00.000Z' })).valid_until).toBe('2026-11-30T00:00:00.000Z');
    expect(toIndicator(version(expiring, { validUntil: '2026-11-29T00:00:00.000Z' })).valid_until).toBe('2026-11-29T00:00:00.000Z');
  });

  it('reads back what it serves: keys, the context from the extension, valid_until as the expiry', () => {
    const object = {
      type: 'File' as const,
      keys: [
        { type: 'MD5Hash' as const, value: MD5 },
        { type: 'SHA256Hash' as const, value: SHA256 },
      ],
      context: { a: [1, { b: "it's" }] },
      expiresAt: '2030-01-01T00:00:00.000Z',
    };
    expect(fromStix(toIndicator(version(object)))).toEqual({ kind: 'object', form: object, sco: false });
    expect(fromStix(toSco(object, 0))).toEqual({ kind: 'object', form: { type: 'File', keys: object.keys, context: {} }, sco: true });
    const network = { type: 'IPNetwork' as const, keys: [{ type: 'IPNetwork' as const, value: '10.0.0.0/8' }], context: {} };
    expect(fromStix(toIndicator(version(network)))).toEqual({ kind: 'object', form: network, sco: false });
    expect(fromStix(toSco(network, 0))).toEqual({ kind: 'object', form: network, sco: true });
  });

  it('a foreign indicator: its name, description, labels… become the context', () => {
    const imported = fromStix({
      type: 'indicator',
      id: 'indicator--1b6a9b4c-5d7e-4e0e-9a43-0f2d6a3b8c11',
      name: 'bad',
      labels: ['x'],
      created: '2026-01-01T00:00:00Z',
      pattern: "[domain-name:value = 'Example.COM' AND domain-name:value = 'example.com']",
      pattern_type: 'stix',
    });
    expect(imported).toEqual({
      kind: 'object',
      form: {
        type: 'DomainName',
        keys: [
          { type: 'DomainName', value: 'Example.COM' },
          { type: 'DomainName', value: 'example.com' },
        ],
        context: { name: 'bad', labels: ['x'] },
      },
      sco: false,
    });
  });

  it('refuses what it cannot store, with a reason', () => {
    const reason = (object: unknown) => {
      const result = fromStix(object);
      return result.kind === 'refused' ? result.reason : 'accepted';
    };
    const indicator = (pattern: string, extra: Record<string, unknown> = {}) => ({
      type: 'indicator',
      id: 'indicator--1b6a9b4c-5d7e-4e0e-9a43-0f2d6a3b8c11',
      pattern,
      pattern_type: 'stix',
      ...extra,
    });
    expect(reason({ type: 'relationship', id: 'relationship--1b6a9b4c-5d7e-4e0e-9a43-0f2d6a3b8c11' })).toMatch(/relationship are not stored/);
    expect(reason({ type: 'report', id: 'report--1b6a9b4c-5d7e-4e0e-9a43-0f2d6a3b8c11' })).toMatch(/report are not stored/);
    expect(reason({ id: 'indicator--x' })).toMatch(/type and an id/);
    expect(reason({ type: 'indicator', id: 'url--1' })).toMatch(/does not name/);
    expect(reason(indicator("[domain-name:value = 'a.com']", { pattern_type: 'sigma' }))).toMatch(/sigma is not supported/);
    expect(reason(indicator("[domain-name:value = 'a.com'] AND [url:value = 'http://a.com/']"))).toMatch(/one observation/);
    expect(reason(indicator("[domain-name:value = 'a.com'] WITHIN 5 SECONDS"))).toMatch(/qualifiers \(WITHIN\)/);
    expect(reason(indicator("[domain-name:value != 'a.com']"))).toMatch(/operator != is not supported/);
    expect(reason(indicator("[domain-name:value LIKE 'a%']"))).toMatch(/operator LIKE is not supported/);
    expect(reason(indicator("[domain-name:value = 'a.com' OR url:value = 'http://a.com/']"))).toMatch(/keys must be hash keys of one file/);
    expect(reason(indicator("[file:name = 'a.exe']"))).toMatch(/file:name = is not supported/);
    expect(reason(indicator("[file:hashes.SSDEEP = 'x']"))).toMatch(/hash SSDEEP is not supported/);
    expect(reason(indicator("[domain-name:value = 'a.com'"))).toMatch(/not closed/);
    expect(reason(indicator("[domain-name:value = 'a.com]"))).toMatch(/string literal is not closed/);
    expect(reason(indicator("[domain-name:value = 'a\\x']"))).toMatch(/escape/);
    expect(reason(indicator("[domain-name:value = 'a.com']", { revoked: true }))).toMatch(/revoked/);
    expect(reason({ type: 'file', id: 'file--1', hashes: { SSDEEP: 'x' } })).toMatch(/MD5, SHA-1/);
  });
});
