import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { BUILTIN_RESOURCES } from '../../src/common/guard/access.js';
import { completeAs, executorKey, failAs, fleetTake, heartbeatAs } from '../insight/executor-support.js';
import { domainParams, GOOD_RESULT, registerSchema, registerTask, viewTask } from '../insight/insight-support.js';
import { createCollection } from '../intel/objects.helpers.js';
import { expectAccessible, HOSTILE, launchBrowser, signedInAs, signIn, withScreenshot, type BrowserSession } from '../support/browser.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** The page's globals, inside `page.evaluate` (the project compiles without the DOM library). */

/** Markup that would run script if any page put it into HTML unescaped. */
const MD5 = 'a'.repeat(32);
const SHA256 = 'b'.repeat(64);
/** Console times: UTC to the second. */
const shown = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
/** How many Cancel task and Retry task buttons the page shows. */
const taskActionButtons = (page: Page) =>
  page
    .getByRole('button')
    .filter({ hasText: /Cancel task|Retry task/ })
    .count();

describe('console: task attempts, cancel and retry; sightings and warnings', () => {
  let t: TestApp;
  let browser: Browser;
  let executor: string;
  const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString().replace(/\.\d+Z$/, '.000Z');

  beforeAll(async () => {
    [t, browser] = await Promise.all([createTestApp(), launchBrowser()]);
    await registerSchema(t);
    executor = await executorKey(t);
    await createCollection(t, 'sighted');
    const objects = [
      { type: 'DomainName', keys: [{ type: 'DomainName', value: 'seen.example' }], context: {} },
      { type: 'DomainName', keys: [{ type: 'DomainName', value: 'quiet.example' }], context: {} },
      { type: 'DomainName', keys: [{ type: 'DomainName', value: 'www.warned.example' }], context: {} },
      {
        type: 'File',
        keys: [
          { type: 'MD5Hash', value: MD5 },
          { type: 'SHA256Hash', value: SHA256 },
        ],
        context: {},
      },
    ];
    const batch = await t.http().post('/intel/collections/sighted/objects/batch').set('X-Api-Key', t.adminKey).send(objects);
    expect(batch.body.added).toBe(objects.length);
    const list = { name: 'benign-hosts', description: HOSTILE, kind: 'hostname', entries: ['warned.example'] };
    await t.http().post('/intel/warninglists').set('X-Api-Key', t.adminKey).send(list).expect(201);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const asKey = (key: string, name: string, steps: (page: Page, session: BrowserSession) => Promise<void>) => signedInAs(browser, t.url, key, name, steps);

  const attemptRows = (page: Page) => page.getByRole('table', { name: 'Attempts, oldest first' }).locator('tbody tr');
  const cellsOf = async (page: Page, row: number) =>
    page.getByRole('table', { name: 'Attempts, oldest first' }).locator('tbody tr').nth(row).locator('td').allTextContents();

  it("shows a leased task's attempt and progress; cancel asks its executor to stop, retry puts it back with its attempts kept", async () => {
    const id = await registerTask(t, domainParams('leased.example'));
    const [item] = await fleetTake(t, executor, { executor: 'sandbox-7' });
    expect(item.id).toBe(id);
    const beat = await heartbeatAs(t, executor, { taskID: id, leaseToken: item.leaseToken, progress: { percent: 40, message: HOSTILE } });
    expect(beat.status).toBe(200);
    await asKey(t.adminKey, 'task-attempts', async (page) => {
      await page.goto(`/console/tasks/${id}`);
      await page.getByRole('heading', { name: `Task ${id}` }).waitFor();
      expect(await page.getByLabel('Progress').getAttribute('value')).toBe('40');
      expect(await page.getByText(`40 % · ${HOSTILE}`).count()).toBe(1);
      expect(await attemptRows(page).count()).toBe(1);
      const [attempt, name, key, takenAt, ended, outcome, error] = await cellsOf(page, 0);
      expect([attempt, name, key, ended, outcome, error]).toEqual(['1', 'sandbox-7', expect.stringMatching(/^key \d+$/), 'running', 'running', '—']);
      expect(takenAt).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
      expect(await page.getByRole('button', { name: 'Retry task' }).count()).toBe(0);
      await expectAccessible(page);

      await page.getByRole('button', { name: 'Cancel task' }).click();
      await page.getByText('Pending (cancel requested: its executor is asked to stop)').waitFor();
      expect(await page.getByRole('button', { name: 'Cancel task' }).count()).toBe(0);
      expect(await viewTask(t, id)).toMatchObject({ state: 'Pending', cancelRequested: true });
      expect((await heartbeatAs(t, executor, { taskID: id, leaseToken: item.leaseToken })).body.cancelRequested).toBe(true);

      const stopped = { code: 'Stopped', message: HOSTILE, kind: 'transient' };
      expect((await failAs(t, executor, { taskID: id, leaseToken: item.leaseToken, error: stopped })).status).toBe(204);
      await page.reload();
      await page.getByRole('heading', { name: 'Error' }).waitFor();
      expect(await page.getByRole('definition').first().textContent()).toBe('Failed');
      expect((await cellsOf(page, 0)).slice(4)).toEqual([expect.stringMatching(/ UTC$/), 'cancelled', `Stopped: ${HOSTILE}`]);
      expect(await page.getByLabel('Progress').count()).toBe(0);
      await expectAccessible(page);

      await page.getByRole('button', { name: 'Retry task' }).click();
      await page.getByRole('button', { name: 'Cancel task' }).waitFor();
      expect(await page.getByRole('definition').first().textContent()).toBe('Pending');
      expect(await attemptRows(page).count()).toBe(1);
      const [again] = await fleetTake(t, executor, { executor: 'sandbox-8' });
      expect([again.id, again.attempt]).toEqual([id, 1]);
      await page.reload();
      expect(await attemptRows(page).count()).toBe(2);
      expect((await cellsOf(page, 1)).slice(0, 2)).toEqual(['1', 'sandbox-8']);
      await expectAccessible(page);
    });
  });

  it('cancels a waiting task at once, and refuses what the API refuses with its message', async () => {
    const waiting = await registerTask(t, domainParams('waiting.example'));
    const finishing = await registerTask(t, domainParams('finishing.example'));
    await asKey(t.adminKey, 'task-refusals', async (page) => {
      await page.goto(`/console/tasks/${waiting}`);
      await page.getByText('No executor has taken it yet.').waitFor();
      await page.getByRole('button', { name: 'Cancel task' }).click();
      await page.getByRole('button', { name: 'Retry task' }).waitFor();
      expect(await viewTask(t, waiting)).toMatchObject({ state: 'Failed', error: { code: 'Cancelled' } });

      // A page drawn while the task was pending; it completes before the click.
      await page.goto(`/console/tasks/${finishing}`);
      await page.getByRole('button', { name: 'Cancel task' }).waitFor();
      const [item] = await fleetTake(t, executor);
      expect(item.id).toBe(finishing);
      expect((await completeAs(t, executor, { taskID: finishing, leaseToken: item.leaseToken, result: GOOD_RESULT })).status).toBe(204);
      const [answer] = await Promise.all([
        page.waitForResponse((response) => response.url().endsWith(`/console/tasks/${finishing}/cancel`)),
        page.getByRole('button', { name: 'Cancel task' }).click(),
      ]);
      expect(answer.status()).toBe(422);
      await page.getByRole('alert').filter({ hasText: 'cannot be cancelled' }).waitFor();
      await page.getByRole('heading', { name: 'Result' }).waitFor();
      expect(await taskActionButtons(page)).toBe(0);
      await expectAccessible(page);
      expect((await viewTask(t, finishing)).state).toBe('Completed');

      const post = (path: string) => page.evaluate((target) => fetch(target, { method: 'POST' }).then((response) => response.status), path);
      expect(await post(`/console/tasks/${finishing}/retry`)).toBe(422);
      expect(await post('/console/tasks/00000000-0000-4000-8000-000000000000/cancel')).toBe(404);
      expect(await post('/console/tasks/not-a-task/retry')).toBe(404);
    });
    // Audited as the console's other writes are (target `console/<path parameter>`), refusals included.
    const audit = await t.http().get(`/auth/audit?target=console/${finishing}`).set('X-Api-Key', t.adminKey).expect(200);
    const entries = (audit.body as { method: string; route: string; status: number }[]).map(({ method, route, status }) => `${method} ${route} ${status}`);
    expect(entries.sort()).toEqual(['POST /console/tasks/:id/cancel 422', 'POST /console/tasks/:id/retry 422']);
  });

  it('shows attempts to a key that may read tasks, and neither offers nor accepts cancel or retry from it', async () => {
    const id = await registerTask(t, domainParams('read-only.example'));
    const reader = await createKey(t, { permissions: [{ resource: BUILTIN_RESOURCES.tasks.id, actions: ['Read'] }] });
    await asKey(reader.key, 'task-reader', async (page) => {
      await page.goto(`/console/tasks/${id}`);
      await page.getByRole('heading', { name: 'Attempts' }).waitFor();
      expect(await taskActionButtons(page)).toBe(0);
      const status = await page.evaluate((target) => fetch(target, { method: 'POST' }).then((response) => response.status), `/console/tasks/${id}/cancel`);
      expect(status).toBe(403);
    });
    expect(await viewTask(t, id)).toMatchObject({ state: 'Pending' });
    expect((await viewTask(t, id)).cancelRequested).toBeUndefined();
  });

  it('cancels and retries without JavaScript', async () => {
    const id = await registerTask(t, domainParams('no-js.example'));
    const context = await browser.newContext({ baseURL: t.url, javaScriptEnabled: false });
    const page = await context.newPage();
    await withScreenshot({ context, page, problems: [] }, 'task-no-js', async () => {
      await signIn(page, t.adminKey);
      await page.getByRole('heading', { name: 'What this key may do' }).waitFor();
      await page.goto(`/console/tasks/${id}`);
      await page.getByRole('button', { name: 'Cancel task' }).click();
      await page.getByRole('button', { name: 'Retry task' }).click();
      await page.getByRole('button', { name: 'Cancel task' }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/tasks/${id}`);
    });
    expect((await viewTask(t, id)).state).toBe('Pending');
  });

  it('shows the sighting summary and the warninglists of each key in a lookup', async () => {
    const sightings = [
      { type: 'DomainName', value: 'seen.example', at: hoursAgo(3), count: 2, source: HOSTILE },
      { type: 'DomainName', value: 'seen.example', at: hoursAgo(1), source: 'siem-eu/fw-17' },
      { type: 'DomainName', value: 'seen.example', kind: 'falsePositive', source: 'analyst' },
    ];
    const recorded = await t.http().post('/intel/sightings').set('X-Api-Key', t.adminKey).send(sightings).expect(200);
    expect(recorded.body.map((result: { status: string }) => result.status)).toEqual(['Recorded', 'Recorded', 'Recorded']);
    await asKey(t.adminKey, 'lookup-sightings', async (page) => {
      await page.goto('/console/lookup');
      await page.getByLabel('Indicators').fill(['seen[.]example', 'quiet.example', 'www.warned.example', '8.8.8.8', 'mail.warned.example'].join('\n'));
      await page.getByRole('button', { name: 'Look up' }).click();
      await page.getByRole('heading', { name: '3 known, 2 unknown' }).waitFor();
      const known = page.getByRole('table', { name: 'Known' });
      const row = async (value: string) => (await known.getByRole('row').filter({ hasText: value }).locator('td').allTextContents()).slice(3);
      expect(await row('seen.example')).toEqual([
        `Seen 3 times, ${shown(sightings[0].at!)} to ${shown(sightings[1].at!)}, 1 false positive, from 3 sources.`,
        'none',
      ]);
      expect(await row('quiet.example')).toEqual(['Never sighted.', 'none']);
      expect(await row('www.warned.example')).toEqual(['Never sighted.', 'benign-hosts: warned.example (subdomain, annotate)']);
      const warned = page.getByRole('table', { name: 'Unknown indicators on warninglists' }).locator('tbody tr');
      expect(await warned.count()).toBe(2);
      expect(await warned.filter({ hasText: '8.8.8.8' }).locator('td').last().textContent()).toBe(
        'public-dns-resolvers: 8.8.8.8/32 (contained, excludeFromExport)',
      );
      expect(await warned.filter({ hasText: 'mail.warned.example' }).locator('td').last().textContent()).toContain('benign-hosts');
      expect((await page.getByLabel(/Unknown indicators \(2\)/).inputValue()).split('\n').sort()).toEqual(['8.8.8.8', 'mail.warned.example']);
      await expectAccessible(page);
    });
  });

  it("shows an object's sightings: its summary and the latest of every key, newest first", async () => {
    const items = [
      { objectKeyType: 'MD5Hash', objectKey: MD5, at: hoursAgo(5), source: 'edr-1' },
      { objectKeyType: 'SHA256Hash', objectKey: SHA256, at: hoursAgo(4), count: 7, source: HOSTILE },
      { objectKeyType: 'MD5Hash', objectKey: MD5.toUpperCase(), at: hoursAgo(2), kind: 'falsePositive', source: 'analyst' },
    ];
    await t.http().post('/intel/sightings').set('X-Api-Key', t.adminKey).send(items).expect(200);
    await asKey(t.adminKey, 'object-sightings', async (page) => {
      await page.goto(`/console/collections/sighted/object?type=SHA256Hash&value=${SHA256}`);
      await page.getByRole('heading', { name: 'Sightings' }).waitFor();
      expect(await page.getByText(`Seen 8 times, ${shown(items[0].at)} to ${shown(items[1].at)}, 1 false positive, from 3 sources.`).count()).toBe(1);
      const rows = page.getByRole('table', { name: 'Latest sightings of its keys, newest first' }).locator('tbody tr');
      expect(await rows.count()).toBe(3);
      const cells = async (n: number) => rows.nth(n).locator('td').allTextContents();
      expect(await cells(0)).toEqual([shown(items[2].at), 'false positive', 'analyst', '1', MD5]);
      expect(await cells(1)).toEqual([shown(items[1].at), 'sighting', HOSTILE, '7', SHA256]);
      expect(await cells(2)).toEqual([shown(items[0].at), 'sighting', 'edr-1', '1', MD5]);
      await expectAccessible(page);

      await page.goto('/console/collections/sighted/object?type=DomainName&value=quiet.example');
      await page.getByText('Never sighted.').waitFor();
      expect(await page.getByRole('table', { name: /Latest sightings/ }).count()).toBe(0);
      await expectAccessible(page);
    });
  });
});
