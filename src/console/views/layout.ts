import type { ConsoleRequest } from '../console-http.js';
import { html, type Html } from '../html.js';
import { alert } from './components.js';

/**
 * htmx settings (no inline code anywhere, so a strict CSP holds): no `eval`, no inline indicator styles, no
 * scripts from swapped content, requests to our own origin only, and no history snapshots in localStorage
 * (a page showing a new key's value must not be stored). Error answers are swapped in like any page.
 */
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  historyCacheSize: 0,
  selfRequestsOnly: true,
  responseHandling: [
    { code: '204', swap: false },
    { code: '...', swap: true },
  ],
});

export const NAV = [
  ['Lookup', '/console/lookup'],
  ['Collections', '/console/collections'],
  ['Tasks', '/console/tasks'],
  ['Files', '/console/files'],
  ['Keys', '/console/keys'],
  ['Sources', '/console/sources'],
  ['Warninglists', '/console/warninglists'],
] as const;

export interface PageOptions {
  /** Keeps htmx from putting this page in its history (a shown key value). */
  noHistory?: boolean;
}

/** What a screen's view renders: the page's title (its `h1` too) and content, without the frame. */
export class Screen {
  constructor(
    readonly title: string,
    readonly body: Html,
    readonly options: PageOptions = {},
  ) {}
}

/** A whole console document; the navigation and sign-out only for a signed-in request. */
export function page(request: ConsoleRequest, { title, body, options }: Screen): Html {
  const signedIn = request.principal !== undefined && request.consoleSession !== undefined;
  const current = request.path;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<title>${title} · Intel console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/htmx.min.js" defer></script>
<script src="/console/assets/console.js" defer></script>
</head>
<body hx-boost="true">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand"><a href="/console">Intel console</a></p>
${
  signedIn &&
  html`<nav aria-label="Main"><ul>${NAV.map(
    ([label, href]) => html`<li><a href="${href}"${current.startsWith(href) ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )}</ul></nav>
<form method="post" action="/console/sign-out" class="sign-out"><button type="submit">Sign out</button></form>`
}
</header>
<main id="main" tabindex="-1"${options.noHistory ? html` hx-history="false"` : ''}>
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

export function errorScreen(status: number, message: string): Screen {
  const title = status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : status >= 500 ? 'Error' : 'Request refused';
  return new Screen(title, html`${alert(message)}<p><a href="/console">Back to the console</a></p>`);
}
