import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { BUILTIN_RESOURCES } from '../../src/common/guard/access.js';
import { createCollection } from '../intel/objects.helpers.js';
import { FeedServer } from '../sources/feed-server.js';
import { expectAccessible, HOSTILE, launchBrowser, signedInAs, signIn, withScreenshot, type BrowserSession } from '../support/browser.js';
import { eventually } from '../support/eventually.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** The page's globals, inside `page.evaluate` (the project compiles without the DOM library). */

/** Markup that would run script if any page put it into HTML unescaped. */
const INTEL = BUILTIN_RESOURCES.intel.id;

/** A MISP warninglist document as misp-warninglists publishes them. */
const mispDocument = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    name: 'Known CDN hosts',
    version: 20260101,
    description: HOSTILE,
    type: 'hostname',
    matching_attributes: ['domain', 'hostname'],
    list: ['cdn.example.net', 'static.example.org'],
    ...extra,
  });

describe('console: Sources and Warninglists screens', () => {
  let t: TestApp;
  let browser: Browser;
  let feed: FeedServer;
  /** The answer the slow feed holds until the test lets it go (a run under way). */
  let held: ServerResponse | undefined;

  beforeAll(async () => {
    // Runs are started by the tests (Run now), never by the schedule's timer.
    [t, browser, feed] = await Promise.all([createTestApp({ SOURCE_POLL_SECONDS: '3600' }), launchBrowser(), new FeedServer().start()]);
    feed.list('/list.txt', `198.51.100.1\n198.51.100.2\n${HOSTILE}\n`);
    feed.routes.set('/slow.txt', (_request, response) => {
      held = response;
    });
    await createCollection(t, 'feeds');
    await createCollection(t, 'secret');
    for (const [name, collection, path] of [
      ['urlhaus', 'feeds', '/list.txt'],
      ['slow', 'feeds', '/slow.txt'],
      ['hidden-src', 'secret', '/list.txt'],
    ]) {
      await t
        .http()
        .post('/intel/sources')
        .set('X-Api-Key', t.adminKey)
        .send({ name, collection, kind: 'text', url: feed.url(path) })
        .expect(201);
    }
  });

  afterAll(async () => {
    held?.end();
    await browser?.close();
    await t?.close();
    await feed?.stop();
  });

  const asKey = (key: string, name: string, steps: (page: Page, session: BrowserSession) => Promise<void>) => signedInAs(browser, t.url, key, name, steps);

  const cellsOf = (page: Page, table: string, row: string) =>
    page
      .getByRole('table', { name: table })
      .getByRole('row', { name: new RegExp(`^${row} `) })
      .getByRole('cell')
      .allTextContents();

  const listView = async (name: string) =>
    (await t.http().get(`/intel/warninglists/${name}`).set('X-Api-Key', t.adminKey).expect(200)).body as {
      action: string;
      enabled: boolean;
      description: string;
      version: string;
    };

  it('lists the sources with state, runs and claims, runs one now and shows its run log; a second run while one runs is refused', async () => {
    await asKey(t.adminKey, 'sources', async (page) => {
      await page.getByRole('navigation').getByRole('link', { name: 'Sources' }).click();
      await page.getByRole('heading', { name: 'Sources', level: 1 }).waitFor();
      // Never run: no last run, due now, no claims.
      expect(await cellsOf(page, 'Sources, in creation order', 'urlhaus')).toEqual(['feeds', 'text', 'ok', '—', '—', 'due now', '0', 'Run now']);
      await expectAccessible(page);

      await page.getByRole('button', { name: 'Run now: urlhaus' }).click();
      await page.getByRole('heading', { name: 'Source urlhaus' }).waitFor();
      // The run goes on in the background; the page shows it once it finished (a reload, no live update).
      await eventually(async () => {
        await page.reload();
        return (await page.locator('#runs tbody tr').first().locator('td').nth(2).textContent()) === 'ok';
      });
      const run = await page.locator('#runs tbody tr').first().locator('td').allTextContents();
      expect(run.slice(1, 10)).toEqual(['manual', 'ok', '200', expect.any(String), '3', '2', '0', '0', expect.stringMatching(/^1/)]);
      // The rejected line, as text.
      await page.locator('#runs summary').click();
      expect(await page.locator('#runs li').textContent()).toBe(`line 3: ${HOSTILE} — ${await rejectionReason()}`);
      expect(await page.getByRole('definition').filter({ hasText: /^2$/ }).count()).toBe(1);
      await expectAccessible(page);

      // A run under way (started through the API, held by the feed): Run now says so, on the source's page.
      await t.http().post('/intel/sources/slow/runs').set('X-Api-Key', t.adminKey).expect(202);
      await eventually(() => held !== undefined);
      await page.goto('/console/sources/slow');
      await page.getByRole('button', { name: 'Run now: slow' }).click();
      await page.getByRole('alert').filter({ hasText: 'a run of source slow is in progress' }).waitFor();
      expect(await page.locator('#runs tbody tr').first().locator('td').nth(2).textContent()).toBe('running');
      await expectAccessible(page);
      held!.writeHead(200, { 'content-type': 'text/plain' }).end('198.51.100.9\n');
      // The refused post answered in place: the address is the source's page still.
      expect(new URL(page.url()).pathname).toBe('/console/sources/slow');
      await eventually(async () => {
        await page.reload();
        return (await page.locator('#runs tbody tr').first().locator('td').nth(2).textContent()) === 'ok';
      });
      // A manual run does not move the next scheduled run: a new source stays due now.
      await page.goto('/console/sources');
      // State, last run, last success, next run and claims of a source that ran well and is due now.
      const ranAndDueNow = (claims: string) => ['ok', expect.stringMatching(/ UTC$/), expect.stringMatching(/ UTC$/), 'due now', claims];
      expect((await cellsOf(page, 'Sources, in creation order', 'urlhaus')).slice(2, 7)).toEqual(ranAndDueNow('2'));
      expect((await cellsOf(page, 'Sources, in creation order', 'slow')).slice(2, 7)).toEqual(ranAndDueNow('1'));
    });
  });

  /** The reason the service gives a line that is no indicator, as the API's run log says it. */
  async function rejectionReason(): Promise<string> {
    const runs = await t.http().get('/intel/sources/urlhaus/runs').set('X-Api-Key', t.adminKey).expect(200);
    return (runs.body as { rejections: { reason: string }[] }[])[0].rejections[0].reason;
  }

  it('shows a key only the sources of collections it may read, and no Run now without Write on intel', async () => {
    const { rows } = await t.db.query(`SELECT id FROM auth_resource WHERE parent_id = $1 AND name = 'feeds'`, [INTEL]);
    const reader = await createKey(t, { permissions: [{ resource: rows[0].id as number, actions: ['Read'] }] });
    await asKey(reader.key, 'sources-limited', async (page) => {
      await page.goto('/console/sources');
      expect(await page.getByRole('link', { name: 'urlhaus' }).count()).toBe(1);
      expect(await page.getByRole('link', { name: 'hidden-src' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /Run now/ }).count()).toBe(0);
      await page.getByRole('link', { name: 'urlhaus' }).click();
      await page.getByRole('heading', { name: 'Runs' }).waitFor();
      expect(await page.getByRole('button', { name: /Run now/ }).count()).toBe(0);
      for (const path of ['/console/sources/hidden-src', '/console/warninglists']) {
        const answer = await page.goto(path);
        expect([path, answer!.status()]).toEqual([path, 403]);
        await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      }
      const run = await page.evaluate((target) => fetch(target, { method: 'POST' }).then((response) => response.status), '/console/sources/urlhaus');
      expect(run).toBe(403);
    });
  });

  it('lists the warninglists with their actions, disables and enables one, changes an action, and imports a MISP file', async () => {
    await asKey(t.adminKey, 'warninglists', async (page) => {
      await page.getByRole('navigation').getByRole('link', { name: 'Warninglists' }).click();
      await page.getByRole('heading', { name: 'Warninglists', level: 1 }).waitFor();
      expect(await page.getByLabel('Action of public-dns-resolvers', { exact: true }).inputValue()).toBe('excludeFromExport');
      await expectAccessible(page);

      await page.getByRole('button', { name: 'Disable public-dns-resolvers' }).click();
      await page.getByRole('button', { name: 'Enable public-dns-resolvers' }).waitFor();
      expect((await listView('public-dns-resolvers')).enabled).toBe(false);
      const check = await t
        .http()
        .post('/intel/warninglists/check')
        .set('X-Api-Key', t.adminKey)
        .send({ values: ['8.8.8.8'] })
        .expect(200);
      expect(check.body[0].warnings.map((warning: { list: string }) => warning.list)).not.toContain('public-dns-resolvers');
      await page.getByRole('button', { name: 'Enable public-dns-resolvers' }).click();
      await page.getByRole('button', { name: 'Disable public-dns-resolvers' }).waitFor();
      expect((await listView('public-dns-resolvers')).enabled).toBe(true);

      await page.getByLabel('Action of special-purpose-networks', { exact: true }).selectOption('rejectOnIngest');
      await page.getByRole('button', { name: 'Set the action of special-purpose-networks' }).click();
      await eventually(async () => (await listView('special-purpose-networks')).action === 'rejectOnIngest');
      await page.getByRole('heading', { name: 'Warninglists', level: 1 }).waitFor();
      expect(await page.getByLabel('Action of special-purpose-networks', { exact: true }).inputValue()).toBe('rejectOnIngest');

      // Refused: a regex list (422), then a name the API refuses (under its field, the settings kept).
      await page
        .getByLabel(/MISP warninglist file/)
        .setInputFiles({ name: 'list.json', mimeType: 'application/json', buffer: Buffer.from(mispDocument({ type: 'regex' })) });
      await page.getByRole('button', { name: 'Import' }).click();
      await page.getByRole('alert').filter({ hasText: 'regex' }).waitFor();
      await page.getByLabel(/MISP warninglist file/).setInputFiles({ name: 'list.json', mimeType: 'application/json', buffer: Buffer.from(mispDocument()) });
      await page.getByLabel('Name (optional)').fill('Not URL friendly');
      await page.getByLabel('Action of a new list').selectOption('rejectOnIngest');
      await page.getByRole('button', { name: 'Import' }).click();
      await page.getByText('name must be 1-128 of a-z 0-9 . _ -').waitFor();
      expect(await page.getByLabel('Name (optional)').getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByLabel('Action of a new list').inputValue()).toBe('rejectOnIngest');
      expect(new URL(page.url()).pathname).toBe('/console/warninglists');
      await expectAccessible(page);

      await page.getByLabel(/MISP warninglist file/).setInputFiles({ name: 'list.json', mimeType: 'application/json', buffer: Buffer.from(mispDocument()) });
      await page.getByLabel('Name (optional)').fill('');
      await page.getByRole('button', { name: 'Import' }).click();
      await page.getByRole('heading', { name: 'Warninglist known-cdn-hosts' }).waitFor();
      expect(await page.locator('#entries li').allTextContents()).toEqual(['cdn.example.net', 'static.example.org']);
      expect(await page.getByText(HOSTILE, { exact: true }).count()).toBe(1);
      const imported = await listView('known-cdn-hosts');
      expect(imported).toMatchObject({ action: 'rejectOnIngest', enabled: true, description: HOSTILE, version: '20260101' });
      await expectAccessible(page);
      // From the list's own page, a setting returns there.
      await page.getByRole('button', { name: 'Disable known-cdn-hosts' }).click();
      await page.getByRole('button', { name: 'Enable known-cdn-hosts' }).waitFor();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Warninglist known-cdn-hosts');
      expect((await listView('known-cdn-hosts')).enabled).toBe(false);
    });
  });

  it('shows a key with Read on intel the lists without their forms, and refuses its posts', async () => {
    const reader = await createKey(t, { permissions: [{ resource: INTEL, actions: ['Read'] }] });
    await asKey(reader.key, 'warninglists-read', async (page) => {
      await page.goto('/console/warninglists');
      await page.getByRole('link', { name: 'special-purpose-networks' }).waitFor();
      expect(await page.locator('main form').count()).toBe(0);
      await page.getByRole('link', { name: 'special-purpose-networks' }).click();
      await page.getByText('10.0.0.0/8', { exact: true }).waitFor();
      await expectAccessible(page);
      const refused = await page.evaluate(
        (target) =>
          fetch(target, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'enabled=false' }).then(
            (response) => response.status,
          ),
        '/console/warninglists/special-purpose-networks',
      );
      expect(refused).toBe(403);
    });
    expect((await listView('special-purpose-networks')).enabled).toBe(true);
  });

  it('works without JavaScript: Run now, enable/disable and the import', async () => {
    const context = await browser.newContext({ baseURL: t.url, javaScriptEnabled: false });
    const page = await context.newPage();
    await withScreenshot({ context, page, problems: [] }, 'sources-warninglists-no-js', async () => {
      await signIn(page, t.adminKey);
      await page.getByRole('heading', { name: 'What this key may do' }).waitFor();
      await page.goto('/console/sources');
      await page.getByRole('button', { name: 'Run now: urlhaus' }).click();
      await page.getByRole('heading', { name: 'Source urlhaus' }).waitFor();
      await page.goto('/console/warninglists');
      await page.getByRole('button', { name: 'Disable public-dns-resolvers' }).click();
      await page.getByRole('button', { name: 'Enable public-dns-resolvers' }).waitFor();
      await page.getByRole('button', { name: 'Enable public-dns-resolvers' }).click();
      await page.getByRole('button', { name: 'Disable public-dns-resolvers' }).waitFor();
      await page
        .getByLabel(/MISP warninglist file/)
        .setInputFiles({ name: 'list.json', mimeType: 'application/json', buffer: Buffer.from(mispDocument({ name: 'No JS list' })) });
      await page.getByRole('button', { name: 'Import' }).click();
      await page.getByRole('heading', { name: 'Warninglist no-js-list' }).waitFor();
    });
    await context.close();
  });
});
