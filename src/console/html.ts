/**
 * Server-side HTML for the console: a tagged template that escapes every interpolated value unless it is
 * itself `Html` (built by this template). Nothing reaches a page unescaped by accident: raw text has to
 * be wrapped on purpose, and only `trusted` does that (for fixed strings of our own).
 */
export class Html {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ESCAPES[character]);
}

/** What a template may interpolate: markup of ours, or text (escaped). */
export type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let text = strings[0];
  for (let index = 0; index < values.length; index += 1) text += render(values[index]) + strings[index + 1];
  return new Html(text);
}

/** A fixed markup string of our own (never user data). */
export function trusted(text: string): Html {
  return new Html(text);
}
