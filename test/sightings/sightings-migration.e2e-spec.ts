import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection, hashedFile, md5, sha1 } from '../intel/objects.helpers.js';
import { upgradedDatabase } from '../support/migrations.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const domain = { type: 'DomainName', value: 'seen.example' };

/**
 * Sightings recorded before a summary kept its key's number of sources (migration SightingSummarySources):
 * recorded through the API, the migration is reverted and applied again over them, so the column is
 * backfilled; summaries read it for objects with one sighted key and count several keys' sources anew.
 */
describe('upgrading a database with sightings to per-key source counts', () => {
  let databaseUrl: string;
  let t: TestApp | undefined;

  const post = (app: TestApp, items: object[]) => app.sightings.record(items).expect(200);
  const summaryOf = async (app: TestApp, key: { type: string; value: string }) => {
    const response = await app.intel.lookup({ keys: [key] });
    expect(response.body[0].matches).toHaveLength(1);
    return response.body[0].matches[0].sightings as { count: number; sources: number };
  };

  beforeAll(async () => {
    databaseUrl = await upgradedDatabase({ table: 'sighting_summary', column: 'sources' }, async (before) => {
      await createCollection(before, 'seen');
      for (const form of [{ type: 'DomainName', keys: [domain], context: {} }, hashedFile(1), hashedFile(2)]) {
        await before.intel.add('seen', form).expect(204);
      }
      await post(before, [
        { ...domain, source: 'a' },
        { ...domain, source: 'b' },
        { ...domain, source: 'a' },
        { type: 'MD5Hash', value: md5(1), source: 'a' },
        { type: 'MD5Hash', value: md5(1), source: 'c' },
        { type: 'SHA1Hash', value: sha1(1), source: 'a' },
        { type: 'MD5Hash', value: md5(2), source: 'b' },
      ]);
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts the sources recorded before, and adds only new ones after', async () => {
    t = await createTestApp({ DATABASE_URL: databaseUrl });
    expect(await summaryOf(t, domain)).toMatchObject({ count: 3, sources: 2 });
    expect(await summaryOf(t, { type: 'MD5Hash', value: md5(1) })).toMatchObject({ count: 3, sources: 2 });
    expect(await summaryOf(t, { type: 'MD5Hash', value: md5(2) })).toMatchObject({ count: 1, sources: 1 });
    await post(t, [
      { ...domain, source: 'b' },
      { ...domain, source: 'c' },
      { ...domain, source: 'c' },
      { type: 'SHA1Hash', value: sha1(2), source: 'b' },
    ]);
    expect(await summaryOf(t, domain)).toMatchObject({ count: 6, sources: 3 });
    expect(await summaryOf(t, { type: 'MD5Hash', value: md5(2) })).toMatchObject({ count: 2, sources: 1 });
  });
});
