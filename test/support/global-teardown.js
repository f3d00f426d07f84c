import { rm } from 'node:fs/promises';

export default async function globalTeardown() {
  const state = globalThis.__IDS_TEST_CLUSTER__;
  if (!state) return;
  await state.cluster.stop();
  await rm(state.root, { recursive: true, force: true });
}
