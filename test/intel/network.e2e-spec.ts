import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RED } from '../../src/common/markings/tlp.js';
import { NETWORK_SEARCHES, networkSearch } from '../../src/intel/network/network-statements.js';
import { NO_FILTERS, ReadPolicy, type ReadFilters } from '../../src/read-policy/read-policy.js';
import { ListSet } from '../../src/warninglists/warninglist-matcher/index.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, md5 } from './objects.helpers.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

const address = (value: string) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value }], context: {} });
const network = (value: string) => ({ type: 'IPNetwork', keys: [{ type: 'IPNetwork', value }], context: {} });

describe('GET /intel/collections/{collection_id}/objects/network', () => {
  let t: TestApp;
  const stored = [
    address('10.1.2.3'),
    network('10.0.0.0/8'),
    address('10.1.200.4'),
    network('10.1.0.0/16'),
    address('10.2.0.1'),
    address('192.0.2.1'),
    network('192.0.2.0/24'),
    address('2001:db8::1'),
    address('2001:db8:1::5'),
    network('2001:db8::/32'),
    address('::ffff:10.1.2.3'),
    { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: {} },
    { type: 'DomainName', keys: [{ type: 'DomainName', value: '10.1.2.3.example' }], context: {} },
  ];

  beforeAll(async () => {
    t = await createTestApp();
    await createCollection(t, 'net');
    await createCollection(t, 'other-net');
    const batch = await t.http().post('/intel/collections/net/objects/batch').set('X-Api-Key', t.adminKey).send(stored);
    expect(batch.body.added).toBe(stored.length);
    await t.http().post('/intel/collections/other-net/objects').set('X-Api-Key', t.adminKey).send(address('10.1.2.4')).expect(204);
  });
  afterAll(async () => {
    await t.close();
  });

  const search = (query: string, key = t.adminKey) => t.http().get(`/intel/collections/net/objects/network?${query}`).set('X-Api-Key', key);
  const values = async (query: string) => {
    const response = await search(query);
    expect(response.status).toBe(200);
    return (response.body as { keys: { value: string }[] }[]).map((object) => object.keys[0].value);
  };

  it('within: the addresses and networks inside a network (itself included), IPv4 and IPv6, in insertion order', async () => {
    expect(await values('within=10.1.0.0/16')).toEqual(['10.1.2.3', '10.1.200.4', '10.1.0.0/16']);
    expect(await values('within=10.0.0.0/8')).toEqual(['10.1.2.3', '10.0.0.0/8', '10.1.200.4', '10.1.0.0/16', '10.2.0.1']);
    expect(await values('within=10.1.2.3')).toEqual(['10.1.2.3']);
    // The argument is normalised like a key: upper case and zero runs are the same network.
    expect(await values('within=2001:DB8:0:0::/32')).toEqual(['2001:db8::1', '2001:db8:1::5', '2001:db8::/32']);
    expect(await values('within=2001:db8:1::/48')).toEqual(['2001:db8:1::5']);
    expect(await values('within=::ffff:10.1.2.0/120')).toEqual(['::ffff:10.1.2.3']);
    expect(await values('within=172.16.0.0/12')).toEqual([]);
  });

  it('contains: the networks that contain an address or network (itself included)', async () => {
    expect(await values('contains=10.1.2.3')).toEqual(['10.0.0.0/8', '10.1.0.0/16']);
    expect(await values('contains=10.1.0.0/16')).toEqual(['10.0.0.0/8', '10.1.0.0/16']);
    expect(await values('contains=10.0.0.0/8')).toEqual(['10.0.0.0/8']);
    expect(await values('contains=2001:db8:ffff::1')).toEqual(['2001:db8::/32']);
    expect(await values('contains=192.0.2.1')).toEqual(['192.0.2.0/24']);
    expect(await values('contains=11.0.0.1')).toEqual([]);
  });

  it('pages like every list: limit and Link rel="next" with the search kept', async () => {
    const seen: string[] = [];
    let path: string | undefined = '/intel/collections/net/objects/network?within=10.0.0.0/8&limit=2';
    let pages = 0;
    while (path) {
      const response: { status: number; body: unknown; headers: Record<string, string> } = await t.http().get(path).set('X-Api-Key', t.adminKey);
      expect(response.status).toBe(200);
      seen.push(...(response.body as { keys: { value: string }[] }[]).map((object) => object.keys[0].value));
      path = parseLinks(response.headers.link as string | undefined).next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(await values('within=10.0.0.0/8'));
  });

  it('refuses malformed searches with 400 InvalidQueryArgument; needs Read on the collection', async () => {
    for (const query of [
      '',
      'within=10.0.0.0/8&contains=10.1.2.3',
      'within=10.0.0.1/8',
      'within=not-an-ip',
      'within=10.0.0.0/33',
      'contains=1::2::3',
      'within=',
      'within=10.0.0.0/8&cursor=!!',
      'within=10.0.0.0/8&limit=0',
    ]) {
      expectError(await search(query), 'InvalidQueryArgument');
    }
    const resources = (await t.http().get('/auth/resources?parentID=2').set('X-Api-Key', t.adminKey)).body as { id: number; name: string }[];
    const writer = await createKey(t, { permissions: [{ resource: resources.find((r) => r.name === 'net')!.id, actions: ['Write'] }] });
    expectError(await search('within=10.0.0.0/8', writer.key), 'MissingPermissions');
    expectError(await t.http().get('/intel/collections/nope/objects/network?within=10.0.0.0/8').set('X-Api-Key', t.adminKey), 'NotFound');
  });

  it('is answered from the GiST index: no sequential scan of the collection (EXPLAIN of the service statements)', async () => {
    // A realistic table: 40,000 addresses in two collections, then fresh statistics.
    const { rows } = await t.db.query(`SELECT id FROM intel_collection WHERE name IN ('net', 'other-net') ORDER BY name`);
    for (const { id } of rows as { id: number }[]) {
      await t.db.query(
        `WITH obj AS (
           INSERT INTO intel_object (collection_id, type, keys, context)
           SELECT $1, 'IPAddress', jsonb_build_array(jsonb_build_object('type', 'IPAddress', 'value', host(a))), '{}'::jsonb
             FROM (SELECT ('11.0.0.0'::inet + g * 97) AS a FROM generate_series(1, 20000) g) s
           RETURNING id, keys
         )
         INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
         SELECT $1, 'IPAddress', keys -> 0 ->> 'value', id FROM obj`,
        [id],
      );
    }
    await t.db.query('ANALYZE intel_object, intel_object_key');
    const netId = (rows as { id: number }[])[0].id;
    // Matches: 675 addresses in 11.0.0.0/16, one network containing 11.0.3.7 (none stored: 0).
    for (const [sql, value, matches] of [
      [NETWORK_SEARCHES.within, '11.0.0.0/16', 675],
      [NETWORK_SEARCHES.contains, '11.0.3.7', 0],
    ] as const) {
      const [
        {
          'QUERY PLAN': [plan],
        },
      ] = (await t.db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, [netId, value, 0, 101, 8 * 1024 * 1024])).rows;
      const scans: { node: string; relation: string; rows: number }[] = [];
      const indexes = new Set<string>();
      const walk = (node: PlanNode) => {
        if (node['Relation Name']) scans.push({ node: node['Node Type'], relation: node['Relation Name'], rows: node['Actual Rows'] * node['Actual Loops'] });
        if (node['Index Name']) indexes.add(node['Index Name']);
        node.Plans?.forEach(walk);
      };
      walk(plan.Plan);
      expect(scans.filter((scan) => scan.node === 'Seq Scan')).toEqual([]);
      // The key table is read through the network index only; objects by primary key (and the expiry
      // index, which holds only objects that expire, to leave out expired ones).
      expect([...indexes].filter((index) => index !== 'IDX_intel_object_expires_at').sort()).toEqual(['IDX_intel_object_key_network', 'intel_object_pkey']);
      // Rows read from the tables: the matches and the page's objects, not the 40,000 of the collections.
      const read = scans.reduce((sum, scan) => sum + scan.rows, 0);
      expect(read).toBeLessThanOrEqual(matches + 101);
    }
    expect(await values('within=11.0.0.0/24')).toEqual(['11.0.0.97', '11.0.0.194']);
  });

  it('under a read policy that narrows, a page holds exactly the matches that pass it (the conditions inside the fence, parameters after $5)', async () => {
    await t.sightings
      .record([
        { type: 'IPAddress', value: '10.1.2.3' },
        { type: 'IPAddress', value: '10.2.0.1', kind: 'falsePositive', count: 3 },
      ])
      .expect(200);
    const netId = (await t.db.query(`SELECT id FROM intel_collection WHERE name = 'net'`)).rows[0].id as number;
    const policyOf = (filters: ReadFilters) => new ReadPolicy({ readsAll: true, readable: [] }, filters, RED, 'apply', async () => new ListSet([]));
    const found = async (filters: ReadFilters) => {
      const policy = policyOf(filters);
      const search = networkSearch('within', policy);
      const values = search.parameters.values({
        collectionId: netId,
        network: '10.0.0.0/8',
        afterId: 0,
        limit: 101,
        maxBytes: 8 * 1024 * 1024,
        ...policy.values(),
      });
      return ((await t.db.query(search.text, values)).rows as { keys: { value: string }[] }[]).map((object) => object.keys[0].value);
    };
    expect(networkSearch('within', policyOf(NO_FILTERS)).text).toBe(NETWORK_SEARCHES.within);
    expect(await found(NO_FILTERS)).toEqual(['10.1.2.3', '10.0.0.0/8', '10.1.200.4', '10.1.0.0/16', '10.2.0.1']);
    expect(await found({ sightings: { sightedSince: '2020-01-01T00:00:00.000Z', excludeFalsePositives: false }, score: null })).toEqual(['10.1.2.3']);
    expect(await found({ sightings: { sightedSince: null, excludeFalsePositives: true }, score: null })).toEqual([
      '10.1.2.3',
      '10.0.0.0/8',
      '10.1.200.4',
      '10.1.0.0/16',
    ]);
    // minScore (extensions §18): every object scores 50 (the admin key's F/6 native writes) but the one with 3 false
    // positives (50 × 1/4, a hair less for decay: 12).
    expect(await found({ sightings: NO_FILTERS.sightings, score: { min: 45 } })).toEqual(['10.1.2.3', '10.0.0.0/8', '10.1.200.4', '10.1.0.0/16']);
    expect(await found({ sightings: NO_FILTERS.sightings, score: { min: 12 } })).toEqual(['10.1.2.3', '10.0.0.0/8', '10.1.200.4', '10.1.0.0/16', '10.2.0.1']);
    expect(await found({ sightings: NO_FILTERS.sightings, score: { min: 14 } })).toHaveLength(4);
  });
});
