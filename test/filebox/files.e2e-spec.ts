import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../support/eventually.js';
import { createKey, tokenFor } from '../support/factories.js';
import { boundary, complete, download, multipartBody, openSession, sdkPartFields, send, sql, uploadFile, uploadPart } from './filebox.helpers.js';
import { BACKENDS, fileboxBackend, type FileboxApp } from './storage-backends.js';

/** Paths this process (which runs the server) holds open; empty where /proc is not available. */
async function openPaths(): Promise<string[]> {
  if (!existsSync('/proc/self/fd')) return [];
  const links = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return links.filter((link) => link !== '');
}

const MiB = 1024 * 1024;

describe.each(BACKENDS)('filebox files (%s storage)', (storage) => {
  const backend = fileboxBackend(storage);
  let t: FileboxApp;
  let token: string;
  let small: Buffer;
  let smallId: string;

  beforeAll(async () => {
    t = await backend.createApp();
    token = await tokenFor(t, t.adminKey);
    small = randomBytes(1000);
    const response = await uploadFile(t, token, small, '/tmp/some dir/report.bin');
    expect(response.status).toBe(201);
    smallId = response.json().fileID!;
  });
  afterAll(async () => {
    await t.close();
    await backend.stop();
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
    const sha256 = createHash('sha256').update(small);
    const etag = `"${sha256.copy().digest('hex')}"`;
    for (const [range, start, end] of cases) {
      const response = await download(t, token, smallId, range);
      expect(response.status).toBe(206);
      expect(response.headers['content-range']).toBe(`bytes ${start}-${end}/1000`);
      expect(response.headers['content-length']).toBe(String(end - start + 1));
      // The representation headers describe the whole file, whatever the range.
      expect(response.headers['accept-ranges']).toBe('bytes');
      expect(response.headers['etag']).toBe(etag);
      expect(response.headers['repr-digest']).toContain(`sha-256=:${sha256.copy().digest('base64')}:`);
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

  it('answers Range edge cases: -0 is 416, numbers of any length clamp or are 416, the unit is case-insensitive', async () => {
    const satisfiable: [string, number, number][] = [
      ['bytes=0-99999999999999999999999', 0, 999],
      ['bytes=990-18446744073709551616', 990, 999],
      ['bytes=-99999999999999999999', 0, 999],
      ['bytes=-1000', 0, 999],
      ['bytes=-1001', 0, 999],
      ['Bytes=0-1', 0, 1],
      ['BYTES=998-', 998, 999],
      ['bytes=00-01', 0, 1],
    ];
    for (const [range, start, end] of satisfiable) {
      const response = await download(t, token, smallId, range);
      expect([range, response.status, response.headers['content-range']]).toEqual([range, 206, `bytes ${start}-${end}/1000`]);
      expect(response.body.equals(small.subarray(start, end + 1))).toBe(true);
    }
    for (const range of ['bytes=-0', 'bytes=99999999999999999999-', 'bytes=9007199254740993-9007199254740993', 'bytes=1000-']) {
      const response = await download(t, token, smallId, range);
      expect([range, response.status, response.json().code, response.headers['content-range']]).toEqual([range, 416, 'RangeNotSatisfiable', 'bytes */1000']);
    }
    for (const range of ['bytes=5-3', 'bytes=99999999999999999999-1', 'bytes=1e3-2000', 'bytes=0x10-20', 'bytes=-1-2']) {
      const response = await download(t, token, smallId, range);
      expect([range, response.status, response.json().code]).toEqual([range, 400, 'BadRequest']);
    }
  });

  it('keeps a file name without its control characters (a NUL in filename* was a 500)', async () => {
    const b = boundary();
    const head = `--${b}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''r%00e%01p%7Fo%C5%BCrt.txt\r\n\r\n`;
    const response = await send(t, {
      method: 'PUT',
      path: '/filebox/files',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
      body: Buffer.concat([Buffer.from(head), Buffer.from('content'), Buffer.from(`\r\n--${b}--\r\n`)]),
    });
    expect(response.status).toBe(201);
    const [row] = await sql<{ name: string }>(t, 'SELECT name FROM filebox_file WHERE id = $1', [response.json().fileID]);
    expect(row.name).toBe('repożrt.txt');
    const fetched = await download(t, token, response.json().fileID!);
    expect(fetched.headers['content-disposition']).toBe("attachment; filename*=UTF-8''repo%C5%BCrt.txt");
  });

  it('answers a file whose content cannot be read with a logged 500 InternalError, not a cut-off 2xx', async () => {
    const content = randomBytes(2000);
    const fileId = (await uploadFile(t, token, content)).json().fileID!;
    await t.storage.remove(fileId);
    for (const range of [undefined, 'bytes=0-99']) {
      const response = await download(t, token, fileId, range);
      expect([response.status, response.json().code]).toEqual([500, 'InternalError']);
      expect(response.headers['content-range']).toBeUndefined();
      expect(response.headers['etag']).toBeUndefined();
    }
    expect((await download(t, token, smallId)).body.equals(small)).toBe(true);
  });

  it('stores concurrent direct uploads of several storage parts each byte-exact (part buffers are never shared)', async () => {
    const contents = [randomBytes(11 * MiB + 3), randomBytes(6 * MiB), randomBytes(10 * MiB)];
    const responses = await Promise.all(contents.map((content) => uploadFile(t, token, content)));
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201]);
    for (const [i, response] of responses.entries()) {
      const stored = await download(t, token, response.json().fileID!);
      expect(stored.body.equals(contents[i])).toBe(true);
    }
  });

  it('leaves no file and no blob when the client goes away after several storage parts, and keeps storing', async () => {
    const before = await t.storage.entries();
    const count = Number((await sql<{ n: string }>(t, 'SELECT count(*) AS n FROM filebox_file'))[0].n);
    const b = boundary();
    const request = httpRequest(`${t.url}/filebox/files`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
    });
    request.on('error', () => undefined);
    request.write(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="cut"\r\n\r\n`);
    // 12 MiB written and flushed to the socket: the server has read (and stored parts of) most of it.
    for (let i = 0; i < 12; i++) {
      await new Promise<void>((resolve) => request.write(randomBytes(MiB), () => resolve()));
    }
    request.destroy();
    await eventually(async () => (await t.storage.entries()).length === before.length);
    expect(await t.storage.entries()).toEqual(before);
    expect(Number((await sql<{ n: string }>(t, 'SELECT count(*) AS n FROM filebox_file'))[0].n)).toBe(count);
    const content = randomBytes(7 * MiB);
    const response = await uploadFile(t, token, content);
    expect(response.status).toBe(201);
    expect((await download(t, token, response.json().fileID!)).body.equals(content)).toBe(true);
  });

  /**
   * Downloads `fileId` and stops reading at the first chunk (the server is held mid-file, its ring full),
   * runs `probe` meanwhile, then goes away; the probe's answer.
   */
  function leaveMidDownload<T>(fileId: string, probe: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const request = httpRequest(`${t.url}/filebox/files/${fileId}/content`, { headers: { Authorization: `Bearer ${token}` } });
      request.on('error', reject);
      request.on('response', (response) => {
        expect(response.statusCode).toBe(200);
        response.once('data', () => {
          response.pause();
          probe()
            .then((answer) => {
              request.destroy();
              resolve(answer);
            })
            .catch(reject);
        });
      });
      request.end();
    });
  }

  it('closes the content file when the client goes away mid-download, and keeps serving', async () => {
    const big = randomBytes(32 * MiB);
    const fileId = (await uploadFile(t, token, big)).json().fileID!;
    const blob = join(t.dataDir, 'files', 'objects', fileId);
    const openWhileStreaming = await leaveMidDownload(fileId, async () => (await openPaths()).includes(blob));
    // On local disk the blob's descriptor is open while streaming and closed once the client went away.
    if (storage === 'local' && existsSync('/proc/self/fd')) {
      expect(openWhileStreaming).toBe(true);
      await eventually(async () => !(await openPaths()).includes(blob));
      expect(await openPaths()).not.toContain(blob);
    }
    const again = await download(t, token, fileId, 'bytes=0-9');
    expect(again.body.equals(big.subarray(0, 10))).toBe(true);
  });

  /** A session file of `content` in parts of 1 MiB; its id and its part blobs' keys. */
  async function sessionFile(content: Buffer): Promise<{ fileId: string; keys: string[] }> {
    const sessionId = await openSession(t, token, MiB);
    for (let number = 1; (number - 1) * MiB < content.length; number++) {
      const part = content.subarray((number - 1) * MiB, number * MiB);
      expect((await uploadPart(t, token, sessionId, sdkPartFields(number, part))).status).toBe(204);
    }
    const completed = await complete(t, token, sessionId);
    expect(completed.status).toBe(201);
    const fileId = completed.json().fileID!;
    const [{ part_keys: keys }] = await sql<{ part_keys: string[] }>(t, 'SELECT part_keys FROM filebox_file WHERE id = $1', [fileId]);
    return { fileId, keys };
  }

  it('serves any range of a session file across its part blobs byte-exact', async () => {
    const content = randomBytes(5 * MiB + 1234);
    const { fileId } = await sessionFile(content);
    const spans = [
      [0, MiB - 1], // exactly one part
      [MiB - 1, MiB], // one byte either side of a boundary
      [10, 3 * MiB + 10], // across three boundaries
      [2 * MiB + 5, 2 * MiB + 5], // one byte inside a part
      [4 * MiB, content.length - 1], // the short last part
      [3, content.length - 1], // nearly everything, in one response
    ];
    for (const [start, end] of spans) {
      const response = await download(t, token, fileId, `bytes=${start}-${end}`);
      expect([response.status, response.headers['content-range']]).toEqual([206, `bytes ${start}-${end}/${content.length}`]);
      expect(response.body.equals(content.subarray(start, end + 1))).toBe(true);
    }
  });

  it('releases the part blobs of a session file when the client goes away mid-download, and keeps serving', async () => {
    const content = randomBytes(24 * MiB);
    const { fileId, keys } = await sessionFile(content);
    const blobs = keys.map((key) => join(t.dataDir, 'files', 'objects', key));
    const openBlobs = async () => (await openPaths()).filter((path) => blobs.includes(path));
    const openWhileStreaming = await leaveMidDownload(fileId, async () => (await openBlobs()).length);
    if (storage === 'local' && existsSync('/proc/self/fd')) {
      expect(openWhileStreaming).toBeGreaterThan(0);
      await eventually(async () => (await openBlobs()).length === 0);
      expect(await openBlobs()).toEqual([]);
    }
    const again = await download(t, token, fileId, `bytes=${20 * MiB}-${21 * MiB}`);
    expect(again.body.equals(content.subarray(20 * MiB, 21 * MiB + 1))).toBe(true);
  });

  it('cuts the download short, never a complete-looking 2xx, when a later part blob cannot be read', async () => {
    const content = randomBytes(4 * MiB);
    const { fileId, keys } = await sessionFile(content);
    await t.storage.remove(keys[2]);
    const received = await new Promise<{ status?: number; bytes: number; complete: boolean }>((resolve) => {
      const request = httpRequest(`${t.url}/filebox/files/${fileId}/content`, { headers: { Authorization: `Bearer ${token}` } });
      let bytes = 0;
      request.on('error', () => resolve({ bytes, complete: false }));
      request.on('response', (response) => {
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('error', () => undefined);
        response.on('close', () => resolve({ status: response.statusCode, bytes, complete: response.complete }));
      });
      request.end();
    });
    expect(received.complete).toBe(false);
    expect(received.bytes).toBeLessThan(content.length);
    // A range that avoids the missing blob is still served.
    const first = await download(t, token, fileId, `bytes=0-${2 * MiB - 1}`);
    expect(first.body.equals(content.subarray(0, 2 * MiB))).toBe(true);
  });

  it('serves the SDK: a session upload framed as it sends it, then its full-download loop (wire-contract §12.10)', async () => {
    const PART = 5 * MiB;
    const content = randomBytes(11_534_339);
    const sessionId = await openSession(t, token, PART);
    for (let number = 1; number <= 3; number++) {
      const part = content.subarray((number - 1) * PART, number * PART);
      expect((await uploadPart(t, token, sessionId, sdkPartFields(number, part))).status).toBe(204);
    }
    const completed = await complete(t, token, sessionId);
    expect(completed.status).toBe(201);
    const fileId = completed.json().fileID!;
    const head = await send(t, { method: 'HEAD', path: `/filebox/files/${fileId}/content`, headers: { Authorization: `Bearer ${token}` } });
    expect(head.headers['content-length']).toBe('11534339');

    // The SDK's download(): parse Content-Range as it does, continue from the reported end.
    const parse = (header: string) => {
      const value = header.trim();
      expect(value.startsWith('bytes')).toBe(true);
      const [span, total] = value.slice('bytes'.length).split('/');
      const [start, end] = span.split('-');
      return { start: Number(start.trim()), end: Number(end.trim()), total: Number(total.trim()) };
    };
    const ranges = ['bytes=0-5242880'];
    let response = await download(t, token, fileId, ranges[0]);
    let { start, end, total } = parse(response.headers['content-range'] as string);
    let read = end - start + 1;
    const chunks = [response.body];
    while (read < total) {
      ranges.push(`bytes=${end + 1}-${end + PART}`);
      response = await download(t, token, fileId, ranges[ranges.length - 1]);
      ({ start, end, total } = parse(response.headers['content-range'] as string));
      read += end - start + 1;
      chunks.push(response.body);
    }
    expect(ranges).toEqual(['bytes=0-5242880', 'bytes=5242881-10485760', 'bytes=10485761-15728640']);
    expect(response.headers['content-range']).toBe('bytes 10485761-11534338/11534339');
    expect(Buffer.concat(chunks).equals(content)).toBe(true);
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
    const before = await t.storage.entries();
    const [{ count }] = await sql<{ count: string }>(t, 'SELECT count(*) FROM filebox_file');
    const response = await uploadFile(t, token, Buffer.alloc(0));
    expect(response.status).toBe(400);
    expect(response.json().code).toBe('InvalidData');
    expect(await t.storage.entries()).toEqual(before);
    expect((await sql<{ count: string }>(t, 'SELECT count(*) FROM filebox_file'))[0].count).toBe(count);
  });

  it('answers every malformed upload with a 4xx JSON error and keeps nothing', async () => {
    const before = await t.storage.entries();
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
    expect(await t.storage.entries()).toEqual(before);
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
