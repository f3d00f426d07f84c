import type { Test } from 'supertest';
import { ApiClient } from './api-client.js';

export { expectError } from './api-client.js';

/** `/intel/warninglists`: lists, their entries, MISP import and the check. */
export class WarninglistsClient extends ApiClient {
  create(form: unknown): Test {
    return this.post('/intel/warninglists', form);
  }

  lists(): Test {
    return this.get('/intel/warninglists');
  }

  list(name: string): Test {
    return this.get(`/intel/warninglists/${name}`);
  }

  /** `query` as written after the path (`?limit=1000`). */
  entries(name: string, query = ''): Test {
    return this.get(`/intel/warninglists/${name}/entries${query}`);
  }

  replace(name: string, form: unknown, ifMatch?: string): Test {
    return this.put(`/intel/warninglists/${name}`, form, ifMatch);
  }

  update(name: string, body: unknown, ifMatch?: string): Test {
    return this.patch(`/intel/warninglists/${name}`, body, ifMatch);
  }

  remove(name: string): Test {
    return this.delete(`/intel/warninglists/${name}`);
  }

  /** `POST …/import` of a MISP warninglist document; `query` as written after the path. */
  import(document?: unknown, query = ''): Test {
    return this.post(`/intel/warninglists/import${query}`, document);
  }

  check(body: unknown): Test {
    return this.post('/intel/warninglists/check', body);
  }
}
