import { describe, expect, it } from '@jest/globals';
import { operationsWhere, publishedOpenApi, type SchemaObject } from '../support/openapi.js';

interface Endpoint {
  method: string;
  path: string;
  status: string;
  request?: string[];
  response?: string[];
  array?: boolean;
  params?: string[];
  headers?: string[];
  /** Error statuses of wire-contract §7 for this endpoint. */
  errors: string[];
}

/** `Endpoint`'s fields as the table writes them: each list one string of space-separated words. */
interface Fields {
  request?: string;
  response?: string;
  array?: boolean;
  params?: string;
  headers?: string;
  errors: string;
}

/** The endpoint `'<method> <path> <success status>'` with its other fields. */
function endpoint(signature: string, { request, response, array, params, headers, errors }: Fields): Endpoint {
  const [method, path, status] = signature.split(' ');
  const words = (list?: string) => list?.split(' ');
  return {
    method,
    path,
    status,
    request: words(request),
    response: words(response),
    array,
    params: words(params),
    headers: words(headers),
    errors: errors.split(' '),
  };
}

/** A paged listing: an array, `cursor` and `limit`, a `Link` header. */
const LISTING = { array: true, params: 'query:cursor query:limit', headers: 'Link', errors: '400' };
/** A GET of the resource the path parameter `name` names, with `If-None-Match` and an `ETag`. */
const conditionalGet = (name: string) => ({ params: `path:${name} header:If-None-Match`, headers: 'ETag', errors: '404' });
/** A write of the resource the path parameter `name` names, with `If-Match` (412 when it does not match). */
const conditionalWrite = (name: string) => ({ params: `path:${name} header:If-Match`, errors: '400 404 412 422' });

/**
 * Every endpoint of the schema, collection and insight areas, with its success status, the top-level fields
 * of its request and response bodies (wire names, wire-contract §7.2–7.7 and §9), and its parameters.
 */
const ENDPOINTS: Endpoint[] = [
  ...['intel', 'insight'].flatMap((area) => [
    endpoint(`post /${area}/schemas 201`, { request: 'schemaID', response: 'schemaID', errors: '400 409' }),
    endpoint(`get /${area}/schemas 200`, { response: 'schemaID title', ...LISTING }),
    endpoint(`get /${area}/schemas/{schema_id} 200`, { response: 'schemaID', ...conditionalGet('schema_id') }),
    endpoint(`put /${area}/schemas/{schema_id} 204`, { request: 'schemaID', ...conditionalWrite('schema_id') }),
  ]),
  endpoint('post /intel/collections 201', { request: 'name schemaID', response: 'name', errors: '400 409 422' }),
  endpoint('get /intel/collections 200', { response: 'name schemaID', ...LISTING }),
  endpoint('get /intel/collections/{collectionName} 200', { response: 'name schemaID', ...conditionalGet('collectionName') }),
  endpoint('get /intel/collections/{collectionName}/schema 200', { response: 'schemaID', ...conditionalGet('collectionName') }),
  // 409: a TAXII view's alias taken by another collection or view (its `scoring`).
  endpoint('patch /intel/collections/{collectionName} 204', {
    request: 'schemaID',
    ...conditionalWrite('collectionName'),
    errors: `${conditionalWrite('collectionName').errors} 409`,
  }),
  endpoint('post /insight/tasks 201', { request: 'params priority maxAttempts dedupe maxAgeSeconds', response: 'taskID', errors: '400 422 429' }),
  endpoint('get /insight/tasks 200', {
    response: 'id params state result error',
    ...LISTING,
    params: `${LISTING.params} query:state query:errorCode query:schemaID`,
  }),
  endpoint('get /insight/tasks/{task_id} 200', {
    response: 'id params state result error attempts progress cancelRequested',
    params: 'path:task_id query:wait query:attempts',
    errors: '400 404',
  }),
  endpoint('post /insight/task-queue/executing-tasks 200', {
    request: 'limit wait schemas executor',
    response: 'id createdAt params attempt leaseToken leaseExpiresAt',
    array: true,
    errors: '400',
  }),
  endpoint('post /insight/task-queue/completed-tasks 204', { request: 'taskID result leaseToken', errors: '400 409 422' }),
  endpoint('post /insight/task-queue/failed-tasks 204', { request: 'taskID error leaseToken', errors: '400 409 422' }),
  // Executors' protocol (extensions §16).
  endpoint('post /insight/tasks/{task_id}/cancel 200', { response: 'id state cancelRequested', params: 'path:task_id', errors: '404 422' }),
  endpoint('post /insight/tasks/{task_id}/retry 200', { response: 'id state attempts', params: 'path:task_id', errors: '404 422' }),
  endpoint('put /insight/quotas/{schema_id} 200', {
    request: 'perMinute perHour perDay maxLeased',
    response: 'schemaID used nextUnitAt',
    params: 'path:schema_id',
    errors: '400 422',
  }),
  endpoint('get /insight/quotas/{schema_id} 200', { response: 'schemaID perMinute used nextUnitAt', params: 'path:schema_id', errors: '404' }),
  endpoint('delete /insight/quotas/{schema_id} 204', { params: 'path:schema_id', errors: '404' }),
  endpoint('post /insight/task-queue/heartbeats 200', {
    request: 'taskID leaseToken extendSeconds progress',
    response: 'leaseExpiresAt cancelRequested',
    errors: '400 409 422',
  }),
];

describe('OpenAPI api.document: schemas, collections and insight', () => {
  const api = publishedOpenApi();
  const { resolve } = api;

  const propertiesOf = (schema: SchemaObject) => Object.keys(resolve(schema).properties ?? {}).sort();

  // Objects, exports and imports: test/intel/objects-openapi.e2e-spec.ts.
  it('lists exactly these operations under the three areas', () => {
    const listed = operationsWhere(api.document, (path) => /^\/(intel\/(schemas|collections)|insight\/)/.test(path) && !/\/(objects|export|import)/.test(path));
    expect(listed).toEqual(ENDPOINTS.map((endpoint) => `${endpoint.method.toUpperCase()} ${endpoint.path}`).sort());
  });

  it.each(ENDPOINTS.map((endpoint) => [`${endpoint.method.toUpperCase()} ${endpoint.path}`, endpoint] as const))(
    '%s documents its request, response, parameters, headers and errors',
    (_name, endpoint) => {
      const operation = api.document.paths[endpoint.path][endpoint.method];
      expect(Object.keys(operation.responses)).toContain(endpoint.status);
      const success = operation.responses[endpoint.status];

      if (endpoint.request) {
        const body = operation.requestBody?.content['application/json']?.schema;
        expect(body).toBeDefined();
        expect(propertiesOf(body!)).toEqual(expect.arrayContaining(endpoint.request));
      } else {
        expect(operation.requestBody).toBeUndefined();
      }

      if (endpoint.response) {
        const schema = resolve(success.content!['application/json'].schema);
        const item = endpoint.array ? (expect(schema.type).toBe('array'), schema.items!) : schema;
        expect(propertiesOf(item)).toEqual(expect.arrayContaining(endpoint.response));
      } else {
        expect(success.content).toBeUndefined();
      }

      const params = (operation.parameters ?? []).map((parameter) => `${parameter.in}:${parameter.name}`);
      expect(params.sort()).toEqual([...(endpoint.params ?? [])].sort());
      expect(Object.keys(success.headers ?? {}).sort()).toEqual([...(endpoint.headers ?? [])].sort());

      // The error statuses, each with the {code, message, details?} body: the endpoint's own, and those of its
      // access rule (400 for X-Api-Version, 401, 503; 403 and 429 where a permission is needed), and 413 for a JSON body.
      const errorStatuses = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
      const access = endpoint.path === '/intel/collections' && endpoint.method === 'get' ? ['400', '401', '503'] : ['400', '401', '403', '429', '503'];
      const common = [...access, ...(endpoint.request ? ['413'] : [])];
      expect(errorStatuses.sort()).toEqual([...new Set([...endpoint.errors, ...common])].sort());
      for (const status of errorStatuses) {
        expect(propertiesOf(operation.responses[status].content!['application/json'].schema)).toEqual(['code', 'details', 'message']);
      }
    },
  );

  it('names the wire fields and enums exactly (wire-contract §6, §7.6, §7.7)', () => {
    const schemas = api.document.components.schemas;
    expect(propertiesOf(schemas.TaskParamsDto)).toEqual(['fileID', 'objectKeys', 'schemaID']);
    expect(propertiesOf(schemas.TaskParamsView)).toEqual(['fileID', 'objectKeys', 'schemaID']);
    expect(propertiesOf(schemas.TaskView)).toEqual(['error', 'id', 'params', 'result', 'state']);
    expect(schemas.TaskView.required?.sort()).toEqual(['id', 'params', 'state']);
    expect(resolve(schemas.TaskView.properties!.state).enum).toEqual(['Pending', 'Completed', 'Failed']);
    expect(propertiesOf(schemas.TaskErrorView)).toEqual(['code', 'message']);
    expect(propertiesOf(schemas.InsightObjectView)).toEqual(['context', 'keys', 'type']);
    expect(resolve(schemas.InsightObjectView.properties!.type).enum).toEqual(['File', 'DomainName', 'URL', 'IPAddress']);
    expect(resolve(schemas.InsightObjectKeyDto.properties!.type).enum).not.toContain('IPNetwork');
    expect(propertiesOf(schemas.TaskErrorDto)).toEqual(['code', 'kind', 'message', 'retryAfterSeconds']);
    expect(resolve(schemas.TaskErrorDto.properties!.kind).enum).toEqual(['permanent', 'transient', 'rateLimited']);
    expect(propertiesOf(schemas.TaskRegistrationView)).toEqual(['deduplicated', 'taskID']);
    expect(propertiesOf(schemas.SchemaCommonView)).toEqual(['schemaID', 'title']);
  });
});
