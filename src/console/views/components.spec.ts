import { describe, expect, it } from '@jest/globals';
import { escapeHtml, html } from '../html.js';
import { alert, dataTable, dateOf, expiryOf, formField, pager } from './components.js';

/** Text that breaks out of an element or an attribute if it reaches a page unescaped. */
const HOSTILE = `<script>x()</script>"><img src=x onerror='y()'>&amp;`;
const ESCAPED = escapeHtml(HOSTILE);

/** The hostile text appears only escaped (never raw, never a tag or an attribute of its own). */
function expectEscaped(markup: string, times: number): void {
  expect(markup).not.toContain('<script');
  expect(markup).not.toContain('<img');
  expect(markup.split(ESCAPED)).toHaveLength(times + 1);
}

describe('dataTable', () => {
  const rows = [{ name: HOSTILE, count: 2 }];

  it('names the table by its caption and its columns by their headers', () => {
    const text = dataTable({
      caption: 'Collections this key may read',
      rows,
      columns: [
        { header: 'Name', cell: (row) => row.name },
        { header: 'Count', cell: (row) => row.count },
      ],
    }).text;
    expect(text).toMatch(
      /^<table><caption>Collections this key may read<\/caption><thead><tr><th scope="col">Name<\/th><th scope="col">Count<\/th><\/tr><\/thead>/,
    );
    expect(text).toContain(`<tbody><tr><td>${ESCAPED}</td><td>2</td></tr></tbody></table>`);
  });

  it('escapes the caption, the headers and every cell', () => {
    const text = dataTable({
      caption: HOSTILE,
      rows,
      columns: [
        { header: HOSTILE, cell: (row) => row.name },
        { header: 'Link', cell: (row) => html`<a href="/x?q=${row.name}">${row.name}</a>` },
      ],
    }).text;
    expectEscaped(text, 5);
  });

  it('renders a row header, a cell class and an id; no rows is an empty body', () => {
    const text = dataTable({
      id: 'known',
      caption: 'Keys',
      rows,
      columns: [
        { header: 'Resource', rowHeader: true, cell: (row) => row.name },
        { header: 'Value', className: 'mono', cell: (row) => row.count },
      ],
    }).text;
    expect(text).toContain('<table id="known">');
    expect(text).toContain(`<tr><th scope="row">${ESCAPED}</th><td class="mono">2</td></tr>`);
    expect(dataTable({ caption: 'Empty', rows: [], columns: [{ header: 'A', cell: () => 'a' }] }).text).toContain('<tbody></tbody>');
  });
});

describe('pager', () => {
  it('links the next page with rel=next, the cursor encoded', () => {
    const markup = pager('/console/keys', 'a+b/c=&d');
    expect(markup && markup.text).toBe('<p><a href="/console/keys?cursor=a%2Bb%2Fc%3D%26d" rel="next">Next page</a></p>');
  });

  it('keeps the list filters that are set, before the cursor', () => {
    const markup = pager('/console/tasks', 'abc', { state: 'Completed', empty: '', absent: undefined });
    expect(markup && markup.text).toContain('href="/console/tasks?state=Completed&amp;cursor=abc"');
  });

  it('keeps any cursor and filter inside its link, and gives them back whole', () => {
    const markup = pager('/console/collections/x', HOSTILE, { filter: HOSTILE });
    const text = markup ? markup.text : '';
    const [, href] = /^<p><a href="([^"<>]*)" rel="next">Next page<\/a><\/p>$/.exec(text) ?? [];
    const query = new URL(href.replaceAll('&amp;', '&'), 'https://console.test').searchParams;
    expect([query.get('filter'), query.get('cursor')]).toEqual([HOSTILE, HOSTILE]);
  });

  it('is nothing on the last page', () => {
    expect(pager('/console/keys', undefined)).toBe('');
  });
});

describe('formField', () => {
  it('labels the control and ties its help and its error to it', () => {
    const text = formField({ name: 'schemaID', label: 'Insight schema', value: 'verdict', help: 'An id.', error: 'schemaID must be a schema identifier' }).text;
    expect(text).toBe(
      '<label for="schemaID">Insight schema</label>\n' +
        '<input id="schemaID" name="schemaID" aria-describedby="schemaID-help schemaID-error" aria-invalid="true" value="verdict">\n' +
        '<p id="schemaID-help" class="note">An id.</p>\n' +
        '<p id="schemaID-error" class="error">schemaID must be a schema identifier</p>',
    );
  });

  it('without help or error is a label and its control', () => {
    const text = formField({ name: 'key', label: 'API key', type: 'password', attributes: html`required` }).text;
    expect(text).toBe('<label for="key">API key</label>\n<input type="password" id="key" name="key" required>');
  });

  it('escapes the label, the value, the help and the error, in an input and a text area', () => {
    for (const type of ['text', 'date', 'textarea'] as const) {
      const text = formField({ name: 'field', label: HOSTILE, value: HOSTILE, help: HOSTILE, error: HOSTILE, type }).text;
      expectEscaped(text, 4);
    }
  });

  it('never shows a value in a password or file control', () => {
    expect(formField({ name: 'key', label: 'API key', type: 'password', value: 'secret' }).text).not.toContain('secret');
    expect(formField({ name: 'file', label: 'File', type: 'file', value: 'x' }).text).not.toContain('value=');
  });
});

describe('alert', () => {
  it('is an escaped role=alert message, or nothing', () => {
    const markup = alert(HOSTILE);
    expect(markup && markup.text).toBe(`<p role="alert" class="error">${ESCAPED}</p>`);
    expect(alert(undefined)).toBe('');
    expect(alert('')).toBe('');
  });
});

describe('dates', () => {
  it('shows UTC to the second, a dash for none and "never" for no expiry', () => {
    expect(dateOf(new Date('2030-01-02T03:04:05.678Z'))).toBe('2030-01-02 03:04:05 UTC');
    expect(dateOf('2030-01-02T03:04:05Z')).toBe('2030-01-02 03:04:05 UTC');
    expect(dateOf(null)).toBe('—');
    expect(expiryOf(undefined)).toBe('never');
    expect(expiryOf('2030-01-02T00:00:00Z')).toBe('2030-01-02 00:00:00 UTC');
  });
});
