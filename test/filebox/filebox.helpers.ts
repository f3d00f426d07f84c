import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { TestApp } from '../support/test-app.js';

/** What the request helpers need of a service: its URL (an in-process TestApp, or a separate process). */
export type Served = Pick<TestApp, 'url'>;

export interface FormField {
  name: string;
  filename?: string;
  contentType?: string;
  content: Buffer | string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json: () => { code?: string; fileID?: string; sessionID?: string };
}

/** A multipart/form-data body built byte by byte, as the SDK (httpx) frames it. */
export function multipartBody(boundary: string, fields: FormField[]): Buffer {
  const pieces: Buffer[] = [];
  for (const field of fields) {
    const disposition = `form-data; name="${field.name}"` + (field.filename === undefined ? '' : `; filename="${field.filename}"`);
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n` + (field.contentType ? `Content-Type: ${field.contentType}\r\n` : '') + '\r\n';
    pieces.push(Buffer.from(head, 'utf8'), Buffer.from(field.content), Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

export function boundary(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Sends one request with node:http. `chunked` sends the body with Transfer-Encoding: chunked in pieces of
 * 64 KiB (no Content-Length), as the SDK's synchronous client does for part uploads.
 */
export function send(
  t: Served,
  options: { method: string; path: string; headers?: Record<string, string>; body?: Buffer; chunked?: boolean },
): Promise<RawResponse> {
  const body = options.body ?? Buffer.alloc(0);
  const headers: Record<string, string> = { ...options.headers };
  if (!options.chunked) headers['Content-Length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${t.url}${options.path}`, { method: options.method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const data = Buffer.concat(chunks);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: data,
          json: () => JSON.parse(data.toString('utf8')),
        });
      });
    });
    request.on('error', reject);
    if (options.chunked) {
      for (let offset = 0; offset < body.length; offset += 65536) request.write(body.subarray(offset, offset + 65536));
      request.end();
    } else {
      request.end(body);
    }
  });
}

/** `PUT /filebox/files` with one `file` field. */
export function uploadFile(t: Served, token: string, content: Buffer, filename = 'sample.bin'): Promise<RawResponse> {
  const b = boundary();
  return send(t, {
    method: 'PUT',
    path: '/filebox/files',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
    body: multipartBody(b, [{ name: 'file', filename, contentType: 'application/octet-stream', content }]),
  });
}

/** A part exactly as the SDK sends it: three file parts named "upload", in order, chunked. */
export function sdkPartFields(number: number | string, content: Buffer, declared: number | string = content.length) {
  const field = (name: string, value: Buffer | string): FormField => ({
    name,
    filename: 'upload',
    contentType: 'application/octet-stream',
    content: value,
  });
  return [field('number', String(number)), field('partSize', String(declared)), field('filePart', content)];
}

export function uploadPart(t: Served, token: string, sessionId: string, fields: FormField[], method: 'PUT' | 'POST' = 'PUT'): Promise<RawResponse> {
  const b = boundary();
  return send(t, {
    method,
    path: `/filebox/sessions/${sessionId}/parts`,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` },
    body: multipartBody(b, fields),
    chunked: true,
  });
}

/** `POST .../completed` as the SDK sends it: Content-Length 0, no Content-Type. */
export function complete(t: Served, token: string, sessionId: string): Promise<RawResponse> {
  return send(t, {
    method: 'POST',
    path: `/filebox/sessions/${sessionId}/completed`,
    headers: { Authorization: `Bearer ${token}` },
  });
}

export async function openSession(t: TestApp, token: string, partSize: number): Promise<string> {
  const response = await t.http().post('/filebox/sessions').set('Authorization', `Bearer ${token}`).send({ partSize });
  if (response.status !== 201) throw new Error(`session creation failed: ${response.status}`);
  return (response.body as { sessionID: string }).sessionID;
}

export async function download(t: Served, token: string, fileId: string, range?: string): Promise<RawResponse> {
  return send(t, {
    method: 'GET',
    path: `/filebox/files/${fileId}/content`,
    headers: { Authorization: `Bearer ${token}`, ...(range === undefined ? {} : { Range: range }) },
  });
}

export async function sql<T>(t: TestApp, text: string, values: unknown[] = []): Promise<T[]> {
  return (await t.db.query(text, values)).rows as T[];
}
