import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The console's static files, served from our own origin (the CSP allows nothing else). htmx comes from
 * its package; the style sheet and the small script are ours, kept here as text so the build needs no
 * step besides `tsc`.
 */
const HTMX = readFileSync(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'));

const CSS = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #4a5360; --line: #c6ccd4; --accent: #0b4f9c; --bg: #ffffff;
  --soft: #f2f4f7; --error: #a4161a; --focus: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, main:focus-visible,
summary:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: .5rem 1rem; border-bottom: 1px solid var(--line); background: var(--soft); }
.brand { margin: 0; font-weight: 700; }
.brand a { color: var(--ink); text-decoration: none; }
nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: 700; }
.sign-out { margin-left: auto; }
main { padding: 1rem; max-width: 72rem; }
h1 { font-size: 1.6rem; margin-top: 0; }
button { font: inherit; padding: .35rem .9rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 4px; cursor: pointer; }
button.secondary { background: var(--bg); color: var(--accent); }
input, select, textarea { font: inherit; padding: .3rem; border: 1px solid var(--muted); border-radius: 3px; max-width: 100%; }
textarea { width: 100%; font-family: ui-monospace, monospace; }
.stack { display: flex; flex-direction: column; gap: .5rem; max-width: 40rem; }
.row { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; }
table { border-collapse: collapse; margin: 1rem 0; width: 100%; }
caption { text-align: left; font-weight: 700; padding: .25rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
td input[type="number"] { width: 8rem; }
pre { background: var(--soft); padding: .75rem; overflow: auto; white-space: pre-wrap; word-break: break-word; }
code, .mono { font-family: ui-monospace, monospace; word-break: break-all; }
.error { color: var(--error); font-weight: 600; }
.note { color: var(--muted); }
.secret { font-size: 1.1rem; padding: .5rem; background: var(--soft); border: 1px dashed var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.htmx-request .busy { display: inline; }
.busy { display: none; }
progress { width: 20rem; }
/* TLP 2.0 badges: the level in black on its colour (FIRST's values; each at least 5.6:1 against black). */
.tlp { display: inline-block; padding: 0 .4rem; border: 1px solid #000; border-radius: 3px; color: #000; font-size: .85rem; font-weight: 700; white-space: nowrap; }
.tlp-clear { background: #ffffff; }
.tlp-green { background: #33ff00; }
.tlp-amber { background: #ffc000; }
.tlp-red { background: #ff2b2b; }
/* Score badges: black text on light tints (each above 15:1), the number in the text. */
.score { display: inline-block; padding: 0 .4rem; border: 1px solid #000; border-radius: 3px; color: #000; font-size: .85rem; font-weight: 700; white-space: nowrap; }
.score-high { background: #ffd9d9; }
.score-medium { background: #fff0c2; }
.score-low { background: #e6ebf1; }
`;

/**
 * Upload progress where JavaScript runs: htmx sends the multipart form and reports its XHR progress.
 * Focus goes to the page's heading after a boosted navigation, so keyboard and screen-reader users
 * start at the new page's content.
 */
const JS = `
document.addEventListener('htmx:xhr:progress', function (event) {
  var bar = document.getElementById('upload-progress');
  if (!bar || !event.detail.lengthComputable) return;
  bar.hidden = false;
  bar.value = Math.round((event.detail.loaded / event.detail.total) * 100);
});
document.addEventListener('htmx:afterSettle', function (event) {
  if (event.detail.boosted && event.detail.target === document.body) {
    var main = document.getElementById('main');
    if (main) main.focus({ preventScroll: true });
  }
});
`;

export const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'htmx.min.js': { type: 'text/javascript; charset=utf-8', body: HTMX },
  'console.css': { type: 'text/css; charset=utf-8', body: Buffer.from(CSS) },
  'console.js': { type: 'text/javascript; charset=utf-8', body: Buffer.from(JS) },
};
