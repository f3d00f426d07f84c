import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ErrorCode } from '../../src/common/errors/api-error.js';
import { expectError } from '../support/clients/api-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { followAll, freshCollections, listAll, md5 } from './objects.helpers.js';

const MD5 = 'D41D8CD98F00B204E9800998ECF8427E';
const SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const REPORT = `Incident report, defanged.
The dropper (MD5 ${MD5}) downloads hxxps://cdn.evil-example[.]com/payload.bin and beacons to
update[.]bad-domain(.)co[.]uk, 198.51.100[.]7 and 2001:db8::1[:]; the C2 range is 203.0.113.0/24.
Mail came from phish[at]sender-example[.]org. Payload ${SHA256}. Again ${MD5.toLowerCase()} and 198.51.100.7.
Not indicators: version 1.2.3.4 of the agent, report.pdf, setup.exe, invoice.zip, host.invalidtld, the end . Then.
`;
const EXPECTED = [
  'File MD5Hash d41d8cd98f00b204e9800998ecf8427e',
  `File SHA256Hash ${SHA256}`,
  'URL URL https://cdn.evil-example.com/payload.bin',
  'DomainName DomainName update.bad-domain.co.uk',
  'DomainName DomainName sender-example.org',
  'IPAddress IPAddress 198.51.100.7',
  'IPAddress IPAddress 2001:db8::1',
  'IPNetwork IPNetwork 203.0.113.0/24',
].sort();

type Found = { type: string; keys: { type: string; value: string }[]; context: Record<string, unknown> };
const summary = (objects: Found[]) => objects.map((o) => `${o.type} ${o.keys[0].type} ${o.keys[0].value}`).sort();

/** Free-text and CSV import (extensions §9). */
describe('POST /intel/collections/{name}/import', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const fresh = freshCollections(() => t, 'import');
  const post = (c: string, query: string, body: string | Buffer, type = 'text/plain') =>
    t.http().post(`/intel/collections/${c}/import?${query}`).set('X-Api-Key', t.adminKey).set('Content-Type', type).send(body);

  it('writes exactly the indicators of a defanged report, with the context, through the batch path', async () => {
    const c = await fresh();
    const response = await post(c, 'format=text', REPORT).set('X-Import-Context', '{"source":"report 7","size":1}');
    expect(response.status).toBe(200);
    expect(summary(response.body.objects)).toEqual(EXPECTED);
    expect(response.body.report).toMatchObject({ added: EXPECTED.length, updated: 0, unchanged: 0, removed: 0, failed: 0 });
    expect(response.body.report.items).toHaveLength(EXPECTED.length);
    const { objects } = await listAll(t, c, 100);
    expect(summary(objects)).toEqual(EXPECTED);
    for (const object of objects) expect(object.context).toEqual({ source: 'report 7', size: 1 });
    // Importing the same text again changes nothing.
    const again = await post(c, 'format=text', REPORT).set('X-Import-Context', '{"source":"report 7","size":1}');
    expect(again.body.report).toMatchObject({ added: 0, unchanged: EXPECTED.length });
  });

  it('dry run: answers with the objects and writes nothing, not even a change record', async () => {
    const c = await fresh();
    const { changesCursor } = await listAll(t, c);
    const response = await post(c, 'format=text&dryRun=true&context={"source":"dry"}', REPORT);
    expect(response.status).toBe(200);
    expect(summary(response.body.objects)).toEqual(EXPECTED);
    expect(response.body.objects[0].context).toEqual({ source: 'dry' });
    expect(response.body.report).toBeUndefined();
    expect((await listAll(t, c)).objects).toEqual([]);
    expect((await followAll(t, c, changesCursor)).changes).toEqual([]);
    const [{ records }] = (await t.db.query(`SELECT count(*)::int AS records FROM intel_change`)).rows as { records: number }[];
    const writes = (await post(c, 'format=text&dryRun=true', 'nothing to see')).body;
    expect(writes).toEqual({ objects: [] });
    expect((await t.db.query(`SELECT count(*)::int AS records FROM intel_change`)).rows[0].records).toBe(records);
  });

  it('CSV: type and value columns (our names or common ones), context columns, duplicates once, bad rows reported', async () => {
    const c = await fresh();
    const csv = [
      'kind,indicator,comment,ignored',
      `md5,${MD5},"dropper, stage 1",x`,
      'domain,Evil.Example.,,x',
      'ip-dst,10.0.0.0/8,"internal ""range""",x',
      'URL,http://a.example/x,,x',
      `MD5Hash,${MD5.toLowerCase()},duplicate,x`,
      'ip-dst,not-an-ip,broken,x',
      'email,someone@example.com,unknown type,x',
    ].join('\r\n');
    const response = await post(c, 'format=csv&typeColumn=kind&valueColumn=indicator&contextColumns=comment', csv, 'text/csv').set(
      'X-Import-Context',
      '{"feed":"vendor"}',
    );
    expect(response.status).toBe(200);
    expect(response.body.report).toMatchObject({ added: 4, failed: 2 });
    expect(
      response.body.report.items.filter((item: { status: string }) => item.status === 'Failed').map((item: { error: { code: string } }) => item.error.code),
    ).toEqual(['InvalidKeyFormat', 'InvalidData']);
    const { objects } = await listAll(t, c, 100);
    expect(objects).toEqual([
      {
        type: 'File',
        keys: [{ type: 'MD5Hash', value: MD5.toLowerCase() }],
        context: { feed: 'vendor', comment: 'dropper, stage 1' },
        tlp: 'TLP:CLEAR',
        score: 50,
      },
      { type: 'DomainName', keys: [{ type: 'DomainName', value: 'evil.example' }], context: { feed: 'vendor' }, tlp: 'TLP:CLEAR', score: 50 },
      {
        type: 'IPNetwork',
        keys: [{ type: 'IPNetwork', value: '10.0.0.0/8' }],
        context: { feed: 'vendor', comment: 'internal "range"' },
        tlp: 'TLP:CLEAR',
        score: 50,
      },
      { type: 'URL', keys: [{ type: 'URL', value: 'http://a.example/x' }], context: { feed: 'vendor' }, tlp: 'TLP:CLEAR', score: 50 },
    ]);
    // atomic: one bad row, nothing written.
    const other = await fresh();
    expectError(await post(other, 'format=csv&typeColumn=kind&valueColumn=indicator&atomic=true', csv, 'text/csv'), 'BatchRejected');
    expect((await listAll(t, other)).objects).toEqual([]);
  });

  it('refuses bad bodies and parameters with a code, writing nothing', async () => {
    const c = await fresh();
    const refused: [string, string | Buffer, ErrorCode, Record<string, string>?][] = [
      ['format=text', '', 'InvalidData'],
      ['format=text', '  \n ', 'InvalidData'],
      ['format=text', Buffer.from([0x31, 0x2e, 0x32, 0x00, 0x01, 0x02]), 'InvalidData'],
      ['format=text', Buffer.from([0x68, 0x69, 0xff, 0xfe]), 'InvalidData'],
      ['format=text', 'evil.example', 'UnsupportedMediaType', { 'Content-Type': 'text/plain; charset=iso-8859-1' }],
      ['format=csv&typeColumn=type&valueColumn=value', 'type,val\nmd5,x', 'InvalidData'],
      ['format=csv&typeColumn=type&valueColumn=value&contextColumns=note', 'type,value\nmd5,x', 'InvalidData'],
      ['format=csv&typeColumn=type&valueColumn=value', 'type,value\n"md5,x', 'InvalidData'],
      ['format=csv&typeColumn=type', 'type,value\nmd5,x', 'InvalidQueryArgument'],
      ['format=text&typeColumn=type', 'evil.example', 'InvalidQueryArgument'],
      ['format=pdf', 'evil.example', 'InvalidQueryArgument'],
      ['format=text&context=[1]', 'evil.example', 'InvalidQueryArgument'],
      ['format=text&context={', 'evil.example', 'InvalidQueryArgument'],
      ['format=text', 'evil.example', 'BadRequest', { 'X-Import-Context': '{"a":' }],
      ['format=text&context={}', 'evil.example', 'BadRequest', { 'X-Import-Context': '{}' }],
      ['format=text', 'x'.repeat(32 * 1024 * 1024 + 1), 'RequestEntityTooLarge'],
      ['format=text', Array.from({ length: 10_001 }, (_, n) => md5(n + 1)).join('\n'), 'RequestEntityTooLarge'],
    ];
    for (const [query, body, code, headers] of refused) {
      const request = post(c, query, body, headers?.['Content-Type']);
      if (headers?.['X-Import-Context']) request.set('X-Import-Context', headers['X-Import-Context']);
      expectError(await request, code);
    }
    expectError(await post('nowhere', 'format=text', 'evil.example'), 'NotFound');
    expect((await listAll(t, c)).objects).toEqual([]);
    // Schema checks apply as for any write: a context the schema refuses fails every object.
    const bad = await post(c, 'format=text&context={"size":-1}', 'evil-example.com');
    expect(bad.body.report).toMatchObject({ added: 0, failed: 1 });
    expect(bad.body.report.items[0].error.code).toBe('SchemaCheckFail');
  });
});
