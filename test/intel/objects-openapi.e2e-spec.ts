import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fetchOpenApi, type OpenApiDocument, type Operation, operationsWhere, resolveSchema, type SchemaObject } from '../support/openapi.js';
import { createTestApp, type TestApp } from '../support/test-app.js';


const OBJECTS = '/intel/collections/{collection_id}/objects';

describe('OpenAPI document: intel objects and the change feed', () => {
  let t: TestApp;
  let document: OpenApiDocument;

  beforeAll(async () => {
    t = await createTestApp();
    document = await fetchOpenApi(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const resolve = (schema: SchemaObject) => resolveSchema(document, schema);
  const params = (operation: Operation) =>
    (operation.parameters ?? []).map((p) => `${p.in}:${p.name}${p.required ? '!' : ''}`).sort();

  it('lists exactly the four operations', () => {
    const listed = operationsWhere(document, (path) => path.startsWith(OBJECTS));
    expect(listed).toEqual([`DELETE ${OBJECTS}`, `GET ${OBJECTS}`, `GET ${OBJECTS}/changes`, `POST ${OBJECTS}`]);
  });

  it('POST: the object form in, 204 out; DELETE: the key in the query, 204 out', () => {
    const post = document.paths[OBJECTS].post;
    const form = resolve(post.requestBody!.content['application/json'].schema);
    expect(Object.keys(form.properties!).sort()).toEqual(['context', 'keys', 'type']);
    expect(form.required?.sort()).toEqual(['keys', 'type']);
    expect(resolve(form.properties!.type).enum).toEqual(['File', 'DomainName', 'URL', 'IPAddress', 'IPNetwork']);
    const key = resolve(form.properties!.keys.items!);
    expect(Object.keys(key.properties!).sort()).toEqual(['type', 'value']);
    expect(resolve(key.properties!.type).enum).toContain('IPNetwork');
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['204', '400', '404', '422']));
    expect(post.responses['204'].content).toBeUndefined();

    const remove = document.paths[OBJECTS].delete;
    expect(remove.requestBody).toBeUndefined();
    expect(params(remove)).toEqual(['path:collection_id!', 'query:objectKey!', 'query:objectKeyType!']);
    expect(Object.keys(remove.responses)).toEqual(expect.arrayContaining(['204', '400', '404', '422']));
  });

  it('GET objects: a page of object views with Link (next, related); GET changes: change views, cursor required', () => {
    const list = document.paths[OBJECTS].get;
    expect(params(list)).toEqual(['path:collection_id!', 'query:cursor', 'query:limit']);
    const page = resolve(list.responses['200'].content!['application/json'].schema);
    expect(page.type).toBe('array');
    const view = resolve(page.items!);
    expect(Object.keys(view.properties!).sort()).toEqual(['context', 'keys', 'type']);
    expect(view.required?.sort()).toEqual(['context', 'keys', 'type']);
    expect(Object.keys(list.responses['200'].headers ?? {})).toEqual(['Link']);
    expect(JSON.stringify(list.responses['200'].headers)).toContain('rel=\\"related\\"');

    const changes = document.paths[`${OBJECTS}/changes`].get;
    expect(params(changes)).toEqual(['path:collection_id!', 'query:cursor!', 'query:limit']);
    const feed = resolve(changes.responses['200'].content!['application/json'].schema);
    expect(feed.type).toBe('array');
    const change = resolve(feed.items!);
    expect(Object.keys(change.properties!).sort()).toEqual(['object', 'operation']);
    expect(resolve(change.properties!.operation).enum).toEqual(['Add', 'Update', 'Remove']);
    expect(Object.keys(resolve(change.properties!.object).properties!).sort()).toEqual(['context', 'keys', 'type']);
    expect(Object.keys(changes.responses['200'].headers ?? {})).toEqual(['Link']);
    expect(Object.keys(changes.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '422']));
  });
});
