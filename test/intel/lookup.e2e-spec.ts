import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, listedOf, md5, sha1 } from './objects.helpers.js';

const INTEL = 2;

describe('POST /intel/lookup', () => {
  let t: TestApp;
  let reader: string;
  let childrenReader: string;

  const lookup = (body: unknown, key: string) =>
    t
      .http()
      .post('/intel/lookup')
      .set('X-Api-Key', key)
      .send(body as object);
  const add = (c: string, body: object) => t.http().post(`/intel/collections/${c}/objects`).set('X-Api-Key', t.adminKey).send(body).expect(204);
  const fileA = {
    type: 'File',
    keys: [
      { type: 'MD5Hash', value: md5(1) },
      { type: 'SHA1Hash', value: sha1(1) },
    ],
    context: { in: 'a' },
  };
  const fileB = { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: { in: 'b' } };
  const secretDomain = { type: 'DomainName', keys: [{ type: 'DomainName', value: 'secret.example' }], context: { in: 'secret' } };
  const [viewA, viewB, secretView] = [fileA, fileB, secretDomain].map((form) => listedOf(form));

  beforeAll(async () => {
    t = await createTestApp();
    for (const name of ['lookup-a', 'lookup-b', 'lookup-secret']) await createCollection(t, name);
    await add('lookup-a', fileA);
    await add('lookup-b', fileB);
    await add('lookup-secret', secretDomain);
    await add('lookup-secret', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: { in: 'secret' } });
    const resources = (await t.http().get(`/auth/resources?parentID=${INTEL}`).set('X-Api-Key', t.adminKey)).body as { id: number; name: string }[];
    const id = (name: string) => resources.find((resource) => resource.name === name)!.id;
    // Read on a and b; Write (not Read) on the secret collection.
    reader = (
      await createKey(t, {
        permissions: [
          { resource: id('lookup-a'), actions: ['Read'] },
          { resource: id('lookup-b'), actions: ['Read'] },
          { resource: id('lookup-secret'), actions: ['Write'] },
        ],
      })
    ).key;
    childrenReader = (await createKey(t, { permissions: [{ resource: INTEL, actions: ['ReadChildren'] }] })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers one entry per key, in order, with the normalised key and every readable match by collection name', async () => {
    const response = await lookup(
      {
        keys: [
          { type: 'MD5Hash', value: md5(1).toUpperCase() },
          { type: 'DomainName', value: 'nowhere.example' },
          { type: 'SHA1Hash', value: sha1(1) },
          { type: 'MD5Hash', value: md5(1) },
        ],
      },
      reader,
    );
    expect(response.status).toBe(200);
    const inA = { collection: 'lookup-a', object: viewA, sightings: null };
    const inB = { collection: 'lookup-b', object: viewB, sightings: null };
    expect(response.body).toEqual([
      { key: { type: 'MD5Hash', value: md5(1) }, matches: [inA, inB], warnings: [] },
      { key: { type: 'DomainName', value: 'nowhere.example' }, matches: [], warnings: [] },
      { key: { type: 'SHA1Hash', value: sha1(1) }, matches: [inA], warnings: [] },
      { key: { type: 'MD5Hash', value: md5(1) }, matches: [inA, inB], warnings: [] },
    ]);
  });

  it('never searches a collection the caller cannot read, not even when it is named', async () => {
    const keys = [
      { type: 'DomainName', value: 'Secret.Example.' },
      { type: 'MD5Hash', value: md5(1) },
    ];
    const named = await lookup({ keys, collections: ['lookup-secret'] }, reader);
    expect(named.status).toBe(200);
    expect(named.body).toEqual([
      { key: { type: 'DomainName', value: 'secret.example' }, matches: [], warnings: [] },
      { key: { type: 'MD5Hash', value: md5(1) }, matches: [], warnings: [] },
    ]);
    const all = await lookup({ keys }, reader);
    expect(JSON.stringify(all.body)).not.toContain('lookup-secret');
    expect(all.body[1].matches.map((match: { collection: string }) => match.collection)).toEqual(['lookup-a', 'lookup-b']);

    // ReadChildren on intel reads every collection; `collections` narrows the search.
    const everything = await lookup({ keys }, childrenReader);
    expect(everything.body[0].matches).toEqual([{ collection: 'lookup-secret', object: secretView, sightings: null }]);
    expect(everything.body[1].matches.map((match: { collection: string }) => match.collection)).toEqual(['lookup-a', 'lookup-b', 'lookup-secret']);
    const narrowed = await lookup({ keys, collections: ['lookup-b', 'no-such-collection'] }, childrenReader);
    expect(narrowed.body[1].matches.map((match: { collection: string }) => match.collection)).toEqual(['lookup-b']);
  });

  it('reports a malformed key on its own entry and answers the others', async () => {
    const response = await lookup(
      {
        keys: [
          { type: 'MD5Hash', value: 'not-a-hash' },
          { type: 'SHA1Hash', value: sha1(1) },
          { type: 'IPAddress', value: '10.0.0.256' },
        ],
      },
      reader,
    );
    expect(response.status).toBe(200);
    expect(response.body[0]).toEqual({
      key: { type: 'MD5Hash', value: 'not-a-hash' },
      error: { code: 'InvalidKeyFormat', message: expect.any(String) },
      matches: [],
      warnings: [],
    });
    expect(response.body[1].matches).toHaveLength(1);
    expect(response.body[2].error.code).toBe('InvalidKeyFormat');
  });

  it('refuses malformed requests: 400 InvalidData for no keys, over 1,000 keys, an unknown key type; 401 without credentials', async () => {
    expectError(await lookup({ keys: [] }, reader), 'InvalidData');
    expectError(await lookup({}, reader), 'InvalidData');
    expectError(await lookup({ keys: Array(1001).fill({ type: 'MD5Hash', value: md5(1) }) }, reader), 'InvalidData');
    expectError(await lookup({ keys: [{ type: 'Hash', value: md5(1) }] }, reader), 'InvalidData');
    expectError(await lookup({ keys: [{ type: 'MD5Hash', value: md5(1) }], collections: ['a/b'] }, reader), 'InvalidData');
    expectError(
      await t
        .http()
        .post('/intel/lookup')
        .send({ keys: [{ type: 'MD5Hash', value: md5(1) }] }),
      'Unauthorized',
    );
    const thousand = await lookup({ keys: Array.from({ length: 1000 }, (_, n) => ({ type: 'MD5Hash', value: md5(n) })) }, reader);
    expect(thousand.status).toBe(200);
    expect(thousand.body).toHaveLength(1000);
    expect(thousand.body[1].matches).toHaveLength(2);
  });
});
