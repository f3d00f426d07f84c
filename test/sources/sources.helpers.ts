import { afterAll, beforeAll, expect } from '@jest/globals';
import type { RunView } from '../../src/sources/dto/source.dto.js';
import { eventually } from '../support/eventually.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { FeedServer } from './feed-server.js';

/** The app of a source suite and the feed server its sources read. */
export interface SourceApp {
  t: TestApp;
  feed: FeedServer;
}

/**
 * The hooks of a source suite: before all, an app whose schedule's timer is off (SOURCE_POLL_SECONDS an hour:
 * the tests tick it with `SourceRunsService.runDue` or start runs themselves), with `settings` on top (read
 * then, so a function may use what an earlier `beforeAll` set), and a started feed server, both handed to
 * `use`; after all, the app closed and the server stopped. `withSourceApp((app) => ({ t, feed } = app))`.
 */
export function withSourceApp(use: (app: SourceApp) => void, settings: Record<string, string> | (() => Record<string, string>) = {}): void {
  const app: Partial<SourceApp> = {};
  beforeAll(async () => {
    app.t = await createTestApp({ SOURCE_POLL_SECONDS: '3600', ...(typeof settings === 'function' ? settings() : settings) });
    app.feed = await new FeedServer().start();
    use(app as SourceApp);
  });
  afterAll(async () => {
    await app.t?.close();
    await app.feed?.stop();
  });
}

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
