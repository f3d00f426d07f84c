import { describe, expect, it } from '@jest/globals';
import { BUILTIN_RESOURCES, Principal } from '../common/guard/access.js';
import { CLEAR, RED, type TlpRank } from '../common/markings/tlp.js';
import { scoreSql } from '../scoring/score-sql.js';
import { CompiledEntries, ListSet, type ActiveList, type ListAction } from '../warninglists/warninglist-matcher/index.js';
import { ceilingOf } from './read-policies.service.js';
import { NO_FILTERS, ReadPolicy, readScopeOf, UNFILTERED, type ReadFilters } from './read-policy.js';

const list = (name: string, action: ListAction, entries: string[]): ActiveList => ({
  name,
  revision: `${name}-1`,
  action,
  keyTypes: new Set(['IPAddress']),
  entries: new CompiledEntries('values', entries),
});

/** A policy over `lists`, counting how often it reads them. */
function policyOver(lists: ActiveList[], filters: ReadFilters = NO_FILTERS, mode: 'apply' | 'ignore' = 'apply', ceiling: TlpRank = RED) {
  const reads = { count: 0 };
  const policy = new ReadPolicy({ readsAll: true, readable: [] }, filters, ceiling, mode, async () => {
    reads.count++;
    return new ListSet(lists);
  });
  return { policy, reads };
}

const SIGHTED: ReadFilters = { sightings: { sightedSince: '2030-01-01T00:00:00.000Z', excludeFalsePositives: false }, score: null };
const NOT_FALSE: ReadFilters = { sightings: { sightedSince: null, excludeFalsePositives: true }, score: null };
const SCORED: ReadFilters = { sightings: NO_FILTERS.sightings, score: { min: 50 } };
const BOTH: ReadFilters = { sightings: { sightedSince: '2030-01-01T00:00:00.000Z', excludeFalsePositives: true }, score: null };

describe('ReadPolicy', () => {
  it.each<[string, ReadFilters, string[], boolean, string[]]>([
    ['nothing', NO_FILTERS, [], false, []],
    ['sightedSince', SIGHTED, ['sightedSince'], true, ['last_at >= $9::timestamptz']],
    ['excludeFalsePositives', NOT_FALSE, [], true, ['false_positives']],
    ['both', BOTH, ['sightedSince'], true, ['last_at >= $9::timestamptz', 'false_positives']],
  ])('narrowed by %s: binds only its parameters, and its conditions say so', (_name, filters, names, filtered, fragments) => {
    const { policy } = policyOver([], filters);
    expect(policy.parameterNames).toEqual(names);
    expect(policy.filtered).toBe(filtered);
    const sql = policy.conditions('o', { sightedSince: '$9' });
    if (fragments.length === 0) expect(sql).toBe('');
    for (const fragment of fragments) expect(sql).toContain(fragment);
    expect(policy.values()).toEqual({ sightedSince: filters.sightings.sightedSince, maxTlp: RED, scoreAt: expect.any(String), minScore: null });
    expect(policy.scored).toBe(false);
  });

  it('minScore binds the time and the bound, after the others, and compares the whole row’s score; its tag holds both', () => {
    const { policy } = policyOver([], SCORED, 'apply', 1);
    expect(policy.parameterNames).toEqual(['maxTlp', 'scoreAt', 'minScore']);
    expect(policy.conditions('o', { maxTlp: '$3', scoreAt: '$4', minScore: '$5' })).toBe(` AND o.tlp <= $3::smallint AND ${scoreSql('o', '$4')} >= $5::float8`);
    expect(policy.values()).toMatchObject({ minScore: 50, scoreAt: expect.any(String) });
    expect(policy.filtered).toBe(true);
    expect(policy.scored).toBe(true);
    // Judged at the request's time (no scoreAt): the answer moves with time alone.
    expect(policy.judgedNow).toBe(true);
    const asked = new ReadPolicy({ readsAll: true, readable: [] }, SCORED, RED, 'apply', async () => new ListSet([]), {
      at: '2030-01-01T00:00:00.000Z',
      asked: true,
    });
    expect(asked.judgedNow).toBe(false);
    expect(asked.values().scoreAt).toBe('2030-01-01T00:00:00.000Z');
    expect(asked.tagKey()).toContain('2030-01-01T00:00:00.000Z');
    // Without minScore the tag key is the one it always was.
    expect(policyOver([]).policy.tagKey()).toEqual([NO_FILTERS.sightings, 'apply', RED]);
  });

  it.each<[string, TlpRank, string[], string]>([
    ['RED (every marking): binds nothing, narrows nothing', RED, [], ''],
    ['AMBER: binds its rank', 2, ['maxTlp'], ' AND o.tlp <= $7::smallint'],
    ['CLEAR: binds its rank', CLEAR, ['maxTlp'], ' AND o.tlp <= $7::smallint'],
  ])('a ceiling of %s', (_name, ceiling, names, sql) => {
    const { policy } = policyOver([], NO_FILTERS, 'apply', ceiling);
    expect(policy.parameterNames).toEqual(names);
    expect(policy.conditions('o', { maxTlp: '$7' })).toBe(sql);
    // Statements over change records bind the ceiling alone, and only when it narrows.
    expect(policy.recordParameterNames).toEqual(names);
    expect(policy.ceilingSql({ maxTlp: '$7' })).toBe(ceiling < RED ? '$7::smallint' : undefined);
    expect(policy.values().maxTlp).toBe(ceiling);
    expect(policy.sees(ceiling)).toBe(true);
    if (ceiling < RED) expect(policy.sees(ceiling + 1)).toBe(false);
  });

  it('a ceiling and a filter together bind both, the sightings first', () => {
    const { policy } = policyOver([], SIGHTED, 'apply', 1);
    expect(policy.parameterNames).toEqual(['sightedSince', 'maxTlp']);
    expect(policy.recordParameterNames).toEqual(['maxTlp']);
    expect(policy.conditions('o', { sightedSince: '$3', maxTlp: '$4' })).toMatch(/last_at >= \$3::timestamptz.* AND o\.tlp <= \$4::smallint$/s);
  });

  it.each<[string, TlpRank, string | undefined, TlpRank | 'InvalidData']>([
    ["no maxTLP: the key's ceiling", 2, undefined, 2],
    ['a lower maxTLP narrows', 2, 'tlp:green', 1],
    ['a higher maxTLP never widens', 1, 'TLP:RED', 1],
    ['TLP:WHITE is CLEAR', RED, 'TLP:WHITE', CLEAR],
    ['AMBER+STRICT', RED, 'TLP:AMBER+STRICT', 3],
    ['anything else', RED, 'TLP:PURPLE', 'InvalidData'],
    ['an empty value', RED, '', 'InvalidData'],
  ])('ceilingOf, %s', (_name, keyCeiling, asked, expected) => {
    const principal = new Principal(1, new Map(), [], null, keyCeiling);
    if (expected === 'InvalidData') expect(() => ceilingOf(principal, asked)).toThrow(expect.objectContaining({ code: 'InvalidData' }));
    else expect(ceilingOf(principal, asked)).toBe(expected);
  });

  it.each<[string, TlpRank, TlpRank | undefined, TlpRank]>([
    ['nothing asked: the same policy', 2, undefined, 2],
    ['a lower level narrows', 2, 1, 1],
    ['a higher level never widens', 1, RED, 1],
  ])('narrowedTo (a TAXII walk’s maxTLP), %s', async (_name, ceiling, asked, expected) => {
    const { policy, reads } = policyOver([list('dns', 'excludeFromExport', ['8.8.8.8'])], NO_FILTERS, 'apply', ceiling);
    const narrowed = policy.narrowedTo(asked);
    expect(narrowed.ceiling).toBe(expected);
    if (expected === ceiling) expect(narrowed).toBe(policy);
    await policy.exclusion();
    await narrowed.exclusion();
    expect(reads.count).toBe(1);
  });

  it('UNFILTERED binds nothing and narrows nothing: an unfiltered read runs the statement it always ran', () => {
    expect(UNFILTERED.parameterNames).toEqual([]);
    expect(UNFILTERED.conditions('o', {})).toBe('');
  });

  it('gives every filter, the warninglist mode and the ceiling a distinct tag key', () => {
    const keys = [NO_FILTERS, SIGHTED, NOT_FALSE, BOTH, SCORED, { ...SCORED, score: { min: 51 } }].flatMap((filters) =>
      (['apply', 'ignore'] as const).flatMap((mode) =>
        ([CLEAR, 2, RED] as TlpRank[]).map((ceiling) => JSON.stringify(policyOver([], filters, mode, ceiling).policy.tagKey())),
      ),
    );
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each<[string, ActiveList[], 'apply' | 'ignore', boolean]>([
    ['an excluding list, applied', [list('dns', 'excludeFromExport', ['8.8.8.8'])], 'apply', true],
    ['a rejecting list, applied (it excludes too)', [list('dns', 'rejectOnIngest', ['8.8.8.8'])], 'apply', true],
    ['an annotating list only', [list('dns', 'annotate', ['8.8.8.8'])], 'apply', false],
    ['an excluding list, ignored', [list('dns', 'excludeFromExport', ['8.8.8.8'])], 'ignore', false],
    ['no list', [], 'apply', false],
  ])('with %s: leaves listed objects out (%s, %s)', async (_name, lists, mode, excludes) => {
    const exclusion = await policyOver(lists, NO_FILTERS, mode).policy.exclusion();
    expect(exclusion !== undefined).toBe(excludes);
    if (exclusion) {
      expect(exclusion.keyTypes).toEqual(['IPAddress']);
      expect(exclusion.excludes([{ type: 'IPAddress', value: '8.8.8.8' }])).toBe(true);
      expect(exclusion.excludes([{ type: 'IPAddress', value: '9.9.9.9' }])).toBe(false);
      expect(exclusion.state).toContain('dns-1');
    }
  });

  it('reads the lists once per request, also through a policy with another mode and for warnings', async () => {
    const { policy, reads } = policyOver([list('dns', 'excludeFromExport', ['8.8.8.8'])]);
    await policy.exclusion();
    await policy.withWarninglists('ignore').exclusion();
    expect(await policy.withWarninglists('apply').exclusion()).toBeDefined();
    expect(await policy.warningsOf({ type: 'IPAddress', value: '8.8.8.8' })).toEqual([
      { list: 'dns', entry: '8.8.8.8', action: 'excludeFromExport', match: 'exact' },
    ]);
    expect(reads.count).toBe(1);
  });
});

describe('readScopeOf', () => {
  const principal = (permissions: [number, string[]][]) =>
    new Principal(1, new Map(permissions.map(([id, actions]) => [id, new Set(actions)])) as Principal['permissions'], [], null);

  it.each<[string, [number, string[]][], boolean, number[]]>([
    ['ReadChildren on intel reads every collection', [[BUILTIN_RESOURCES.intel.id, ['ReadChildren']]], true, []],
    [
      'Read on collections reads those',
      [
        [41, ['Read']],
        [42, ['Read', 'Write']],
        [43, ['Write']],
      ],
      false,
      [41, 42],
    ],
    ['no permission reads nothing', [], false, []],
  ])('%s', (_name, permissions, readsAll, readable) => {
    expect(readScopeOf(principal(permissions))).toEqual({ readsAll, readable });
  });
});
