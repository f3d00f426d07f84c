import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { normalizeKey } from '../common/indicators/indicators.js';
import { parseMispEvent, parseMispManifest } from './misp.js';

const sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const attribute = (type: string, value: string, extra: Record<string, unknown> = {}) => ({
  uuid: `uuid-${type}`,
  type,
  category: 'Network activity',
  value,
  to_ids: true,
  ...extra,
});

/** A CIRCL-style feed event: attributes of several types, one not for detection, one deleted, an object. */
const event = {
  Event: {
    uuid: '5f1e7a3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c',
    info: 'Emotet epoch 5 distribution',
    timestamp: '1767225600',
    Attribute: [
      attribute('ip-dst', '198.51.100.7', { comment: 'C2' }),
      attribute('ip-src', '203.0.113.0/24'),
      attribute('domain', 'Evil-Example.COM'),
      attribute('url', 'http://evil-example.com/gate.php'),
      attribute('md5', 'D41D8CD98F00B204E9800998ECF8427E'),
      attribute('filename|sha256', `invoice.exe|${sha256}`),
      attribute('domain|ip', 'c2.evil-example.com|192.0.2.10'),
      attribute('ip-dst|port', '192.0.2.20|8080'),
      attribute('hostname', 'www.google.com', { to_ids: false }),
      attribute('ip-dst', '192.0.2.99', { deleted: true }),
      attribute('email-src', 'phish@evil-example.com'),
      attribute('sha1', 'not-a-hash'),
    ],
    Object: [
      { name: 'file', Attribute: [attribute('sha1', 'da39a3ee5e6b4b0d3255bfef95601890afd80709', { category: 'Payload delivery' })] },
      { name: 'domain-ip', deleted: true, Attribute: [attribute('domain', 'old.evil-example.com')] },
    ],
  },
};

describe('MISP feeds', () => {
  it('maps an event: attribute types to object forms, composites by part, deleted ones withdrawn, to_ids=false ignored', () => {
    const parsed = parseMispEvent(JSON.stringify(event), { context: { feed: 'circl' } });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const { forms, withdrawn, rejected, ignored, uuid, timestamp } = parsed.event;
    expect({ uuid, timestamp }).toEqual({ uuid: event.Event.uuid, timestamp: '1767225600' });
    expect(forms.map(({ form }) => `${form.type} ${form.keys[0].type} ${form.keys[0].value}`)).toEqual([
      'IPAddress IPAddress 198.51.100.7',
      'IPNetwork IPNetwork 203.0.113.0/24',
      'DomainName DomainName evil-example.com',
      'URL URL http://evil-example.com/gate.php',
      'File MD5Hash d41d8cd98f00b204e9800998ecf8427e',
      `File SHA256Hash ${sha256}`,
      'DomainName DomainName c2.evil-example.com',
      'IPAddress IPAddress 192.0.2.10',
      'IPAddress IPAddress 192.0.2.20',
      'File SHA1Hash da39a3ee5e6b4b0d3255bfef95601890afd80709',
    ]);
    expect(forms.every(({ form }) => form.context.feed === 'circl')).toBe(true);
    expect(forms[0].attribute).toEqual({ type: 'ip-dst', uuid: 'uuid-ip-dst', category: 'Network activity', comment: 'C2' });
    // www.google.com is to_ids=false: context, not for detection, so not an object (the default toIdsOnly).
    expect(withdrawn).toEqual([
      { type: 'IPAddress', value: '192.0.2.99' },
      { type: 'DomainName', value: 'old.evil-example.com' },
    ]);
    expect(rejected).toEqual([{ index: 11, value: 'not-a-hash', reason: 'invalid SHA1Hash key "not-a-hash": expected 40 hexadecimal digits' }]);
    expect(ignored).toBe(2);
    const all = parseMispEvent(JSON.stringify(event), { toIdsOnly: false });
    expect(all.ok && all.event.forms.map(({ form }) => form.keys[0].value)).toContain('www.google.com');
  });

  it("marks each form with the most restrictive of its event's and its attribute's tlp: tags (none: no marking)", () => {
    const tagged = (tags: string[]) => tags.map((name) => ({ name }));
    const marked = parseMispEvent(
      JSON.stringify({
        Event: {
          uuid: 'e',
          Tag: tagged(['tlp:green', 'osint:source-type="blog-post"']),
          Attribute: [
            attribute('ip-dst', '192.0.2.1'),
            attribute('ip-dst', '192.0.2.2', { Tag: tagged(['TLP:AMBER']) }),
            attribute('ip-dst', '192.0.2.3', { Tag: tagged(['tlp:white']) }),
          ],
          Object: [{ name: 'file', Attribute: [attribute('sha1', 'da39a3ee5e6b4b0d3255bfef95601890afd80709', { Tag: tagged(['tlp:red', 'tlp:clear']) })] }],
        },
      }),
    );
    expect(marked.ok && marked.event.forms.map(({ form, tlp }) => [form.keys[0].value, tlp])).toEqual([
      ['192.0.2.1', 1],
      ['192.0.2.2', 2],
      ['192.0.2.3', 1],
      ['da39a3ee5e6b4b0d3255bfef95601890afd80709', 4],
    ]);
    const plain = parseMispEvent(JSON.stringify({ Event: { Attribute: [attribute('ip-dst', '192.0.2.1', { Tag: tagged(['type:OSINT']) })] } }));
    expect(plain.ok && plain.event.forms[0].tlp).toBeUndefined();
  });

  it('withdraws every key of a deleted event', () => {
    const deleted = parseMispEvent(JSON.stringify({ Event: { ...event.Event, deleted: true } }));
    expect(deleted.ok && deleted.event.forms).toEqual([]);
    expect(deleted.ok && deleted.event.withdrawn).toHaveLength(13); // the ten forms, the to_ids=false one and the two deleted already
  });

  it('reads a manifest, and refuses what is not one', () => {
    expect(parseMispManifest(JSON.stringify({ a: { timestamp: '1767225600', info: 'x' }, b: { timestamp: 17 }, c: {} }))).toEqual({
      ok: true,
      events: [
        { uuid: 'a', timestamp: '1767225600', info: 'x' },
        { uuid: 'b', timestamp: '17' },
      ],
      rejected: [{ index: 2, value: 'c', reason: 'the manifest entry has no timestamp' }],
    });
    expect(parseMispManifest('[')).toMatchObject({ ok: false, failure: { code: 'NotJson' } });
    expect(parseMispEvent('{"event": {}}')).toMatchObject({ ok: false, failure: { code: 'NotAnEvent' } });
  });

  it('never throws, and gives only keys in their stored form', () => {
    const attributes = fc.array(
      fc.record(
        {
          type: fc.constantFrom('ip-dst', 'domain|ip', 'filename|md5', 'url', 'ip-src|port', 'text'),
          value: fc.string(),
          to_ids: fc.anything(),
          deleted: fc.anything(),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(fc.anything(), attributes, fc.anything(), (Event, Attribute, Object) => {
        for (const body of [JSON.stringify({ Event }) ?? '', JSON.stringify({ Event: { Attribute, Object } })]) {
          const parsed = parseMispEvent(body);
          if (parsed.ok) for (const { form } of parsed.event.forms) expect(normalizeKey(form.keys[0])).toEqual(form.keys[0]);
        }
        void parseMispManifest(JSON.stringify(Event) ?? '');
      }),
    );
    fc.assert(fc.property(fc.string(), (text) => void parseMispEvent(text)));
  });
});
