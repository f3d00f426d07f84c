import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExpiryService } from '../../src/intel/expiry.service.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, ROOT, TAXII, taxiiClient } from './taxii-support.js';

/**
 * What the OASIS reference tools insist on, checked here from the specifications (STIX 2.1 §2–6 and the
 * validator's strict mode "SHOULD"s, TAXII 2.1 §1.6, §3–5 as taxii2-client reads them), against everything a
 * collection serves: each key type, updated, deleted and expired objects.
 */

type Stix = Record<string, unknown> & { id: string; type: string };

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const SDO_COMMON = [
  'type',
  'spec_version',
  'id',
  'created_by_ref',
  'created',
  'modified',
  'revoked',
  'labels',
  'confidence',
  'lang',
  'external_references',
  'object_marking_refs',
  'granular_markings',
  'extensions',
];
const SCO_COMMON = ['type', 'spec_version', 'id', 'object_marking_refs', 'granular_markings', 'defanged', 'extensions'];
/** The properties STIX 2.1 defines per type (anything else is a custom property: strict mode refuses it). */
const PROPERTIES: Record<string, string[]> = {
  indicator: [
    ...SDO_COMMON,
    'name',
    'description',
    'indicator_types',
    'pattern',
    'pattern_type',
    'pattern_version',
    'valid_from',
    'valid_until',
    'kill_chain_phases',
  ],
  identity: [...SDO_COMMON, 'name', 'description', 'roles', 'identity_class', 'sectors', 'contact_information'],
  'extension-definition': [...SDO_COMMON, 'name', 'description', 'schema', 'version', 'extension_types', 'extension_properties'],
  file: [
    ...SCO_COMMON,
    'hashes',
    'size',
    'name',
    'name_enc',
    'magic_number_hex',
    'mime_type',
    'ctime',
    'mtime',
    'atime',
    'parent_directory_ref',
    'contains_refs',
    'content_ref',
  ],
  'domain-name': [...SCO_COMMON, 'value', 'resolves_to_refs'],
  url: [...SCO_COMMON, 'value'],
  'ipv4-addr': [...SCO_COMMON, 'value', 'resolves_to_refs', 'belongs_to_refs'],
  'ipv6-addr': [...SCO_COMMON, 'value', 'resolves_to_refs', 'belongs_to_refs'],
};
const REQUIRED: Record<string, string[]> = {
  indicator: ['created', 'modified', 'pattern', 'pattern_type', 'valid_from', 'name', 'description'],
  identity: ['created', 'modified', 'name'],
  'extension-definition': ['created', 'modified', 'created_by_ref', 'name', 'schema', 'version', 'extension_types', 'description'],
};
const HASH_LENGTHS: Record<string, number> = { MD5: 32, 'SHA-1': 40, 'SHA-256': 64, 'SHA-512': 128 };
const INDICATOR_TYPES = ['anomalous-activity', 'anonymization', 'benign', 'compromised', 'malicious-activity', 'attribution', 'unknown'];
const IDENTITY_CLASSES = ['individual', 'group', 'system', 'organization', 'class', 'unspecified'];
/** The TLP 2.0 marking definitions OASIS predefines (STIX 2.1 common objects): known by id to consumers, never served. */
const TLP2_MARKINGS = [
  'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487',
  'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb',
  'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421',
  'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003',
  'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1',
];

function validTimestamp(value: unknown): boolean {
  const match = typeof value === 'string' ? TIMESTAMP.exec(value) : null;
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 61;
}

/** The strict-mode problems of one object, given everything the collection serves (for references). */
function problems(object: Stix, served: Map<string, Stix>): string[] {
  const found: string[] = [];
  const say = (message: string) => found.push(`${object.id}: ${message}`);
  if (!/^[a-z0-9][a-z0-9-]{1,248}[a-z0-9]$/.test(object.type)) say('bad type');
  const uuid = UUID.exec(object.id.slice(object.type.length + 2));
  if (!object.id.startsWith(`${object.type}--`) || !uuid) say('id is not <type>--<RFC 4122 UUID>');
  if (object.spec_version !== '2.1') say('spec_version is not 2.1');
  const allowed = PROPERTIES[object.type];
  if (!allowed) return [...found, `${object.id}: a type the service should not serve`];
  for (const name of Object.keys(object)) if (!allowed.includes(name)) say(`custom property ${name}`);
  // Observables (SCOs) are the types without `created`: their ids are UUIDv5, the others' UUIDv4.
  const sco = !allowed.includes('created');
  if (uuid && uuid[1] !== (sco ? '5' : '4')) say(`id is UUIDv${uuid[1]}, not v${sco ? 5 : 4}`);
  for (const name of REQUIRED[object.type] ?? []) if (object[name] === undefined) say(`missing ${name}`);
  for (const name of ['created', 'modified', 'valid_from', 'valid_until']) {
    if (object[name] !== undefined && !validTimestamp(object[name])) say(`${name} is not a STIX timestamp`);
  }
  if (!sco && Date.parse(object.modified as string) < Date.parse(object.created as string)) say('modified before created');
  if (object.created_by_ref !== undefined && served.get(object.created_by_ref as string)?.type !== 'identity') say('created_by_ref names no served identity');
  if (object.revoked !== undefined && typeof object.revoked !== 'boolean') say('revoked is not a boolean');
  // Indicators and observables carry exactly their marking's TLP 2.0 definition; the service's own objects none.
  const marked = object.type === 'indicator' || sco;
  const refs = object.object_marking_refs as unknown[] | undefined;
  if (marked && !(Array.isArray(refs) && refs.length === 1 && TLP2_MARKINGS.includes(refs[0] as string))) say('object_marking_refs is not one TLP 2.0 marking');
  if (!marked && refs !== undefined) say('object_marking_refs on an object of the service');
  for (const [id, extension] of Object.entries((object.extensions ?? {}) as Record<string, Record<string, unknown>>)) {
    if (!/^extension-definition--/.test(id) || served.get(id)?.type !== 'extension-definition') say(`extension ${id} is not a served extension definition`);
    if (!['property-extension', 'toplevel-property-extension', 'new-sdo', 'new-sco', 'new-sro'].includes(extension.extension_type as string))
      say('bad extension_type');
    if (Object.keys(extension).length < 2) say('empty extension');
  }
  if (object.type === 'indicator') {
    if (object.pattern_type !== 'stix' || typeof object.pattern !== 'string' || !/^\[.*\]$/.test(object.pattern)) say('not a STIX pattern');
    // Every indicator carries its confidence (extensions §18): an integer 0..100 (STIX 2.1 §3.2).
    if (!Number.isInteger(object.confidence) || (object.confidence as number) < 0 || (object.confidence as number) > 100) say('no confidence 0..100');
    if (object.valid_until !== undefined && Date.parse(object.valid_until as string) <= Date.parse(object.valid_from as string))
      say('valid_until not after valid_from');
    if (object.indicator_types !== undefined && !(object.indicator_types as string[]).every((type) => INDICATOR_TYPES.includes(type)))
      say('indicator_types outside the vocabulary');
  }
  if (object.type === 'identity' && object.identity_class !== undefined && !IDENTITY_CLASSES.includes(object.identity_class as string))
    say('identity_class outside the vocabulary');
  if (object.type === 'file') {
    for (const [name, value] of Object.entries(object.hashes as Record<string, string>)) {
      if (HASH_LENGTHS[name] === undefined || !new RegExp(`^[0-9a-f]{${HASH_LENGTHS[name]}}$`, 'i').test(value))
        say(`hash ${name} outside the vocabulary or of the wrong length`);
    }
  }
  return found;
}

describe('TAXII 2.1 and STIX 2.1 as the reference client and the strict validator check them', () => {
  let t: TestApp;
  let id: string;
  let client: ReturnType<typeof taxiiClient>;
  const add = (body: object) => t.http().post('/intel/collections/checked/objects').set('X-Api-Key', t.adminKey).send(body);

  beforeAll(async () => {
    t = await createTestApp();
    client = taxiiClient(t, t.adminKey);
    id = await createCollection(t, 'checked');
    const objects = [
      {
        type: 'File',
        keys: [
          { type: 'MD5Hash', value: 'a'.repeat(32) },
          { type: 'SHA1Hash', value: 'b'.repeat(40) },
          { type: 'SHA256Hash', value: 'c'.repeat(64) },
          { type: 'SHA512Hash', value: 'd'.repeat(128) },
        ],
        context: { indicator_types: ['malicious-activity'] },
      },
      { type: 'File', keys: [{ type: 'SHA1Hash', value: 'e'.repeat(40) }], context: { note: "it's \\ here" } },
      { type: 'DomainName', keys: [{ type: 'DomainName', value: 'bücher.example' }], context: {} },
      { type: 'URL', keys: [{ type: 'URL', value: "http://example.com/a'b?c=d" }], context: {} },
      { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '192.0.2.1' }], context: {} },
      { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '2001:db8::1' }], context: {} },
      { type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '198.51.100.0/24' }], context: {} },
      { type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '2001:db8:1::/48' }], context: {}, expiresAt: new Date(Date.now() + 1500).toISOString() },
    ];
    for (const object of objects) expect((await add(object)).status).toBe(204);
    expect((await add({ ...objects[2], context: { indicator_types: ['not-in-vocabulary'] } })).status).toBe(204);
    const removed = await t
      .http()
      .delete('/intel/collections/checked/objects')
      .query({ objectKeyType: 'IPAddress', objectKey: '192.0.2.1' })
      .set('X-Api-Key', t.adminKey);
    expect(removed.status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    await t.app.get(ExpiryService).expireDue();
  });
  afterAll(async () => {
    await t.close();
  });

  it('every object served passes the strict checks: ids, timestamps, required and custom properties, vocabularies, references', async () => {
    const response = await client.get(`${ROOT}/collections/${id}/objects/?match[version]=all`);
    const objects = (response.body as { objects: Stix[] }).objects;
    const served = new Map(objects.map((object) => [object.id, object]));
    expect(objects.flatMap((object) => problems(object, served))).toEqual([]);
    // Each key type, the revoked removal and the revoked expiry are among them.
    expect(new Set(objects.map((object) => object.type))).toEqual(
      new Set(['identity', 'extension-definition', 'indicator', 'file', 'domain-name', 'url', 'ipv4-addr', 'ipv6-addr']),
    );
    const revoked = objects.filter((object) => object.revoked === true);
    expect(revoked.map((object) => object.pattern)).toEqual(["[ipv4-addr:value = '192.0.2.1']", "[ipv6-addr:value ISSUBSET '2001:db8:1::/48']"]);
    expect(revoked[1].valid_until).toEqual(expect.any(String));
    expect(objects.find((object) => object.type === 'domain-name')!.value).toBe('xn--bcher-kva.example');
  });

  it('answers as taxii2-client expects: the media type, required fields, more/next, manifests, versions and status', async () => {
    const mediaType = (header: string | undefined) => {
      const [type, ...params] = (header ?? '').split(';').map((part) => part.trim());
      return { type, params: Object.fromEntries(params.map((param) => param.split('='))) };
    };
    const discovery = await client.get('/taxii2/');
    expect(mediaType(discovery.headers['content-type'])).toEqual({ type: 'application/taxii+json', params: { version: '2.1' } });
    expect(discovery.body).toMatchObject({ title: expect.any(String), api_roots: expect.any(Array) });
    const root = (await client.get((discovery.body as { api_roots: string[] }).api_roots[0])).body as Record<string, unknown>;
    expect(root).toMatchObject({ title: expect.any(String), versions: expect.arrayContaining([TAXII]), max_content_length: expect.any(Number) });
    const collection = (await client.get(`${ROOT}/collections/${id}/`)).body as Record<string, unknown>;
    expect(collection).toMatchObject({ id, title: expect.any(String), can_read: true, can_write: true, media_types: ['application/stix+json;version=2.1'] });

    const manifest = await client.get(`${ROOT}/collections/${id}/manifest/?limit=3`);
    const page = manifest.body as { more: boolean; next?: string; objects: Record<string, unknown>[] };
    expect(page.more).toBe(true);
    expect(page.next).toEqual(expect.any(String));
    for (const record of page.objects) {
      expect(Object.keys(record).sort()).toEqual(['date_added', 'id', 'media_type', 'version']);
      expect(validTimestamp(record.date_added) && validTimestamp(record.version)).toBe(true);
    }
    expect(manifest.headers['x-taxii-date-added-first']).toBe(page.objects[0].date_added);
    expect(manifest.headers['x-taxii-date-added-last']).toBe(page.objects[2].date_added);

    const indicator = ((await client.get(`${ROOT}/collections/${id}/objects/?match[type]=indicator&limit=1`)).body as { objects: Stix[] }).objects[0];
    const versions = (await client.get(`${ROOT}/collections/${id}/objects/${indicator.id}/versions/`)).body as { more: boolean; versions: string[] };
    expect(versions.more).toBe(false);
    expect(versions.versions.every(validTimestamp)).toBe(true);

    const status = (
      await client.post(`${ROOT}/collections/${id}/objects/`, {
        objects: [indicator, { type: 'malware', id: 'malware--0b1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d' }],
      })
    ).body as Record<string, number | string>;
    expect(UUID.test(status.id as string)).toBe(true);
    expect(status.status).toBe('complete');
    expect((status.success_count as number) + (status.failure_count as number) + (status.pending_count as number)).toBe(status.total_count);
    expect(validTimestamp(status.request_timestamp)).toBe(true);
  });
});
