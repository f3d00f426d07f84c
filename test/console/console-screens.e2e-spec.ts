import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { BUILTIN_RESOURCES } from '../../src/common/guard/access.js';
import { complete, registerSchema, take } from '../insight/insight-support.js';
import { createCollection, sizeSchema } from '../intel/objects.helpers.js';
import { expectAccessible, HOSTILE, launchBrowser, openSession, signedInAs, signIn, withScreenshot, type BrowserSession } from '../support/browser.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** The page's globals, inside `page.evaluate` (the project compiles without the DOM library). */
declare const window: { __xss?: number; __marker?: string };
declare const localStorage: object;

/** Markup that would run script if any page put it into HTML unescaped. */
const OBJECTS = 60;

describe('console screens', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([createTestApp(), launchBrowser()]);
    const titled = { ...sizeSchema('titled-schema'), title: HOSTILE };
    await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send(titled).expect(201);
    await createCollection(t, 'feeds', 'titled-schema');
    await createCollection(t, 'secret');
    const items = Array.from({ length: OBJECTS }, (_, n) => ({
      type: 'DomainName',
      keys: [{ type: 'DomainName', value: `known${n}.example` }],
      context: { note: HOSTILE, [HOSTILE]: n },
    }));
    const batch = await t.http().post('/intel/collections/feeds/objects/batch').set('X-Api-Key', t.adminKey).send(items);
    expect(batch.body.added).toBe(OBJECTS);
    const hidden = { type: 'DomainName', keys: [{ type: 'DomainName', value: 'hidden.example' }], context: {} };
    await t.http().post('/intel/collections/secret/objects').set('X-Api-Key', t.adminKey).send(hidden).expect(204);
    await registerSchema(t);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const asKey = (key: string, name: string, steps: (page: Page, session: BrowserSession) => Promise<void>) => signedInAs(browser, t.url, key, name, steps);

  it('looks up 1,000+ pasted lines with defanged forms, from the keyboard', async () => {
    await asKey(t.adminKey, 'lookup', async (page) => {
      const known = Array.from({ length: OBJECTS }, (_, n) => (n % 2 === 0 ? `known${n}[.]example` : `known${n}(.)example`));
      const unknown = Array.from({ length: 1000 }, (_, n) => `hxxp://unknown${n}[.]example/path`);
      const lines = [...known, ...unknown, '10.0.0[.]1', 'KNOWN0.EXAMPLE', 'not an indicator!!'];
      await page.getByRole('navigation').getByRole('link', { name: 'Lookup' }).press('Enter');
      // The boosted navigation moves focus to <main> once it settles: wait for it, or it takes the focus from the field.
      await page.locator('#main:focus').waitFor();
      await page.getByLabel('Indicators').focus();
      await page.keyboard.insertText(lines.join('\n'));
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      // A long wait: over 1,000 lines typed and looked up on a busy machine.
      await page.getByRole('heading', { name: `${OBJECTS} known, 1001 unknown, 1 not indicators` }).waitFor({ timeout: 50_000 });
      expect(await page.locator('#known tbody tr').count()).toBe(OBJECTS);
      const unknownText = await page.getByLabel(/Unknown indicators/).inputValue();
      expect(unknownText.split('\n')).toHaveLength(1001);
      expect(unknownText).toContain('http://unknown7.example/path');
      expect(unknownText).toContain('10.0.0.1');
      await expectAccessible(page, '');
      // The object view behind a result: keys, context (escaped), expiry, its collection.
      await page.locator('#known').getByRole('link', { name: 'feeds' }).first().click();
      await page.getByRole('heading', { name: 'Object in feeds' }).waitFor();
      expect(await page.locator('pre').textContent()).toContain(JSON.stringify(HOSTILE));
      await expectAccessible(page, '');
    });
  });

  it('pages through a collection and tails its changes live', async () => {
    await asKey(t.adminKey, 'collections', async (page) => {
      await page.getByRole('navigation').getByRole('link', { name: 'Collections' }).click();
      await page.getByRole('link', { name: 'feeds' }).click();
      await page.getByRole('heading', { name: 'Collection feeds' }).waitFor();
      // The schema's title, as text.
      expect(await page.getByText(`titled-schema: ${HOSTILE}`).count()).toBe(1);
      const firstPage = await page.locator('table tbody tr').count();
      expect(firstPage).toBe(50);
      await page.getByRole('link', { name: 'Next page' }).click();
      await page.getByRole('link', { name: 'known50.example' }).waitFor();
      expect(await page.locator('table tbody tr').count()).toBe(OBJECTS - 50);
      expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
      await page.goBack();
      await page.getByRole('link', { name: 'known0.example' }).waitFor();

      // Live: an object added through the API appears without a reload.
      await page.evaluate(() => {
        window.__marker = 'same document';
      });
      const added = { type: 'DomainName', keys: [{ type: 'DomainName', value: 'live.example' }], context: {} };
      await t.http().post('/intel/collections/feeds/objects').set('X-Api-Key', t.adminKey).send(added).expect(204);
      await page.locator('#tail').getByRole('link', { name: 'live.example' }).waitFor();
      expect(await page.evaluate(() => window.__marker)).toBe('same document');
      await t.http().delete('/intel/collections/feeds/objects?objectKeyType=DomainName&objectKey=live.example').set('X-Api-Key', t.adminKey).expect(204);
      await page.locator('#tail li', { hasText: 'Remove' }).waitFor();
      await expectAccessible(page, '');
    });
  });

  it("shows an object's history: who, when, via, what changed", async () => {
    const writer = await createKey(t, { permissions: [{ resource: await collectionResource('feeds'), actions: ['Read', 'Write'] }] });
    const form = (context: Record<string, unknown>) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value: 'storied.example' }], context });
    await t
      .http()
      .post('/intel/collections/feeds/objects')
      .set('X-Api-Key', writer.key)
      .set('X-Request-Id', 'console-history-1')
      .send(form({ a: 1 }))
      .expect(204);
    await t
      .http()
      .post('/intel/collections/feeds/objects/batch')
      .set('X-Api-Key', writer.key)
      .send([form({ a: 1, [HOSTILE]: 2 })])
      .expect(200);
    await asKey(t.adminKey, 'object-history', async (page) => {
      await page.goto('/console/collections/feeds/object?type=DomainName&value=storied.example');
      await page.getByRole('heading', { name: 'History' }).waitFor();
      const rows = page.getByRole('table', { name: /Changes of every life of storied\.example/ }).locator('tbody tr');
      expect(await rows.count()).toBe(2);
      const cells = async (n: number) => (await rows.nth(n).locator('td').allTextContents()).slice(1);
      expect(await cells(0)).toEqual(['Update', `context ${HOSTILE}`, 'batch', `key ${writer.id}`, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
      expect(await cells(1)).toEqual(['Add', 'added with storied.example', 'api', `key ${writer.id}`, 'console-history-1']);
      expect(await rows.first().locator('td').first().textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
      await expectAccessible(page, '');
    });
  });

  it('generates a key in the editor, shows it once, and revoking it ends its sessions', async () => {
    let created = '';
    let createdId = 0;
    await asKey(t.adminKey, 'keys', async (page) => {
      await page.getByRole('navigation').getByRole('link', { name: 'Keys' }).click();
      await page.getByRole('link', { name: 'Generate a key' }).click();
      await page.getByLabel('Description').fill(HOSTILE);
      await page.getByLabel('ReadChildren on intel', { exact: true }).check();
      await page.getByLabel('Read on insight/tasks', { exact: true }).check();
      await page.getByLabel('Read on intel/feeds', { exact: true }).check();
      await page.getByLabel('Daily limit of ReadChildren on intel', { exact: true }).fill('1000');
      await expectAccessible(page, '');
      await page.getByRole('button', { name: 'Generate key' }).click();
      const value = page.getByLabel('The new API key');
      created = await value.inputValue();
      createdId = Number(/Key (\d+) generated/.exec((await page.getByRole('heading', { level: 1 }).textContent())!)![1]);
      expect(created.length).toBeGreaterThan(20);
      await expectAccessible(page, '');
      expect(await page.evaluate(() => JSON.stringify(localStorage))).toBe('{}');
      // Shown once: the keys list has its description (as text), never its value.
      await page.goto('/console/keys');
      expect(await page.getByRole('cell', { name: HOSTILE }).count()).toBe(1);
      expect(await page.content()).not.toContain(created);
      // Permissions and limits name resources by path, as a person knows them, not by id.
      const row = page.getByRole('row', { name: new RegExp(`^${createdId} `) });
      const lines = (await row.getByRole('cell').nth(5).innerText()).split('\n').filter((line) => line !== '');
      expect(lines.sort()).toEqual(['insight/tasks: Read', 'intel/feeds: Read', 'intel: ReadChildren', 'limit intel ReadChildren: 1000/day']);

      const api = await t.http().get('/intel/collections').set('X-Api-Key', created);
      expect(api.status).toBe(200);
      const other = await openSession(browser, t.url);
      await signIn(other.page, created);
      await other.page.getByRole('heading', { name: 'What this key may do' }).waitFor();
      const permissions = other.page.getByRole('table', { name: 'Permissions' });
      expect(await permissions.getByRole('cell', { name: 'intel', exact: true }).count()).toBe(1);

      await page.getByRole('button', { name: `Revoke key ${createdId}` }).click();
      await page.getByRole('row', { name: new RegExp(`^${createdId} .*revoked`) }).waitFor();
      await other.page.getByRole('navigation').getByRole('link', { name: 'Collections' }).click();
      await other.page.getByLabel('API key').waitFor();
      expect(new URL(other.page.url()).pathname).toBe('/console/sign-in');
      await other.context.close();
      expect((await t.http().get('/intel/collections').set('X-Api-Key', created)).status).toBe(401);
    });
  });

  it('shows a limited key only what it may read', async () => {
    const reader = await createKey(t, {
      permissions: [{ resource: await collectionResource('feeds'), actions: ['Read'] }],
    });
    await asKey(reader.key, 'limited', async (page) => {
      await page.goto('/console/collections');
      expect(await page.getByRole('link', { name: 'feeds' }).count()).toBe(1);
      expect(await page.getByRole('link', { name: 'secret' }).count()).toBe(0);
      for (const path of ['/console/collections/secret', '/console/keys', '/console/keys/new', '/console/tasks']) {
        const answer = await page.goto(path);
        expect([path, answer!.status()]).toEqual([path, 403]);
        await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      }
      await page.goto('/console/lookup');
      await page.getByLabel('Indicators').fill('hidden.example\nknown1.example');
      await page.getByRole('button', { name: 'Look up' }).click();
      await page.getByRole('heading', { name: '1 known, 1 unknown' }).waitFor();
      expect(await page.getByLabel(/Unknown indicators/).inputValue()).toBe('hidden.example');
      // Revoking must not be offered to, nor accepted from, a key without Write on auth.
      const revoke = await page.evaluate((target) => fetch(target, { method: 'POST' }).then((response) => response.status), '/console/keys/1/revoke');
      expect(revoke).toBe(403);
    });
  });

  it('registers a task, shows its result, and uploads and downloads a file', async () => {
    await asKey(t.adminKey, 'tasks-files', async (page) => {
      await page.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
      await page.getByRole('link', { name: 'Register a task' }).click();
      // Refused by the API's own DTO rules: each problem under its field, the form kept.
      await page.getByLabel('Insight schema').fill('not a schema!');
      await page.getByLabel(/Object keys/).fill('10.0.0.0/8');
      await page.getByRole('button', { name: 'Register task' }).click();
      await page.getByRole('alert').filter({ hasText: 'see the marked fields' }).waitFor();
      await page.getByText('schemaID must be a schema identifier').waitFor();
      expect(await page.getByLabel('Insight schema').getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByLabel(/Object keys/).inputValue()).toBe('10.0.0.0/8');
      await expectAccessible(page, '');
      await page.getByLabel('Insight schema').fill('verdict');
      await page.getByLabel(/Object keys/).fill('evil[.]example');
      await expectAccessible(page, '');
      await page.getByRole('button', { name: 'Register task' }).click();
      await page.getByRole('heading', { name: /^Task / }).waitFor();
      expect(await page.getByText('Pending').count()).toBeGreaterThan(0);
      const taskId = new URL(page.url()).pathname.split('/').pop()!;
      const [item] = await take(t, 1);
      expect(item.id).toBe(taskId);
      expect((await complete(t, taskId)).status).toBe(204);
      await page.goto('/console/tasks?state=Completed');
      await page.getByRole('link', { name: taskId }).click();
      await page.getByRole('heading', { name: 'Result' }).waitFor();
      await expectAccessible(page, '');
      await expectAccessible(page, '/console/tasks');

      await page.getByRole('navigation').getByRole('link', { name: 'Files' }).click();
      await page.getByLabel('File', { exact: true }).setInputFiles({ name: `${HOSTILE}.txt`, mimeType: 'text/plain', buffer: Buffer.from('hello console') });
      await page.getByRole('button', { name: 'Upload' }).click();
      await page.getByRole('heading', { name: 'File', exact: true }).waitFor();
      // Chromium sends the name's last path segment, quotes as %22: the markup is still there, as text.
      expect(await page.getByText('<img src=x onerror=').count()).toBe(1);
      await expectAccessible(page, '');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download' }).click()]);
      const stream = await download.createReadStream();
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('hello console');
      await expectAccessible(page, '/console/files');
    });
  });

  it('has no accessibility violations on the remaining screens', async () => {
    await asKey(t.adminKey, 'axe', async (page) => {
      for (const path of ['/console', '/console/lookup', '/console/collections', '/console/keys', '/console/no-such-page']) {
        await expectAccessible(page, path);
      }
    });
    const session = await openSession(browser, t.url);
    await withScreenshot(session, 'axe-sign-in', async () => {
      await expectAccessible(session.page, '/console/sign-in');
    });
  });

  it('works without JavaScript for every form', async () => {
    const context = await browser.newContext({ baseURL: t.url, javaScriptEnabled: false });
    const page = await context.newPage();
    await withScreenshot({ context, page, problems: [] }, 'no-js', async () => {
      await signIn(page, t.adminKey);
      await page.getByRole('heading', { name: 'What this key may do' }).waitFor();
      await page.goto('/console/lookup');
      await page.getByLabel('Indicators').fill('known3[.]example\nnowhere.example');
      await page.getByRole('button', { name: 'Look up' }).click();
      await page.getByRole('heading', { name: '1 known, 1 unknown' }).waitFor();
      await page.goto('/console/tasks');
      await page.getByLabel('State').selectOption('Completed');
      await page.getByRole('button', { name: 'Show' }).click();
      expect(new URL(page.url()).search).toBe('?state=Completed');
      await page.goto('/console/tasks/new');
      await page.getByLabel('Insight schema').fill('no-such-schema');
      await page.getByLabel(/Object keys/).fill('example.org');
      await page.getByRole('button', { name: 'Register task' }).click();
      await page.getByRole('alert').waitFor();
      await page.goto('/console/files');
      await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'plain.txt', mimeType: 'text/plain', buffer: Buffer.from('no js') });
      await page.getByRole('button', { name: 'Upload' }).click();
      await page.getByText('plain.txt').waitFor();
      await page.goto('/console/keys/new');
      await page.getByLabel('Read on insight/tasks', { exact: true }).check();
      await page.getByRole('button', { name: 'Generate key' }).click();
      await page.getByLabel('The new API key').waitFor();
      await page.goto('/console/collections/feeds');
      await page.getByRole('link', { name: 'show the changes since then' }).click();
      await page.getByRole('heading', { name: 'Changes of feeds' }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key').waitFor();
    });
  });

  async function collectionResource(name: string): Promise<number> {
    const { rows } = await t.db.query(`SELECT id FROM auth_resource WHERE parent_id = $1 AND name = $2`, [BUILTIN_RESOURCES.intel.id, name]);
    return rows[0].id as number;
  }
});
