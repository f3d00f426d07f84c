import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { createCollection } from '../intel/objects.helpers.js';
import { expectAccessible, launchBrowser, signedInAs } from '../support/browser.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const AUTH = 1;
const INTEL = 2;
const domain = (value: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });

/** TLP markings in the console: keys' ceilings (set at creation and on an existing key), badges on objects. */
describe('console markings', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([createTestApp(), launchBrowser()]);
    await createCollection(t, 'marked');
    await t.intel.batch('marked', [domain('clear.example')]).expect(200);
    await t
      .http()
      .post('/intel/collections/marked/objects/batch?tlp=TLP:AMBER')
      .set('X-Api-Key', t.adminKey)
      .send([domain('amber.example')])
      .expect(200);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const asKey = (key: string, name: string, steps: (page: Page) => Promise<void>) => signedInAs(browser, t.url, key, name, steps);
  const ceilingOf = async (id: number) => ((await t.auth.key(id).expect(200)).body as { maxTLP: string }).maxTLP;

  it("sets a new key's TLP ceiling in the editor and changes an existing key's in the list", async () => {
    await asKey(t.adminKey, 'key-ceilings', async (page) => {
      await page.goto('/console/keys/new');
      // An unrestricted key's own ceiling is the default.
      expect(await page.getByLabel('TLP ceiling').inputValue()).toBe('TLP:RED');
      await page.getByLabel('Description').fill('partner');
      await page.getByLabel('TLP ceiling').selectOption('TLP:GREEN');
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Generate key' }).click();
      const heading = page.getByRole('heading', { name: /^Key \d+ generated$/ });
      const id = Number(/\d+/.exec((await heading.textContent())!)![0]);
      expect(await ceilingOf(id)).toBe('TLP:GREEN');

      await page.goto('/console/keys');
      const row = page.getByRole('row', { name: new RegExp(`^${id} `) });
      expect(await row.locator('.tlp').textContent()).toBe('TLP:GREEN');
      expect(await page.getByLabel(`TLP ceiling of key ${id}`, { exact: true }).inputValue()).toBe('TLP:GREEN');
      await expectAccessible(page);
      await page.getByLabel(`TLP ceiling of key ${id}`, { exact: true }).selectOption('TLP:AMBER+STRICT');
      await page.getByRole('button', { name: `Set the TLP ceiling of key ${id}` }).click();
      await row.locator('.tlp', { hasText: 'TLP:AMBER+STRICT' }).waitFor();
      expect(await ceilingOf(id)).toBe('TLP:AMBER+STRICT');
    });
  });

  it('marks every object with its TLP badge (collection, object, lookup), and a key below it never sees the object', async () => {
    await asKey(t.adminKey, 'badges', async (page) => {
      await page.goto('/console/collections/marked');
      const row = (value: string) => page.getByRole('row', { name: new RegExp(value.replace('.', '\\.')) });
      expect(await row('amber.example').locator('.tlp').textContent()).toBe('TLP:AMBER');
      expect(await row('clear.example').locator('.tlp').textContent()).toBe('TLP:CLEAR');
      await expectAccessible(page);

      await page.getByRole('link', { name: 'amber.example' }).click();
      await page.getByRole('heading', { name: 'Object in marked' }).waitFor();
      const marking = page.locator('dt', { hasText: 'Marking' }).locator('xpath=following-sibling::dd[1]');
      expect(await marking.textContent()).toBe('TLP:AMBER');
      expect(await marking.locator('.tlp-amber').isVisible()).toBe(true);
      await expectAccessible(page);

      await page.goto('/console/lookup');
      await page.getByLabel('Indicators').fill('amber.example\nclear.example');
      await page.getByRole('button', { name: 'Look up' }).click();
      await page.getByRole('heading', { name: '2 known, 0 unknown' }).waitFor();
      expect(await page.locator('#known .tlp').allTextContents()).toEqual(['TLP:AMBER', 'TLP:CLEAR']);
      await expectAccessible(page);
    });

    const green = await createKey(t, { permissions: [{ resource: INTEL, actions: ['ReadChildren'] }], maxTLP: 'TLP:GREEN' });
    await asKey(green.key, 'badges-green', async (page) => {
      await page.goto('/console/collections/marked');
      expect(await page.locator('tbody .tlp').allTextContents()).toEqual(['TLP:CLEAR']);
      const answer = await page.goto('/console/collections/marked/object?type=DomainName&value=amber.example');
      expect(answer!.status()).toBe(404);
      await page.goto('/console/lookup');
      await page.getByLabel('Indicators').fill('amber.example\nclear.example');
      await page.getByRole('button', { name: 'Look up' }).click();
      await page.getByRole('heading', { name: '1 known, 1 unknown' }).waitFor();
      expect(await page.getByLabel(/Unknown indicators/).inputValue()).toBe('amber.example');
    });
  });

  it('offers a restricted key only the ceilings up to its own, its own by default', async () => {
    const green = await createKey(t, { permissions: [{ resource: AUTH, actions: ['Read', 'Write'] }], maxTLP: 'TLP:GREEN' });
    await asKey(green.key, 'restricted-ceilings', async (page) => {
      await page.goto('/console/keys/new');
      const choices = await page.getByLabel('TLP ceiling').locator('option').allTextContents();
      expect(choices).toEqual(['TLP:CLEAR', 'TLP:GREEN']);
      expect(await page.getByLabel('TLP ceiling').inputValue()).toBe('TLP:GREEN');
      // A forged form asking for more is refused by the API's rule, shown with the form.
      const status = await page.evaluate(() =>
        fetch('/console/keys', { method: 'POST', body: new URLSearchParams({ maxTLP: 'TLP:RED' }) }).then((response) => response.status),
      );
      expect(status).toBe(403);
    });
  });
});
