import { expect } from '@jest/globals';
import type { RunView } from '../../src/sources/dto/source.dto.js';
import { eventually } from '../support/eventually.js';
import type { TestApp } from '../support/test-app.js';

/** `POST …/runs` as the admin, then the run's log entry once it has finished. */
export async function runNow(t: TestApp, name: string): Promise<RunView> {
  const started = await t.sources.start(name);
  expect(started.status).toBe(202);
  const { runID } = started.body as { runID: string };
  return eventually(async () => {
    const log = await t.sources.runs(name);
    const found = (log.body as RunView[]).find((entry) => entry.runID === runID);
    return found?.finishedAt ? found : false;
  });
}
