import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { tunedSettings, visibleMemoryBytes } from '../../src/database/embedded-tuning.js';
import { freePort } from '../support/processes.js';

/** `npm start`'s process on a fresh DATA_DIR: the embedded PostgreSQL gets settings sized to the machine. */
describe('embedded PostgreSQL settings at start', () => {
  let service: ChildProcess | undefined;
  let dataDir: string | undefined;

  afterAll(async () => {
    if (service && service.exitCode === null) {
      const exited = new Promise((done) => service!.once('exit', done));
      service.kill('SIGTERM');
      await exited;
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('are computed from the visible memory, printed once, and EMBEDDED_PG_SETTINGS overrides them', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ids-tuning-'));
    const env = {
      PATH: process.env.PATH,
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      ADMIN_API_KEY: randomBytes(24).toString('base64url'),
      EMBEDDED_PG_SETTINGS: 'work_mem=12MB',
      METRICS_PORT: '0',
    };
    service = spawn(process.execPath, ['dist/main.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    await new Promise<void>((started, failed) => {
      const collect = (chunk: Buffer) => {
        output += chunk.toString();
        if (/Listening on/.test(output)) started();
      };
      service!.stdout!.on('data', collect);
      service!.stderr!.on('data', collect);
      service!.once('exit', (code) => failed(new Error(`service exited (${code}): ${output}`)));
    });

    const expected = { ...tunedSettings(visibleMemoryBytes()), work_mem: '12MB' };
    const lines = output.split('\n').filter((line) => line.includes('Embedded PostgreSQL settings'));
    expect(lines).toHaveLength(1);
    for (const [name, value] of Object.entries(expected)) expect(lines[0]).toContain(`${name}=${value}`);

    // The running cluster has them: its port is line 4 of postmaster.pid, its password beside the data directory.
    const pid = (await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n');
    const password = (await readFile(join(dataDir, 'pg.password'), 'utf8')).trim();
    const client = new pg.Client({ host: '127.0.0.1', port: Number(pid[3]), user: 'postgres', password, database: 'postgres' });
    await client.connect();
    try {
      for (const [name, value] of Object.entries(expected)) {
        const { rows } = await client.query(
          `SELECT current_setting($1) AS actual,
                  CASE WHEN $2 ~ '^[0-9]+MB$' THEN pg_size_bytes(current_setting($1)) = pg_size_bytes($2)
                       ELSE current_setting($1) = $2 END AS equal`,
          [name, value],
        );
        expect({ name, ...rows[0] }).toMatchObject({ name, equal: true });
      }
    } finally {
      await client.end();
    }
  });
});
