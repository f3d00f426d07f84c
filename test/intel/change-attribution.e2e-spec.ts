import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ObjectsService } from '../../src/intel/objects.service.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { domain, UUID, writableCollection, type writePaths } from './write-paths.helpers.js';

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
 * X-Request-Id, or the one generated and answered), the way it came, and a source, as stored (history
 * serves them: object-history.e2e-spec.ts).
 */
describe('attribution of change records', () => {
  const collection = 'attributed';
  let t: TestApp;
  let writer: { id: number; key: string };
  let paths: ReturnType<typeof writePaths>;
  let lastId = '0';

  beforeAll(async () => {
    t = await createTestApp({ EXPIRY_INTERVAL_SECONDS: '3600' });
    ({ writer, paths } = await writableCollection(t, collection));
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

  it('a single add: the client X-Request-Id; an identical re-send records nothing', async () => {
    await paths.add(domain('one.example'), 'client-add-1');
    expect(await newRecords()).toEqual([{ operation: 'Add', reason: null, ...byWriter('api', 'client-add-1') }]);
    await paths.add(domain('one.example'), 'client-add-2');
    expect(await newRecords()).toEqual([]);
  });

  it('a single update and a delete: the generated request id, as answered', async () => {
    const updated = await paths.add(domain('one.example', { context: { n: 1 } }));
    const removed = await paths.remove('DomainName', 'one.example');
    expect(await newRecords()).toEqual([
      { operation: 'Update', reason: null, ...byWriter('api', updated) },
      { operation: 'Remove', reason: 'Deleted', ...byWriter('api', removed) },
    ]);
  });

  it('a batch: every record of it carries the batch request', async () => {
    await paths.batch([domain('two.example'), domain('three.example'), { remove: { type: 'DomainName', value: 'two.example' } }], 'client-batch');
    expect(await newRecords()).toEqual([
      { operation: 'Add', reason: null, ...byWriter('batch', 'client-batch') },
      { operation: 'Add', reason: null, ...byWriter('batch', 'client-batch') },
      { operation: 'Remove', reason: 'Deleted', ...byWriter('batch', 'client-batch') },
    ]);
  });

  it('an import of text and of a STIX bundle file', async () => {
    await paths.importText('seen at four-attributed[.]com today', 'client-import');
    const bundle = await paths.importBundle('five.example', 'domain-name--5b7d2d3e-9a57-5f1c-9f6e-0d1c2b3a4f51');
    expect(await newRecords()).toEqual([
      { operation: 'Add', reason: null, ...byWriter('import', 'client-import') },
      { operation: 'Add', reason: null, ...byWriter('import', bundle) },
    ]);
  });

  it('TAXII writes: an envelope and an object delete', async () => {
    await paths.taxiiAdd('six.example', 'indicator--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c11', 'client-taxii-post');
    await paths.taxiiDelete('six.example', 'client-taxii-delete');
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
    await paths.addExpiring(domain('seven.example'), 'client-expiring');
    const [add, expired] = await newRecords();
    expect(add).toEqual({ operation: 'Add', reason: null, ...byWriter('api', 'client-expiring') });
    expect(expired).toEqual({ operation: 'Remove', reason: 'Expired', via: 'expiry', keyID: null, requestID: expect.stringMatching(UUID), source: null });
  });
});
