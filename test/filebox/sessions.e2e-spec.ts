import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SessionsService } from '../../src/filebox/sessions.service.js';
import { StorageSweepService } from '../../src/filebox/storage-sweep.service.js';
import { expectError } from '../support/clients/api-client.js';
import { tokenFor } from '../support/factories.js';
import { boundary, complete, download, multipartBody, openSession, sdkPartFields, send, sql, uploadPart } from './filebox.helpers.js';
import { BACKENDS, fileboxBackend, type FileboxApp } from './storage-backends.js';

const MiB = 1024 * 1024;

describe.each(BACKENDS)('filebox upload sessions (%s storage)', (storage) => {
  const backend = fileboxBackend(storage);
  let t: FileboxApp;
  let token: string;

  beforeAll(async () => {
    // A small cap: 3.5 MiB, so sessions of 1 MiB parts can cross it.
    t = await backend.createApp({ FILEBOX_MAX_FILE_BYTES: String(3.5 * MiB), UPLOAD_SESSION_TTL_HOURS: '1' });
    token = await tokenFor(t, t.adminKey);
  });
  afterAll(async () => {
    await t.close();
    await backend.stop();
  });

  const partKeys = async (sessionId: string) =>
    (await sql<{ storage_key: string }>(t, 'SELECT storage_key FROM filebox_upload_part WHERE session_id = $1 ORDER BY number', [sessionId])).map(
      (row) => row.storage_key,
    );

  it('opens sessions only with a whole partSize from 1 MiB to 64 MiB', async () => {
    for (const partSize of [MiB, 5 * MiB, 64 * MiB]) {
      const response = await t.http().post('/filebox/sessions').set('Authorization', `Bearer ${token}`).send({ partSize });
      expect(response.status).toBe(201);
      expect(response.body.sessionID).toMatch(/^[0-9a-f-]{36}$/);
    }
    for (const body of [{ partSize: MiB - 1 }, { partSize: 64 * MiB + 1 }, { partSize: MiB + 0.5 }, { partSize: '5242880' }, {}]) {
      const response = await t.http().post('/filebox/sessions').set('Authorization', `Bearer ${token}`).send(body);
      expectError(response, 'InvalidData');
    }
  });

  it('assembles parts sent like the SDK, out of order and with a replaced part, byte-exact', async () => {
    const content = randomBytes(2.5 * MiB);
    const pieces = [content.subarray(0, MiB), content.subarray(MiB, 2 * MiB), content.subarray(2 * MiB)];
    const sessionId = await openSession(t, token, MiB);
    const before = (await t.storage.entries()).length;

    expect((await uploadPart(t, token, sessionId, sdkPartFields(3, pieces[2]))).status).toBe(204);
    expect((await uploadPart(t, token, sessionId, sdkPartFields(1, randomBytes(MiB)))).status).toBe(204);
    expect((await uploadPart(t, token, sessionId, sdkPartFields(2, pieces[1]), 'POST')).status).toBe(204);
    // Re-uploading number 1 replaces the earlier content; its old blob goes.
    expect((await uploadPart(t, token, sessionId, sdkPartFields(1, pieces[0]))).status).toBe(204);
    const parts = await partKeys(sessionId);
    expect((await t.storage.entries()).length).toBe(before + 3);

    const completed = await complete(t, token, sessionId);
    expect(completed.status).toBe(201);
    const fileId = completed.json().fileID!;
    // Completion copies nothing: the file is made of the part blobs, in order (extensions §6).
    expect((await t.storage.entries()).length).toBe(before + 3);
    const [file] = await sql<{ part_size: number; part_keys: string[] }>(t, 'SELECT part_size, part_keys FROM filebox_file WHERE id = $1', [fileId]);
    expect(file).toEqual({ part_size: MiB, part_keys: parts });

    const head = await send(t, {
      method: 'HEAD',
      path: `/filebox/files/${fileId}/content`,
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(head.headers['content-length']).toBe(String(content.length));
    expect((await download(t, token, fileId)).body.equals(content)).toBe(true);

    // Completing again answers the same file.
    const again = await complete(t, token, sessionId);
    expect([again.status, again.json().fileID]).toEqual([201, fileId]);
  });

  it('reads number and partSize as plain values too', async () => {
    const sessionId = await openSession(t, token, MiB);
    const part = randomBytes(1000);
    const response = await uploadPart(t, token, sessionId, [
      { name: 'number', content: '1' },
      { name: 'partSize', content: '1000' },
      { name: 'filePart', filename: 'blob', content: part },
    ]);
    expect(response.status).toBe(204);
    const completed = await complete(t, token, sessionId);
    expect((await download(t, token, completed.json().fileID!)).body.equals(part)).toBe(true);
  });

  it('creates one file when a session is completed concurrently', async () => {
    const sessionId = await openSession(t, token, MiB);
    await uploadPart(t, token, sessionId, sdkPartFields(1, randomBytes(MiB)));
    await uploadPart(t, token, sessionId, sdkPartFields(2, randomBytes(MiB / 2)));
    const [{ count: before }] = await sql<{ count: string }>(t, 'SELECT count(*) FROM filebox_file');
    const answers = await Promise.all([1, 2, 3, 4].map(() => complete(t, token, sessionId)));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((answer) => answer.json().fileID)).size).toBe(1);
    const [{ count: after }] = await sql<{ count: string }>(t, 'SELECT count(*) FROM filebox_file');
    expect(Number(after)).toBe(Number(before) + 1);
  });

  it('concurrent re-uploads of one part number: one wins, only its blob stays, and completion assembles it', async () => {
    const sessionId = await openSession(t, token, MiB);
    const first = randomBytes(MiB);
    expect((await uploadPart(t, token, sessionId, sdkPartFields(1, first))).status).toBe(204);
    const before = await t.storage.entries();
    const candidates = Array.from({ length: 8 }, (_, i) => randomBytes(1000 + i));
    const answers = await Promise.all(candidates.map((content) => uploadPart(t, token, sessionId, sdkPartFields(2, content))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(204));

    const keys = await partKeys(sessionId);
    expect(keys).toHaveLength(2);
    // Every replaced upload's blob is gone; no temporary is left.
    expect((await t.storage.entries()).sort()).toEqual([...before, keys[1]].sort());

    const completed = await complete(t, token, sessionId);
    expect(completed.status).toBe(201);
    const stored = (await download(t, token, completed.json().fileID!)).body;
    expect(stored.subarray(0, MiB).equals(first)).toBe(true);
    expect(candidates.some((candidate) => candidate.equals(stored.subarray(MiB)))).toBe(true);
  });

  it('re-uploads racing completion: each is 204 or 422 InvalidState, the file is one consistent version, nothing leaks', async () => {
    const sessionId = await openSession(t, token, MiB);
    const first = randomBytes(MiB);
    const original = randomBytes(500);
    await uploadPart(t, token, sessionId, sdkPartFields(1, first));
    await uploadPart(t, token, sessionId, sdkPartFields(2, original));
    const originalKeys = await partKeys(sessionId);
    const before = await t.storage.entries();
    const candidates = Array.from({ length: 6 }, (_, i) => randomBytes(700 + i));

    const [completion, ...parts] = await Promise.all([
      complete(t, token, sessionId),
      ...candidates.map((content) => uploadPart(t, token, sessionId, sdkPartFields(2, content))),
    ]);
    expect(completion.status).toBe(201);
    const outcomes = parts.map((part) => (part.status === 204 ? '204' : `${part.status} ${part.json().code}`));
    expect(outcomes.filter((outcome) => outcome !== '204' && outcome !== '422 InvalidState')).toEqual([]);
    const fileId = completion.json().fileID!;
    const stored = (await download(t, token, fileId)).body;
    // The file holds part 1 and one whole version of part 2: the original, or a re-upload that was accepted.
    const accepted = [original, ...candidates.filter((_, i) => parts[i].status === 204)];
    expect(accepted.some((version) => stored.equals(Buffer.concat([first, version])))).toBe(true);

    // The parts became the file; replaced and refused uploads removed their own blobs.
    expect(await partKeys(sessionId)).toEqual([]);
    const [{ part_keys: fileParts }] = await sql<{ part_keys: string[] }>(t, 'SELECT part_keys FROM filebox_file WHERE id = $1', [fileId]);
    expect(fileParts[0]).toBe(originalKeys[0]);
    const expected = [...before.filter((key) => !originalKeys.includes(key)), ...fileParts];
    expect((await t.storage.entries()).sort()).toEqual(expected.sort());
    const again = await complete(t, token, sessionId);
    expect([again.status, again.json().fileID]).toEqual([201, fileId]);
  });

  it('refuses bad parts with 400 InvalidData and keeps no content', async () => {
    const sessionId = await openSession(t, token, MiB);
    const before = await t.storage.entries();
    const part = randomBytes(1000);
    const cases: [string, Parameters<typeof uploadPart>[3]][] = [
      ['number 0', sdkPartFields(0, part)],
      ['number not a number', sdkPartFields('one', part)],
      ['negative number', sdkPartFields(-1, part)],
      ['fractional number', sdkPartFields('1.5', part)],
      ['number too large for the part table', sdkPartFields('99999999999', part)],
      ['zero-length part (the SDK loop)', sdkPartFields(11, Buffer.alloc(0), 0)],
      ['empty replay after a 401', sdkPartFields(1, Buffer.alloc(0), 1000)],
      ['content shorter than declared', sdkPartFields(1, part, 1001)],
      ['content longer than declared', sdkPartFields(1, part, 999)],
      ['declared over the session partSize', sdkPartFields(1, randomBytes(MiB + 1))],
      ['missing filePart', sdkPartFields(1, part).slice(0, 2)],
      ['missing number', sdkPartFields(1, part).slice(1)],
      ['unknown field', [...sdkPartFields(1, part).slice(0, 2), { name: 'content', filename: 'upload', content: part }]],
      ['duplicate field', [...sdkPartFields(1, part).slice(0, 2), { name: 'number', content: '2' }]],
      ['too many fields', [...sdkPartFields(1, part), { name: 'extra', content: 'x' }]],
    ];
    for (const [label, fields] of cases) {
      const response = await uploadPart(t, token, sessionId, fields);
      expect([label, response.status, response.json().code]).toEqual([label, 400, 'InvalidData']);
    }
    // content longer than the session partSize, with number and partSize sent after it
    const reordered = sdkPartFields(1, randomBytes(MiB + 10)).reverse();
    const late = await uploadPart(t, token, sessionId, reordered);
    expect([late.status, late.json().code]).toEqual([400, 'InvalidData']);

    // s3rver (unlike S3) keeps the partial body of a PUT the service aborted; what it kept, the sweep removes.
    if (storage === 's3') await t.app.get(StorageSweepService).sweep(new Date(Date.now() + 25 * 3600 * 1000));
    expect(await t.storage.entries()).toEqual(before);
    expect(await sql(t, 'SELECT * FROM filebox_upload_part WHERE session_id = $1', [sessionId])).toEqual([]);
  });

  it('refuses non-multipart and broken part bodies with 400 BadRequest', async () => {
    const sessionId = await openSession(t, token, MiB);
    const b = boundary();
    const cases: { contentType?: string; body: Buffer }[] = [
      { contentType: 'application/json', body: Buffer.from('{"number":1}') },
      { contentType: 'application/x-www-form-urlencoded', body: Buffer.from('number=1&partSize=1') },
      { body: Buffer.from('x') },
      { contentType: `multipart/form-data; boundary=${b}`, body: Buffer.from('garbage without boundaries') },
      {
        contentType: `multipart/form-data; boundary=${b}`,
        body: multipartBody(b, sdkPartFields(1, randomBytes(100))).subarray(0, 300),
      },
    ];
    for (const { contentType, body } of cases) {
      const response = await send(t, {
        method: 'PUT',
        path: `/filebox/sessions/${sessionId}/parts`,
        headers: { Authorization: `Bearer ${token}`, ...(contentType ? { 'Content-Type': contentType } : {}) },
        body,
        chunked: true,
      });
      expect([response.status, response.json().code]).toEqual([400, 'BadRequest']);
    }
  });

  it('answers parts and completion of an unknown or malformed session with 404', async () => {
    for (const id of ['5d63fd9a-4ffb-46e7-afa1-cfbb0227ad3d', 'nope', '123']) {
      const part = await uploadPart(t, token, id, sdkPartFields(1, randomBytes(10)));
      expect([part.status, part.json().code]).toEqual([404, 'NotFound']);
      const completed = await complete(t, token, id);
      expect([completed.status, completed.json().code]).toEqual([404, 'NotFound']);
    }
  });

  it('refuses parts that would make the file larger than the cap with 413', async () => {
    const sessionId = await openSession(t, token, MiB);
    // number 4 of 1 MiB parts implies at least 4 MiB > 3.5 MiB
    const implied = await uploadPart(t, token, sessionId, sdkPartFields(4, randomBytes(MiB)));
    expect([implied.status, implied.json().code]).toEqual([413, 'RequestEntityTooLarge']);
    const last = await uploadPart(t, token, sessionId, sdkPartFields(4, randomBytes(MiB / 2)));
    expect(last.status).toBe(204);
    const over = await uploadPart(t, token, sessionId, sdkPartFields(4, randomBytes(MiB / 2 + 1)));
    expect([over.status, over.json().code]).toEqual([413, 'RequestEntityTooLarge']);
  });

  it('answers completion with a gap or without parts with 422 MissingFilePart', async () => {
    const empty = await openSession(t, token, MiB);
    const none = await complete(t, token, empty);
    expect([none.status, none.json().code]).toEqual([422, 'MissingFilePart']);

    const gapped = await openSession(t, token, MiB);
    await uploadPart(t, token, gapped, sdkPartFields(1, randomBytes(MiB)));
    await uploadPart(t, token, gapped, sdkPartFields(3, randomBytes(10)));
    const gap = await complete(t, token, gapped);
    expect([gap.status, gap.json().code]).toEqual([422, 'MissingFilePart']);

    const headless = await openSession(t, token, MiB);
    await uploadPart(t, token, headless, sdkPartFields(2, randomBytes(10)));
    const missingFirst = await complete(t, token, headless);
    expect([missingFirst.status, missingFirst.json().code]).toEqual([422, 'MissingFilePart']);
  });

  it('answers completion with a short non-last part with 422 InvalidFilePart, and the session stays open', async () => {
    const sessionId = await openSession(t, token, MiB);
    await uploadPart(t, token, sessionId, sdkPartFields(1, randomBytes(MiB - 1)));
    await uploadPart(t, token, sessionId, sdkPartFields(2, randomBytes(10)));
    const refused = await complete(t, token, sessionId);
    expect([refused.status, refused.json().code]).toEqual([422, 'InvalidFilePart']);
    // Fixing the part lets the session complete.
    await uploadPart(t, token, sessionId, sdkPartFields(1, randomBytes(MiB)));
    expect((await complete(t, token, sessionId)).status).toBe(201);
  });

  it('refuses parts for a completed session with 422 InvalidState', async () => {
    const sessionId = await openSession(t, token, MiB);
    await uploadPart(t, token, sessionId, sdkPartFields(1, randomBytes(10)));
    expect((await complete(t, token, sessionId)).status).toBe(201);
    const late = await uploadPart(t, token, sessionId, sdkPartFields(2, randomBytes(10)));
    expect([late.status, late.json().code]).toEqual([422, 'InvalidState']);
  });

  it('removes idle sessions and their parts after the TTL', async () => {
    const idle = await openSession(t, token, MiB);
    const active = await openSession(t, token, MiB);
    await uploadPart(t, token, idle, sdkPartFields(1, randomBytes(100)));
    await uploadPart(t, token, active, sdkPartFields(1, randomBytes(100)));
    const [{ storage_key: idleBlob }] = await sql<{ storage_key: string }>(t, 'SELECT storage_key FROM filebox_upload_part WHERE session_id = $1', [idle]);
    await sql(t, `UPDATE filebox_upload_session SET last_activity_at = now() - interval '61 minutes' WHERE id = $1`, [idle]);

    expect(await t.app.get(SessionsService).sweepIdleSessions()).toBeGreaterThanOrEqual(1);

    expect(await t.storage.entries()).not.toContain(idleBlob);
    expect(await sql(t, 'SELECT 1 FROM filebox_upload_part WHERE session_id = $1', [idle])).toEqual([]);
    const gone = await complete(t, token, idle);
    expect([gone.status, gone.json().code]).toEqual([404, 'NotFound']);
    expect((await complete(t, token, active)).status).toBe(201);
  });
});
