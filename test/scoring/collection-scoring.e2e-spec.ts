import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/intel.js';
import { DEFAULT_SCORING_VIEW } from '../support/scoring.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * A collection's `scoring` (extensions §18): taken at registration and by PATCH (replaced whole, members left
 * out take their defaults, `null` restores them all; tag rules as for `objectTTLSeconds`), always shown whole in
 * the collection's view, refused with 400 InvalidData naming the bad member, and TAXII view aliases unique
 * among TAXII collections (409).
 */
describe('a collection’s scoring', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', schemaID: 'scoring-any', title: 'any', type: 'object' };
    expect((await t.intel.createSchema(schema)).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  const create = (name: string, scoring?: unknown) => t.intel.createCollection({ name, schemaID: 'scoring-any', ...(scoring !== undefined && { scoring }) });

  it('registers with a scoring: the view shows it whole, defaults filled in', async () => {
    const scoring = {
      decay: { IPAddress: { lifetimeDays: 0.5, speed: 1 }, File: null },
      threshold: 40,
      decayedAction: 'expire',
      taxiiViews: [{ alias: 'reg-high', minScore: 70 }],
    };
    expect((await create('reg', scoring)).status).toBe(201);
    const viewed = await t.intel.collection('reg');
    expect(viewed.headers.etag).toBe('"1"');
    expect(viewed.body.scoring).toEqual({
      decay: { ...DEFAULT_SCORING_VIEW.decay, IPAddress: { lifetimeDays: 0.5, speed: 1 }, File: null },
      threshold: 40,
      decayedAction: 'expire',
      taxiiViews: [{ alias: 'reg-high', minScore: 70 }],
    });
    const listed = await t.intel.collections('?limit=1000');
    expect(listed.body.find((c: { name: string }) => c.name === 'reg').scoring).toEqual(viewed.body.scoring);
    // Registered without one: the defaults.
    expect((await create('reg-plain')).status).toBe(201);
    expect((await t.intel.collection('reg-plain')).body.scoring).toEqual(DEFAULT_SCORING_VIEW);
  });

  it('PATCH replaces it whole (left out: defaults), null restores the defaults; the same scoring keeps the tag', async () => {
    expect((await create('patch-s')).status).toBe(201);
    expect((await t.intel.updateCollection('patch-s', { scoring: { threshold: 30, decay: { URL: { lifetimeDays: 2, speed: 0.5 } } } }, '"1"')).status).toBe(
      204,
    );
    let viewed = await t.intel.collection('patch-s');
    expect(viewed.headers.etag).toBe('"2"');
    expect(viewed.body.scoring).toEqual({
      ...DEFAULT_SCORING_VIEW,
      threshold: 30,
      decay: { ...DEFAULT_SCORING_VIEW.decay, URL: { lifetimeDays: 2, speed: 0.5 } },
    });

    // The same again, and a form without `scoring`: no change, the tag stays.
    expect((await t.intel.updateCollection('patch-s', { scoring: { decay: { URL: { lifetimeDays: 2, speed: 0.5 } }, threshold: 30 } }, '"2"')).status).toBe(
      204,
    );
    expect((await t.intel.updateCollection('patch-s', {}, '"2"')).status).toBe(204);
    expect((await t.intel.collection('patch-s')).headers.etag).toBe('"2"');

    // Whole: a PATCH of the threshold alone puts URL back to its default.
    expect((await t.intel.updateCollection('patch-s', { scoring: { threshold: 10 } }, '"2"')).status).toBe(204);
    viewed = await t.intel.collection('patch-s');
    expect(viewed.headers.etag).toBe('"3"');
    expect(viewed.body.scoring).toEqual({ ...DEFAULT_SCORING_VIEW, threshold: 10 });

    expect((await t.intel.updateCollection('patch-s', { scoring: null }, '"3"')).status).toBe(204);
    viewed = await t.intel.collection('patch-s');
    expect(viewed.headers.etag).toBe('"4"');
    expect(viewed.body.scoring).toEqual(DEFAULT_SCORING_VIEW);
    // And the stored row is whole too (statements read it without defaults).
    const {
      rows: [row],
    } = await t.db.query(`SELECT scoring FROM intel_collection WHERE name = 'patch-s'`);
    expect(row.scoring).toEqual(DEFAULT_SCORING_VIEW);
    // If-Match rules as for every change.
    expectError(await t.intel.updateCollection('patch-s', { scoring: { threshold: 5 } }, '"3"'), 'ResourceModified');
  });

  it.each([
    [[], /^scoring must be an object or null$/],
    [{ bogus: 1 }, /scoring\.bogus/],
    [{ threshold: 101 }, /scoring\.threshold/],
    [{ threshold: '5' }, /scoring\.threshold/],
    [{ decayedAction: 'drop' }, /scoring\.decayedAction/],
    [{ decay: { IPAddress: { lifetimeDays: 0, speed: 1 } } }, /scoring\.decay\.IPAddress\.lifetimeDays/],
    [{ decay: { IPAddress: { lifetimeDays: 1, speed: -1 } } }, /scoring\.decay\.IPAddress\.speed/],
    [{ decay: { Email: null } }, /scoring\.decay\.Email/],
    [{ taxiiViews: [{ alias: 'a b', minScore: 1 }] }, /scoring\.taxiiViews\[0\]\.alias/],
    [
      {
        taxiiViews: [
          { alias: 'x1', minScore: 1 },
          { alias: 'x1', minScore: 2 },
        ],
      },
      /given twice/,
    ],
    [{ taxiiViews: [{ alias: 'x2', minScore: 200 }] }, /scoring\.taxiiViews\[0\]\.minScore/],
  ])('refuses scoring %j: 400 InvalidData naming it, nothing registered or changed', async (scoring, message) => {
    const name = `bad-${Math.random().toString(36).slice(2, 10)}`;
    const registered = await create(name, scoring);
    expectError(registered, 'InvalidData');
    expect(registered.body.message).toMatch(message);
    expect((await t.intel.collection(name)).status).toBe(404);

    expect((await create(name, { threshold: 20 })).status).toBe(201);
    const patched = await t.intel.updateCollection(name, { scoring, objectTTLSeconds: 60 }, '"1"');
    expectError(patched, 'InvalidData');
    expect(patched.body.message).toMatch(message);
    const viewed = await t.intel.collection(name);
    expect(viewed.headers.etag).toBe('"1"');
    expect(viewed.body).toEqual({ name, schemaID: 'scoring-any', defaultTLP: 'TLP:CLEAR', scoring: { ...DEFAULT_SCORING_VIEW, threshold: 20 } });
  });

  it('a TAXII alias is unique among collection names and every view: 409 DuplicateTaxiiAlias, nothing changed', async () => {
    expect((await create('alias-owner', { taxiiViews: [{ alias: 'alias-top', minScore: 80 }] })).status).toBe(201);
    expect((await create('alias-other')).status).toBe(201);
    // Another collection's view alias, another collection's name, its own name.
    for (const alias of ['alias-top', 'alias-owner', 'alias-other']) {
      const patched = await t.intel.updateCollection('alias-other', { scoring: { taxiiViews: [{ alias, minScore: 1 }] } }, '"1"');
      expectError(patched, 'DuplicateTaxiiAlias');
      expect(patched.status).toBe(409);
      const registered = await create(`alias-new-${alias}`, { taxiiViews: [{ alias, minScore: 1 }] });
      expect(registered.status).toBe(409);
      expect(registered.body.code).toBe('DuplicateTaxiiAlias');
      expect((await t.intel.collection(`alias-new-${alias}`)).status).toBe(404);
    }
    expect((await t.intel.collection('alias-other')).headers.etag).toBe('"1"');
    // A collection named as a view's alias: taken too.
    expectError(await create('alias-top'), 'DuplicateCollection');
    // Its own views keep their aliases across a PATCH that changes something else.
    expect(
      (await t.intel.updateCollection('alias-owner', { scoring: { threshold: 3, taxiiViews: [{ alias: 'alias-top', minScore: 60 }] } }, '"1"')).status,
    ).toBe(204);
    // Freed by a PATCH: another collection may take it.
    expect((await t.intel.updateCollection('alias-owner', { scoring: null }, '"2"')).status).toBe(204);
    expect((await t.intel.updateCollection('alias-other', { scoring: { taxiiViews: [{ alias: 'alias-top', minScore: 1 }] } }, '"1"')).status).toBe(204);
  });

  it('two collections racing for one alias: exactly one gets it', async () => {
    const names = ['race-a', 'race-b', 'race-c', 'race-d'];
    for (const name of names) expect((await create(name)).status).toBe(201);
    const answers = await Promise.all(
      names.map((name) => t.intel.updateCollection(name, { scoring: { taxiiViews: [{ alias: 'race-alias', minScore: 5 }] } }, '"1"')),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([204, 409, 409, 409]);
  });
});
