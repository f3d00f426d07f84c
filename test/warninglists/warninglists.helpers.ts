import type { TestApp } from '../support/test-app.js';

type Request = ReturnType<ReturnType<TestApp['http']>['get']>;

/** An export's body as text whatever its media type (a CSV or NDJSON body is not parsed). */
export const asText = (request: Request) =>
  request.buffer(true).parse((res, done) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => done(null, text));
  });

/** The non-empty lines of a body, sorted (an export's order is not what these tests check). */
export const sortedLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .sort();

/** PATCH of a list's settings with the If-Match its current ETag gives. */
export async function patchList(t: TestApp, name: string, body: Record<string, unknown>): Promise<void> {
  const tag = (await t.warninglists.list(name).expect(200)).headers.etag as string;
  await t.warninglists.update(name, body, tag).expect(204);
}
