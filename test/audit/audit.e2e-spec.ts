import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AuditService } from '../../src/audit/audit.service.js';
import type { ErrorCode } from '../../src/common/errors/api-error.js';
import { boundary, multipartBody, openSession, sdkPartFields, send } from '../filebox/filebox.helpers.js';
import { expectError, type ErrorAnswer } from '../support/clients/api-client.js';
import { createKey, cursorOf, parseLinks, tokenFor } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Entry {
  id: number;
  at: string;
  keyID: number | null;
  requestID: string;
  method: string;
  route: string;
  action: string;
  target: string | null;
  status: number;
  address: string | null;
}

const SCHEMA = { schemaID: 'plain', type: 'object' };
const domain = (value: string, context: Record<string, unknown> = {}) => ({
  type: 'DomainName',
  keys: [{ type: 'DomainName', value }],
  context,
});

describe('audit trail', () => {
  let t: TestApp;
  /** The admin key's id (the first key of the database). */
  let adminId: number;

  beforeAll(async () => {
    t = await createTestApp();
    adminId = (await t.db.query<{ id: number }>('SELECT min(id) AS id FROM auth_api_key')).rows[0].id;
    await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send(SCHEMA).expect(201);
    await t.http().post('/intel/collections').set('X-Api-Key', t.adminKey).send({ name: 'c1', schemaID: 'plain' }).expect(201);
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every entry (newest first), walking the pages. */
  async function allEntries(query = '', key = t.adminKey): Promise<Entry[]> {
    const entries: Entry[] = [];
    let path: string | undefined = `/auth/audit?limit=1000${query}`;
    while (path) {
      const response: { status: number; body: unknown; headers: Record<string, unknown> } = await t.http().get(path).set('X-Api-Key', key);
      expect(response.status).toBe(200);
      entries.push(...(response.body as Entry[]));
      path = parseLinks(response.headers.link as string | undefined).next;
    }
    return entries;
  }

  async function entriesOf(requestId: string): Promise<Entry[]> {
    return (await allEntries()).filter((entry) => entry.requestID === requestId);
  }

  it('records one entry for each kind of write of every area, with its target and status, before answering', async () => {
    const rid = () => `w-${randomUUID()}`;
    const admin = (method: 'post' | 'put' | 'patch' | 'delete', path: string, id: string) =>
      t.http()[method](path).set('X-Api-Key', t.adminKey).set('X-Request-Id', id);
    const expected: [string, Partial<Entry>][] = [];
    const expectEntry = (id: string, entry: Partial<Entry>) => expected.push([id, entry]);

    // auth: key generation and revocation
    let id = rid();
    const created = await admin('post', '/auth/keys', id)
      .send({ permissions: [{ resource: { id: 2 }, actions: ['Read'] }] })
      .expect(201);
    const newKeyId = (created.body as { id: number }).id;
    expectEntry(id, { method: 'POST', route: '/auth/keys', target: `auth/${newKeyId}`, status: 201, keyID: adminId });
    id = rid();
    await admin('post', `/auth/keys/${newKeyId}/revoked`, id).expect(204);
    expectEntry(id, { route: '/auth/keys/:api_key_id/revoked', target: `auth/${newKeyId}`, status: 204 });

    // intel: schema, collection, its change, single add, batch, delete
    id = rid();
    await admin('post', '/intel/schemas', id).send({ schemaID: 'other', type: 'object' }).expect(201);
    expectEntry(id, { route: '/intel/schemas', target: 'intel/other', status: 201 });
    id = rid();
    await admin('post', '/intel/collections', id).send({ name: 'c2', schemaID: 'plain' }).expect(201);
    expectEntry(id, { route: '/intel/collections', target: 'intel/c2', status: 201 });
    id = rid();
    await admin('patch', '/intel/collections/c2', id).set('If-Match', '"1"').send({ schemaID: 'other' }).expect(204);
    expectEntry(id, { method: 'PATCH', route: '/intel/collections/:collectionName', target: 'intel/c2', status: 204 });
    id = rid();
    await admin('post', '/intel/collections/c1/objects', id).send(domain('one.example')).expect(204);
    expectEntry(id, { route: '/intel/collections/:collection_id/objects', target: 'intel/c1', status: 204 });
    id = rid();
    const items = Array.from({ length: 500 }, (_, index) => domain(`b${index}.example`));
    await admin('post', '/intel/collections/c1/objects/batch', id).send(items).expect(200);
    expectEntry(id, { route: '/intel/collections/:collection_id/objects/batch', target: 'intel/c1', status: 200 });
    id = rid();
    await admin('delete', '/intel/collections/c1/objects?objectKeyType=DomainName&objectKey=one.example', id).expect(204);
    expectEntry(id, { method: 'DELETE', target: 'intel/c1/DomainName:one.example', status: 204 });

    // insight: schema, task registration, taking and reporting
    id = rid();
    await admin('post', '/insight/schemas', id).send({ schemaID: 'verdict', type: 'object' }).expect(201);
    expectEntry(id, { route: '/insight/schemas', target: 'insight/verdict', status: 201 });
    id = rid();
    const task = await admin('post', '/insight/tasks', id)
      .send({ params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'b1.example' }] } })
      .expect(201);
    const taskId = (task.body as { taskID: string }).taskID;
    expectEntry(id, { route: '/insight/tasks', target: `tasks/${taskId}`, status: 201 });
    id = rid();
    await admin('post', '/insight/task-queue/executing-tasks', id).send({ limit: 1 }).expect(200);
    expectEntry(id, { route: '/insight/task-queue/executing-tasks', target: 'task-queue', status: 200 });
    id = rid();
    await admin('post', '/insight/task-queue/completed-tasks', id)
      .send({ taskID: taskId, result: domain('b1.example') })
      .expect(204);
    expectEntry(id, { route: '/insight/task-queue/completed-tasks', target: 'task-queue', status: 204 });

    // filebox: upload, session, part, completion
    const token = await tokenFor(t, t.adminKey);
    const withId = (headers: Record<string, string>, requestId: string) => ({ ...headers, 'X-Request-Id': requestId });
    id = rid();
    const b = boundary();
    const upload = await send(t, {
      method: 'PUT',
      path: '/filebox/files',
      headers: withId({ Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${b}` }, id),
      body: multipartBody(b, [{ name: 'file', filename: 'a.bin', contentType: 'application/octet-stream', content: Buffer.from('abc') }]),
    });
    expect(upload.status).toBe(201);
    expectEntry(id, { method: 'PUT', route: '/filebox/files', target: `filebox/${(upload.json() as { fileID: string }).fileID}`, status: 201 });
    const sessionId = await openSession(t, token, 1024 * 1024);
    id = rid();
    const partBoundary = boundary();
    const part = await send(t, {
      method: 'PUT',
      path: `/filebox/sessions/${sessionId}/parts`,
      headers: withId({ Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${partBoundary}` }, id),
      body: multipartBody(partBoundary, sdkPartFields(1, Buffer.from('part'))),
    });
    expect(part.status).toBe(204);
    expectEntry(id, { route: '/filebox/sessions/:sessionID/parts', target: `filebox/${sessionId}`, status: 204 });
    id = rid();
    const completed = await send(t, {
      method: 'POST',
      path: `/filebox/sessions/${sessionId}/completed`,
      headers: withId({ Authorization: `Bearer ${token}` }, id),
    });
    expect(completed.status).toBe(201);
    expectEntry(id, { route: '/filebox/sessions/:sessionID/completed', target: `filebox/${sessionId}`, status: 201 });

    // Answered means stored: read straight from the table, one row per request (the batch of 500 too).
    const ids = expected.map(([requestId]) => requestId);
    const rows = await t.db.query<{ request_id: string }>('SELECT request_id FROM audit_entry WHERE request_id = ANY($1)', [ids]);
    expect(rows.rows.map((row) => row.request_id).sort()).toEqual([...ids].sort());
    const listed = await allEntries();
    for (const [requestId, entry] of expected) {
      const found = listed.filter((candidate) => candidate.requestID === requestId);
      expect({ requestId, found }).toEqual({ requestId, found: [expect.objectContaining({ keyID: adminId, address: '127.0.0.1', ...entry })] });
      expect(found[0].action).toBe(`${found[0].method} ${found[0].route}`);
    }
  });

  it('records refused writes with their status, and the key when one was accepted', async () => {
    const reader = await createKey(t, { permissions: [{ resource: 2, actions: ['ReadChildren'] }] });
    const cases: [string, () => Promise<ErrorAnswer>, number, ErrorCode, number | null][] = [
      ['no-key', () => t.http().post('/intel/collections/c1/objects').set('X-Request-Id', 'r-no-key').send(domain('x.example')), 401, 'Unauthorized', null],
      [
        'bad-key',
        () => t.http().post('/intel/collections/c1/objects').set('X-Api-Key', 'nope').set('X-Request-Id', 'r-bad-key').send(domain('x.example')),
        401,
        'Unauthorized',
        null,
      ],
      [
        'forbidden',
        () => t.http().post('/intel/collections/c1/objects').set('X-Api-Key', reader.key).set('X-Request-Id', 'r-forbidden').send(domain('x.example')),
        403,
        'MissingPermissions',
        reader.id,
      ],
      [
        'invalid',
        () => t.http().post('/intel/collections/c1/objects').set('X-Api-Key', t.adminKey).set('X-Request-Id', 'r-invalid').send({ type: 'DomainName' }),
        400,
        'InvalidData',
        adminId,
      ],
      [
        'missing',
        () => t.http().post('/intel/collections/nope/objects').set('X-Api-Key', t.adminKey).set('X-Request-Id', 'r-missing').send(domain('x.example')),
        404,
        'NotFound',
        adminId,
      ],
      [
        'unprocessable',
        () => t.http().post('/intel/collections/c1/objects').set('X-Api-Key', t.adminKey).set('X-Request-Id', 'r-unprocessable').send(domain('not a domain')),
        422,
        'InvalidKeyFormat',
        adminId,
      ],
      [
        'key-form',
        () => t.http().post('/auth/keys').set('X-Api-Key', reader.key).set('X-Request-Id', 'r-key-form').send({ permissions: [] }),
        403,
        'MissingPermissions',
        reader.id,
      ],
      // U+0000 in a path parameter: PostgreSQL text cannot hold it, the entry keeps a replacement character.
      [
        'nul',
        () => t.http().post('/intel/collections/a%00b/objects').set('X-Api-Key', reader.key).set('X-Request-Id', 'r-nul').send(domain('x.example')),
        403,
        'MissingPermissions',
        reader.id,
      ],
    ];
    for (const [name, call, status, code, keyID] of cases) {
      expectError(await call(), code);
      expect({ name, entries: await entriesOf(`r-${name}`) }).toEqual({
        name,
        entries: [expect.objectContaining({ method: 'POST', status, keyID })],
      });
    }
    expect((await entriesOf('r-nul'))[0].target).toBe('intel/a\ufffdb');
    // Reads are not recorded unless AUDIT_READS=true; neither are requests that match no route.
    await t.http().get('/intel/collections/c1').set('X-Api-Key', t.adminKey).set('X-Request-Id', 'r-read').expect(200);
    await t.http().post('/no/such/route').set('X-Api-Key', t.adminKey).set('X-Request-Id', 'r-unrouted').expect(404);
    expect([...(await entriesOf('r-read')), ...(await entriesOf('r-unrouted'))]).toEqual([]);
  });

  it('records every one of many concurrent writes exactly once', async () => {
    const ids = Array.from({ length: 60 }, (_, index) => `c-${index}-${randomUUID()}`);
    const answers = await Promise.all(
      ids.map((requestId, index) =>
        fetch(`${t.url}/intel/collections/c1/objects`, {
          method: 'POST',
          headers: { 'X-Api-Key': t.adminKey, 'X-Request-Id': requestId, 'Content-Type': 'application/json' },
          body: JSON.stringify(domain(`concurrent${index}.example`)),
        }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(ids.map(() => 204));
    const rows = await t.db.query<{ request_id: string }>('SELECT request_id FROM audit_entry WHERE request_id = ANY($1)', [ids]);
    expect(rows.rows.map((row) => row.request_id).sort()).toEqual([...ids].sort());
  });

  it('answers a write whose entry cannot be stored with an error, never the success; a refusal is answered anyway', async () => {
    // Entries of these two request ids are refused by the table.
    await t.db.query(`ALTER TABLE audit_entry ADD CONSTRAINT refuse_some CHECK (request_id NOT IN ('unstorable-1', 'unstorable-2')) NOT VALID`);
    try {
      const write = await t
        .http()
        .post('/intel/collections/c1/objects')
        .set('X-Api-Key', t.adminKey)
        .set('X-Request-Id', 'unstorable-1')
        .send(domain('unaudited.example'));
      expectError(write, 'InternalError');
      const refused = await t.http().post('/intel/collections/c1/objects').set('X-Request-Id', 'unstorable-2').send(domain('unaudited.example'));
      expectError(refused, 'Unauthorized');
      // Requests after them are recorded as usual.
      await t
        .http()
        .post('/intel/collections/c1/objects')
        .set('X-Api-Key', t.adminKey)
        .set('X-Request-Id', 'storable-3')
        .send(domain('audited.example'))
        .expect(204);
    } finally {
      await t.db.query('ALTER TABLE audit_entry DROP CONSTRAINT refuse_some');
    }
    expect(await entriesOf('unstorable-1')).toEqual([]);
    expect(await entriesOf('storable-3')).toEqual([expect.objectContaining({ status: 204 })]);
  });

  it('pages newest first by (at, id) and filters by key, action, target and time; malformed filters are 400', async () => {
    const writer = await createKey(t, { permissions: [{ resource: 2, actions: ['WriteChildren'] }] });
    const before = new Date().toISOString();
    for (let index = 0; index < 5; index++) {
      await t
        .http()
        .post('/intel/collections/c1/objects')
        .set('X-Api-Key', writer.key)
        .send(domain(`page${index}.example`))
        .expect(204);
    }
    await t.http().delete('/intel/collections/c1/objects?objectKeyType=DomainName&objectKey=page0.example').set('X-Api-Key', writer.key).expect(204);
    const after = new Date(Date.now() + 1).toISOString();

    const all = await allEntries();
    const order = all.map((entry) => [Date.parse(entry.at), entry.id]);
    const sorted = [...order].sort((x, y) => y[0] - x[0] || y[1] - x[1]);
    expect(order).toEqual(sorted);

    // Pages of 2 walk the writer's 6 entries exactly once, newest first.
    const pages: Entry[][] = [];
    let path: string | undefined = `/auth/audit?limit=2&keyID=${writer.id}`;
    while (path) {
      const response: { status: number; body: unknown; headers: Record<string, unknown> } = await t.http().get(path).set('X-Api-Key', t.adminKey);
      expect(response.status).toBe(200);
      pages.push(response.body as Entry[]);
      path = parseLinks(response.headers.link as string | undefined).next;
      if (path) expect(new URL(path, 'http://x').searchParams.get('keyID')).toBe(String(writer.id));
    }
    const walked = pages.flat();
    expect(pages.map((page) => page.length)).toEqual([2, 2, 2]);
    expect(walked.map((entry) => entry.id)).toEqual(all.filter((entry) => entry.keyID === writer.id).map((entry) => entry.id));
    expect(walked[0]).toMatchObject({ method: 'DELETE', target: 'intel/c1/DomainName:page0.example' });

    const deletes = await allEntries(`&keyID=${writer.id}&action=${encodeURIComponent('DELETE /intel/collections/:collection_id/objects')}`);
    expect(deletes.map((entry) => entry.target)).toEqual(['intel/c1/DomainName:page0.example']);
    // A target covers what lies under it.
    expect((await allEntries(`&keyID=${writer.id}&target=intel/c1`)).length).toBe(6);
    expect((await allEntries(`&keyID=${writer.id}&target=${encodeURIComponent('intel/c1/DomainName:page0.example')}`)).length).toBe(1);
    expect((await allEntries(`&keyID=${writer.id}&target=intel/c`)).length).toBe(0);
    const window = await allEntries(`&since=${encodeURIComponent(before)}&until=${encodeURIComponent(after)}&keyID=${writer.id}`);
    expect(window.length).toBe(6);
    expect(await allEntries(`&until=${encodeURIComponent(before)}&keyID=${writer.id}`)).toEqual([]);

    for (const query of [
      'keyID=0',
      'keyID=x',
      'action=POST',
      'action=post%20/x',
      'since=yesterday',
      'until=2030-13-01T00:00:00Z',
      'cursor=%%%',
      'cursor=e30',
      'limit=0',
    ]) {
      expectError(await t.http().get(`/auth/audit?${query}`).set('X-Api-Key', t.adminKey), 'InvalidQueryArgument');
    }
    // A cursor of one listing continues it, also with other filters (it is a position, not a page number).
    const first = await t.http().get('/auth/audit?limit=1').set('X-Api-Key', t.adminKey);
    const cursor = cursorOf(parseLinks(first.headers.link as string).next)!;
    const next = await t.http().get(`/auth/audit?limit=1&cursor=${cursor}`).set('X-Api-Key', t.adminKey);
    expect((next.body as Entry[])[0].id).toBe(all[1].id);
  });

  it('answers GET /auth/audit only with Read on auth', async () => {
    const authReader = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
    const authWriter = await createKey(t, { permissions: [{ resource: 1, actions: ['Write'] }] });
    const intelAll = await createKey(t, { permissions: [{ resource: 2, actions: ['Read', 'Write', 'ReadChildren', 'WriteChildren'] }] });
    expect((await t.http().get('/auth/audit').set('X-Api-Key', authReader.key)).status).toBe(200);
    expect(
      (
        await t
          .http()
          .get('/auth/audit')
          .set('Authorization', `Bearer ${await tokenFor(t, authReader.key)}`)
      ).status,
    ).toBe(200);
    expectError(await t.http().get('/auth/audit').set('X-Api-Key', authWriter.key), 'MissingPermissions');
    expectError(await t.http().get('/auth/audit').set('X-Api-Key', intelAll.key), 'MissingPermissions');
    expectError(await t.http().get('/auth/audit'), 'Unauthorized');
  });

  it('removes entries older than AUDIT_RETENTION_DAYS, whatever their number', async () => {
    await t.db.query(
      `INSERT INTO audit_entry (at, key_id, request_id, method, route, target, status, address)
       SELECT now() - interval '366 days' - n * interval '1 second', NULL, 'old-' || n, 'POST', '/x', NULL, 204, NULL
         FROM generate_series(1, 10050) AS n`,
    );
    await t.db.query(
      `INSERT INTO audit_entry (at, key_id, request_id, method, route, target, status, address)
       VALUES (now() - interval '364 days', NULL, 'young', 'POST', '/x', NULL, 204, NULL)`,
    );
    await t.app.get(AuditService).pruneExpired();
    const left = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_entry WHERE request_id LIKE 'old-%'`);
    expect(left.rows[0].n).toBe(0);
    expect((await t.db.query(`SELECT 1 FROM audit_entry WHERE request_id = 'young'`)).rowCount).toBe(1);
  });
});

describe('audit settings of an instance', () => {
  let a: TestApp;
  let reads: TestApp;
  let off: TestApp;

  beforeAll(async () => {
    a = await createTestApp();
    reads = await createTestApp({ AUDIT_READS: 'true' }, a);
    off = await createTestApp({ AUDIT: 'off' }, a);
  });
  afterAll(async () => {
    await off.close();
    await reads.close();
    await a.close();
  });

  const stored = async (requestId: string) =>
    (await a.db.query<{ status: number; method: string }>('SELECT status, method FROM audit_entry WHERE request_id = $1', [requestId])).rows;

  it('AUDIT_READS=true records the reads of that instance, refused ones included; the others record writes only', async () => {
    await reads.http().get('/auth/keys').set('X-Api-Key', a.adminKey).set('X-Request-Id', 'read-on-reads').expect(200);
    await reads.http().get('/intel/collections/none').set('X-Api-Key', a.adminKey).set('X-Request-Id', 'read-missing').expect(404);
    await reads.http().get('/auth/keys').set('X-Request-Id', 'read-refused').expect(401);
    await reads.http().get('/health/live').set('X-Request-Id', 'read-health').expect(200);
    await a.http().get('/auth/keys').set('X-Api-Key', a.adminKey).set('X-Request-Id', 'read-on-a').expect(200);
    expect(await stored('read-on-reads')).toEqual([{ status: 200, method: 'GET' }]);
    expect(await stored('read-missing')).toEqual([{ status: 404, method: 'GET' }]);
    expect(await stored('read-refused')).toEqual([{ status: 401, method: 'GET' }]);
    expect(await stored('read-health')).toEqual([]);
    expect(await stored('read-on-a')).toEqual([]);
  });

  it('AUDIT=off records nothing on that instance', async () => {
    await off.http().post('/auth/keys').set('X-Api-Key', a.adminKey).set('X-Request-Id', 'write-off').send({ permissions: [] }).expect(201);
    await a.http().post('/auth/keys').set('X-Api-Key', a.adminKey).set('X-Request-Id', 'write-on').send({ permissions: [] }).expect(201);
    expect(await stored('write-off')).toEqual([]);
    expect(await stored('write-on')).toEqual([{ status: 201, method: 'POST' }]);
  });
});
