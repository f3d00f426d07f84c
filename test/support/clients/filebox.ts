import type { Test } from 'supertest';
import { ApiClient } from './api-client.js';

export { expectError } from './api-client.js';

/** `/filebox` through supertest (uploads framed byte by byte go through `send` in test/filebox/filebox.helpers.ts). */
export class FileboxClient extends ApiClient {
  openSession(body: unknown): Test {
    return this.post('/filebox/sessions', body);
  }

  completeSession(sessionID: string): Test {
    return this.post(`/filebox/sessions/${sessionID}/completed`);
  }

  content(fileID: string): Test {
    return this.get(`/filebox/files/${fileID}/content`);
  }
}
