import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { boundary, multipartBody } from '../filebox/filebox.helpers.js';
import { dataDir, freePort, runBuilt, startService, type RunningService } from '../support/processes.js';
import { createDatabase } from '../support/test-app.js';

const ADMIN_KEY = randomBytes(24).toString('base64url');

/** The built service on a fresh database and DATA_DIR (removed when `use` ends), with ADMIN_KEY. */
async function withService(settings: Record<string, string>, use: (service: RunningService) => Promise<void>): Promise<void> {
  const directory = await dataDir();
  try {
    const service = await startService({ DATABASE_URL: await createDatabase({ migrated: true }), ADMIN_API_KEY: ADMIN_KEY, DATA_DIR: directory, ...settings });
    try {
      await use(service);
    } finally {
      await service.stop();
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** The first line the process wrote to stderr, and that it was the only one. */
function oneLine(text: string): string {
  const lines = text.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return lines[0];
}

async function refusesConnections(url: string): Promise<boolean> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** A `PUT /filebox/files` whose body is sent in two halves: the request stays in flight until `finish()`. */
function slowUpload(service: RunningService, size: number) {
  const b = boundary();
  const body = multipartBody(b, [{ name: 'file', filename: 'slow.bin', contentType: 'application/octet-stream', content: Buffer.alloc(size, 1) }]);
  let request!: ClientRequest;
  const response = new Promise<IncomingMessage & { text: string }>((resolve, reject) => {
    request = httpRequest(
      `${service.url}/filebox/files`,
      {
        method: 'PUT',
        headers: {
          'X-Api-Key': ADMIN_KEY,
          'Content-Type': `multipart/form-data; boundary=${b}`,
          'Content-Length': String(body.length),
        },
      },
      (answer) => {
        let text = '';
        answer.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        answer.on('end', () => resolve(Object.assign(answer, { text })));
        answer.on('error', reject);
      },
    );
    request.on('error', reject);
  });
  const half = Math.floor(body.length / 2);
  request.write(body.subarray(0, half));
  return { response, finish: () => request.end(body.subarray(half)) };
}

describe('the service process', () => {
  it.each([
    // Every value is checked by the configuration's unit tests; these show the process stops on them.
    ['LOG_FORMAT', 'xml'],
    ['METRICS_PORT', '99999'],
  ])('refuses %s=%s at start-up with a one-line message', async (name, value) => {
    const run = await runBuilt('main.js', [], { [name]: value });
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toMatch(new RegExp(`^Start-up failed: ${name} must `));
  });

  it('refuses a METRICS_PORT already in use with a one-line message', async () => {
    const port = await freePort();
    const occupant = createServer().listen(port);
    try {
      const run = await runBuilt('main.js', [], {
        DATABASE_URL: await createDatabase({ migrated: true }),
        METRICS_PORT: String(port),
        PORT: String(await freePort()),
      });
      expect(run.code).toBe(1);
      expect(oneLine(run.stderr)).toBe(
        `Start-up failed: METRICS_PORT ${port} cannot be used (EADDRINUSE): choose another port, or METRICS_PORT=0 to turn metrics off`,
      );
      expect(run.stdout).not.toContain('ADMIN API KEY');
    } finally {
      occupant.close();
    }
  });

  it('writes readable lines with LOG_FORMAT=pretty', async () => {
    await withService({ LOG_FORMAT: 'pretty' }, async (service) => {
      expect((await service.stop()).code).toBe(0);
      const lines = service.output.stdout.split('\n').filter((line) => line.includes('Listening on http://'));
      expect(lines).toHaveLength(1);
      expect(() => JSON.parse(lines[0])).toThrow();
      expect(lines[0]).toMatch(/INFO/);
    });
  });

  it('on SIGTERM stops accepting connections, finishes the request in flight, then exits 0', async () => {
    await withService({ LOG_LEVEL: 'info', SHUTDOWN_GRACE_SECONDS: '30' }, async (service) => {
      const upload = slowUpload(service, 4 * 1024 * 1024);
      await sleep(300);
      service.process.kill('SIGTERM');
      for (let attempt = 0; attempt < 100 && !(await refusesConnections(service.url)); attempt++) await sleep(50);
      expect(await refusesConnections(service.url)).toBe(true);
      expect(service.process.exitCode).toBeNull();
      upload.finish();
      const answer = await upload.response;
      expect({ status: answer.statusCode, body: JSON.parse(answer.text) }).toEqual({ status: 201, body: { fileID: expect.any(String) } });
      expect((await service.stop()).code).toBe(0);
      expect(service.output.stdout).toContain('SIGTERM: shutting down');
    });
  });

  it('cuts a request still in flight at SHUTDOWN_GRACE_SECONDS and exits 0', async () => {
    await withService({ LOG_LEVEL: 'info', SHUTDOWN_GRACE_SECONDS: '1' }, async (service) => {
      const upload = slowUpload(service, 1024 * 1024);
      const outcome = upload.response.then(
        () => 'answered',
        () => 'cut',
      );
      await sleep(300);
      expect((await service.stop()).code).toBe(0);
      expect(await outcome).toBe('cut');
      expect(service.output.stdout).toContain('1 connection(s) still busy after 1 s were cut');
    });
  });
});
