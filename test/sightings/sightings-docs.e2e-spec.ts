import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection } from '../intel/objects.helpers.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** The sightings part of the document (the history part before it has JSON examples of its own). */
const WHOLE = readFileSync(new URL('../../docs/history-and-sightings.md', import.meta.url), 'utf8');
const DOC = WHOLE.slice(WHOLE.indexOf('\n## Posting sightings\n'));
/** The request bodies of the document: its `json` blocks. */
const BODIES = [...DOC.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]) as Record<string, string>[]);
const OBJECT_TYPE: Record<string, string> = { DomainName: 'DomainName', MD5Hash: 'File', IPAddress: 'IPAddress', URL: 'URL' };

describe('docs/history-and-sightings.md: the sighting examples', () => {
  let t: TestApp;

  beforeAll(async () => {
    // The examples carry fixed dates: a retention of a century keeps them postable.
    t = await createTestApp({ SIGHTING_RETENTION_DAYS: '36500' });
    await createCollection(t, 'blocklist');
    const keys = BODIES.flat().map((item) => ({ type: item.type ?? item.objectKeyType, value: item.value ?? item.objectKey }));
    const objects = [...new Map(keys.map((key) => [`${key.type} ${key.value}`, key])).values()].map((key) => ({
      type: OBJECT_TYPE[key.type],
      keys: [key],
      context: {},
    }));
    await t.intel.batch('blocklist', objects).expect(200);
  });
  afterAll(async () => {
    await t.close();
  });

  it('maps the Zeek intel.log line as the text says', () => {
    const lines = DOC.split('\n');
    const header = lines.findIndex((line) => line.startsWith('#fields\t'));
    const names = lines[header].split('\t').slice(1);
    const field = Object.fromEntries(lines[header + 1].split('\t').map((value, index) => [names[index], value]));
    const [item] = BODIES[0];
    expect(field['seen.indicator_type']).toBe('Intel::DOMAIN');
    expect(item).toMatchObject({
      type: 'DomainName',
      value: field['seen.indicator'],
      source: `zeek/${field['seen.node']}`,
      at: new Date(Number(field.ts) * 1000).toISOString(),
    });
  });

  it('records every example body, counts none of it twice when sent again, and summarises the Elastic hash', async () => {
    expect(BODIES).toHaveLength(2);
    for (const body of BODIES) {
      const first = await t.sightings.record(body);
      expect(first.body).toEqual(body.map(() => ({ status: 'Recorded' })));
      const again = await t.sightings.record(body);
      expect(again.body).toEqual(body.map(() => ({ status: 'Duplicate' })));
    }
    const lookup = await t.intel.lookup({ keys: [{ type: 'MD5Hash', value: BODIES[1][0].objectKey }] });
    expect(lookup.body[0].matches[0].sightings).toEqual({ count: 1, falsePositives: 1, firstAt: BODIES[1][0].at, lastAt: BODIES[1][0].at, sources: 2 });
  });
});
