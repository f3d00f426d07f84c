import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { createCollection } from '../intel/objects.helpers.js';
import { FeedServer } from '../sources/feed-server.js';
import { expectAccessible, launchBrowser, signedInAs } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** A cell that holds no indicator, and markup a page must show as text (no quote or comma: the CSV stays valid). */
const BAD = '<img src=x onerror=window.__xss=1>';

/**
 * The sources screen's form (extensions §13, §18): a source added after a "Test" that shows what a run of the
 * unsaved form would do, refused members shown under their fields, and an edit of its reliability; each
 * checked through the API.
 */
describe('console: the source form', () => {
  let t: TestApp;
  let browser: Browser;
  let feed: FeedServer;

  beforeAll(async () => {
    [t, browser, feed] = await Promise.all([createTestApp({ SOURCE_POLL_SECONDS: '3600' }), launchBrowser(), new FeedServer().start()]);
    feed.list('/partner.csv', `ioc,cred\n198.51.100.1,1\n198.51.100.2,9\n${BAD},2\n`);
    await createCollection(t, 'partner-feeds');
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await feed?.stop();
  });

  const sourceView = async (name: string) => t.http().get(`/intel/sources/${name}`).set('X-Api-Key', t.adminKey);

  it('adds a csv source after testing it, shows a refused member under its field, then edits its reliability', async () => {
    await signedInAs(browser, t.url, t.adminKey, 'source-form', async (page) => {
      await page.goto('/console/sources');
      await page.getByRole('heading', { name: 'Add a source', level: 2 }).waitFor();
      await expectAccessible(page);
      await page.getByLabel('Name', { exact: true }).fill('partner-csv');
      await page.getByLabel('Collection', { exact: true }).fill('partner-feeds');
      await page.getByLabel('Kind', { exact: true }).selectOption('csv');
      await page.getByLabel('URL', { exact: true }).fill(feed.url('/partner.csv'));
      await page.getByLabel('Interval (seconds)').fill('900');
      await page.getByLabel('Reliability', { exact: true }).selectOption('B');
      await page.getByLabel('Credibility', { exact: true }).selectOption('2');
      await page.getByLabel('Removal policy').selectOption('afterMissedRuns');
      await page.getByLabel('Value column (csv)').fill('ioc');
      await page.getByLabel(/^Credibility column or field/).fill('cred');

      // Saved without the runs afterMissedRuns needs: refused under that field, the form kept, nothing stored.
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('removal.runs is required').waitFor();
      expect(await page.getByLabel(/^Missed runs before removal/).getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByLabel('Reliability', { exact: true }).inputValue()).toBe('B');
      expect((await sourceView('partner-csv')).status).toBe(404);
      await expectAccessible(page);

      // Test: what a run would do, still nothing stored.
      await page.getByLabel(/^Missed runs before removal/).fill('3');
      await page.getByRole('button', { name: 'Test' }).click();
      const preview = page.locator('#preview');
      await page.getByRole('heading', { name: 'Test: what a run would do now' }).waitFor();
      const facts = Object.fromEntries(
        await preview
          .locator('dt')
          .evaluateAll((terms) =>
            terms.map((term) => [term.textContent, (term as unknown as { nextElementSibling: { textContent: string } }).nextElementSibling.textContent]),
          ),
      );
      expect(facts).toMatchObject({ 'HTTP status': '200', 'Items found': '3', 'Would add': '2', Rejected: '1' });
      expect(await preview.locator('ul.mono li').allTextContents()).toEqual(['198.51.100.1', '198.51.100.2']);
      expect(await preview.getByText(BAD).count()).toBe(1);
      expect((await sourceView('partner-csv')).status).toBe(404);
      await expectAccessible(page);

      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('heading', { name: 'Source partner-csv', exact: true }).waitFor();
      const saved = await sourceView('partner-csv');
      expect(saved.body).toMatchObject({
        collection: 'partner-feeds',
        kind: 'csv',
        url: feed.url('/partner.csv'),
        intervalSeconds: 900,
        reliability: 'B',
        credibility: 2,
        removal: { policy: 'afterMissedRuns', runs: 3 },
        valueColumn: 'ioc',
        credibilityField: 'cred',
        credibilityScale: 'admiralty',
      });

      // Edit: the form shows the stored members; the reliability changed to A, the rest kept.
      await page.getByRole('link', { name: 'Edit this source' }).click();
      await page.getByRole('heading', { name: 'Edit source partner-csv' }).waitFor();
      expect(await page.getByLabel('Reliability', { exact: true }).inputValue()).toBe('B');
      expect(await page.getByLabel(/^Missed runs before removal/).inputValue()).toBe('3');
      await expectAccessible(page);
      await page.getByLabel('Reliability', { exact: true }).selectOption('A');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('heading', { name: 'Source partner-csv', exact: true }).waitFor();
      expect(await page.getByRole('definition').filter({ hasText: /^A$/ }).count()).toBe(1);
      const edited = await sourceView('partner-csv');
      expect(edited.headers.etag).toBe('"2"');
      expect(edited.body).toMatchObject({ ...saved.body, reliability: 'A' });
      expect((await t.db.query(`SELECT reliability FROM sources_source WHERE name = 'partner-csv'`)).rows[0].reliability).toBe(100);

      // An edit read before another change is refused (412), nothing changed.
      await page.getByRole('link', { name: 'Edit this source' }).click();
      await page.getByRole('heading', { name: 'Edit source partner-csv' }).waitFor();
      await t.http().patch('/intel/sources/partner-csv').set('X-Api-Key', t.adminKey).set('If-Match', '"2"').send({ intervalSeconds: 600 }).expect(204);
      await page.getByLabel('Credibility', { exact: true }).selectOption('5');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('alert').waitFor();
      expect((await sourceView('partner-csv')).body).toMatchObject({ credibility: 2, intervalSeconds: 600 });
    });
  });
});
