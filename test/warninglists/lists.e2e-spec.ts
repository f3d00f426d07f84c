import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { eventually } from '../support/eventually.js';
import { createKey, parseLinks } from '../support/factories.js';
import { closeInstances, createInstances, createTestApp, type TestApp } from '../support/test-app.js';

const INTEL = 2;

interface Warning {
  list: string;
  entry: string;
  action: string;
  match: string;
}

describe('warninglists: the resource, the MISP import, check and the matching rules (extensions §15)', () => {
  let t: TestApp;
  let reader: string;
  let anyKey: string;

  const create = (body: Record<string, unknown>) => t.warninglists.create(body);
  const check = async (values: unknown[]) => {
    const response = await t.warninglists.as(anyKey).check({ values });
    expect(response.status).toBe(200);
    return response.body as { type: string; value: string; warnings: Warning[] }[];
  };
  /** The warnings of one value from one list only (the built-ins match some values too). */
  const from = async (list: string, value: unknown) => (await check([value]))[0].warnings.filter((warning) => warning.list === list);
  const tagOf = async (name: string) => (await t.warninglists.list(name).expect(200)).headers.etag as string;

  beforeAll(async () => {
    t = await createTestApp();
    reader = (await createKey(t, { permissions: [{ resource: INTEL, actions: ['Read'] }] })).key;
    anyKey = (await createKey(t, { permissions: [] })).key;
  });

  afterAll(async () => {
    await t?.close();
  });

  it('has the two built-in lists on a fresh database, excluding from exports', async () => {
    const lists = (await t.warninglists.as(reader).lists().expect(200)).body as { name: string; kind: string; action: string; entryCount: number }[];
    expect(lists.map(({ name, kind, action }) => ({ name, kind, action }))).toEqual([
      { name: 'special-purpose-networks', kind: 'cidr', action: 'excludeFromExport' },
      { name: 'public-dns-resolvers', kind: 'cidr', action: 'excludeFromExport' },
    ]);
    const entries = (await t.warninglists.as(reader).entries('special-purpose-networks', '?limit=1000').expect(200)).body as string[];
    expect(entries).toEqual(expect.arrayContaining(['10.0.0.0/8', '::ffff:0.0.0.0/96', 'ff00::/8', '255.255.255.255/32']));
    expect(entries).not.toEqual(expect.arrayContaining(['192.0.2.0/24']));
    expect(await from('public-dns-resolvers', '8.8.8.8')).toEqual([
      { list: 'public-dns-resolvers', entry: '8.8.8.8/32', action: 'excludeFromExport', match: 'contained' },
    ]);
    expect(await from('public-dns-resolvers', '2606:4700:4700::1111')).toHaveLength(1);
    expect(await from('special-purpose-networks', '10.20.30.40')).toEqual([
      { list: 'special-purpose-networks', entry: '10.0.0.0/8', action: 'excludeFromExport', match: 'contained' },
    ]);
    // Documentation ranges stay out of the built-ins: test data uses them.
    expect((await check(['192.0.2.1', '2001:db8::1', '198.18.0.1']))[0].warnings).toEqual([]);
  });

  it('CRUD: create, view with ETag, entries paged, PATCH and PUT with If-Match, DELETE', async () => {
    expect((await create({ name: 'crud', kind: 'values', entries: ['a.example'] }).expect(201)).body).toEqual({ name: 'crud' });
    const view = await t.warninglists.as(reader).list('crud').expect(200);
    expect(view.body).toMatchObject({ name: 'crud', kind: 'values', action: 'annotate', enabled: true, entryCount: 1, version: null, sha256: null });
    expect(view.body.keyTypes).toContain('SHA256Hash');
    expect((await t.warninglists.as(reader).list('crud').set('If-None-Match', view.headers.etag)).status).toBe(304);

    expectError(await create({ name: 'crud', kind: 'values', entries: [] }), 'DuplicateWarninglist');
    expectError(await t.warninglists.update('crud', { action: 'rejectOnIngest' }), 'BadRequest');
    expectError(await t.warninglists.update('crud', { action: 'rejectOnIngest' }, '"1"'), 'ResourceModified');
    await t.warninglists.update('crud', { action: 'rejectOnIngest', description: 'd' }, view.headers.etag).expect(204);
    const patched = await t.warninglists.as(reader).list('crud').expect(200);
    expect(patched.body).toMatchObject({ action: 'rejectOnIngest', description: 'd', entryCount: 1 });
    expect(patched.headers.etag).not.toBe(view.headers.etag);
    // {} changes nothing and keeps the tag.
    await t.warninglists.update('crud', {}, patched.headers.etag).expect(204);
    expect(await tagOf('crud')).toBe(patched.headers.etag);

    const entries = Array.from({ length: 250 }, (_, i) => `host${i}.example`);
    await t.warninglists.replace('crud', { kind: 'hostname', entries }, patched.headers.etag).expect(204);
    const replaced = (await t.warninglists.as(reader).list('crud').expect(200)).body;
    expect(replaced).toMatchObject({ kind: 'hostname', action: 'annotate', entryCount: 250, keyTypes: ['DomainName', 'URL'] });
    const pages: string[] = [];
    let next: string | undefined = '/intel/warninglists/crud/entries?limit=100';
    while (next) {
      const page: { body: string[]; headers: Record<string, string> } = await t.warninglists.as(reader).get(next).expect(200);
      pages.push(...page.body);
      next = parseLinks(page.headers.link).next?.replace(/^https?:\/\/[^/]+/, '');
    }
    expect(pages).toEqual(entries);

    await t.warninglists.remove('crud').expect(204);
    expectError(await t.warninglists.as(reader).list('crud'), 'NotFound');
    expectError(await t.warninglists.remove('crud'), 'NotFound');
    expectError(await t.warninglists.replace('crud', { kind: 'values', entries: [] }, '"1"'), 'NotFound');
    expectError(await t.warninglists.as(reader).entries('crud'), 'NotFound');
    expectError(await t.warninglists.as(reader).list('Bad%20Name'), 'InvalidPathArgument');
  });

  it('refuses bad lists with 400 naming the entry, too many entries with 413, and a refused list changes nothing', async () => {
    const bad = await create({ name: 'bad', kind: 'cidr', entries: ['10.0.0.0/8', 'example.com'] });
    expectError(bad, 'InvalidData');
    expect(bad.body.details).toEqual({ position: 1 });
    expectError(await create({ name: 'bad', kind: 'hostname', entries: ['ok.example', 'not a host'] }), 'InvalidData');
    expectError(await create({ name: 'bad', kind: 'values', entries: ['x', 7] }), 'InvalidData');
    expectError(await create({ name: 'bad', kind: 'values', entries: [''] }), 'InvalidData');
    // A regex list is a kind MISP has and lists do not: unsupported, as its MISP import is; other kinds are unknown.
    expectError(await create({ name: 'bad', kind: 'regex', entries: ['^a'] }), 'UnsupportedListType');
    expectError(await create({ name: 'bad', kind: 'glob', entries: [] }), 'InvalidData');
    expectError(await create({ name: 'Bad!', kind: 'values', entries: [] }), 'InvalidData');
    expectError(await create({ name: 'bad', kind: 'cidr', keyTypes: ['DomainName'], entries: [] }), 'InvalidData');
    expectError(await create({ name: 'bad', kind: 'values', entries: Array.from({ length: 1_000_001 }, () => 'x') }), 'RequestEntityTooLarge');
    expectError(await t.warninglists.as(reader).list('bad'), 'NotFound');

    await create({ name: 'kept', kind: 'cidr', entries: ['203.0.113.0/24'] }).expect(201);
    const tag = await tagOf('kept');
    expectError(await t.warninglists.replace('kept', { kind: 'cidr', entries: ['nope'] }, tag), 'InvalidData');
    expectError(await t.warninglists.replace('kept', { kind: 'regex', entries: ['^a'] }, tag), 'UnsupportedListType');
    expectError(await t.warninglists.replace('kept', { kind: 'glob', entries: [] }, tag), 'InvalidData');
    expect(await tagOf('kept')).toBe(tag);
    expect(await from('kept', '203.0.113.9')).toHaveLength(1);
  });

  it('permissions: managing needs Write on intel, reading Read, check any valid key', async () => {
    expectError(await t.warninglists.as(reader).create({ name: 'x', kind: 'values', entries: [] }), 'MissingPermissions');
    expectError(await t.warninglists.as(anyKey).lists(), 'MissingPermissions');
    expectError(await t.warninglists.as(reader).import({}), 'MissingPermissions');
    expectError(await t.http().post('/intel/warninglists/check').send({ values: [] }), 'Unauthorized');
  });

  it('hostname: the domain (exact) and its subdomains, whatever the case, a trailing dot, IDN or a URL around it', async () => {
    await create({ name: 'hosts', kind: 'hostname', entries: ['Example.COM.', 'bücher.example', '*.wild.example'] }).expect(201);
    expect(await from('hosts', 'example.com')).toEqual([{ list: 'hosts', entry: 'example.com', action: 'annotate', match: 'exact' }]);
    expect((await from('hosts', 'Mail.EXAMPLE.com.'))[0]).toMatchObject({ entry: 'example.com', match: 'subdomain' });
    expect((await from('hosts', 'https://www.example.com/login'))[0]).toMatchObject({ entry: 'example.com', match: 'subdomain' });
    expect((await from('hosts', 'hxxps://www[.]example[.]com/x'))[0]).toMatchObject({ match: 'subdomain' });
    expect((await from('hosts', 'www.BÜCHER.example'))[0]).toMatchObject({ entry: 'xn--bcher-kva.example', match: 'subdomain' });
    expect((await from('hosts', 'xn--bcher-kva.example'))[0]).toMatchObject({ match: 'exact' });
    expect((await from('hosts', 'a.wild.example'))[0]).toMatchObject({ entry: 'wild.example', match: 'subdomain' });
    expect(await from('hosts', 'notexample.com')).toEqual([]);
    expect(await from('hosts', 'example.com.evil.net')).toEqual([]);
    expect(await from('hosts', { type: 'URL', value: 'https://evil.net/example.com' })).toEqual([]);
  });

  it('values: the same value, normalised; a leading-dot domain matches it and its subdomains', async () => {
    await create({
      name: 'vals',
      kind: 'values',
      entries: ['.google.com', '8.8.8.8', 'D41D8CD98F00B204E9800998ECF8427E', 'Plain.Example', 'https://A.example/x'],
    }).expect(201);
    expect((await from('vals', 'mail.google.com'))[0]).toMatchObject({ entry: '.google.com', match: 'subdomain' });
    expect((await from('vals', 'google.com'))[0]).toMatchObject({ entry: '.google.com', match: 'subdomain' });
    expect((await from('vals', 'https://mail.google.com/'))[0]).toMatchObject({ match: 'subdomain' });
    expect(await from('vals', 'notgoogle.com')).toEqual([]);
    expect((await from('vals', '8.8.8.8'))[0]).toMatchObject({ entry: '8.8.8.8', match: 'exact' });
    expect((await from('vals', 'd41d8cd98f00b204e9800998ecf8427e'))[0]).toMatchObject({ match: 'exact' });
    expect((await from('vals', 'plain.example'))[0]).toMatchObject({ match: 'exact' });
    // Without a leading dot, a domain entry matches only itself.
    expect(await from('vals', 'www.plain.example')).toEqual([]);
    expect((await from('vals', 'HTTPS://a.example/x'))[0]).toMatchObject({ entry: 'https://a.example/x', match: 'exact' });
  });

  it('cidr: addresses and networks inside a listed network (contained), networks holding one (overlap), IPv6, IPv4-mapped, URL hosts', async () => {
    await create({ name: 'nets', kind: 'cidr', entries: ['198.51.100.0/24', '2001:db8:77::/48', '203.0.113.7', '192.0.2.99/24'] }).expect(201);
    expect((await from('nets', '198.51.100.9'))[0]).toMatchObject({ entry: '198.51.100.0/24', match: 'contained' });
    expect((await from('nets', '198.51.100.128/25'))[0]).toMatchObject({ entry: '198.51.100.0/24', match: 'contained' });
    expect((await from('nets', '198.51.100.0/24'))[0]).toMatchObject({ match: 'contained' });
    expect((await from('nets', '198.51.0.0/16'))[0]).toMatchObject({ entry: '198.51.100.0/24', match: 'overlap' });
    expect((await from('nets', '203.0.113.7'))[0]).toMatchObject({ entry: '203.0.113.7/32', match: 'contained' });
    expect((await from('nets', '203.0.113.0/24'))[0]).toMatchObject({ entry: '203.0.113.7/32', match: 'overlap' });
    expect(await from('nets', '203.0.113.8')).toEqual([]);
    // Host bits of a listed network are cleared.
    expect((await from('nets', '192.0.2.1'))[0]).toMatchObject({ entry: '192.0.2.0/24' });
    expect((await from('nets', '2001:DB8:77:1::5'))[0]).toMatchObject({ entry: '2001:db8:77::/48', match: 'contained' });
    expect((await from('nets', '2001:db8::/32'))[0]).toMatchObject({ entry: '2001:db8:77::/48', match: 'overlap' });
    expect(await from('nets', '2001:db8:78::1')).toEqual([]);
    expect((await from('nets', '::ffff:198.51.100.3'))[0]).toMatchObject({ entry: '198.51.100.0/24', match: 'contained' });
    expect((await from('nets', 'http://198.51.100.3:8080/x'))[0]).toMatchObject({ match: 'contained' });
    expect((await from('nets', 'http://[2001:db8:77::1]/'))[0]).toMatchObject({ match: 'contained' });
    expect(await from('nets', 'example.com')).toEqual([]);
  });

  it('substring: inside a domain or URL, ignoring case; keyTypes narrow what a list checks', async () => {
    await create({ name: 'subs', kind: 'substring', entries: ['Evil'] }).expect(201);
    expect((await from('subs', 'my-evil.example'))[0]).toMatchObject({ entry: 'evil', match: 'substring' });
    expect((await from('subs', 'https://x.example/path/EVIL?q'))[0]).toMatchObject({ match: 'substring' });
    expect(await from('subs', 'good.example')).toEqual([]);
    await create({ name: 'domains-only', kind: 'hostname', keyTypes: ['DomainName'], entries: ['only.example'] }).expect(201);
    expect(await from('domains-only', 'only.example')).toHaveLength(1);
    expect(await from('domains-only', 'https://only.example/')).toEqual([]);
  });

  it('a disabled list warns no more; check answers every value in order, typed, and refuses bad values and too many', async () => {
    await create({ name: 'off', kind: 'hostname', enabled: false, entries: ['off.example'] }).expect(201);
    expect(await from('off', 'off.example')).toEqual([]);
    const answer = await check(['hxxp://a[.]example/', { type: 'DomainName', value: 'B.Example.' }, 'not a value!', 'D41D8CD98F00B204E9800998ECF8427E']);
    expect(answer.map(({ type, value }) => ({ type, value }))).toEqual([
      { type: 'URL', value: 'http://a.example/' },
      { type: 'DomainName', value: 'b.example' },
      { type: 'DomainName', value: 'not a value!' },
      { type: 'MD5Hash', value: 'd41d8cd98f00b204e9800998ecf8427e' },
    ]);
    expect(answer[2].warnings).toEqual([]);
    const bad = await t.warninglists.as(anyKey).check({ values: ['a.example', { type: 'Email', value: 'x' }] });
    expectError(bad, 'InvalidData');
    expect(bad.body.details).toEqual({ position: 1 });
    expectError(await t.warninglists.as(anyKey).check({ values: 'a.example' }), 'InvalidData');
    expectError(await t.warninglists.as(anyKey).check({ values: Array.from({ length: 100_001 }, () => '1.2.3.4') }), 'RequestEntityTooLarge');
  });

  describe('MISP import', () => {
    const misp = (document: Record<string, unknown>, query = '') =>
      t.warninglists.post(`/intel/warninglists/import${query}`).set('Content-Type', 'application/json').send(JSON.stringify(document));
    /** A MISP warninglist document, its fields in this order. */
    const mispDocument = (name: string, version: number, description: string, type: string, matchingAttributes: string[], list: string[]) => ({
      name,
      version,
      description,
      type,
      matching_attributes: matchingAttributes,
      list,
    });

    it('takes a document of each supported type, with its version and SHA-256; matching_attributes give the key types', async () => {
      const documents = [
        mispDocument('List of known Google domains', 20240101, 'Google', 'string', ['domain', 'hostname', 'url'], ['.google.com', 'google.com']),
        mispDocument('Top hosts', 3, 'hosts', 'hostname', ['hostname', 'domain'], ['akamai.net']),
        mispDocument('sub', 1, 's', 'substring', ['url'], ['.cloudfront.']),
        mispDocument('Cloud ranges', 7, 'c', 'cidr', ['ip-src', 'ip-dst', 'domain|ip'], ['198.51.100.0/24', '2001:db8:99::/48']),
      ];
      const names = [];
      for (const document of documents) {
        const response = await misp(document).expect(201);
        names.push(response.body.name);
      }
      expect(names).toEqual(['list-of-known-google-domains', 'top-hosts', 'sub', 'cloud-ranges']);
      const google = (await t.warninglists.as(reader).list('list-of-known-google-domains').expect(200)).body;
      expect(google).toMatchObject({
        kind: 'values',
        action: 'annotate',
        enabled: true,
        version: '20240101',
        description: 'Google',
        keyTypes: ['DomainName', 'URL'],
        entryCount: 2,
      });
      expect(google.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect((await t.warninglists.as(reader).list('cloud-ranges')).body.keyTypes).toEqual(['IPAddress', 'IPNetwork']);
      expect((await from('top-hosts', 'a.akamai.net'))[0]).toMatchObject({ match: 'subdomain' });
      expect((await from('sub', 'https://d1.cloudfront.net/x'))[0]).toMatchObject({ match: 'substring' });
      expect(await from('sub', 'd1.cloudfront.net')).toEqual([]);
      expect((await from('cloud-ranges', '198.51.100.1'))[0]).toMatchObject({ match: 'contained' });
    });

    it('query name, action and enabled for a new list; a re-import replaces entries, version and description and keeps the settings', async () => {
      const first = { name: 'Resolvers', version: 1, description: 'one', type: 'string', list: ['192.0.2.53'] };
      expect((await misp(first, '?name=my-resolvers&action=excludeFromExport&enabled=false').expect(201)).body).toEqual({ name: 'my-resolvers' });
      expect((await t.warninglists.as(reader).list('my-resolvers')).body).toMatchObject({ action: 'excludeFromExport', enabled: false, version: '1' });
      const before = await t.warninglists.as(reader).list('my-resolvers');
      await misp({ ...first, version: 2, description: 'two', list: ['192.0.2.54', '192.0.2.55'] }, '?name=my-resolvers&action=annotate').expect(201);
      const after = (await t.warninglists.as(reader).list('my-resolvers')).body;
      expect(after).toMatchObject({ action: 'excludeFromExport', enabled: false, version: '2', description: 'two', entryCount: 2 });
      expect(after.sha256).not.toBe(before.body.sha256);

      // A PATCH keeps the document the entries came from; a PUT replaces them, so the view names no document.
      await t.warninglists.update('my-resolvers', { description: 'mine' }, await tagOf('my-resolvers')).expect(204);
      expect((await t.warninglists.as(reader).list('my-resolvers')).body).toMatchObject({ version: '2', sha256: after.sha256 });
      await t.warninglists.replace('my-resolvers', { kind: 'values', entries: ['192.0.2.56'] }, await tagOf('my-resolvers')).expect(204);
      expect((await t.warninglists.as(reader).list('my-resolvers')).body).toMatchObject({ version: null, sha256: null, description: '', entryCount: 1 });
    });

    it('refuses regex with 422, malformed documents with 400 naming the field, and changes nothing', async () => {
      expectError(await misp({ name: 'r', version: 1, description: '', type: 'regex', list: ['^a'] }), 'UnsupportedListType');
      for (const document of [
        { version: 1, type: 'string', list: [] },
        { name: 'x', type: 'strings', list: [] },
        { name: 'x', type: 'string', list: 'a' },
        { name: 'x', type: 'string', list: [], matching_attributes: 'domain' },
      ]) {
        expectError(await misp(document), 'InvalidData');
      }
      const badEntry = await misp({ name: 'bad cidr', type: 'cidr', list: ['10.0.0.0/8', 'nope'] });
      expectError(badEntry, 'InvalidData');
      expect(badEntry.body.details).toEqual({ position: 1 });
      expectError(await t.warninglists.post('/intel/warninglists/import').set('Content-Type', 'application/json').send('{not json'), 'InvalidData');
      const names = ((await t.warninglists.as(reader).lists()).body as { name: string }[]).map((list) => list.name);
      expect(names).not.toContain('r');
      expect(names).not.toContain('bad-cidr');
    });
  });
});

describe('warninglists across instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await createInstances(2);
  });

  afterAll(() => closeInstances([a, b]));

  it('a list changed through one instance acts on the other at its next request', async () => {
    const checkOn = async (app: TestApp, value: string) =>
      ((await app.warninglists.check({ values: [value] }).expect(200)).body[0].warnings as Warning[])
        .filter((warning) => warning.list === 'shared')
        .map((warning) => `${warning.entry}:${warning.action}`);
    await a.warninglists.create({ name: 'shared', kind: 'hostname', entries: ['one.example'] }).expect(201);
    expect(await checkOn(b, 'x.one.example')).toEqual(['one.example:annotate']);

    const tag1 = (await a.warninglists.list('shared')).headers.etag;
    await a.warninglists.replace('shared', { kind: 'hostname', entries: ['two.example'] }, tag1).expect(204);
    expect(await checkOn(b, 'x.one.example')).toEqual([]);
    expect(await checkOn(b, 'x.two.example')).toEqual(['two.example:annotate']);

    const tag2 = (await a.warninglists.list('shared')).headers.etag;
    await a.warninglists.update('shared', { action: 'excludeFromExport' }, tag2).expect(204);
    expect(await checkOn(b, 'x.two.example')).toEqual(['two.example:excludeFromExport']);

    const tag3 = (await a.warninglists.list('shared')).headers.etag;
    await a.warninglists.update('shared', { enabled: false }, tag3).expect(204);
    expect(await checkOn(b, 'x.two.example')).toEqual([]);
  });

  it("writes on the other instance, which cache the lists' settings, are refused once the change's notification reaches it, and written after the list stops", async () => {
    await createCollection(a, 'shared-feed');
    const tagOf = async () => (await a.warninglists.list('gate')).headers.etag as string;
    const addOn = (value: string) => b.intel.add('shared-feed', { type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });
    // Writes read the lists' settings from a cache that list changes invalidate through the bus (LISTEN/NOTIFY):
    // another instance applies a change when the notification arrives, within milliseconds, not at its next request.
    const refused = async (value: string) => {
      await eventually(async () => (await addOn(value)).status === 422);
      expectError(await addOn(value), 'Warninglisted');
    };
    const written = (value: string) => eventually(async () => (await addOn(value)).status === 204);
    // b writes with no list rejecting: the settings it caches say so.
    await addOn('a.gate.example').expect(204);
    await a.warninglists.create({ name: 'gate', kind: 'hostname', action: 'rejectOnIngest', entries: ['gate.example'] }).expect(201);
    await refused('b.gate.example');

    await a.warninglists.update('gate', { action: 'annotate' }, await tagOf()).expect(204);
    await written('c.gate.example');
    await a.warninglists.update('gate', { action: 'rejectOnIngest' }, await tagOf()).expect(204);
    await refused('d.gate.example');
    await a.warninglists.replace('gate', { kind: 'hostname', action: 'rejectOnIngest', entries: ['other.example'] }, await tagOf()).expect(204);
    await written('e.gate.example');
    await refused('x.other.example');
    await a.warninglists.remove('gate').expect(204);
    await written('y.other.example');
  });
});
