import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExpiryService } from '../../src/intel/expiry.service.js';
import { ObjectsService } from '../../src/intel/objects.service.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, resourceIdOf, ROOT, taxiiClient } from '../taxii/taxii-support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const domain = (value: string, extra: Record<string, unknown> = {}) => ({
  type: 'DomainName' as const,
  keys: [{ type: 'DomainName' as const, value }],
  context: {},
  ...extra,
});

interface StoredRecord {
  operation: string;
  reason: string | null;
  via: string | null;
  keyID: number | null;
  requestID: string | null;
  source: string | null;
}

/**
 * Every change record carries who and how (extensions §14): the key, the request id (the client's
 * X-Request-Id, or the one generated and answered), the way it came, and a source. Not served by the API yet,
 * so read from the table.
 */
describe('attribution of change records', () => {
  const collection = 'attributed';
  let t: TestApp;
  let taxiiId: string;
  let writer: { id: number; key: string };
  let lastId = '0';

  beforeAll(async () => {
    t = await createTestApp({ EXPIRY_INTERVAL_SECONDS: '3600' });
    taxiiId = await createCollection(t, collection);
    writer = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, collection), actions: ['Read', 'Write'] }] });
  });
  afterAll(async () => {
    await t.close();
  });

  /** The records written since the last call, in id order. */
  const newRecords = async (): Promise<StoredRecord[]> => {
    const { rows } = await t.db.query<StoredRecord & { id: string }>(
      `SELECT ch.id, operation, reason, via, key_id AS "keyID", request_id AS "requestID", source
         FROM intel_change ch JOIN intel_collection c ON c.id = ch.collection_id
        WHERE c.name = $1 AND ch.id > $2 ORDER BY ch.id`,
      [collection, lastId],
    );
    if (rows.length > 0) lastId = rows[rows.length - 1].id;
    return rows.map(({ id: _id, ...record }) => record);
  };
  const byWriter = (via: string, requestID: string) => ({ via, keyID: writer.id, requestID, source: null });
  const objects = (path = '') => `/intel/collections/${collection}/objects${path}`;

  it('a single add: the client X-Request-Id; an identical re-send records nothing', async () => {
    const added = await t.http().post(objects()).set('X-Api-Key', writer.key).set('X-Request-Id', 'client-add-1').send(domain('one.example'));
    expect(added.status).toBe(204);
    expect(await newRecords()).toEqual([{ operation: 'Add', reason: null, ...byWriter('api', 'client-add-1') }]);

    const again = await t.http().post(objects()).set('X-Api-Key', writer.key).set('X-Request-Id', 'client-add-2').send(domain('one.example'));
    expect([again.status, again.text]).toEqual([added.status, added.text]);
    expect(await newRecords()).toEqual([]);
  });

  it('a single update and a delete: the generated request id, as answered', async () => {
    const updated = await t.http().post(objects()).set('X-Api-Key', writer.key).send(domain('one.example', { context: { n: 1 } }));
    expect(updated.headers['x-request-id']).toMatch(UUID);
    const removed = await t.http().delete(objects('?objectKeyType=DomainName&objectKey=one.example')).set('X-Api-Key', writer.key);
    expect(removed.status).toBe(204);
    expect(await newRecords()).toEqual([
      { operation: 'Update', reason: null, ...byWriter('api', updated.headers['x-request-id']) },
      { operation: 'Remove', reason: 'Deleted', ...byWriter('api', removed.headers['x-request-id']) },
    ]);
  });

  it('a batch: every record of it carries the batch request', async () => {
    const response = await t
      .http()
      .post(objects('/batch'))
      .set('X-Api-Key', writer.key)
      .set('X-Request-Id', 'client-batch')
      .send([domain('two.example'), domain('three.example'), { remove: { type: 'DomainName', value: 'two.example' } }]);
    expect(response.status).toBe(200);
    expect(await newRecords()).toEqual([
      { operation: 'Add', reason: null, ...byWriter('batch', 'client-batch') },
      { operation: 'Add', reason: null, ...byWriter('batch', 'client-batch') },
      { operation: 'Remove', reason: 'Deleted', ...byWriter('batch', 'client-batch') },
    ]);
  });

  it('an import of text and of a STIX bundle file', async () => {
    const text = await t
      .http()
      .post(`/intel/collections/${collection}/import?format=text`)
      .set('X-Api-Key', writer.key)
      .set('X-Request-Id', 'client-import')
      .set('Content-Type', 'text/plain')
      .send('seen at four-attributed[.]com today');
    expect(text.status).toBe(200);
    const bundle = await t
      .http()
      .post(objects('/stix-bundle'))
      .set('X-Api-Key', writer.key)
      .set('Content-Type', 'application/json')
      .send({ type: 'bundle', objects: [{ type: 'domain-name', spec_version: '2.1', id: 'domain-name--5b7d2d3e-9a57-5f1c-9f6e-0d1c2b3a4f51', value: 'five.example' }] });
    expect(bundle.status).toBe(200);
    expect(await newRecords()).toEqual([
      { operation: 'Add', reason: null, ...byWriter('import', 'client-import') },
      { operation: 'Add', reason: null, ...byWriter('import', bundle.headers['x-request-id']) },
    ]);
  });

  it('TAXII writes: an envelope and an object delete', async () => {
    const client = taxiiClient(t, writer.key);
    const posted = await client
      .post(`${ROOT}/collections/${taxiiId}/objects/`, {
        objects: [
          {
            type: 'indicator',
            spec_version: '2.1',
            id: 'indicator--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c11',
            created: '2026-01-01T00:00:00.000Z',
            modified: '2026-01-01T00:00:00.000Z',
            pattern: "[domain-name:value = 'six.example']",
            pattern_type: 'stix',
            valid_from: '2026-01-01T00:00:00Z',
          },
        ],
      })
      .set('X-Request-Id', 'client-taxii-post');
    expect(posted.status).toBe(202);
    const { rows } = await t.db.query<{ uid: string }>(`SELECT uid FROM intel_object WHERE keys @> '[{"value": "six.example"}]'`);
    const removed = await client.delete(`${ROOT}/collections/${taxiiId}/objects/indicator--${rows[0].uid}/`).set('X-Request-Id', 'client-taxii-delete');
    expect(removed.status).toBe(200);
    expect(await newRecords()).toEqual([
      { operation: 'Add', reason: null, ...byWriter('taxii', 'client-taxii-post') },
      { operation: 'Remove', reason: 'Deleted', ...byWriter('taxii', 'client-taxii-delete') },
    ]);
  });

  it('an extension module, through the service it is given (no request)', async () => {
    const objectsService = t.app.get(ObjectsService);
    expect(await objectsService.add(collection, domain('eight.example'))).toBe('Added');
    expect(await objectsService.add(collection, domain('eight.example'))).toBe('Unchanged');
    await objectsService.remove(collection, { objectKeyType: 'DomainName', objectKey: 'eight.example' });
    const extension = { via: 'extension', keyID: null, requestID: null, source: null };
    expect(await newRecords()).toEqual([
      { operation: 'Add', reason: null, ...extension },
      { operation: 'Remove', reason: 'Deleted', ...extension },
    ]);
  });

  it("an expiry: the job's, with no key and the run's own id", async () => {
    const expiresAt = new Date(Date.now() + 300).toISOString();
    await t.http().post(objects()).set('X-Api-Key', writer.key).set('X-Request-Id', 'client-expiring').send(domain('seven.example', { expiresAt }));
    await sleep(400);
    await t.app.get(ExpiryService).expireDue();
    const [add, expired] = await newRecords();
    expect(add).toEqual({ operation: 'Add', reason: null, ...byWriter('api', 'client-expiring') });
    expect(expired).toEqual({ operation: 'Remove', reason: 'Expired', via: 'expiry', keyID: null, requestID: expect.stringMatching(UUID), source: null });
  });
});
