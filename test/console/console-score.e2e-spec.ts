import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { createCollection } from '../intel/objects.helpers.js';
import { expectAccessible, launchBrowser, signedInAs } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const domain = (value: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });

/** The score in the console (extensions §18 "Where it shows"): a badge on the lookup and object screens, the explanation on the object's. */
describe('console score', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([createTestApp(), launchBrowser()]);
    await createCollection(t, 'scored');
    await t.intel.batch('scored', [domain('plain.example'), domain('pinned.example')]).expect(200);
    await t
      .http()
      .put('/intel/collections/scored/objects/score?objectKeyType=DomainName&objectKey=pinned.example')
      .set('X-Api-Key', t.adminKey)
      .send({ score: 90, reason: 'confirmed by <the IR team>' })
      .expect(200);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows each found object with its score badge on the lookup screen, and explains the score on the object screen', async () => {
    await signedInAs(browser, t.url, t.adminKey, 'score', async (page) => {
      await page.goto('/console/lookup');
      await page.getByLabel('Indicators').fill('plain.example\npinned.example');
      await page.getByRole('button', { name: 'Look up' }).click();
      await page.getByRole('heading', { name: '2 known, 0 unknown' }).waitFor();
      expect(await page.locator('#known .score').allTextContents()).toEqual(['Score 50', 'Score 90']);
      await expectAccessible(page);

      await page
        .getByRole('row', { name: /pinned\.example/ })
        .getByRole('link', { name: 'scored' })
        .click();
      await page.getByRole('heading', { name: 'Object in scored' }).waitFor();
      const score = page.locator('dt', { hasText: /^Score$/ }).locator('xpath=following-sibling::dd[1]');
      expect(await score.textContent()).toBe('Score 90');
      const factor = (name: string) =>
        page
          .locator('#score')
          .getByRole('row', { name: new RegExp(`^${name}`) })
          .locator('td');
      expect(await factor('Base').textContent()).toBe('50.0');
      expect(await factor('False-positive factor').textContent()).toBe('1.000 (0 sightings, 0 false positives)');
      expect(await factor('Decay').textContent()).toMatch(/^1\.000 \(lifetime 300 days, speed 1\)$/);
      expect(await factor('Anchor').textContent()).toMatch(/ UTC, the latest claim$/);
      expect(await factor('Below the threshold').textContent()).toBe('never');
      expect(await factor('Override').textContent()).toBe('90 until removed, by key 1: confirmed by <the IR team>');
      expect(await page.locator('#score-claims tbody tr').allInnerTexts()).toEqual([expect.stringMatching(/^api\tF\t6\t50\t.+ UTC$/)]);
      await expectAccessible(page);

      await page.goto('/console/collections/scored/object?type=DomainName&value=plain.example');
      expect(
        await page
          .locator('dt', { hasText: /^Score$/ })
          .locator('xpath=following-sibling::dd[1]')
          .textContent(),
      ).toBe('Score 50');
      expect(await factor('Override').textContent()).toBe('none');
      await expectAccessible(page);
    });
  });
});
