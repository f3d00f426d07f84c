import { describe, expect, it } from '@jest/globals';
import { operationsWhere, publishedOpenApi, type Operation } from '../support/openapi.js';

describe('OpenAPI api.document: filebox', () => {
  const api = publishedOpenApi();
  const { resolve } = api;
  const jsonFields = (operation: Operation, status: string) =>
    Object.keys(resolve(operation.responses[status].content!['application/json'].schema).properties!).sort();
  const headers = (operation: Operation, status: string) => Object.keys(operation.responses[status].headers ?? {}).sort();

  it('lists exactly the filebox operations', () => {
    const listed = operationsWhere(api.document, (path) => path.startsWith('/filebox/'));
    expect(listed).toEqual([
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
    const upload = api.document.paths['/filebox/files'].put;
    const form = upload.requestBody!.content['multipart/form-data'].schema;
    expect(form.required).toEqual(['file']);
    expect(form.properties!.file).toEqual(expect.objectContaining({ type: 'string', format: 'binary' }));
    expect(jsonFields(upload, '201')).toEqual(['fileID']);
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['201', '400', '413', '507']));

    for (const method of ['put', 'post']) {
      const part = api.document.paths['/filebox/sessions/{sessionID}/parts'][method];
      const fields = part.requestBody!.content['multipart/form-data'].schema;
      expect(fields.required).toEqual(['number', 'partSize', 'filePart']);
      expect(fields.properties!.filePart).toEqual(expect.objectContaining({ type: 'string', format: 'binary' }));
      expect(Object.keys(part.responses).sort()).toEqual(['204', '400', '401', '403', '404', '413', '422', '429', '503', '507']);
      expect(part.responses['204'].content).toBeUndefined();
      expect(part.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(['path:sessionID']);
    }
  });

  it('describes sessions: partSize in, sessionID out; completion: fileID out, 422 for parts', () => {
    const open = api.document.paths['/filebox/sessions'].post;
    const body = resolve(open.requestBody!.content['application/json'].schema);
    expect(body.properties!.partSize).toEqual(expect.objectContaining({ type: 'integer', minimum: 1048576, maximum: 67108864 }));
    expect(jsonFields(open, '201')).toEqual(['sessionID']);
    const complete = api.document.paths['/filebox/sessions/{sessionID}/completed'].post;
    expect(complete.requestBody).toBeUndefined();
    expect(jsonFields(complete, '201')).toEqual(['fileID']);
    expect(Object.keys(complete.responses)).toEqual(expect.arrayContaining(['201', '404', '422', '507']));
  });

  it('describes content reads: HEAD and GET headers, the binary body, Range, 206 and 416', () => {
    const head = api.document.paths['/filebox/files/{fileID}/content'].head;
    expect(headers(head, '200')).toEqual(['Accept-Ranges', 'Content-Length', 'ETag', 'Repr-Digest']);
    const get = api.document.paths['/filebox/files/{fileID}/content'].get;
    expect(get.parameters?.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['header:Range', 'path:fileID']);
    expect(headers(get, '200')).toEqual(['Accept-Ranges', 'Content-Length', 'ETag', 'Repr-Digest']);
    expect(headers(get, '206')).toEqual(['Accept-Ranges', 'Content-Length', 'Content-Range', 'ETag', 'Repr-Digest']);
    for (const status of ['200', '206']) {
      expect(get.responses[status].content?.['application/octet-stream'].schema).toEqual({ type: 'string', format: 'binary' });
    }
    expect(headers(get, '416')).toEqual(['Content-Range']);
    expect(Object.keys(get.responses).sort()).toEqual(['200', '206', '400', '401', '403', '404', '416', '429', '503']);
  });
});
