import type { Test } from 'supertest';
import { ApiClient } from './api-client.js';

export { expectError } from './api-client.js';

/** `/auth`: keys, tokens, resources and the audit trail. */
export class AuthClient extends ApiClient {
  /** `POST /auth/keys` with a key form as the API takes it (see `createKey` in factories.ts for a typed spec). */
  createKey(form: unknown): Test {
    return this.post('/auth/keys', form);
  }

  /** `query` as written after the path (`?limit=2`). */
  keys(query = ''): Test {
    return this.get(`/auth/keys${query}`);
  }

  /** `GET /auth/keys/{id}`: one key's view and its `ETag`. */
  key(id: number | string): Test {
    return this.get(`/auth/keys/${id}`);
  }

  /** `PATCH /auth/keys/{id}`, with `If-Match` when a tag is given. */
  updateKey(id: number | string, form: unknown, ifMatch?: string): Test {
    return this.patch(`/auth/keys/${id}`, form, ifMatch);
  }

  revoke(id: number | string): Test {
    return this.post(`/auth/keys/${id}/revoked`);
  }

  usage(id: number | string): Test {
    return this.get(`/auth/keys/${id}/usage`);
  }

  token(): Test {
    return this.get('/auth/token');
  }

  resources(query = ''): Test {
    return this.get(`/auth/resources${query}`);
  }

  audit(query = ''): Test {
    return this.get(`/auth/audit${query}`);
  }
}
