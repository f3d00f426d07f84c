import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { StorageSweepService } from '../../src/filebox/storage-sweep.service.js';
import { tokenFor } from '../support/factories.js';
import { startService, type RunningService } from '../support/processes.js';
import type { TestApp } from '../support/test-app.js';
import { complete, download, sdkPartFields, send, uploadFile, uploadPart } from './filebox.helpers.js';
import { fileboxBackend, type FileboxApp } from './storage-backends.js';

const MiB = 1024 * 1024;

/**
 * No acknowledged file is lost or corrupted when an instance dies (kill -9) in the middle of direct
 * uploads, part uploads and completions on S3: a surviving instance on the same database and bucket
 * serves every file that was answered 201, byte-exact, and the clean-up job removes only orphans.
 */
describe('filebox on S3: an instance killed during uploads and completions', () => {
  const backend = fileboxBackend('s3');
  let survivor: FileboxApp;
  let victim: RunningService;
  let dataDir: string;
  let token: string;

  beforeAll(async () => {
    survivor = await backend.createApp();
    token = await tokenFor(survivor, survivor.adminKey);
    dataDir = await mkdtemp(join(tmpdir(), 'ids-victim-'));
    victim = await startService({
      ...survivor.settings,
      NODE_NO_WARNINGS: '1',
      DATABASE_URL: survivor.databaseUrl,
      ADMIN_API_KEY: survivor.adminKey,
      DATA_DIR: dataDir,
    });
  });
  afterAll(async () => {
    if (victim.process.exitCode === null) victim.process.kill('SIGKILL');
    await survivor.close();
    await backend.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged file intact', async () => {
    const target = { url: victim.url } as TestApp;
    const acknowledged = new Map<string, Buffer>();
    let killed = false;
    // Requests the kill cut off (no answer at all).
    let interrupted = 0;
    const cut = () => {
      interrupted++;
      return undefined;
    };
    const auth = { Authorization: `Bearer ${token}` };

    const directClient = async () => {
      while (!killed) {
        const content = randomBytes(MiB / 4 + Math.floor(Math.random() * MiB));
        const response = await uploadFile(target, token, content).catch(cut);
        if (response?.status === 201) acknowledged.set(response.json().fileID!, content);
      }
    };
    const sessionClient = async () => {
      while (!killed) {
        const content = randomBytes(2 * MiB + 1000);
        const opened = await send(target, {
          method: 'POST',
          path: '/filebox/sessions',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: Buffer.from(JSON.stringify({ partSize: MiB })),
        }).catch(cut);
        if (opened?.status !== 201) continue;
        const sessionId = opened.json().sessionID!;
        let stored = true;
        for (let i = 0; i < 3 && stored; i++) {
          const part = content.subarray(i * MiB, (i + 1) * MiB);
          stored = (await uploadPart(target, token, sessionId, sdkPartFields(i + 1, part)).catch(cut))?.status === 204;
        }
        if (!stored) continue;
        const completed = await complete(target, token, sessionId).catch(cut);
        if (completed?.status === 201) acknowledged.set(completed.json().fileID!, content);
      }
    };
    const clients = [directClient(), directClient(), directClient(), sessionClient(), sessionClient()];
    // Kill once a few files are acknowledged, with every client in the middle of a request.
    for (let waited = 0; acknowledged.size < 8 && waited < 600; waited++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(acknowledged.size).toBeGreaterThanOrEqual(8);
    victim.process.kill('SIGKILL');
    killed = true;
    await Promise.all(clients);
    expect(interrupted).toBeGreaterThan(0);

    // The clean-up runs as if hours had passed: it may remove what the dead instance left, nothing else.
    await survivor.app.get(StorageSweepService).sweep(new Date(Date.now() + 25 * 3600 * 1000));
    for (const [fileId, content] of acknowledged) {
      const head = await send(survivor, { method: 'HEAD', path: `/filebox/files/${fileId}/content`, headers: auth });
      expect([fileId, head.status, head.headers['content-length']]).toEqual([fileId, 200, String(content.length)]);
      expect(head.headers['repr-digest']).toContain(`sha-256=:${createHash('sha256').update(content).digest('base64')}:`);
      expect((await download(survivor, token, fileId)).body.equals(content)).toBe(true);
    }
  });
});
