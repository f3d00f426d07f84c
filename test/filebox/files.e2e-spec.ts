import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { createKey, tokenFor } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { boundary, download, multipartBody, send, sql, storedFiles, uploadFile } from './filebox.helpers.js';

const MiB = 1024 * 1024;

describe('filebox files', () => {
  let t: TestApp;
  let token: string;
  let small: Buffer;
  let smallId: string;

  beforeAll(async () => {
    t = await createTestApp();
    token = await tokenFor(t, t.adminKey);
    small = randomBytes(1000);
    const response = await uploadFile(t, token, small, '/tmp/some dir/report.bin');
    expect(response.status).toBe(201);
    smallId = response.json().fileID!;
  });
  afterAll(async () => {
    await t.close();
  });

  it('stores a direct upload with its digests and the last segment of its name, and serves it byte-exact', async () => {
    expect(smallId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const [row] = await sql<{ name: string; size: string; md5: Buffer; sha1: Buffer; sha256: Buffer; sha512: Buffer }>(
      t,
      'SELECT name, size, md5, sha1, sha256, sha512 FROM filebox_file WHERE id = $1',
      [smallId],
    );
    expect(row.name).toBe('report.bin');
    expect(Number(row.size)).toBe(1000);
    for (const algorithm of ['md5', 'sha1', 'sha256', 'sha512'] as const) {
      expect(row[algorithm].equals(createHash(algorithm).update(small).digest())).toBe(true);
    }
    const whole = await download(t, token, smallId);
    expect(whole.status).toBe(200);
    expect(whole.headers['content-length']).toBe('1000');
    expect(whole.headers['content-encoding']).toBeUndefined();
    expect(whole.body.equals(small)).toBe(true);
    // The SDK's first request of a full download.
    const sdk = await download(t, token, smallId, 'bytes=0-5242880');
    expect(sdk.status).toBe(206);
    expect(sdk.headers['content-range']).toBe('bytes 0-999/1000');
    expect(sdk.body.equals(small)).toBe(true);
  });

  it('accepts a chunked direct upload', async () => {
    const content = randomBytes(300 * 1024);
    const b = boundary();
    const response = await send(t, {
      method: 'PUT',
      path: '/filebox/files',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
      body: multipartBody(b, [{ name: 'file', filename: 'C:\\temp\\x.txt', contentType: 'text/plain', content }]),
      chunked: true,
    });
    expect(response.status).toBe(201);
    const fileId = response.json().fileID!;
    expect((await download(t, token, fileId)).body.equals(content)).toBe(true);
    const [row] = await sql<{ name: string }>(t, 'SELECT name FROM filebox_file WHERE id = $1', [fileId]);
    expect(row.name).toBe('x.txt');
  });

  it('answers HEAD with the size, Accept-Ranges, ETag and Repr-Digest', async () => {
    const response = await send(t, {
      method: 'HEAD',
      path: `/filebox/files/${smallId}/content`,
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-length']).toBe('1000');
    expect(response.headers['accept-ranges']).toBe('bytes');
    expect(response.headers['etag']).toMatch(/^"[^"]+"$/);
    const sha256 = createHash('sha256').update(small).digest('base64');
    expect(response.headers['repr-digest']).toContain(`sha-256=:${sha256}:`);
    expect(response.body.length).toBe(0);
  });

  it('answers HEAD and GET of an unknown or malformed id with 404', async () => {
    for (const id of ['5d63fd9a-4ffb-46e7-afa1-cfbb0227ad3d', 'not-a-uuid', '1']) {
      const head = await send(t, {
        method: 'HEAD',
        path: `/filebox/files/${id}/content`,
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(head.status).toBe(404);
      const get = await download(t, token, id);
      expect(get.status).toBe(404);
      expect(get.json().code).toBe('NotFound');
    }
  });

  it('serves ranges: first, middle, last, clamped and open-ended', async () => {
    const cases: [string, number, number][] = [
      ['bytes=0-99', 0, 99],
      ['bytes=100-199', 100, 199],
      ['bytes=900-999', 900, 999],
      ['bytes=999-999', 999, 999],
      ['bytes=950-5000', 950, 999],
      ['bytes=990-', 990, 999],
      ['bytes=-10', 990, 999],
    ];
    for (const [range, start, end] of cases) {
      const response = await download(t, token, smallId, range);
      expect(response.status).toBe(206);
      expect(response.headers['content-range']).toBe(`bytes ${start}-${end}/1000`);
      expect(response.headers['content-length']).toBe(String(end - start + 1));
      expect(response.body.equals(small.subarray(start, end + 1))).toBe(true);
    }
  });

  it('answers a start past the end with 416 and Content-Range: bytes */total', async () => {
    for (const range of ['bytes=1000-1000', 'bytes=5000-6000']) {
      const response = await download(t, token, smallId, range);
      expect(response.status).toBe(416);
      expect(response.json().code).toBe('RangeNotSatisfiable');
      expect(response.headers['content-range']).toBe('bytes */1000');
    }
  });

  it('answers malformed and multi-range headers with 400', async () => {
    for (const range of ['bytes=a-b', 'bytes=5-2', 'items=0-1', 'bytes=0-1,3-4', 'bytes=', 'bytes=-', '0-1']) {
      const response = await download(t, token, smallId, range);
      expect(response.status).toBe(400);
      expect(response.json().code).toBe('BadRequest');
      expect(response.headers['content-range']).toBeUndefined();
    }
  });

  it('cuts a span over 50 MiB to 50 MiB', async () => {
    const big = randomBytes(50 * MiB + 4096);
    const uploaded = await uploadFile(t, token, big);
    expect(uploaded.status).toBe(201);
    const fileId = uploaded.json().fileID!;
    const response = await download(t, token, fileId, `bytes=0-${big.length - 1}`);
    expect(response.status).toBe(206);
    // interface-spec §8: the range size is end minus start.
    expect(response.headers['content-range']).toBe(`bytes 0-${50 * MiB}/${big.length}`);
    expect(response.body.equals(big.subarray(0, 50 * MiB + 1))).toBe(true);
    // The client continues from the reported end.
    const rest = await download(t, token, fileId, `bytes=${50 * MiB + 1}-${big.length + 100}`);
    expect(rest.headers['content-range']).toBe(`bytes ${50 * MiB + 1}-${big.length - 1}/${big.length}`);
    expect(rest.body.equals(big.subarray(50 * MiB + 1))).toBe(true);
  });

  it('refuses an empty file with 400 InvalidData and keeps nothing', async () => {
    const before = await storedFiles(t);
    const [{ count }] = await sql<{ count: string }>(t, 'SELECT count(*) FROM filebox_file');
    const response = await uploadFile(t, token, Buffer.alloc(0));
    expect(response.status).toBe(400);
    expect(response.json().code).toBe('InvalidData');
    expect(await storedFiles(t)).toEqual(before);
    expect((await sql<{ count: string }>(t, 'SELECT count(*) FROM filebox_file'))[0].count).toBe(count);
  });

  it('answers every malformed upload with a 4xx JSON error and keeps nothing', async () => {
    const before = await storedFiles(t);
    const [{ count }] = await sql<{ count: string }>(t, 'SELECT count(*) FROM filebox_file');
    const b = boundary();
    const multipart = `multipart/form-data; boundary=${b}`;
    const cases: { contentType?: string; body: Buffer; code: string }[] = [
      // wrong field name
      { contentType: multipart, body: multipartBody(b, [{ name: 'upload', filename: 'a', content: 'x' }]), code: 'InvalidData' },
      // the file sent as a plain value
      { contentType: multipart, body: multipartBody(b, [{ name: 'file', content: 'x' }]), code: 'InvalidData' },
      // two fields
      {
        contentType: multipart,
        body: multipartBody(b, [
          { name: 'file', filename: 'a', content: 'x' },
          { name: 'file', filename: 'b', content: 'y' },
        ]),
        code: 'InvalidData',
      },
      { contentType: multipart, body: multipartBody(b, []), code: 'InvalidData' },
      // garbage boundaries
      { contentType: multipart, body: Buffer.from('no boundary here at all'), code: 'BadRequest' },
      {
        contentType: 'multipart/form-data; boundary=other',
        body: multipartBody(b, [{ name: 'file', filename: 'a', content: 'x' }]),
        code: 'BadRequest',
      },
      { contentType: 'multipart/form-data', body: Buffer.from('x'), code: 'BadRequest' },
      // truncated body: the closing boundary never comes
      {
        contentType: multipart,
        body: multipartBody(b, [{ name: 'file', filename: 'a', content: 'xyz' }]).subarray(0, 80),
        code: 'BadRequest',
      },
      // not multipart at all
      { contentType: 'application/json', body: Buffer.from('{"file":"x"}'), code: 'BadRequest' },
      { contentType: 'text/plain', body: Buffer.from('hello'), code: 'BadRequest' },
      { body: Buffer.from('hello'), code: 'BadRequest' },
    ];
    for (const { contentType, body, code } of cases) {
      const response = await send(t, {
        method: 'PUT',
        path: '/filebox/files',
        headers: { Authorization: `Bearer ${token}`, ...(contentType ? { 'Content-Type': contentType } : {}) },
        body,
      });
      expect([response.status, response.json().code]).toEqual([400, code]);
    }
    expect(await storedFiles(t)).toEqual(before);
    expect((await sql<{ count: string }>(t, 'SELECT count(*) FROM filebox_file'))[0].count).toBe(count);
  });

  it('requires Write on filebox to upload and Read to download', async () => {
    const reader = await tokenFor(t, (await createKey(t, { permissions: [{ resource: 4, actions: ['Read'] }] })).key);
    const writer = await tokenFor(t, (await createKey(t, { permissions: [{ resource: 4, actions: ['Write'] }] })).key);
    const refused = await uploadFile(t, reader, randomBytes(10));
    expect([refused.status, refused.json().code]).toEqual([403, 'MissingPermissions']);
    expect((await uploadFile(t, writer, randomBytes(10))).status).toBe(201);
    const hidden = await download(t, writer, smallId);
    expect([hidden.status, hidden.json().code]).toEqual([403, 'MissingPermissions']);
    expect((await download(t, reader, smallId)).status).toBe(200);
  });
});
