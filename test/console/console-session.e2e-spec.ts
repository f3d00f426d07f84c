import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { ConsoleSessionsService } from '../../src/console/console-sessions.service.js';
import { axeViolations, launchBrowser, openSession, signIn, withScreenshot } from '../support/browser.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** The page's globals, inside `page.evaluate` (the project compiles without the DOM library). */
declare const document: { cookie: string; documentElement: { outerHTML: string } };
declare const localStorage: object;
declare const sessionStorage: object;

describe('console sessions', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([createTestApp(), launchBrowser()]);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in with a key, keeps it out of page storage, and signs out', async () => {
    const session = await openSession(browser, t.url);
    const { page, context } = session;
    await withScreenshot(session, 'sign-in-out', async () => {
      const answer = await page.goto('/console');
      // No session: the sign-in page.
      expect(new URL(page.url()).pathname).toBe('/console/sign-in');
      const headers = answer!.headers();
      expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(headers['x-content-type-options']).toBe('nosniff');
      expect(headers['referrer-policy']).toBe('no-referrer');
      expect(headers['cache-control']).toBe('no-store');
      expect(await axeViolations(page)).toEqual([]);

      await signIn(page, t.adminKey);
      await page.getByRole('heading', { name: 'What this key may do' }).waitFor();
      const nav = page.getByRole('navigation');
      for (const label of ['Lookup', 'Collections', 'Tasks', 'Files', 'Keys']) {
        await expect(nav.getByRole('link', { name: label }).count()).resolves.toBe(1);
      }
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: 'console_session', path: '/console', httpOnly: true, secure: true, sameSite: 'Strict' });
      const storage = await page.evaluate(() => ({
        cookie: document.cookie,
        local: JSON.stringify(localStorage),
        session: JSON.stringify(sessionStorage),
        html: document.documentElement.outerHTML,
      }));
      // The session cookie is HttpOnly; htmx keeps no page snapshots (historyCacheSize 0), only its current path.
      expect(storage.cookie).toBe('');
      expect(storage.local).toBe('{}');
      expect(Object.keys(JSON.parse(storage.session) as object)).toEqual(['htmx-current-path-for-history']);
      for (const text of [storage.local, storage.session, storage.html]) expect(text).not.toContain(t.adminKey);
      // Only a hash of the session secret is stored.
      const { rows } = await t.db.query(`SELECT id, secret_hash FROM console_session`);
      expect(rows).toHaveLength(1);
      expect(cookie.value.startsWith(`${rows[0].id}.`)).toBe(true);
      expect(cookie.value).not.toContain((rows[0].secret_hash as Buffer).toString('base64url'));

      // The cookie authenticates nothing outside /console.
      const api = await t.http().get('/auth/keys').set('Cookie', `console_session=${cookie.value}`);
      expect(api.status).toBe(401);
      expect(api.body.code).toBe('Unauthorized');

      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key').waitFor();
      expect(new URL(page.url()).pathname).toBe('/console/sign-in');
      expect((await t.db.query(`SELECT 1 FROM console_session`)).rowCount).toBe(0);
      // The old cookie opens nothing any more.
      const after = await t.http().get('/console').set('Cookie', `console_session=${cookie.value}`);
      expect(after.status).toBe(303);
      expect(after.headers.location).toBe('/console/sign-in');
      expect(session.problems).toEqual([]);
    });
  });

  it('answers a wrong or revoked key at sign-in with the form and a message', async () => {
    const revoked = await createKey(t, { permissions: [{ resource: 2, actions: ['ReadChildren'] }] });
    await t.http().post(`/auth/keys/${revoked.id}/revoked`).set('X-Api-Key', t.adminKey).expect(204);
    const session = await openSession(browser, t.url);
    const { page } = session;
    await withScreenshot(session, 'wrong-key', async () => {
      for (const key of ['not-a-key', revoked.key]) {
        await signIn(page, key);
        await page.getByRole('alert').waitFor();
        expect(await page.getByRole('alert').textContent()).toContain('not valid');
        expect(new URL(page.url()).pathname).toBe('/console/sign-in');
        expect(await page.context().cookies()).toEqual([]);
      }
      expect(session.problems).toEqual([]);
    });
  });

  it('refuses state-changing requests from another origin, whatever their cookie', async () => {
    // Another origin on the same site (same host, another port): SameSite=Strict still sends the cookie,
    // so only the same-origin check stands between such a page and the console.
    const port = Number(new URL(t.url).port);
    const attacker: Server = createServer((_request, response) => {
      response.setHeader('Content-Type', 'text/html');
      response.end(`<!doctype html><title>elsewhere</title>
<form method="post" action="http://127.0.0.1:${port}/console/sign-out"><button>sign out</button></form>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const session = await openSession(browser, t.url);
    const { page } = session;
    try {
      await withScreenshot(session, 'cross-origin', async () => {
        await signIn(page, t.adminKey);
        await page.getByRole('heading', { name: 'What this key may do' }).waitFor();
        await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
        await page.getByRole('button', { name: 'sign out' }).click();
        await page.getByText('sent from another site').waitFor();
        // A fetch from that origin does not get through either.
        await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
        const status = await page.evaluate(
          (target) => fetch(target, { method: 'POST', credentials: 'include', mode: 'no-cors', body: new URLSearchParams() }).then(() => 'sent'),
          `http://127.0.0.1:${port}/console/sign-out`,
        );
        expect(status).toBe('sent');
        expect((await t.db.query(`SELECT 1 FROM console_session`)).rowCount).toBe(1);
        await page.goto('/console');
        await page.getByRole('heading', { name: 'What this key may do' }).waitFor();
      });
    } finally {
      attacker.close();
    }
    // Without a browser: Sec-Fetch-Site decides; without it, the Origin must name this host.
    const host = new URL(t.url).host;
    const attempts: [Record<string, string>, number][] = [
      [{ 'Sec-Fetch-Site': 'cross-site' }, 403],
      [{ 'Sec-Fetch-Site': 'same-site' }, 403],
      [{ 'Sec-Fetch-Site': 'none' }, 403],
      [{ Origin: 'http://evil.example' }, 403],
      [{ Origin: 'null' }, 403],
      [{ Origin: `http://${host}` }, 401],
      [{ 'Sec-Fetch-Site': 'same-origin', Origin: 'null' }, 401],
    ];
    for (const [headers, status] of attempts) {
      const answer = await t.http().post('/console/sign-in').set(headers).type('form').send({ key: 'wrong' });
      expect([headers, answer.status]).toEqual([headers, status]);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.headers['content-security-policy']).toContain("default-src 'self'");
    }
  });

  it('answers forged cookies with the sign-in page and unknown pages with an HTML 404', async () => {
    for (const cookie of ['console_session=forged', `console_session=${'a'.repeat(22)}.${'b'.repeat(43)}`]) {
      const answer = await t.http().get('/console/lookup').set('Cookie', cookie);
      expect(answer.status).toBe(303);
      expect(answer.headers.location).toBe('/console/sign-in');
    }
    const missing = await t.http().get('/console/no/such/page');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^text\/html/);
    expect(missing.headers['cache-control']).toBe('no-store');
    expect(missing.text).toContain('There is no such page');
    const asset = await t.http().get('/console/assets/htmx.min.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
  });

  it('is not served with CONSOLE_ENABLED=false', async () => {
    const off = await createTestApp({ CONSOLE_ENABLED: 'false' });
    try {
      const answer = await off.http().get('/console/sign-in');
      expect([answer.status, answer.body.code]).toEqual([404, 'NotFound']);
      expect((await off.db.query(`SELECT to_regclass('console_session') IS NOT NULL AS present`)).rows[0].present).toBe(true);
    } finally {
      await off.close();
    }
  });

  /** Signs in over plain HTTP, as a browser form post would; returns the cookie pair. */
  async function cookieFor(app: TestApp, key: string): Promise<string> {
    const answer = await app.http().post('/console/sign-in').set('Sec-Fetch-Site', 'same-origin').type('form').send({ key });
    expect(answer.status).toBe(303);
    const [cookie] = answer.headers['set-cookie'] as unknown as string[];
    return cookie.split(';')[0];
  }

  it('serves a session on every instance, and a revocation through the API ends it on each', async () => {
    const other = await createTestApp({}, t);
    try {
      const analyst = await createKey(t, { permissions: [{ resource: 2, actions: ['ReadChildren'] }] });
      const cookie = await cookieFor(t, analyst.key);
      for (const app of [t, other]) {
        const page = await app.http().get('/console/collections').set('Cookie', cookie);
        expect(page.status).toBe(200);
      }
      await other.http().post(`/auth/keys/${analyst.id}/revoked`).set('X-Api-Key', t.adminKey).expect(204);
      for (const app of [other, t]) {
        const page = await app.http().get('/console/collections').set('Cookie', cookie);
        expect([page.status, page.headers.location]).toEqual([303, '/console/sign-in']);
      }
      expect((await t.db.query(`SELECT 1 FROM console_session WHERE key_id = $1`, [analyst.id])).rowCount).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('ends idle sessions, and answers an oversize form with a page saying so', async () => {
    const cookie = await cookieFor(t, t.adminKey);
    const id = cookie.split('=')[1].split('.')[0];
    expect((await t.http().get('/console/lookup').set('Cookie', cookie)).status).toBe(200);
    const looked = await t
      .http()
      .post('/console/lookup')
      .set('Cookie', cookie)
      .set('Sec-Fetch-Site', 'same-origin')
      .type('form')
      .send({ indicators: 'a[.]example' });
    expect([looked.status, looked.text.includes('0 known, 1 unknown')]).toEqual([200, true]);
    // Console writes reach the audit trail with the session's key, stored before the answer.
    const {
      rows: [session],
    } = await t.db.query(`SELECT key_id FROM console_session WHERE id = $1`, [id]);
    const { rows: audited } = await t.db.query(`SELECT key_id, status FROM audit_entry WHERE method = 'POST' AND route = '/console/lookup'`);
    expect(audited).toContainEqual({ key_id: session.key_id, status: 200 });
    const huge = 'x'.repeat(3 * 1024 * 1024);
    const oversize = await t.http().post('/console/lookup').set('Cookie', cookie).set('Sec-Fetch-Site', 'same-origin').type('form').send({ indicators: huge });
    expect(oversize.status).toBe(413);
    expect(oversize.headers['content-type']).toMatch(/^text\/html/);
    expect(oversize.text).toContain('larger than 2 MiB');
    // Last seen longer ago than CONSOLE_SESSION_IDLE_MINUTES (30 by default).
    await t.db.query(`UPDATE console_session SET last_seen_at = now() - interval '31 minutes' WHERE id = $1`, [id]);
    const idle = await t.http().get('/console/lookup').set('Cookie', cookie);
    expect([idle.status, idle.headers.location]).toEqual([303, '/console/sign-in']);
    // The housekeeping job removes it.
    await t.app.get(ConsoleSessionsService).prune();
    expect((await t.db.query(`SELECT 1 FROM console_session WHERE id = $1`, [id])).rowCount).toBe(0);
  });
});
