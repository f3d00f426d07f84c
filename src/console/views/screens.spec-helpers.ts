import { expect, it } from '@jest/globals';
import { escapeHtml } from '../html.js';
import type { Screen } from './layout.js';

/**
 * What the view specs put in every string a screen shows from data or from the user: markup if shown
 * unescaped. Left out of the build (`*.spec-helpers.ts`).
 */
export const HOSTILE = `<script>x()</script>"><img src=x onerror='y()'>`;

/** A screen as the browser gets it (its title and body), or a fragment. */
export function textOf(screen: Screen | { text: string }): string {
  return 'body' in screen ? `${escapeHtml(screen.title)}${screen.body.text}` : screen.text;
}

/** One test a screen: it shows HOSTILE, escaped, and never a tag or an attribute made of it. */
export function itShowsStoredTextAsText(screens: Array<[string, Screen | { text: string }]>): void {
  it.each(screens)('%s shows stored text as text', (_name, screen) => {
    const text = textOf(screen);
    expect(text).not.toContain('<script');
    expect(text).not.toContain('<img');
    expect(text).not.toContain(`onerror='`);
    expect(text).toContain(escapeHtml(HOSTILE));
  });
}
