import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { boundary, complete, download, multipartBody, sdkPartFields, send, uploadFile, uploadPart } from '../filebox/filebox.helpers.js';
import { createDatabase } from '../support/test-app.js';
import { ServiceProcess } from './service-process.js';
import { sha256 } from './workload.js';

/**
 * A small file system of its own for DATA_DIR: a tmpfs mount limited to 8 MiB. Mounting needs root (or
 * CAP_SYS_ADMIN); where it is refused the suite is skipped, saying why.
 */
function mountSmallDisk(): { path: string } | { skipped: string } {
  const path = mkdtempSync(join(tmpdir(), 'ids-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0755', 'tmpfs', path], { stdio: 'pipe' });
    return { path };
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    return { skipped: `cannot mount a size-limited tmpfs here (${String((error as Error).message).split('\n')[0]})` };
  }
}

/** Fills the file system with a file of our own until it refuses one more byte. */
function fill(path: string): void {
  const descriptor = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  const writeUntilFull = (length: number) => {
    try {
      for (;;) writeSync(descriptor, chunk, 0, length);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
  };
  try {
    writeUntilFull(chunk.length);
    writeUntilFull(1); // the bytes a refused whole chunk left free
  } finally {
    closeSync(descriptor);
  }
}

const disk = mountSmallDisk();
if ('skipped' in disk) process.stderr.write(`disk-full suite skipped: ${disk.skipped}\n`);
const describeWithDisk = 'path' in disk ? describe : describe.skip;

describeWithDisk('a full file store', () => {
  const mount = 'path' in disk ? disk.path : '';
  const dataDir = join(mount, 'data');
  const filler = join(mount, 'filler');
  let service: ServiceProcess;
  let db: pg.Pool;
  let token: string;

  beforeAll(async () => {
    const databaseUrl = await createDatabase({ migrated: true });
    service = await ServiceProcess.start({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir });
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    const response = await fetch(`${service.url}/auth/token`, { headers: { 'X-Api-Key': service.adminKey } });
    token = ((await response.json()) as { accessToken: string }).accessToken;
  });
  afterAll(async () => {
    await service?.stop();
    await db?.end();
    execFileSync('umount', [mount]);
    await rm(mount, { recursive: true, force: true });
  });

  const fileRows = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM filebox_file')).rows[0].n;
  const blobs = async () => (await readdir(join(dataDir, 'files', 'objects'))).sort();
  const temporaries = async () => readdir(join(dataDir, 'files', 'tmp'));

  it('answers uploads, parts and completions with 507 InsufficientStorage, keeps nothing of them, serves reads, and recovers once space is freed', async () => {
    const stored = randomBytes(256 * 1024);
    const first = await uploadFile(service, token, stored);
    expect(first.status).toBe(201);
    const storedId = first.json().fileID as string;
    // A session whose parts are in before the disk fills.
    const session = await fetch(`${service.url}/filebox/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ partSize: 1024 * 1024 }),
    });
    const sessionId = ((await session.json()) as { sessionID: string }).sessionID;
    const parts = [randomBytes(1024 * 1024), randomBytes(100 * 1024)];
    for (const [index, content] of parts.entries()) {
      expect((await uploadPart(service, token, sessionId, sdkPartFields(index + 1, content))).status).toBe(204);
    }

    fill(filler);
    const rowsBefore = await fileRows();
    const blobsBefore = await blobs();

    const upload = await uploadFile(service, token, randomBytes(200 * 1024));
    expect([upload.status, upload.json().code]).toEqual([507, 'InsufficientStorage']);
    const part = await uploadPart(service, token, sessionId, sdkPartFields(3, randomBytes(10 * 1024)));
    expect([part.status, part.json().code]).toEqual([507, 'InsufficientStorage']);
    // Completion writes no content (the file is made of its stored parts): it needs no space.
    const completion = await complete(service, token, sessionId);
    expect(completion.status).toBe(201);
    // A body that is not even multipart is still refused for what it is, not for the disk.
    const b = boundary();
    const noFile = await send(service, {
      method: 'PUT',
      path: '/filebox/files',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
      body: multipartBody(b, [{ name: 'other', content: 'x' }]),
    });
    expect([noFile.status, noFile.json().code]).toEqual([400, 'InvalidData']);

    // Nothing half-stored: no new row but the completed session's, no new blob, no temporary left behind.
    expect(await fileRows()).toBe(rowsBefore + 1);
    expect(await blobs()).toEqual(blobsBefore);
    expect(await temporaries()).toEqual([]);

    // Reads go on, and so does everything that does not write to the file store.
    expect(sha256((await download(service, token, storedId)).body)).toBe(sha256(stored));
    const collections = await fetch(`${service.url}/intel/collections`, { headers: { Authorization: `Bearer ${token}` } });
    expect(collections.status).toBe(200);

    // Space freed: completing again answers the same file, made of the parts it had, and uploads work again.
    await rm(filler);
    const completed = await complete(service, token, sessionId);
    expect([completed.status, completed.json().fileID]).toEqual([201, completion.json().fileID]);
    const assembled = await download(service, token, completed.json().fileID as string);
    expect(sha256(assembled.body)).toBe(sha256(Buffer.concat(parts)));
    expect((await uploadFile(service, token, randomBytes(1024))).status).toBe(201);
  });
});
