import { describe, expect, it } from '@jest/globals';
import { operationsWhere, publishedOpenApi, type Operation } from '../support/openapi.js';

const OBJECTS = '/intel/collections/{collection_id}/objects';

describe('OpenAPI api.document: intel objects and the change feed', () => {
  const api = publishedOpenApi();
  const { resolve } = api;
  const params = (operation: Operation) => (operation.parameters ?? []).map((p) => `${p.in}:${p.name}${p.required ? '!' : ''}`).sort();

  it('lists exactly the four operations, plus the batch, network, STIX bundle, history, provenance and score extensions', () => {
    const listed = operationsWhere(api.document, (path) => path.startsWith(OBJECTS));
    expect(listed).toEqual([
      `DELETE ${OBJECTS}`,
      `DELETE ${OBJECTS}/score`,
      `GET ${OBJECTS}`,
      `GET ${OBJECTS}/changes`,
      `GET ${OBJECTS}/history`,
      `GET ${OBJECTS}/network`,
      `GET ${OBJECTS}/provenance`,
      `GET ${OBJECTS}/score`,
      `POST ${OBJECTS}`,
      `POST ${OBJECTS}/batch`,
      `POST ${OBJECTS}/stix-bundle`,
      `PUT ${OBJECTS}/score`,
    ]);
  });

  /** Every listed error status documents the `{code, message, details}` body. */
  const expectErrors = (operation: Operation, statuses: string[]) => {
    expect(
      Object.keys(operation.responses)
        .filter((status) => status >= '400')
        .sort(),
    ).toEqual(statuses);
    for (const status of statuses) {
      const body = resolve(operation.responses[status].content!['application/json'].schema);
      expect(Object.keys(body.properties!).sort()).toEqual(['code', 'details', 'message']);
      expect(body.required?.sort()).toEqual(['code', 'message']);
    }
  };

  it('POST batch: JSON array of object forms and removes, or NDJSON; the report; every error with its body', () => {
    const batch = api.document.paths[`${OBJECTS}/batch`].post;
    expect(batch.summary).toEqual(expect.any(String));
    expect(batch.description).toContain('atomic');
    expect(params(batch)).toEqual(['path:collection_id!', 'query:atomic', 'query:tlp']);
    expect(Object.keys(batch.requestBody!.content).sort()).toEqual(['application/json', 'application/x-ndjson']);
    const array = batch.requestBody!.content['application/json'].schema;
    expect(array.type).toBe('array');
    const [form, remove] = array.items!.oneOf!.map(resolve);
    expect(Object.keys(form.properties!).sort()).toEqual(['context', 'keys', 'type']);
    expect(Object.keys(resolve(remove.properties!.remove).properties!).sort()).toEqual(['type', 'value']);
    const report = resolve(batch.responses['200'].content!['application/json'].schema);
    expect(Object.keys(report.properties!).sort()).toEqual(['added', 'failed', 'items', 'removed', 'unchanged', 'updated']);
    const item = resolve(report.properties!.items.items!);
    expect(resolve(item.properties!.status).enum).toEqual(['Added', 'Updated', 'Unchanged', 'Removed', 'Absent', 'Failed', 'NotApplied']);
    expect(Object.keys(resolve(item.properties!.error).properties!).sort()).toEqual(['code', 'details', 'message']);
    expectErrors(batch, ['400', '401', '403', '404', '413', '415', '422', '429', '503']);
  });

  it('GET network: within or contains with the page parameters; a page of objects; every error with its body', () => {
    const search = api.document.paths[`${OBJECTS}/network`].get;
    expect(search.summary).toEqual(expect.any(String));
    expect(search.description).toEqual(expect.any(String));
    expect(params(search)).toEqual(['path:collection_id!', 'query:contains', 'query:cursor', 'query:limit', 'query:within']);
    const page = resolve(search.responses['200'].content!['application/json'].schema);
    expect(page.type).toBe('array');
    expect(Object.keys(resolve(page.items!).properties!).sort()).toEqual(['context', 'expiresAt', 'keys', 'tlp', 'type']);
    expect(Object.keys(search.responses['200'].headers ?? {})).toEqual(['Link']);
    expectErrors(search, ['400', '401', '403', '404', '429', '503']);
  });

  it('GET history and provenance: the key (and paging), their views, every error with its body', () => {
    const history = api.document.paths[`${OBJECTS}/history`].get;
    expect(params(history)).toEqual(['path:collection_id!', 'query:cursor', 'query:limit', 'query:objectKey!', 'query:objectKeyType!']);
    const page = resolve(history.responses['200'].content!['application/json'].schema);
    expect(page.type).toBe('array');
    const entry = resolve(page.items!);
    expect(Object.keys(entry.properties!).sort()).toEqual(['at', 'keyID', 'obj', 'operation', 'position', 'reason', 'requestID', 'source', 'via']);
    expect(Object.keys(resolve(entry.properties!.obj).properties!).sort()).toEqual(['context', 'expiresAt', 'keys', 'tlp', 'type']);
    expect(Object.keys(history.responses['200'].headers ?? {})).toEqual(['Link']);
    expectErrors(history, ['400', '401', '403', '404', '422', '429', '503']);

    const provenance = api.document.paths[`${OBJECTS}/provenance`].get;
    expect(params(provenance)).toEqual(['path:collection_id!', 'query:objectKey!', 'query:objectKeyType!', 'query:scoreAt']);
    const view = resolve(provenance.responses['200'].content!['application/json'].schema);
    expect(Object.keys(view.properties!).sort()).toEqual(['claims', 'score', 'sightings', 'warnings']);
    expect(Object.keys(resolve(view.properties!.claims.items!).properties!).sort()).toEqual(['firstSeenAt', 'lastSeenAt', 'origin', 'source']);
    expectErrors(provenance, ['400', '401', '403', '404', '422', '429', '503']);
  });

  it('GET and HEAD export, POST import: their parameters, Basic credentials, media types and errors', () => {
    const EXPORT = '/intel/collections/{collection_id}/export';
    const { get, head } = api.document.paths[EXPORT];
    for (const operation of [get, head]) {
      expect(operation.summary).toEqual(expect.any(String));
      expect(params(operation)).toEqual([
        'header:If-None-Match',
        'path:collection_id!',
        'query:excludeFalsePositives',
        'query:format!',
        'query:keyType',
        'query:maxTLP',
        'query:minScore',
        'query:scoreAt',
        'query:sightedSince',
        'query:urlScheme',
        'query:warninglists',
      ]);
      expect(operation.security).toEqual(expect.arrayContaining([{ basic: [] }, { bearer: [] }, { apiKey: [] }]));
      expect(Object.keys(operation.responses['304'].headers ?? {})).toEqual(expect.arrayContaining(['ETag', 'Last-Modified', 'X-Excluded-Count', 'X-TLP-Max']));
      expectErrors(operation, ['400', '401', '403', '404', '429', '503']);
    }
    expect(Object.keys(get.responses['200'].content!).sort()).toEqual(['application/stix+json', 'application/x-ndjson', 'text/csv', 'text/plain']);
    const imported = api.document.paths['/intel/collections/{collection_id}/import'].post;
    expect(imported.summary).toEqual(expect.any(String));
    expect(imported.description).toContain('dryRun');
    expect(params(imported)).toEqual(
      expect.arrayContaining(['path:collection_id!', 'query:atomic', 'query:context', 'query:dryRun', 'query:format!', 'query:tlp']),
    );
    expect(Object.keys(imported.requestBody!.content).sort()).toEqual(['text/csv', 'text/plain']);
    expect(imported.security).not.toEqual(expect.arrayContaining([{ basic: [] }]));
    expectErrors(imported, ['400', '401', '403', '404', '413', '415', '422', '429', '503']);
  });

  it('POST /intel/lookup: keys and optional collections in; one result per key out; every error with its body', () => {
    const lookup = api.document.paths['/intel/lookup'].post;
    expect(lookup.summary).toEqual(expect.any(String));
    expect(lookup.description).toContain('read');
    const body = resolve(lookup.requestBody!.content['application/json'].schema);
    expect(Object.keys(body.properties!).sort()).toEqual(['collections', 'keys', 'scoreAt']);
    expect(body.required).toEqual(['keys']);
    const results = resolve(lookup.responses['200'].content!['application/json'].schema);
    expect(results.type).toBe('array');
    const result = resolve(results.items!);
    expect(Object.keys(result.properties!).sort()).toEqual(['error', 'key', 'matches', 'warnings']);
    const match = resolve(resolve(result.properties!.matches).items!);
    expect(Object.keys(match.properties!).sort()).toEqual(['collection', 'object', 'sightings']);
    expectErrors(lookup, ['400', '401', '413', '503']);
  });

  it('POST: the object form in, 204 out; DELETE: the key in the query, 204 out', () => {
    const post = api.document.paths[OBJECTS].post;
    const form = resolve(post.requestBody!.content['application/json'].schema);
    expect(Object.keys(form.properties!).sort()).toEqual(['context', 'expiresAt', 'keys', 'type']);
    expect(form.required?.sort()).toEqual(['keys', 'type']);
    expect(resolve(form.properties!.type).enum).toEqual(['File', 'DomainName', 'URL', 'IPAddress', 'IPNetwork']);
    const key = resolve(form.properties!.keys.items!);
    expect(Object.keys(key.properties!).sort()).toEqual(['type', 'value']);
    expect(resolve(key.properties!.type).enum).toContain('IPNetwork');
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['204', '400', '404', '422']));
    expect(post.responses['204'].content).toBeUndefined();
    expect(params(post)).toEqual(['path:collection_id!', 'query:tlp']);

    const remove = api.document.paths[OBJECTS].delete;
    expect(remove.requestBody).toBeUndefined();
    expect(params(remove)).toEqual(['path:collection_id!', 'query:objectKey!', 'query:objectKeyType!']);
    expect(Object.keys(remove.responses)).toEqual(expect.arrayContaining(['204', '400', '404', '422']));
  });

  it('GET objects: a page of object views with Link (next, related); GET changes: change views, cursor required', () => {
    const list = api.document.paths[OBJECTS].get;
    expect(params(list)).toEqual([
      'path:collection_id!',
      'query:cursor',
      'query:excludeFalsePositives',
      'query:limit',
      'query:maxTLP',
      'query:minScore',
      'query:scoreAt',
      'query:sightedSince',
    ]);
    const page = resolve(list.responses['200'].content!['application/json'].schema);
    expect(page.type).toBe('array');
    const view = resolve(page.items!);
    expect(Object.keys(view.properties!).sort()).toEqual(['context', 'expiresAt', 'keys', 'score', 'tlp', 'type']);
    expect(view.required?.sort()).toEqual(['context', 'keys', 'score', 'tlp', 'type']);
    expect(Object.keys(list.responses['200'].headers ?? {})).toEqual(['Link']);
    expect(JSON.stringify(list.responses['200'].headers)).toContain('rel=\\"related\\"');

    const changes = api.document.paths[`${OBJECTS}/changes`].get;
    expect(params(changes)).toEqual(['path:collection_id!', 'query:cursor!', 'query:limit', 'query:wait']);
    const feed = resolve(changes.responses['200'].content!['application/json'].schema);
    expect(feed.type).toBe('array');
    const change = resolve(feed.items!);
    expect(Object.keys(change.properties!).sort()).toEqual(['object', 'operation', 'reason']);
    expect(resolve(change.properties!.operation).enum).toEqual(['Add', 'Update', 'Remove']);
    // `Restricted`: only the feed of a key below TLP:RED says it (extensions §19), never a stored record.
    expect(resolve(change.properties!.reason).enum).toEqual(['Deleted', 'Expired', 'Withdrawn', 'Decayed', 'Restricted']);
    expect(Object.keys(resolve(change.properties!.object).properties!).sort()).toEqual(['context', 'expiresAt', 'keys', 'tlp', 'type']);
    expect(Object.keys(changes.responses['200'].headers ?? {})).toEqual(['Link']);
    expect(Object.keys(changes.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '422']));
  });
});
