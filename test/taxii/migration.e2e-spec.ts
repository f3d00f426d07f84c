import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChangeSequencer } from '../../src/intel/change-sequencer.js';
import { upgradedDatabase } from '../support/migrations.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { parseJson } from './taxii-support.js';

/**
 * Data written before the upgrade: the migration gives existing collections a TAXII id, existing feed
 * positions their times, and existing change records and objects their lives. Written through the API,
 * the migration is then reverted (with the migrations after it) and applied again over that data.
 */
describe('upgrading a database with objects and a feed', () => {
  let databaseUrl: string;
  let t: TestApp | undefined;

  beforeAll(async () => {
    // Written, then reverted down to before the migration (and the later ones with it) and upgraded again.
    databaseUrl = await upgradedDatabase({ table: 'intel_change', column: 'seq_at' }, async (before) => {
      const admin = (method: 'post' | 'delete', path: string) => before.http()[method](path).set('X-Api-Key', before.adminKey);
      await admin('post', '/intel/schemas').send({ schemaID: 'any', type: 'object' });
      for (const name of ['first', 'second']) expect((await admin('post', '/intel/collections').send({ name, schemaID: 'any' })).status).toBe(201);
      const add = (collection: string, value: string, n: number) =>
        admin('post', `/intel/collections/${collection}/objects`).send({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: { n } });
      await add('first', 'a.example', 1); // life 1 of a: Add
      await add('second', 'a.example', 1); // another collection
      await add('first', 'a.example', 2); // life 1: Update
      await add('first', 'b.example', 1);
      expect((await admin('delete', '/intel/collections/first/objects').query({ objectKeyType: 'DomainName', objectKey: 'a.example' })).status).toBe(204); // life 1: Remove
      await add('first', 'a.example', 3); // life 2: Add
      await before.app.get(ChangeSequencer).settled();
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('gives collections ids, positions increasing times, and changes the lives they belong to', async () => {
    t = await createTestApp({ DATABASE_URL: databaseUrl });
    const ids = (await t.db.query(`SELECT taxii_id FROM intel_collection ORDER BY id`)).rows as { taxii_id: string }[];
    expect(new Set(ids.map((row) => row.taxii_id)).size).toBe(2);
    const changes = (
      await t.db.query(
        `SELECT c.name, ch.seq, ch.operation, ch.object->'keys'->0->>'value' AS value, ch.object_uid AS uid, ch.seq_at > ch.created_at - interval '1 microsecond' AS after_created,
                ch.seq_at - lag(ch.seq_at) OVER (PARTITION BY ch.collection_id ORDER BY ch.seq) AS step
           FROM intel_change ch JOIN intel_collection c ON c.id = ch.collection_id ORDER BY c.name, ch.seq`,
      )
    ).rows as {
      name: string;
      seq: string;
      operation: string;
      value: string;
      uid: string;
      after_created: boolean;
      step: { microseconds?: number; milliseconds?: number } | null;
    }[];
    expect(changes.map((change) => [change.name, change.operation, change.value])).toEqual([
      ['first', 'Add', 'a.example'],
      ['first', 'Update', 'a.example'],
      ['first', 'Add', 'b.example'],
      ['first', 'Remove', 'a.example'],
      ['first', 'Add', 'a.example'],
      ['second', 'Add', 'a.example'],
    ]);
    expect(changes.every((change) => change.after_created)).toBe(true);
    // At least 2 µs between positions (pg returns an interval; milliseconds include the microseconds).
    expect(
      changes.filter((change) => change.step !== null).every((change) => (change.step!.milliseconds ?? 0) * 1000 + (change.step!.microseconds ?? 0) >= 2),
    ).toBe(true);
    const [add, update, b, remove, readd, other] = changes;
    expect(update.uid).toBe(add.uid);
    expect(remove.uid).toBe(add.uid);
    expect(new Set([add.uid, b.uid, readd.uid, other.uid]).size).toBe(4);
    const objects = (
      await t.db.query(
        `SELECT keys->0->>'value' AS value, uid FROM intel_object o JOIN intel_collection c ON c.id = o.collection_id WHERE c.name = 'first' ORDER BY 1`,
      )
    ).rows;
    expect(objects).toEqual([
      { value: 'a.example', uid: readd.uid },
      { value: 'b.example', uid: b.uid },
    ]);

    // And the feed goes on from there: a new change comes after the migrated ones, in the same life.
    expect(
      (
        await t
          .http()
          .post('/intel/collections/first/objects')
          .set('X-Api-Key', t.adminKey)
          .send({ type: 'DomainName', keys: [{ type: 'DomainName', value: 'b.example' }], context: { n: 2 } })
      ).status,
    ).toBe(204);
    const versions = await t
      .http()
      .get(`/taxii2/api/collections/${ids[0].taxii_id}/objects/indicator--${b.uid}/versions/`)
      .set('X-Api-Key', t.adminKey)
      .buffer(true)
      .parse(parseJson);
    expect(versions.status).toBe(200);
    expect((versions.body as { versions: string[] }).versions).toHaveLength(2);
  });
});
