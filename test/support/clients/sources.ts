import type { Test } from 'supertest';
import { ApiClient } from './api-client.js';

export { expectError } from './api-client.js';

/** `/intel/sources`: sources, their runs (started and dry), run log and claims. */
export class SourcesClient extends ApiClient {
  create(form: unknown): Test {
    return this.post('/intel/sources', form);
  }

  /** `query` as written after the path (`?limit=2`). */
  sources(query = ''): Test {
    return this.get(`/intel/sources${query}`);
  }

  source(name: string): Test {
    return this.get(`/intel/sources/${name}`);
  }

  update(name: string, body: unknown, ifMatch?: string): Test {
    return this.patch(`/intel/sources/${name}`, body, ifMatch);
  }

  remove(name: string): Test {
    return this.delete(`/intel/sources/${name}`);
  }

  /** `POST …/runs`: starts a run (202 `{runID}`). */
  start(name: string): Test {
    return this.post(`/intel/sources/${name}/runs`);
  }

  /** `GET …/runs`: the run log, latest first. */
  runs(name: string, query = ''): Test {
    return this.get(`/intel/sources/${name}/runs${query}`);
  }

  /** `POST …/test`: a dry run, nothing written. */
  dryRun(name: string): Test {
    return this.post(`/intel/sources/${name}/test`);
  }

  /** `GET …/objects`: the source's claims. */
  claims(name: string, query = ''): Test {
    return this.get(`/intel/sources/${name}/objects${query}`);
  }
}
