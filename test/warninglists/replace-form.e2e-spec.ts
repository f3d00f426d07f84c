import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * `PUT /intel/warninglists/{name}` takes the `POST` form (extensions §15, issue 44): a client that sends
 * again the form it created a list with replaces it; a `name` other than the path's is refused and changes
 * nothing, since a PUT does not rename.
 */
describe('warninglists: PUT takes the POST form', () => {
  let t: TestApp;

  /** The list's view and tag, and its entries: what a refused PUT must leave as it was. */
  const stateOf = async (name: string) => {
    const view = await t.warninglists.list(name).expect(200);
    const entries = await t.warninglists.entries(name).expect(200);
    return { body: view.body as Record<string, unknown>, tag: view.headers.etag as string, entries: entries.body as string[] };
  };

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('accepts the name of the path, and the list is replaced', async () => {
    const form = { name: 'same-name', description: 'first', kind: 'hostname', action: 'annotate', entries: ['one.example'] };
    await t.warninglists.create(form).expect(201);
    const before = await stateOf('same-name');

    await t.warninglists.replace('same-name', { ...form, description: 'second', entries: ['two.example', 'three.example'] }, before.tag).expect(204);

    const after = await stateOf('same-name');
    expect(after.body).toMatchObject({ name: 'same-name', description: 'second', kind: 'hostname', entryCount: 2 });
    expect(after.entries).toEqual(['two.example', 'three.example']);
    expect(after.tag).not.toBe(before.tag);
    // The form sent back unchanged is a replace too (the same settings, a new revision).
    await t.warninglists.replace('same-name', { ...form, description: 'second', entries: ['two.example', 'three.example'] }, after.tag).expect(204);
    // And the form without a name keeps working as before.
    await t.warninglists.replace('same-name', { kind: 'hostname', entries: ['four.example'] }, (await stateOf('same-name')).tag).expect(204);
    expect((await stateOf('same-name')).entries).toEqual(['four.example']);
  });

  it('refuses another name with 400 InvalidData naming the field, and changes nothing', async () => {
    const form = { name: 'kept-name', kind: 'values', action: 'excludeFromExport', entries: ['192.0.2.1'] };
    await t.warninglists.create(form).expect(201);
    const before = await stateOf('kept-name');

    for (const name of ['other-name', 'Kept-Name', 'not a name', null]) {
      const refused = await t.warninglists.replace('kept-name', { ...form, name, entries: ['192.0.2.2'] }, before.tag);
      expectError(refused, 'InvalidData');
      expect(refused.body.details).toEqual({ errors: [{ field: 'name', problems: [expect.stringContaining('"kept-name"')] }] });
    }
    // A name that is not a string is refused by the form's own check, as on POST.
    expectError(await t.warninglists.replace('kept-name', { ...form, name: 7 }, before.tag), 'InvalidData');

    expect(await stateOf('kept-name')).toEqual(before);
    await t.warninglists.list('other-name').expect(404);
  });
});
