import { expect } from '@jest/globals';
import { ERROR_STATUS, type ErrorCode } from '../../../src/common/errors/api-error.js';
import type { TestApp } from '../test-app.js';
import type { ErrorAnswer } from './api-client.js';

export const TAXII = 'application/taxii+json;version=2.1';
export const ROOT = '/taxii2/api';

/** A TAXII client as taxii2-client speaks: Basic credentials (the key as password) and the TAXII Accept header. */
export function taxiiClient(t: TestApp, key: string) {
  const withHeaders = <R extends { set: (name: string, value: string) => R; auth: (user: string, password: string) => R }>(request: R) =>
    request.auth('taxii-client', key).set('Accept', TAXII);
  return {
    get: (path: string) => withHeaders(t.http().get(path)).buffer(true).parse(parseJson),
    post: (path: string, body: unknown) => withHeaders(t.http().post(path)).set('Content-Type', TAXII).send(JSON.stringify(body)).buffer(true).parse(parseJson),
    delete: (path: string) => withHeaders(t.http().delete(path)).buffer(true).parse(parseJson),
  };
}

/** Bodies are parsed whatever their media type (supertest parses only the types it knows). */
export function parseJson(res: unknown, callback: (error: Error | null, body: unknown) => void): void {
  const response = res as NodeJS.ReadableStream;
  let text = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => (text += chunk));
  response.on('end', () => {
    try {
      callback(null, text === '' ? undefined : JSON.parse(text));
    } catch (error) {
      callback(error as Error, undefined);
    }
  });
}

/**
 * Asserts a TAXII error message (TAXII 2.1 §3.6.1): the status the one error table gives `code`, the same
 * status in `http_status`, the code in `error_code`, as application/taxii+json. The body must be parsed
 * (`parseJson`, as `taxiiClient` does).
 */
export function expectTaxiiError(response: ErrorAnswer, code: ErrorCode): void {
  const status = ERROR_STATUS[code];
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ http_status: String(status), error_code: code });
  expect(response.headers['content-type']).toBe(TAXII);
}
