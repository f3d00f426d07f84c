import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { StreamDigests } from './digest-worker.js';

const MiB = 1024 * 1024;

describe('StreamDigests', () => {
  it('hashes many streams fed at once right, though together they outrun what the digest thread may hold', async () => {
    // Fed from memory, every stream reaches its own limit (6 MiB at the worker) at once; 14 of them would hold
    // 84 MiB, beyond the 64 allowed for all: the later streams wait for slots of the earlier ones to come back.
    const contents = Array.from({ length: 14 }, (_, i) => randomBytes(8 * MiB + i * 1000));
    const results = await Promise.all(
      contents.map(async (content) => {
        const digests = new StreamDigests();
        for (let offset = 0; offset < content.length; offset += 64 * 1024) {
          await digests.update(content.subarray(offset, offset + 64 * 1024));
        }
        return digests.digests();
      }),
    );
    for (const [i, digests] of results.entries()) {
      for (const algorithm of ['md5', 'sha1', 'sha256', 'sha512'] as const) {
        expect(digests[algorithm].equals(createHash(algorithm).update(contents[i]).digest())).toBe(true);
      }
    }
  });
});
