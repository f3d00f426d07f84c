import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { FILE_STORAGE, type FileStorage } from '../../src/filebox/storage/file-storage.js';
import { tokenFor } from '../support/factories.js';
import { complete, download, openSession, sdkPartFields, send, sql, uploadPart } from './filebox.helpers.js';
import { BACKENDS, fileboxBackend, type FileboxApp } from './storage-backends.js';

const MiB = 1024 * 1024;

/** decisions §10 digests of session files: no second read of parts that arrived in order (extensions §6). */
describe.each(BACKENDS)('filebox session digests (%s storage)', (storage) => {
  const backend = fileboxBackend(storage);
  let t: FileboxApp;
  let token: string;
  let reads: { mock: { calls: unknown[][] }; mockClear(): void };

  beforeAll(async () => {
    t = await backend.createApp();
    token = await tokenFor(t, t.adminKey);
    reads = jest.spyOn(t.app.get<FileStorage>(FILE_STORAGE), 'openRange');
  });
  afterAll(async () => {
    await t.close();
    await backend.stop();
  });

  /** Uploads the parts of `content` in `order`, completes, checks the file; the blob keys completion read. */
  async function completeInOrder(content: Buffer, order: number[], replace: number[] = []): Promise<string[]> {
    const sessionId = await openSession(t, token, MiB);
    const piece = (number: number) => content.subarray((number - 1) * MiB, number * MiB);
    for (const number of [...order, ...replace]) {
      expect((await uploadPart(t, token, sessionId, sdkPartFields(number, piece(number)))).status).toBe(204);
    }
    const keys = (await sql<{ storage_key: string }>(t, 'SELECT storage_key FROM filebox_upload_part WHERE session_id = $1 ORDER BY number', [sessionId])).map(
      (row) => row.storage_key,
    );
    reads.mockClear();
    const completed = await complete(t, token, sessionId);
    expect(completed.status).toBe(201);
    const read = reads.mock.calls.map(([key]) => keys.indexOf(key as string) + 1);
    const fileId = completed.json().fileID!;
    const head = await send(t, { method: 'HEAD', path: `/filebox/files/${fileId}/content`, headers: { Authorization: `Bearer ${token}` } });
    const sha256 = createHash('sha256').update(content).digest('base64');
    const sha512 = createHash('sha512').update(content).digest('base64');
    expect(head.headers['repr-digest']).toBe(`sha-256=:${sha256}:, sha-512=:${sha512}:`);
    expect((await download(t, token, fileId)).body.equals(content)).toBe(true);
    return read.map(String);
  }

  it('hashes parts that arrive in order on the way: completion reads nothing back', async () => {
    expect(await completeInOrder(randomBytes(3 * MiB + 100), [1, 2, 3, 4])).toEqual([]);
  });

  it('reads back only what the running hashes lack when parts arrive out of order', async () => {
    // 1, 2 and then 3 extend the hashes (3 arrives right after 2 was hashed); 4 came too early.
    expect(await completeInOrder(randomBytes(3 * MiB + 100), [1, 2, 4, 3])).toEqual(['4']);
    // 2 came before 1: everything from 2 on is read.
    expect(await completeInOrder(randomBytes(3 * MiB + 100), [2, 1, 3, 4])).toEqual(['2', '3', '4']);
  });

  it('reads everything again when a part already hashed was replaced', async () => {
    expect(await completeInOrder(randomBytes(2 * MiB + 100), [1, 2, 3], [2])).toEqual(['1', '2', '3']);
  });
});
