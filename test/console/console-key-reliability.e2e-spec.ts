import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, launchBrowser, signedInAs } from '../support/browser.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const AUTH = 1;

/** Keys' reliability in the console (extensions §18, §19 "Console"): set at creation, shown and changed in the list. */
describe('console key reliability', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([createTestApp(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const asKey = (key: string, name: string, steps: (page: Page) => Promise<void>) => signedInAs(browser, t.url, key, name, steps);
  const reliabilityOf = async (id: number) => ((await t.auth.key(id).expect(200)).body as { reliability: string }).reliability;

  it("sets a new key's reliability in the editor and changes an existing key's in the list", async () => {
    await asKey(t.adminKey, 'key-reliability', async (page) => {
      await page.goto('/console/keys/new');
      expect(await page.getByLabel('Reliability', { exact: true }).inputValue()).toBe('F');
      await page.getByLabel('Description').fill('trusted partner');
      await page.getByLabel('Reliability', { exact: true }).selectOption('B');
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Generate key' }).click();
      const heading = page.getByRole('heading', { name: /^Key \d+ generated$/ });
      const id = Number(/\d+/.exec((await heading.textContent())!)![0]);
      expect(await reliabilityOf(id)).toBe('B');

      await page.goto('/console/keys');
      const select = page.getByLabel(`Reliability of key ${id}`, { exact: true });
      expect(await select.inputValue()).toBe('B');
      await expectAccessible(page);
      await select.selectOption('A');
      await page.getByRole('button', { name: `Set the reliability of key ${id}` }).click();
      await eventuallyShown(page, id, 'A');
      expect(await reliabilityOf(id)).toBe('A');
    });
  });

  it('lets a key that may change keys set any reliability; a forged letter is refused and changes nothing', async () => {
    const writer = await createKey(t, { permissions: [{ resource: AUTH, actions: ['Read', 'Write'] }], reliability: 'E', maxTLP: 'TLP:GREEN' });
    const { id } = await createKey(t, { permissions: [] });
    await asKey(writer.key, 'any-reliability', async (page) => {
      await page.goto('/console/keys/new');
      expect(await page.getByLabel('Reliability', { exact: true }).locator('option').allTextContents()).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
      await page.goto('/console/keys');
      await page.getByLabel(`Reliability of key ${id}`, { exact: true }).selectOption('A');
      await page.getByRole('button', { name: `Set the reliability of key ${id}` }).click();
      await eventuallyShown(page, id, 'A');

      const statuses = await page.evaluate(
        async (key) =>
          Promise.all([
            fetch(`/console/keys/${key}`, { method: 'POST', body: new URLSearchParams({ reliability: 'Z' }) }).then((response) => response.status),
            fetch('/console/keys', { method: 'POST', body: new URLSearchParams({ reliability: 'a' }) }).then((response) => response.status),
          ]),
        id,
      );
      expect(statuses).toEqual([400, 400]);
    });
    expect(await reliabilityOf(id)).toBe('A');
  });
});

/** The list shows the key's reliability (after the form's redirect). */
async function eventuallyShown(page: Page, id: number, letter: string): Promise<void> {
  const row = page.getByRole('row', { name: new RegExp(`^${id} `) });
  await row.locator('span.mono', { hasText: new RegExp(`^${letter}$`) }).waitFor();
}
