import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * A real headless Chromium for the console's tests: `CHROMIUM_PATH` (the user's, or the build of
 * `@sparticuz/chromium` that the run's global setup unpacked), launched with that package's arguments (they include the
 * sandbox flags that let it run as root in a container). One browser per test file; a fresh context
 * (cookies, storage) per session.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH;
  if (!executablePath) throw new Error('CHROMIUM_PATH is unset: run the tests through jest, whose global setup sets it');
  // Its `--single-process` (for AWS Lambda) ends the browser with its first closed context: not here.
  const args = chromium.args.filter((arg) => arg !== '--single-process');
  return playwright.launch({ executablePath, args, headless: true });
}

/** The browser globals used inside `page.evaluate` callbacks (the project compiles without the DOM library). */
declare const document: {
  addEventListener(type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void): void;
};
declare const window: unknown;

/** Where failing browser tests leave their screenshots (named in the failure message). */
const SCREENSHOTS = mkdtempSync(join(tmpdir(), 'console-screenshots-'));

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Content-Security-Policy reports and page errors seen so far. */
  problems: string[];
}

/** A fresh context (no cookies) with one page that records CSP violations and uncaught page errors. */
export async function openSession(browser: Browser, baseURL: string, options: { bypassCSP?: boolean } = {}): Promise<BrowserSession> {
  const context = await browser.newContext({ baseURL, bypassCSP: options.bypassCSP ?? false });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // securitypolicyviolation events, reported from inside every document the page loads.
  await page.exposeBinding('__reportViolation', (_source, text: string) => problems.push(`violation: ${text}`));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as { __reportViolation: (text: string) => void }).__reportViolation(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return { context, page, problems };
}

/**
 * Runs `steps`; on failure saves a screenshot of the page and rethrows with its path in the message.
 * Closes the context either way.
 */
export async function withScreenshot(session: BrowserSession, name: string, steps: () => Promise<void>): Promise<void> {
  try {
    await steps();
  } catch (error) {
    const path = join(SCREENSHOTS, `${name.replace(/[^a-z0-9]+/gi, '-')}.png`);
    await session.page.screenshot({ path, fullPage: true }).catch(() => undefined);
    if (error instanceof Error) error.message = `${error.message}\n(screenshot: ${path})`;
    throw error;
  } finally {
    await session.context.close();
  }
}

/** axe-core's findings on the page (WCAG 2.1 A and AA rules), as short strings; [] when none. */
export async function axeViolations(page: Page): Promise<string[]> {
  const source = await readFile(join(process.cwd(), 'node_modules/axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol rather than added as a <script>: the console's CSP admits no
  // script it did not serve, and this way the page itself runs with its CSP intact.
  await page.evaluate(source);
  return page.evaluate(async () => {
    const axe = (window as { axe: { run: (context: unknown, options: object) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } })
      .axe;
    const result = await axe.run((window as { document: unknown }).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
  });
}

/** Markup that runs script wherever the console fails to escape it: the console tests store it in every text they can. */
export const HOSTILE = `<script>window.__xss=1</script>"><img src=x onerror="window.__xss=1">`;

/** A signed-in session as `key`, run through `steps`; no CSP report, no page error, no script from data. */
export async function signedInAs(
  browser: Browser,
  baseURL: string,
  key: string,
  name: string,
  steps: (page: Page, session: BrowserSession) => Promise<void>,
): Promise<void> {
  const session = await openSession(browser, baseURL);
  await withScreenshot(session, name, async () => {
    await signIn(session.page, key);
    await session.page.getByRole('heading', { name: 'What this key may do' }).waitFor();
    await steps(session.page, session);
    expect(await session.page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();
    expect(session.problems).toEqual([]);
  });
}

/** No axe violation on the page (first opened at `path`, when given). */
export async function expectAccessible(page: Page, path = ''): Promise<void> {
  if (path !== '') await page.goto(path);
  expect([path || page.url(), await axeViolations(page)]).toEqual([path || page.url(), []]);
}

/** Signs in through the form, by keyboard. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.goto('/console/sign-in');
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('API key').press('Enter');
}
