import type { Test } from 'supertest';
import { ApiClient } from './api-client.js';

export { expectError } from './api-client.js';

/** `/intel/sightings`: recording sightings and listing them. */
export class SightingsClient extends ApiClient {
  /** `POST /intel/sightings` with the items (or a body a test builds itself). */
  record(body: unknown): Test {
    return this.post('/intel/sightings', body);
  }

  /** `query` as written after the path (`?objectKeyType=MD5Hash&objectKey=…`). */
  sightings(query = ''): Test {
    return this.get(`/intel/sightings${query}`);
  }
}
