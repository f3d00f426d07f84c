import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface SchemaObject {
  $ref?: string;
  type?: string;
  format?: string;
  properties?: Record<string, SchemaObject>;
  required?: string[];
}
interface Operation {
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: SchemaObject }> };
  responses: Record<string, { content?: Record<string, { schema: SchemaObject }>; headers?: Record<string, unknown> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, SchemaObject> };
}

describe('OpenAPI document: filebox', () => {
  let t: TestApp;
  let document: OpenApiDocument;

  beforeAll(async () => {
    t = await createTestApp();
    const response = await t.http().get('/openapi.json');
    expect(response.status).toBe(200);
    document = JSON.parse(response.text) as OpenApiDocument;
  });
  afterAll(async () => {
    await t.close();
  });

  const resolve = (schema: SchemaObject): SchemaObject =>
    schema.$ref ? resolve(document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]) : schema;
  const jsonFields = (operation: Operation, status: string) =>
    Object.keys(resolve(operation.responses[status].content!['application/json'].schema).properties!).sort();
  const headers = (operation: Operation, status: string) => Object.keys(operation.responses[status].headers ?? {}).sort();

  it('lists exactly the filebox operations', () => {
    const listed = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/filebox/'))
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
    expect(listed.sort()).toEqual([
      'GET /filebox/files/{fileID}/content',
      'HEAD /filebox/files/{fileID}/content',
      'POST /filebox/sessions',
      'POST /filebox/sessions/{sessionID}/completed',
      'POST /filebox/sessions/{sessionID}/parts',
      'PUT /filebox/files',
      'PUT /filebox/sessions/{sessionID}/parts',
    ]);
  });

  it('describes the multipart bodies: `file`, and `number`, `partSize`, `filePart` under PUT and POST', () => {
    const upload = document.paths['/filebox/files'].put;
    const form = upload.requestBody!.content['multipart/form-data'].schema;
    expect(form.required).toEqual(['file']);
    expect(form.properties!.file).toEqual(expect.objectContaining({ type: 'string', format: 'binary' }));
    expect(jsonFields(upload, '201')).toEqual(['fileID']);
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['201', '400', '413']));

    for (const method of ['put', 'post']) {
      const part = document.paths['/filebox/sessions/{sessionID}/parts'][method];
      const fields = part.requestBody!.content['multipart/form-data'].schema;
      expect(fields.required).toEqual(['number', 'partSize', 'filePart']);
      expect(fields.properties!.filePart).toEqual(expect.objectContaining({ type: 'string', format: 'binary' }));
      expect(Object.keys(part.responses).sort()).toEqual(['204', '400', '404', '413', '422']);
      expect(part.responses['204'].content).toBeUndefined();
      expect(part.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(['path:sessionID']);
    }
  });

  it('describes sessions: partSize in, sessionID out; completion: fileID out, 422 for parts', () => {
    const open = document.paths['/filebox/sessions'].post;
    const body = resolve(open.requestBody!.content['application/json'].schema);
    expect(body.properties!.partSize).toEqual(expect.objectContaining({ type: 'integer', minimum: 1048576, maximum: 67108864 }));
    expect(jsonFields(open, '201')).toEqual(['sessionID']);
    const complete = document.paths['/filebox/sessions/{sessionID}/completed'].post;
    expect(complete.requestBody).toBeUndefined();
    expect(jsonFields(complete, '201')).toEqual(['fileID']);
    expect(Object.keys(complete.responses)).toEqual(expect.arrayContaining(['201', '404', '422']));
  });

  it('describes content reads: HEAD and GET headers, the binary body, Range, 206 and 416', () => {
    const head = document.paths['/filebox/files/{fileID}/content'].head;
    expect(headers(head, '200')).toEqual(['Accept-Ranges', 'Content-Length', 'ETag', 'Repr-Digest']);
    const get = document.paths['/filebox/files/{fileID}/content'].get;
    expect(get.parameters?.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['header:Range', 'path:fileID']);
    expect(headers(get, '200')).toEqual(['Accept-Ranges', 'Content-Length', 'ETag', 'Repr-Digest']);
    expect(headers(get, '206')).toEqual(['Accept-Ranges', 'Content-Length', 'Content-Range', 'ETag', 'Repr-Digest']);
    for (const status of ['200', '206']) {
      expect(get.responses[status].content?.['application/octet-stream'].schema).toEqual({ type: 'string', format: 'binary' });
    }
    expect(headers(get, '416')).toEqual(['Content-Range']);
    expect(Object.keys(get.responses).sort()).toEqual(['200', '206', '400', '404', '416']);
  });
});
