import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { boundary, download, multipartBody, openSession, sdkPartFields, sql } from '../filebox/filebox.helpers.js';
import { eventually } from '../support/eventually.js';
import { tokenFor } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
interface SlowRequest {
  /** Resolves with the answer once the request was sent whole (after `finish`) or cut off by the server. */
  answer: Promise<{ status: number; body: string }>;
  /** Sends the rest of the body at once. */
  finish: () => void;
}

/**
 * A client that sends the first `head` bytes of `body`, then one byte every 100 ms (as a client on a
 * starved link would) until `finish` sends the rest; it never sends the last byte on its own.
 */
function slowRequest(url: string, method: string, headers: Record<string, string>, body: Buffer, head: number): SlowRequest {
  let sent = head;
  let timer: NodeJS.Timeout | undefined;
  let finish = () => undefined as void;
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(url, { method, headers: { ...headers, 'Content-Length': String(body.length) } });
    request.on('response', (incoming) => {
      clearInterval(timer);
      let text = '';
      incoming.on('data', (data: Buffer) => (text += data.toString()));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: text }));
    });
    request.on('error', (error) => {
      clearInterval(timer);
      reject(error);
    });
    request.write(body.subarray(0, head));
    timer = setInterval(() => {
      if (sent < body.length - 1) request.write(body.subarray(sent, ++sent));
    }, 100);
    finish = () => {
      clearInterval(timer);
      request.end(body.subarray(sent));
    };
  });
  return { answer, finish: () => finish() };
}

/** Everything a raw connection receives until the server closes it. */
function received(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(data));
  });
}

function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The JSON body of a raw HTTP answer. */
function jsonOf(raw: string): { code?: string } {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { code?: string };
}

const temporaries = async (t: TestApp) => readdir(join(t.dataDir, 'files', 'tmp'));

describe('slow uploads do not hold database connections', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    // Two pooled connections for six slow uploads: any upload holding one while it trickles starves the rest.
    t = await createTestApp({ DATABASE_POOL_SIZE: '2' });
    token = await tokenFor(t, t.adminKey);
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves other requests while six uploads trickle in, then stores each upload whole', async () => {
    const auth = { Authorization: `Bearer ${token}` };
    const uploads: { content: Buffer; request: SlowRequest; session?: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const content = randomBytes(2048);
      const b = boundary();
      const body = multipartBody(b, [{ name: 'file', filename: `slow-${i}`, contentType: 'application/octet-stream', content }]);
      const headers = { ...auth, 'Content-Type': `multipart/form-data; boundary=${b}` };
      // The part headers and a few content bytes first, so that the service is storing the content.
      uploads.push({ content, request: slowRequest(`${t.url}/filebox/files`, 'PUT', headers, body, body.indexOf(content) + 16) });
    }
    for (let i = 0; i < 3; i++) {
      const session = await openSession(t, token, 1024 * 1024);
      const content = randomBytes(2048);
      const b = boundary();
      const body = multipartBody(b, sdkPartFields(1, content));
      const headers = { ...auth, 'Content-Type': `multipart/form-data; boundary=${b}` };
      const url = `${t.url}/filebox/sessions/${session}/parts`;
      uploads.push({ content, session, request: slowRequest(url, 'PUT', headers, body, body.indexOf(content) + 16) });
    }

    // Every upload has reached storage: the handlers are past authentication and are reading the body.
    await eventually(async () => (await temporaries(t)).length === uploads.length);
    expect(await temporaries(t)).toHaveLength(uploads.length);
    // No connection of the service is running a query or sitting in a transaction meanwhile.
    const busy = await sql<{ state: string; query: string }>(
      t,
      `SELECT state, query FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
    );
    expect(busy).toEqual([]);

    // Normal traffic, more requests at once than the pool has connections, all while the uploads trickle.
    const traffic = await Promise.all([
      ...Array.from({ length: 6 }, () => t.http().get('/auth/keys').set(auth)),
      ...Array.from({ length: 6 }, (_, i) =>
        t
          .http()
          .post('/filebox/sessions')
          .set(auth)
          .send({ partSize: 1024 * 1024 + i }),
      ),
      ...Array.from({ length: 4 }, () => t.http().get('/intel/collections').set(auth)),
    ]);
    expect(traffic.map((response) => response.status)).toEqual([...Array(6).fill(200), ...Array(6).fill(201), ...Array(4).fill(200)]);
    expect(await temporaries(t)).toHaveLength(uploads.length);

    for (const upload of uploads) upload.request.finish();
    const answers = await Promise.all(uploads.map((upload) => upload.request.answer));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 204, 204, 204]);
    for (const [i, upload] of uploads.entries()) {
      let fileId = (JSON.parse(answers[i].body || '{}') as { fileID?: string }).fileID;
      if (upload.session) {
        const completed = await t.http().post(`/filebox/sessions/${upload.session}/completed`).set(auth);
        expect(completed.status).toBe(201);
        fileId = (completed.body as { fileID: string }).fileID;
      }
      const content = await download(t, token, fileId as string);
      expect(sha256(content.body)).toBe(sha256(upload.content));
    }
  });
});

describe('server deadlines and connection bound', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({
      HEADERS_TIMEOUT_SECONDS: '1',
      REQUEST_TIMEOUT_SECONDS: '2',
      KEEP_ALIVE_TIMEOUT_SECONDS: '1',
      MAX_CONNECTIONS: '4',
    });
    token = await tokenFor(t, t.adminKey);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a client that sends its headers slowly with 408 RequestTimeout and closes the connection', async () => {
    const socket = await openSocket(t.url);
    const answer = received(socket);
    socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    // Up to 100 s of header bytes, one per 100 ms: far longer than the deadline.
    let trickled = 0;
    const timer = setInterval(() => {
      if (socket.writable && trickled++ < 1000) socket.write('a');
    }, 100);
    const raw = await answer;
    clearInterval(timer);
    expect(trickled).toBeLessThan(1000);
    expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    expect(jsonOf(raw).code).toBe('RequestTimeout');
  });

  it('cuts off an upload whose body trickles past the request deadline and keeps nothing of it', async () => {
    const filesBefore = await sql<{ n: number }>(t, 'SELECT count(*)::int AS n FROM filebox_file');
    const content = randomBytes(4096);
    const b = boundary();
    const body = multipartBody(b, [{ name: 'file', filename: 'slow', contentType: 'application/octet-stream', content }]);
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` };
    const upload = slowRequest(`${t.url}/filebox/files`, 'PUT', headers, body, body.indexOf(content) + 16);
    const answer = await upload.answer;
    expect(answer.status).toBe(408);
    expect((JSON.parse(answer.body) as { code: string }).code).toBe('RequestTimeout');
    await eventually(async () => (await temporaries(t)).length === 0);
    expect(await temporaries(t)).toEqual([]);
    expect(await sql<{ n: number }>(t, 'SELECT count(*)::int AS n FROM filebox_file')).toEqual(filesBefore);
  });

  it('keeps a connection alive between requests and closes it once idle for the keep-alive timeout', async () => {
    const socket = await openSocket(t.url);
    const answer = received(socket);
    socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await new Promise((resolve) => socket.once('data', resolve));
    socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n');
    // Both answers came on the one connection, which the server then closed for idleness.
    const raw = await answer;
    expect(raw.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
    expect(raw).toContain('Keep-Alive: timeout=1');
  });

  it('refuses connections past MAX_CONNECTIONS, and idle ones are cut off by the headers deadline', async () => {
    const connections = () => new Promise<number>((resolve) => t.app.getHttpServer().getConnections((_: unknown, n: number) => resolve(n)));
    // Keep-alive connections of the earlier requests close within the keep-alive timeout.
    await eventually(async () => (await connections()) === 0);
    const idle = await Promise.all(Array.from({ length: 4 }, () => openSocket(t.url)));
    const closed = idle.map(received);
    await eventually(async () => (await connections()) === 4);
    expect(await connections()).toBe(4);
    const extra = await openSocket(t.url);
    const extraAnswer = received(extra);
    extra.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n');
    // Dropped on arrival: no answer at all.
    expect(await extraAnswer).toBe('');
    // The idle connections do not hold their places: each gets 408 once the headers deadline passes.
    for (const raw of await Promise.all(closed)) expect(jsonOf(raw).code).toBe('RequestTimeout');
    const health = await t.http().get('/health/live');
    expect(health.status).toBe(200);
  });
});
