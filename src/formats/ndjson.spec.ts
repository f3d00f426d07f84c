import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { all, cut, indicatorArb } from './arbitraries.spec-helpers.js';
import { jsonLines, streamNdjson } from './ndjson.js';

describe('NDJSON', () => {
  it('reads back every value written one per line, numbering lines, blank ones skipped', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.jsonValue(), fc.constant('\n'))), (values) => {
        const lines = values.map((value) => (value === '\n' ? '  ' : JSON.stringify(value)));
        const expected = values.flatMap((value, index) => (value === '\n' ? [] : [{ line: index + 1, value: JSON.parse(JSON.stringify(value)) }]));
        expect([...jsonLines(lines.join('\n'))]).toEqual(expected);
      }),
    );
  });

  it('never throws, and streams the same records however the body is cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            indicatorArb.map((key) => JSON.stringify({ cidr: key.value, sblid: 'SBL1' })),
            fc.string({ maxLength: 20 }),
            fc.jsonValue().map((value) => JSON.stringify(value)),
          ),
        ),
        fc.array(fc.nat()),
        fc.boolean(),
        async (lines, places, bytes) => {
          const text = lines.join('\n');
          const options = { valueField: 'cidr', contextFields: ['sblid'] };
          expect(await all(streamNdjson(cut(text, places, bytes), options))).toEqual(await all(streamNdjson(text, options)));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads Spamhaus DROP: the value member, context members, the metadata line skipped, a bad line rejected', async () => {
    const drop = [
      '{"cidr":"1.10.16.0/20","sblid":"SBL256894","rir":"apnic"}',
      'not json',
      '{"cidr":"2001:db8::/32","sblid":"SBL1","rir":"ripencc","constructor":"x"}',
      '{"type":"metadata","timestamp":1767225600,"size":2,"records":2}',
    ].join('\n');
    expect(await all(streamNdjson(drop, { valueField: 'cidr', contextFields: ['sblid', 'constructor', 'toString'], context: { feed: 'drop' } }))).toEqual([
      {
        kind: 'form',
        line: 1,
        form: { type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '1.10.16.0/20' }], context: { feed: 'drop', sblid: 'SBL256894' } },
      },
      { kind: 'rejected', rejection: { line: 2, value: 'not json', reason: 'the line is not valid JSON' } },
      {
        kind: 'form',
        line: 3,
        form: { type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '2001:db8::/32' }], context: { feed: 'drop', sblid: 'SBL1', constructor: 'x' } },
      },
    ]);
  });

  it('fails a body none of whose non-blank lines is a JSON object; an empty body or one object among bad lines does not', async () => {
    const options = { valueField: 'cidr' };
    expect((await all(streamNdjson('<html>\n[1]\n"x"\n', options))).at(-1)).toMatchObject({ kind: 'failed', failure: { code: 'NotJson' } });
    expect(await all(streamNdjson('\n  \n', options))).toEqual([]);
    expect((await all(streamNdjson('oops\n{"other":1}\n', options))).map((record) => record.kind)).toEqual(['rejected']);
  });
});
