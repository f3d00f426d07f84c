import { expect } from '@jest/globals';
import type { Test } from 'supertest';
import { ERROR_STATUS, type ErrorCode } from '../../../src/common/errors/api-error.js';
import type { TestApp } from '../test-app.js';

/** What a client needs of an app. */
export type ClientApp = Pick<TestApp, 'http' | 'adminKey'>;

/** How a client authenticates: a key's value (`X-Api-Key`), a bearer token, or nothing. */
export type Credential = string | { bearer: string } | null;

/** What `expectError` reads of an answer (a supertest response, or any client's answer shaped alike). */
export interface ErrorAnswer {
  status: number;
  body?: unknown;
  headers: Record<string, unknown>;
}

/**
 * Asserts a coded error answer, as every error the service answers with is: JSON `{code, message, details?}`
 * with the status the one error table gives `code`.
 */
export function expectError(response: ErrorAnswer, code: ErrorCode): void {
  expect({ status: response.status, code: (response.body as { code?: unknown } | undefined)?.code }).toEqual({
    status: ERROR_STATUS[code],
    code,
  });
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(typeof (response.body as { message?: unknown }).message).toBe('string');
}

/**
 * Requests to one app as one caller (the admin key unless told otherwise). The area clients add typed
 * helpers for the routes tests use most; `get`/`post`/... build any other request with the same credential.
 */
export class ApiClient {
  constructor(
    readonly t: ClientApp,
    readonly credential: Credential = t.adminKey,
  ) {}

  /** The same client calling with another credential. */
  as(credential: Credential): this {
    return new (this.constructor as new (t: ClientApp, credential: Credential) => this)(this.t, credential);
  }

  request(method: 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete', path: string): Test {
    const request = this.t.http()[method](path);
    if (typeof this.credential === 'string') return request.set('X-Api-Key', this.credential);
    if (this.credential) return request.set('Authorization', `Bearer ${this.credential.bearer}`);
    return request;
  }

  get(path: string): Test {
    return this.request('get', path);
  }

  head(path: string): Test {
    return this.request('head', path);
  }

  /** A body, when given, is sent as JSON; without one, `.send(...)` what the test needs. */
  post(path: string, body?: unknown): Test {
    return withBody(this.request('post', path), body);
  }

  /** A POST of `body` as it stands (a string is sent verbatim) with the Content-Type `contentType`. */
  postAs(contentType: string, path: string, body: string | object): Test {
    return this.request('post', path).set('Content-Type', contentType).send(body);
  }

  put(path: string, body?: unknown, ifMatch?: string): Test {
    return withBody(withTag(this.request('put', path), ifMatch), body);
  }

  patch(path: string, body?: unknown, ifMatch?: string): Test {
    return withBody(withTag(this.request('patch', path), ifMatch), body);
  }

  delete(path: string): Test {
    return this.request('delete', path);
  }
}

/** The routes of a schema registry, which intel and insight each serve under their own path. */
export abstract class SchemaRegistryClient extends ApiClient {
  protected abstract readonly area: 'intel' | 'insight';

  createSchema(document: unknown): Test {
    return this.post(`/${this.area}/schemas`, document);
  }

  schema(schemaID: string): Test {
    return this.get(`/${this.area}/schemas/${schemaID}`);
  }

  /** `query` as written after the path (`?limit=2`). */
  schemas(query = ''): Test {
    return this.get(`/${this.area}/schemas${query}`);
  }

  replaceSchema(schemaID: string, document: unknown, ifMatch?: string): Test {
    return this.put(`/${this.area}/schemas/${schemaID}`, document, ifMatch);
  }
}

function withBody(request: Test, body: unknown): Test {
  return body === undefined ? request : request.send(body as object);
}

function withTag(request: Test, ifMatch: string | undefined): Test {
  return ifMatch === undefined ? request : request.set('If-Match', ifMatch);
}
