import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { rm, utimes, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { FILE_STORAGE } from '../../src/filebox/storage/file-storage.js';
import type { LocalDiskStorage } from '../../src/filebox/storage/local-disk.storage.js';
import { tokenFor } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { boundary, multipartBody, openSession, send, sql, storedFiles, uploadFile } from './filebox.helpers.js';

const CAP = 64 * 1024;

/** Waits (bounded) until `check` holds; the assertion after it states what must be true. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 100 && !(await check()); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const fileCount = async (t: TestApp) => Number((await sql<{ n: string }>(t, 'SELECT count(*) AS n FROM filebox_file'))[0].n);

describe('filebox limits and aborted uploads', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({ FILEBOX_MAX_FILE_BYTES: String(CAP) });
    token = await tokenFor(t, t.adminKey);
  });
  afterAll(async () => {
    await t.close();
  });

  it('accepts a file of exactly the cap and refuses one byte more with 413', async () => {
    expect((await uploadFile(t, token, randomBytes(CAP))).status).toBe(201);
    const before = await storedFiles(t);
    const count = await fileCount(t);
    const response = await uploadFile(t, token, randomBytes(CAP + 1));
    expect([response.status, response.json().code]).toEqual([413, 'RequestEntityTooLarge']);
    expect(await storedFiles(t)).toEqual(before);
    expect(await fileCount(t)).toBe(count);
  });

  it('answers 413 while the body is still streaming, stops reading it and closes the connection', async () => {
    const before = await storedFiles(t);
    const count = await fileCount(t);
    const b = boundary();
    const chunk = randomBytes(64 * 1024);
    const total = 512 * 1024 * 1024; // far more than any socket buffer holds
    let written = 0;
    const response = await new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
      let answered = false;
      const request = httpRequest(`${t.url}/filebox/files`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
      });
      request.on('response', (incoming) => {
        answered = true;
        let body = '';
        incoming.on('data', (data: Buffer) => (body += data.toString()));
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode ?? 0, connection: incoming.headers.connection, body }),
        );
        incoming.on('error', () =>
          resolve({ status: incoming.statusCode ?? 0, connection: incoming.headers.connection, body }),
        );
      });
      // The server cuts the connection: write errors after the answer are expected.
      request.on('error', (error) => (answered ? undefined : reject(error)));
      request.write(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="big"\r\n\r\n`);
      const pump = () => {
        while (!answered && written < total) {
          written += chunk.length;
          if (!request.write(chunk)) {
            request.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).code).toBe('RequestEntityTooLarge');
    expect(response.connection).toBe('close');
    // The server stopped reading: the client could not push the whole body.
    expect(written).toBeLessThan(total);
    await eventually(async () => (await storedFiles(t)).length === before.length);
    expect(await storedFiles(t)).toEqual(before);
    expect(await fileCount(t)).toBe(count);
  });

  it('leaves no file and no temporary data when the client aborts a direct upload', async () => {
    await expectNothingLeftAfterAbort('/filebox/files', 'file');
  });

  it('leaves no part and no temporary data when the client aborts a part upload', async () => {
    const sessionId = await openSession(t, token, 1024 * 1024);
    await expectNothingLeftAfterAbort(`/filebox/sessions/${sessionId}/parts`, 'filePart');
    expect(await sql(t, 'SELECT 1 FROM filebox_upload_part WHERE session_id = $1', [sessionId])).toEqual([]);
  });

  it('survives refusing a part it never read while that part is still arriving (an unheard stream error crashed it)', async () => {
    const sessionId = await openSession(t, token, 1024 * 1024);
    const big = randomBytes(4 * 1024 * 1024);
    const cases: { path: string; fields: Parameters<typeof multipartBody>[1] }[] = [
      { path: '/filebox/files', fields: [{ name: 'upload', filename: 'x', content: big }] },
      { path: `/filebox/sessions/${sessionId}/parts`, fields: [{ name: 'junk', filename: 'upload', content: big }] },
      {
        path: `/filebox/sessions/${sessionId}/parts`,
        fields: [
          { name: 'number', filename: 'upload', content: '1' },
          { name: 'number', filename: 'upload', content: big },
        ],
      },
    ];
    const before = await storedFiles(t);
    for (const { path, fields } of cases) {
      const b = boundary();
      const response = await send(t, {
        method: 'PUT',
        path,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
        body: multipartBody(b, fields),
        chunked: true,
      });
      expect([path, response.status, response.json().code]).toEqual([path, 400, 'InvalidData']);
    }
    // Still serving, and nothing stored.
    expect((await uploadFile(t, token, randomBytes(10))).status).toBe(201);
    expect((await storedFiles(t)).length).toBe(before.length + 1);
  });

  it('removes temporaries left by a process that died mid-upload when storage starts', async () => {
    const stale = join(t.dataDir, 'files', 'tmp', 'crashed.tmp');
    const fresh = join(t.dataDir, 'files', 'tmp', 'in-flight.tmp');
    await writeFile(stale, 'x');
    await writeFile(fresh, 'y');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    await t.app.get<LocalDiskStorage>(FILE_STORAGE).onModuleInit();
    const left = await storedFiles(t);
    expect(left).not.toContain(stale);
    expect(left).toContain(fresh);
    await rm(fresh);
  });

  /** Starts an upload, waits until its content is being written to a temporary file, then drops the socket. */
  async function expectNothingLeftAfterAbort(path: string, field: string): Promise<void> {
    const before = await storedFiles(t);
    const count = await fileCount(t);
    const b = boundary();
    const head = Buffer.from(
      (field === 'filePart'
        ? `--${b}\r\nContent-Disposition: form-data; name="number"; filename="upload"\r\n\r\n1\r\n` +
          `--${b}\r\nContent-Disposition: form-data; name="partSize"; filename="upload"\r\n\r\n${CAP}\r\n`
        : '') + `--${b}\r\nContent-Disposition: form-data; name="${field}"; filename="upload"\r\n\r\n`,
    );
    const request = httpRequest(`${t.url}${path}`, {
      method: 'PUT',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': `multipart/form-data; boundary=${b}`,
        'Content-Length': String(head.length + CAP + 100),
      },
    });
    request.on('error', () => undefined);
    request.write(head);
    request.write(randomBytes(CAP / 2));
    await eventually(async () => (await storedFiles(t)).length > before.length);
    expect((await storedFiles(t)).length).toBe(before.length + 1); // the temporary file of this upload
    request.destroy();
    await eventually(async () => (await storedFiles(t)).length === before.length);
    expect(await storedFiles(t)).toEqual(before);
    expect(await fileCount(t)).toBe(count);
  }
});
