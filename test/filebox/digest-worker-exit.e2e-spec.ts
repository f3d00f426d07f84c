import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';

const run = promisify(execFile);

describe('the shared digest worker', () => {
  it('does not keep a process alive once its uploads are hashed (it kept Jest workers from exiting)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ids-digest-'));
    const script = join(dir, 'hash.mjs');
    await writeFile(
      script,
      `import { StreamDigests } from '${pathToFileURL(resolve('dist/filebox/digest-worker.js')).href}';
      const serving = setInterval(() => undefined, 1000); // what the HTTP server is in the service
      const digests = new StreamDigests();
      await digests.update(Buffer.from('abc'));
      const { sha256 } = await digests.digests();
      clearInterval(serving);
      console.log(sha256.toString('hex'));`,
    );
    try {
      // A process that does not exit by itself is killed at the timeout, which rejects.
      const { stdout } = await run(process.execPath, [script], { timeout: 20_000 });
      expect(stdout.trim()).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
