import { describe, expect, it } from '@jest/globals';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { createServer, connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { boundary, multipartBody } from '../filebox/filebox.helpers.js';
import { freePort, type ServiceProcess, startServiceProcess } from '../support/service-process.js';

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
function slowUpload(service: ServiceProcess, size: number) {
  const b = boundary();
  const body = multipartBody(b, [{ name: 'file', filename: 'slow.bin', contentType: 'application/octet-stream', content: Buffer.alloc(size, 1) }]);
  let request!: ClientRequest;
  const response = new Promise<IncomingMessage & { text: string }>((resolve, reject) => {
    request = httpRequest(
      `${service.url}/filebox/files`,
      {
        method: 'PUT',
        headers: {
          'X-Api-Key': service.adminKey,
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
  ])('refuses %s=%s at start-up with a one-line message (exit 2)', async (name, value) => {
    const service = await startServiceProcess({ env: { [name]: value }, noWait: true });
    expect(await service.exited).toBe(2);
    await service.stop();
    expect(oneLine(service.stderr())).toMatch(new RegExp(`^Invalid configuration: ${name} must `));
  });

  it('refuses a METRICS_PORT already in use with a one-line message (exit 1)', async () => {
    const port = await freePort();
    const occupant = createServer().listen(port);
    try {
      const service = await startServiceProcess({ env: { METRICS_PORT: String(port) }, noWait: true });
      expect(await service.exited).toBe(1);
      await service.stop();
      expect(oneLine(service.stderr())).toBe(
        `Start-up failed: METRICS_PORT ${port} cannot be used (EADDRINUSE): choose another port, or METRICS_PORT=0 to turn metrics off`,
      );
    } finally {
      occupant.close();
    }
  });

  it('writes readable lines with LOG_FORMAT=pretty', async () => {
    const service = await startServiceProcess({ env: { LOG_FORMAT: 'pretty' } });
    expect(await service.stop()).toBe(0);
    const lines = service.stdout().split('\n').filter((line) => line.includes('Listening on http://'));
    expect(lines).toHaveLength(1);
    expect(() => JSON.parse(lines[0])).toThrow();
    expect(lines[0]).toMatch(/INFO/);
  });

  it('on SIGTERM stops accepting connections, finishes the request in flight, then exits 0', async () => {
    const service = await startServiceProcess({ env: { LOG_LEVEL: 'info', SHUTDOWN_GRACE_SECONDS: '30' } });
    const upload = slowUpload(service, 4 * 1024 * 1024);
    await sleep(300);
    service.child.kill('SIGTERM');
    for (let attempt = 0; attempt < 100 && !(await refusesConnections(service.url)); attempt++) await sleep(50);
    expect(await refusesConnections(service.url)).toBe(true);
    expect(service.child.exitCode).toBeNull();
    upload.finish();
    const answer = await upload.response;
    expect({ status: answer.statusCode, body: JSON.parse(answer.text) }).toEqual({ status: 201, body: { fileID: expect.any(String) } });
    expect(await service.stop()).toBe(0);
    expect(service.stdout()).toContain('SIGTERM: shutting down');
  });

  it('cuts a request still in flight at SHUTDOWN_GRACE_SECONDS and exits 0', async () => {
    const service = await startServiceProcess({ env: { LOG_LEVEL: 'info', SHUTDOWN_GRACE_SECONDS: '1' } });
    const upload = slowUpload(service, 1024 * 1024);
    const outcome = upload.response.then(
      () => 'answered',
      () => 'cut',
    );
    await sleep(300);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(await outcome).toBe('cut');
    await service.stop();
    expect(service.stdout()).toContain('1 connection(s) still busy after 1 s were cut');
  });
});
