import { randomBytes } from 'node:crypto';
import { utimes, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { StorageSweepService } from '../../src/filebox/storage-sweep.service.js';
import { eventually } from '../support/eventually.js';
import { tokenFor } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { boundary, multipartBody, openSession, send, sql, uploadFile } from './filebox.helpers.js';
import { BACKENDS, fileboxBackend, type FileboxApp } from './storage-backends.js';

const CAP = 64 * 1024;

const fileCount = async (t: TestApp) => Number((await sql<{ n: string }>(t, 'SELECT count(*) AS n FROM filebox_file'))[0].n);

describe.each(BACKENDS)('filebox limits and aborted uploads (%s storage)', (storage) => {
  const backend = fileboxBackend(storage);
  let t: FileboxApp;
  let token: string;

  beforeAll(async () => {
    t = await backend.createApp({ FILEBOX_MAX_FILE_BYTES: String(CAP) });
    token = await tokenFor(t, t.adminKey);
  });
  afterAll(async () => {
    await t.close();
    await backend.stop();
  });

  it('accepts a file of exactly the cap and refuses one byte more with 413', async () => {
    expect((await uploadFile(t, token, randomBytes(CAP))).status).toBe(201);
    const before = await t.storage.entries();
    const count = await fileCount(t);
    const response = await uploadFile(t, token, randomBytes(CAP + 1));
    expect([response.status, response.json().code]).toEqual([413, 'RequestEntityTooLarge']);
    expect(await t.storage.entries()).toEqual(before);
    expect(await fileCount(t)).toBe(count);
  });

  it('answers 413 while the body is still streaming, stops reading it and closes the connection', async () => {
    const before = await t.storage.entries();
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
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, connection: incoming.headers.connection, body }));
        incoming.on('error', () => resolve({ status: incoming.statusCode ?? 0, connection: incoming.headers.connection, body }));
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
    await eventually(async () => (await t.storage.entries()).length === before.length);
    expect(await t.storage.entries()).toEqual(before);
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
    const before = await t.storage.entries();
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
    expect((await t.storage.entries()).length).toBe(before.length + 1);
  });

  (storage === 'local' ? it : it.skip)('the sweep removes temporaries left by a process that died mid-upload, not live ones', async () => {
    const stale = join(t.dataDir, 'files', 'tmp', 'crashed.tmp');
    const fresh = join(t.dataDir, 'files', 'tmp', 'in-flight.tmp');
    await writeFile(stale, 'x');
    await writeFile(fresh, 'y');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    expect(await t.app.get(StorageSweepService).sweep()).toEqual({ temporaries: 1, orphans: 0 });
    const left = await t.storage.entries();
    expect(left).not.toContain('tmp/crashed.tmp');
    expect(left).toContain('tmp/in-flight.tmp');
  });

  it('the sweep removes orphan blobs (stored, but their row never committed) and keeps every referenced one', async () => {
    const orphan = (await uploadFile(t, token, randomBytes(100))).json().fileID!;
    const kept = (await uploadFile(t, token, randomBytes(100))).json().fileID!;
    const sessionId = await openSession(t, token, 1024 * 1024);
    const partForm = (content: Buffer) => [
      { name: 'number', filename: 'upload', content: '1' },
      { name: 'partSize', filename: 'upload', content: String(content.length) },
      { name: 'filePart', filename: 'upload', content },
    ];
    const b = boundary();
    const part = await send(t, {
      method: 'PUT',
      path: `/filebox/sessions/${sessionId}/parts`,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
      body: multipartBody(b, partForm(randomBytes(100))),
    });
    expect(part.status).toBe(204);
    // A crash between the storage write and the database commit, as the database sees it: no row.
    await sql(t, 'DELETE FROM filebox_file WHERE id = $1', [orphan]);
    const sweep = t.app.get(StorageSweepService);
    // Within the grace period nothing goes (a blob may be about to be committed).
    expect(await sweep.sweep()).toMatchObject({ orphans: 0 });
    expect(await t.storage.entries()).toContain(orphan);
    const later = new Date(Date.now() + 2 * 3600 * 1000);
    expect(await sweep.sweep(later)).toMatchObject({ orphans: 1 });
    const left = await t.storage.entries();
    expect(left).not.toContain(orphan);
    expect(left).toContain(kept);
    const [{ storage_key: partKey }] = await sql<{ storage_key: string }>(t, 'SELECT storage_key FROM filebox_upload_part WHERE session_id = $1', [sessionId]);
    expect(left).toContain(partKey);
    expect((await send(t, { method: 'GET', path: `/filebox/files/${kept}/content`, headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  /** Starts an upload, waits until its content is being written to a temporary file, then drops the socket. */
  async function expectNothingLeftAfterAbort(path: string, field: string): Promise<void> {
    const before = await t.storage.entries();
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
    if (storage === 'local') {
      await eventually(async () => (await t.storage.entries()).length > before.length);
      expect((await t.storage.entries()).length).toBe(before.length + 1); // the temporary file of this upload
    } else {
      // An S3 upload in progress has nothing to list: give it time to be well under way.
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    request.destroy();
    await eventually(async () => (await t.storage.entries()).length === before.length);
    expect(await t.storage.entries()).toEqual(before);
    expect(await fileCount(t)).toBe(count);
  }
});
