import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Tlp } from '../../src/common/markings/tlp.js';
import { expectTaxiiError } from '../support/clients/taxii.js';
import { readerUpTo } from '../support/markings.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, ROOT, taxiiClient } from './taxii-support.js';

type Stix = { type: string; id: string; pattern?: string; value?: string; modified?: string; object_marking_refs?: string[] };
interface Envelope {
  more: boolean;
  next?: string;
  objects?: Stix[];
}

/** The TLP 2.0 marking definitions (STIX 2.1 common objects), written out here. */
const LEVEL_OF_MARKING: Record<string, string> = {
  'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487': 'TLP:CLEAR',
  'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb': 'TLP:GREEN',
  'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421': 'TLP:AMBER',
  'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003': 'TLP:AMBER+STRICT',
  'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1': 'TLP:RED',
};

/** An object served, as `<type> <value> <level>`. */
function shown(object: Stix): string {
  const value = object.type === 'indicator' ? object.pattern!.match(/'([^']+)'/)![1] : object.value;
  const refs = object.object_marking_refs;
  return `${object.type} ${value} ${refs?.length === 1 ? LEVEL_OF_MARKING[refs[0]] : String(refs)}`;
}

/**
 * TAXII reads honour and show markings (extensions §19): no version marked above the walk's ceiling (the key's
 * `maxTLP`, narrowed by `maxTLP=`, carried by `next`) is served or counted, an object marked above it is
 * not there by its id, and every indicator and observable carries its TLP 2.0 marking definition.
 */
describe('TAXII and markings', () => {
  let t: TestApp;
  let id: string;
  let admin: ReturnType<typeof taxiiClient>;
  let green: ReturnType<typeof taxiiClient>;
  const indicatorOf = new Map<string, string>();

  /** A native write marked `tlp` (the latest write's marking is the object's: a later one may lower it). */
  const add = (value: string, tlp: Tlp, context: Record<string, unknown> = {}) =>
    t
      .http()
      .post(`/intel/collections/tlp-feed/objects?tlp=${encodeURIComponent(tlp)}`)
      .set('X-Api-Key', t.adminKey)
      .send({
        type: value.startsWith('10.') ? 'IPAddress' : 'DomainName',
        keys: [{ type: value.startsWith('10.') ? 'IPAddress' : 'DomainName', value }],
        context,
      })
      .expect(204);
  const objects = (client: ReturnType<typeof taxiiClient>, query: string) => client.get(`${ROOT}/collections/${id}/objects/?${query}`);
  const bodyOf = (response: { body: unknown }) => response.body as Envelope;

  beforeAll(async () => {
    t = await createTestApp();
    admin = taxiiClient(t, t.adminKey);
    id = await createCollection(t, 'tlp-feed');
    const levels: [string, Tlp][] = [
      ['clear.example', 'TLP:CLEAR'],
      ['green.example', 'TLP:GREEN'],
      ['amber.example', 'TLP:AMBER'],
      ['red.example', 'TLP:RED'],
      ['10.0.0.3', 'TLP:AMBER'],
      ['10.0.0.4', 'TLP:CLEAR'],
    ];
    for (const [value, tlp] of levels) await add(value, tlp);
    // Lowered: AMBER at its first version, GREEN at its second. Raised: GREEN, then AMBER.
    for (const [value, first, now] of [
      ['lowered.example', 'TLP:AMBER', 'TLP:GREEN'],
      ['raised.example', 'TLP:GREEN', 'TLP:AMBER'],
    ] as [string, Tlp, Tlp][]) {
      await add(value, first, { v: 1 });
      await add(value, now, { v: 2 });
    }
    green = taxiiClient(t, await readerUpTo(t, 'TLP:GREEN', 'tlp-feed'));
    for (const object of bodyOf(await objects(admin, 'match[type]=indicator&limit=1000')).objects!) indicatorOf.set(shown(object).split(' ')[1], object.id);
  });
  afterAll(async () => {
    await t.close();
  });

  it('objects: a GREEN key gets the versions marked CLEAR or GREEN, each with its marking definition; counts leave out what it may not see', async () => {
    const all = await objects(green, 'match[version]=all&match[type]=indicator,domain-name');
    expect(all.status).toBe(200);
    expect(bodyOf(all).objects!.map(shown)).toEqual([
      'indicator clear.example TLP:CLEAR',
      'domain-name clear.example TLP:CLEAR',
      'indicator green.example TLP:GREEN',
      'domain-name green.example TLP:GREEN',
      // lowered.example's first version is AMBER: only its second is there.
      'indicator lowered.example TLP:GREEN',
      'domain-name lowered.example TLP:GREEN',
      // raised.example's first version was GREEN: served as it was; its second is AMBER.
      'indicator raised.example TLP:GREEN',
      'domain-name raised.example TLP:GREEN',
    ]);
    // Of the two listed addresses (10.x, on the built-in lists), the key sees the CLEAR one only.
    expect(all.headers['x-excluded-count']).toBe('1');
    expect((await objects(admin, 'match[version]=all')).headers['x-excluded-count']).toBe('2');

    // The last versions: raised.example's is AMBER, so the object is not there.
    const last = bodyOf(await objects(green, 'match[type]=indicator')).objects!.map(shown);
    expect(last).toEqual(['indicator clear.example TLP:CLEAR', 'indicator green.example TLP:GREEN', 'indicator lowered.example TLP:GREEN']);

    // An unrestricted key: every level, each with its own definition.
    expect(bodyOf(await objects(admin, 'match[type]=indicator')).objects!.map(shown)).toEqual([
      'indicator clear.example TLP:CLEAR',
      'indicator green.example TLP:GREEN',
      'indicator amber.example TLP:AMBER',
      'indicator red.example TLP:RED',
      'indicator lowered.example TLP:GREEN',
      'indicator raised.example TLP:AMBER',
    ]);
    // The constant objects carry none.
    for (const constant of bodyOf(await objects(green, 'match[type]=identity,extension-definition')).objects!) {
      expect(constant).not.toHaveProperty('object_marking_refs');
    }
  });

  it('manifest: the same objects as the objects route, for the key', async () => {
    const manifest = (await green.get(`${ROOT}/collections/${id}/manifest/?match[version]=all&limit=1000`)).body as {
      objects: { id: string; version: string }[];
    };
    const served = bodyOf(await objects(green, 'match[version]=all&limit=1000')).objects!;
    expect(manifest.objects.map((record) => record.id)).toEqual(served.map((object) => object.id));
    expect(manifest.objects.map((record) => record.id)).not.toContain(indicatorOf.get('amber.example'));
  });

  it('one object and its versions: marked above the ceiling (now) it is not there; versions above it are not listed', async () => {
    const object = (client: ReturnType<typeof taxiiClient>, value: string, query = '') =>
      client.get(`${ROOT}/collections/${id}/objects/${indicatorOf.get(value)}/?${query}`);
    const versions = (client: ReturnType<typeof taxiiClient>, value: string, query = '') =>
      client.get(`${ROOT}/collections/${id}/objects/${indicatorOf.get(value)}/versions/?${query}`);

    expectTaxiiError(await object(green, 'amber.example'), 'NotFound');
    expectTaxiiError(await versions(green, 'amber.example'), 'NotFound');
    expect((await object(admin, 'amber.example')).status).toBe(200);
    // Raised above the ceiling: none of its versions, not even the GREEN one, is there by its id.
    expectTaxiiError(await object(green, 'raised.example', 'match[version]=all'), 'NotFound');
    expectTaxiiError(await versions(green, 'raised.example'), 'NotFound');
    expect(bodyOf(await objects(green, `match[id]=${indicatorOf.get('raised.example')}&match[version]=all`)).objects).toBeUndefined();

    // Lowered within it: its versions marked within it only.
    const adminVersions = ((await versions(admin, 'lowered.example')).body as { versions: string[] }).versions;
    expect(adminVersions).toHaveLength(2);
    expect(((await versions(green, 'lowered.example')).body as { versions: string[] }).versions).toEqual([adminVersions[1]]);
    const lowered = bodyOf(await object(green, 'lowered.example', 'match[version]=all')).objects!;
    expect(lowered.map((version) => [version.modified, shown(version)])).toEqual([[adminVersions[1], 'indicator lowered.example TLP:GREEN']]);
    expect(bodyOf(await object(green, 'green.example')).objects!.map(shown)).toEqual(['indicator green.example TLP:GREEN']);
  });

  it('maxTLP= narrows the ceiling of objects, manifest, one object and versions, never widens it', async () => {
    const narrowed = await objects(admin, 'match[version]=all&maxTLP=TLP:GREEN');
    const greens = await objects(green, 'match[version]=all');
    expect(narrowed.body).toEqual(greens.body);
    expect(narrowed.headers['x-excluded-count']).toBe(greens.headers['x-excluded-count']);
    expect((await objects(green, 'match[version]=all&maxTLP=tlp:red')).body).toEqual(greens.body);
    expect(bodyOf(await objects(admin, 'maxTLP=TLP:WHITE&match[type]=indicator')).objects!.map(shown)).toEqual(['indicator clear.example TLP:CLEAR']);

    const manifest = (query: string) => admin.get(`${ROOT}/collections/${id}/manifest/?${query}`);
    expect(((await manifest('maxTLP=TLP:CLEAR')).body as { objects: unknown[] }).objects).toHaveLength(2 + 2);
    const amber = indicatorOf.get('amber.example');
    expectTaxiiError(await admin.get(`${ROOT}/collections/${id}/objects/${amber}/?maxTLP=TLP:GREEN`), 'NotFound');
    expectTaxiiError(await admin.get(`${ROOT}/collections/${id}/objects/${amber}/versions/?maxTLP=TLP:GREEN`), 'NotFound');
    const lowered = indicatorOf.get('lowered.example');
    expect(((await admin.get(`${ROOT}/collections/${id}/objects/${lowered}/versions/?maxTLP=TLP:GREEN`)).body as { versions: string[] }).versions).toHaveLength(
      1,
    );
  });

  it('a maxTLP that names no TLP level is 400 InvalidData, as a TAXII error', async () => {
    const lowered = indicatorOf.get('lowered.example');
    for (const path of ['objects/', 'manifest/', `objects/${lowered}/`, `objects/${lowered}/versions/`]) {
      for (const maxTLP of ['TLP:PURPLE', 'GREEN', '']) expectTaxiiError(await admin.get(`${ROOT}/collections/${id}/${path}?maxTLP=${maxTLP}`), 'InvalidData');
    }
  });

  it('next carries the walk’s maxTLP: its pages are never wider, whatever a page request says', async () => {
    const whole = bodyOf(await objects(admin, 'match[version]=all&maxTLP=TLP:CLEAR&limit=1000')).objects!;
    const marked = whole.filter((object) => object.object_marking_refs !== undefined);
    expect(marked.map(shown)).toEqual(['indicator clear.example TLP:CLEAR', 'domain-name clear.example TLP:CLEAR']);
    const walked: Stix[] = [];
    let page = bodyOf(await objects(admin, 'match[version]=all&maxTLP=TLP:CLEAR&limit=1'));
    walked.push(...page.objects!);
    for (let turn = 0; page.more; turn++) {
      // Every other page asks for more than the walk began with: the walk's ceiling holds.
      page = bodyOf(await objects(admin, `next=${encodeURIComponent(page.next!)}${turn % 2 === 0 ? '&maxTLP=TLP:RED' : ''}`));
      walked.push(...(page.objects ?? []));
    }
    expect(walked).toEqual(whole);
  });
});
