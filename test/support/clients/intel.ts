import type { Test } from 'supertest';
import { SchemaRegistryClient } from './api-client.js';

export { expectError } from './api-client.js';

/** An object form as the API takes it (single add, batch items, lookup answers). */
export interface ObjectForm {
  type: string;
  keys: { type: string; value: string }[];
  context: Record<string, unknown>;
  expiresAt?: string;
}

/** `/intel`: schemas, collections, objects, their feed and the lookup. */
export class IntelClient extends SchemaRegistryClient {
  protected readonly area = 'intel';

  createCollection(form: unknown): Test {
    return this.post('/intel/collections', form);
  }

  /** `GET /intel/collections/<path>`: a collection's view, or below it (`<name>/schema`). */
  collection(path: string): Test {
    return this.get(`/intel/collections/${path}`);
  }

  /** `query` as written after the path (`?limit=2`). */
  collections(query = ''): Test {
    return this.get(`/intel/collections${query}`);
  }

  updateCollection(name: string, body: unknown, ifMatch?: string): Test {
    return this.patch(`/intel/collections/${name}`, body, ifMatch);
  }

  add(collection: string, form: ObjectForm | Record<string, unknown>): Test {
    return this.post(`/intel/collections/${collection}/objects`, form);
  }

  remove(collection: string, objectKeyType: string, objectKey: string): Test {
    return this.delete(`/intel/collections/${collection}/objects`).query({ objectKeyType, objectKey });
  }

  objects(collection: string, query = ''): Test {
    return this.get(`/intel/collections/${collection}/objects${query}`);
  }

  /** `GET …/objects/history`: `query` as written after the path (`?objectKeyType=IPAddress&objectKey=…`). */
  history(collection: string, query = ''): Test {
    return this.get(`/intel/collections/${collection}/objects/history${query}`);
  }

  changes(collection: string, query = ''): Test {
    return this.get(`/intel/collections/${collection}/objects/changes${query}`);
  }

  batch(collection: string, body: unknown): Test {
    return this.post(`/intel/collections/${collection}/objects/batch`, body);
  }

  /** `query` as written after the path (`?format=txt`). */
  export(collection: string, query = ''): Test {
    return this.get(`/intel/collections/${collection}/export${query}`);
  }

  lookup(body: unknown): Test {
    return this.post('/intel/lookup', body);
  }
}
