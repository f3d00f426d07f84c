import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FILE_STORAGE, type FileStorage } from '../../src/filebox/storage/file-storage.js';
import { expectError } from '../support/clients/api-client.js';
import { tokenFor } from '../support/factories.js';
import { complete, download, openSession, sdkPartFields, send, uploadFile, uploadPart } from './filebox.helpers.js';
import { fileboxBackend, type FileboxApp } from './storage-backends.js';

const MiB = 1024 * 1024;
const run = promisify(execFile);

const sha256 = (content: Buffer) => createHash('sha256').update(content).digest('base64');

/** extensions §6: several instances on one database and one bucket; storage faults. */
describe('filebox on S3 with several instances', () => {
  const backend = fileboxBackend('s3');
  let a: FileboxApp;
  let b: FileboxApp;
  let token: string;

  beforeAll(async () => {
    a = await backend.createApp();
    b = await backend.createApp({}, a);
    token = await tokenFor(a, a.adminKey);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await backend.stop();
  });

  it('takes session parts alternately on two instances, completes on one, serves ranges from the other', async () => {
    const PART = MiB;
    const content = randomBytes(5 * PART + 12345);
    const sessionId = await openSession(a, token, PART);
    const count = Math.ceil(content.length / PART);
    for (let i = 0; i < count; i++) {
      const instance = i % 2 === 0 ? a : b;
      const piece = content.subarray(i * PART, Math.min((i + 1) * PART, content.length));
      expect((await uploadPart(instance, token, sessionId, sdkPartFields(i + 1, piece))).status).toBe(204);
    }
    const completed = await complete(b, token, sessionId);
    expect(completed.status).toBe(201);
    const fileId = completed.json().fileID!;
    // The other instance answers the same file for a repeated completion.
    expect((await complete(a, token, sessionId)).json().fileID).toBe(fileId);

    const head = await send(a, { method: 'HEAD', path: `/filebox/files/${fileId}/content`, headers: { Authorization: `Bearer ${token}` } });
    expect(head.headers['content-length']).toBe(String(content.length));
    expect(head.headers['repr-digest']).toContain(`sha-256=:${sha256(content)}:`);
    // Ranges within one part, across part boundaries, and the tail; then the whole file.
    for (const [start, end] of [
      [0, 99],
      [PART - 10, PART + 9],
      [PART / 2, 3 * PART + 7],
      [5 * PART, content.length - 1],
    ]) {
      const response = await download(a, token, fileId, `bytes=${start}-${end}`);
      expect([response.status, response.headers['content-range']]).toEqual([206, `bytes ${start}-${end}/${content.length}`]);
      expect(response.body.equals(content.subarray(start, end + 1))).toBe(true);
    }
    expect((await download(a, token, fileId)).body.equals(content)).toBe(true);
  });

  it('serves a direct upload of one instance from the other (HEAD and GET)', async () => {
    const content = randomBytes(3 * MiB + 7);
    const uploaded = await uploadFile(a, token, content);
    expect(uploaded.status).toBe(201);
    const fileId = uploaded.json().fileID!;
    const head = await send(b, { method: 'HEAD', path: `/filebox/files/${fileId}/content`, headers: { Authorization: `Bearer ${token}` } });
    expect([head.status, head.headers['content-length']]).toEqual([200, String(content.length)]);
    expect(head.headers['repr-digest']).toContain(`sha-256=:${sha256(content)}:`);
    expect((await download(b, token, fileId)).body.equals(content)).toBe(true);
    const range = await download(b, token, fileId, 'bytes=1000-1999');
    expect(range.body.equals(content.subarray(1000, 2000))).toBe(true);
  });

  it('answers with a JSON 503 and reports not ready while the bucket is missing', async () => {
    const c = await backend.createApp({}, undefined);
    try {
      const cToken = await tokenFor(c, c.adminKey);
      const stored = (await uploadFile(c, cToken, randomBytes(100))).json().fileID!;
      expect((await c.http().get('/health/ready')).status).toBe(200);
      // The bucket goes away under the service.
      const client = s3Client();
      const bucket = /^s3:\/\/([^/]+)/.exec(c.settings.FILEBOX_STORAGE)![1];
      for (const object of (await client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []) {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));
      }
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      client.destroy();

      const ready = await c.http().get('/health/ready');
      expectError(ready, 'ServiceUnavailable');
      const upload = await uploadFile(c, cToken, randomBytes(100));
      expect([upload.status, upload.json().code]).toEqual([503, 'ServiceUnavailable']);
      expect(upload.headers['content-type']).toMatch(/^application\/json/);
      // Content larger than one storage part: the storage fails while the content still streams in, and
      // its error (not the stream's premature end) is the answer. Through the storage itself: over HTTP
      // the server stops reading mid-body and closes, so a client may see the reset before the answer.
      const storage = c.app.get<FileStorage>(FILE_STORAGE);
      const large = storage.put(randomUUID(), Readable.from([randomBytes(6 * MiB), randomBytes(6 * MiB)]), []);
      await expect(large).rejects.toMatchObject({ code: 'ServiceUnavailable' });
      const sessionId = await openSession(c, cToken, MiB);
      const part = await uploadPart(c, cToken, sessionId, sdkPartFields(1, randomBytes(100)));
      expect([part.status, part.json().code]).toEqual([503, 'ServiceUnavailable']);
      const read = await download(c, cToken, stored, 'bytes=0-9');
      expect([read.status, read.json().code]).toEqual([503, 'ServiceUnavailable']);
    } finally {
      await c.close();
    }
  });

  it('refuses to start on an unusable FILEBOX_STORAGE with a one-line message', async () => {
    const main = join(process.cwd(), 'dist', 'main.js');
    // NODE_NO_WARNINGS: the AWS SDK's notice about this Node line is not the service's output.
    const base = { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1', METRICS_PORT: '0', DATABASE_URL: a.databaseUrl, PORT: '0', ADMIN_API_KEY: a.adminKey };
    const cases: Record<string, string>[] = [{ FILEBOX_STORAGE: 's3:/no-bucket' }, { ...a.settings, FILEBOX_STORAGE: 's3://no-such-bucket-here' }];
    for (const settings of cases) {
      const outcome = await run(process.execPath, [main], { env: { ...base, ...settings }, timeout: 60_000 }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
      );
      expect(outcome.code).toBe(1);
      const lines = outcome.stderr.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^Start-up failed: .*FILEBOX_STORAGE/);
      if (settings.AWS_ENDPOINT_URL) expect(lines[0]).toContain('bucket no-such-bucket-here does not exist');
    }
  });

  it('answers with a JSON 503 within bounded time when the S3 endpoint is down', async () => {
    const content = randomBytes(1000);
    const fileId = (await uploadFile(a, token, content)).json().fileID!;
    await backend.stop();
    const ready = await a.http().get('/health/ready');
    expectError(ready, 'ServiceUnavailable');
    const read = await download(b, token, fileId, 'bytes=0-9');
    expect([read.status, read.json().code]).toEqual([503, 'ServiceUnavailable']);
    const upload = await uploadFile(b, token, randomBytes(100));
    expect([upload.status, upload.json().code]).toEqual([503, 'ServiceUnavailable']);
  });

  function s3Client(): S3Client {
    return new S3Client({
      endpoint: backend.endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  }
});
