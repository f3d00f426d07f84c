import { expect } from '@jest/globals';
import type { Test } from 'supertest';
import { ExpiryService } from '../../src/intel/expiry.service.js';
import { createKey } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { createCollection, resourceIdOf, ROOT, taxiiClient } from '../taxii/taxii-support.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A DomainName object form; `extra` adds or replaces members (context, expiresAt). */
export const domain = (value: string, extra: Record<string, unknown> = {}) => ({
  type: 'DomainName' as const,
  keys: [{ type: 'DomainName' as const, value }],
  context: {},
  ...extra,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One write through each intel write path, as `key` in one collection (`taxiiId` its TAXII id), for the
 * suites that check who and how every path records (change-attribution, object-history). Each write
 * expects success and returns the request id its change records must carry: `requestID` when the client
 * sends one as X-Request-Id, else the id the service generated and answered (checked to be a UUID).
 */
export function writePaths(t: TestApp, collection: string, taxiiId: string, key: string) {
  const objects = (path = '') => `/intel/collections/${collection}/objects${path}`;
  const sent = async (request: Test, status: number, requestID?: string): Promise<string> => {
    const response = await (requestID === undefined ? request : request.set('X-Request-Id', requestID));
    expect(response.status).toBe(status);
    if (requestID !== undefined) return requestID;
    expect(response.headers['x-request-id']).toMatch(UUID);
    return response.headers['x-request-id'] as string;
  };
  const taxii = taxiiClient(t, key);

  return {
    add: (form: Record<string, unknown>, requestID?: string) => sent(t.http().post(objects()).set('X-Api-Key', key).send(form), 204, requestID),

    remove: (type: string, value: string, requestID?: string) =>
      sent(
        t
          .http()
          .delete(objects(`?objectKeyType=${type}&objectKey=${encodeURIComponent(value)}`))
          .set('X-Api-Key', key),
        204,
        requestID,
      ),

    batch: (items: object[], requestID?: string) => sent(t.http().post(objects('/batch')).set('X-Api-Key', key).send(items), 200, requestID),

    importText: (text: string, requestID?: string) =>
      sent(
        t.http().post(`/intel/collections/${collection}/import?format=text`).set('X-Api-Key', key).set('Content-Type', 'text/plain').send(text),
        200,
        requestID,
      ),

    /** A STIX bundle file of one domain-name object. */
    importBundle: (value: string, stixID: string, requestID?: string) =>
      sent(
        t
          .http()
          .post(objects('/stix-bundle'))
          .set('X-Api-Key', key)
          .set('Content-Type', 'application/json')
          .send({ type: 'bundle', objects: [{ type: 'domain-name', spec_version: '2.1', id: stixID, value }] }),
        200,
        requestID,
      ),

    /** A TAXII envelope of one indicator of the domain `value`. */
    taxiiAdd: (value: string, stixID: string, requestID?: string) =>
      sent(
        taxii.post(`${ROOT}/collections/${taxiiId}/objects/`, {
          objects: [
            {
              type: 'indicator',
              spec_version: '2.1',
              id: stixID,
              created: '2026-01-01T00:00:00.000Z',
              modified: '2026-01-01T00:00:00.000Z',
              pattern: `[domain-name:value = '${value}']`,
              pattern_type: 'stix',
              valid_from: '2026-01-01T00:00:00Z',
            },
          ],
        }),
        202,
        requestID,
      ),

    /** A TAXII delete of the object holding the domain `value` (by the indicator id TAXII serves it under). */
    taxiiDelete: async (value: string, requestID?: string) => {
      const { rows } = await t.db.query<{ uid: string }>(`SELECT uid FROM intel_object WHERE keys @> $1::jsonb`, [JSON.stringify([{ value }])]);
      expect(rows).toHaveLength(1);
      return sent(taxii.delete(`${ROOT}/collections/${taxiiId}/objects/indicator--${rows[0].uid}/`), 200, requestID);
    },

    /** Adds `form` to expire in 300 ms, waits it out and runs the expiry job once; the add's request id. */
    addExpiring: async (form: Record<string, unknown>, requestID?: string) => {
      const added = await sent(
        t
          .http()
          .post(objects())
          .set('X-Api-Key', key)
          .send({ ...form, expiresAt: new Date(Date.now() + 300).toISOString() }),
        204,
        requestID,
      );
      await sleep(400);
      await t.app.get(ExpiryService).expireDue();
      return added;
    },
  };
}

/** Creates `collection` and a key that may read and write it: the writer, and every write path as that key. */
export async function writableCollection(t: TestApp, collection: string) {
  const taxiiId = await createCollection(t, collection);
  const writer = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, collection), actions: ['Read', 'Write'] }] });
  return { writer, paths: writePaths(t, collection, taxiiId, writer.key) };
}
