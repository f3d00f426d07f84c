// One throwaway PostgreSQL cluster for the whole run; each test file creates its own database on it.
// Jest loads this file outside its TypeScript transform, so it uses the build output (`npm test` builds first).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDatabase } from '../../dist/database/embedded-postgres.js';

export default async function globalSetup() {
  const root = await mkdtemp(join(tmpdir(), 'ids-test-'));
  const cluster = await EmbeddedDatabase.start(join(root, 'pg'), { ephemeral: true });
  globalThis.__IDS_TEST_CLUSTER__ = { cluster, root };
  // Test workers start after this and inherit the environment.
  process.env.IDS_TEST_ADMIN_URL = cluster.adminUrl;
}
