import os from 'node:os';
import { describe, expect, it } from '@jest/globals';
import { tunedSettings, visibleMemoryBytes } from './embedded-tuning.js';

const GiB = 1024 ** 3;

describe('embedded PostgreSQL tuning', () => {
  it('sizes memory settings from the memory it is given, within caps', () => {
    expect(tunedSettings(24 * GiB)).toEqual({
      shared_buffers: '6144MB',
      effective_cache_size: '18432MB',
      work_mem: '30MB',
      maintenance_work_mem: '1536MB',
      max_wal_size: '6144MB',
      random_page_cost: '1.1',
    });
    // A small container: floors keep PostgreSQL usable.
    expect(tunedSettings(1 * GiB)).toMatchObject({ shared_buffers: '256MB', work_mem: '4MB', maintenance_work_mem: '64MB', max_wal_size: '1024MB' });
    // A large host: caps keep single settings sane.
    expect(tunedSettings(512 * GiB)).toMatchObject({
      shared_buffers: '8192MB',
      effective_cache_size: '98304MB',
      work_mem: '64MB',
      maintenance_work_mem: '2048MB',
      max_wal_size: '16384MB',
    });
  });

  it('sees no more memory than the machine has', () => {
    const memory = visibleMemoryBytes();
    expect(memory).toBeGreaterThan(0);
    expect(memory).toBeLessThanOrEqual(os.totalmem());
  });
});
