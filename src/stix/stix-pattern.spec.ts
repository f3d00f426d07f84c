import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { formatPattern, parsePattern, PatternRefused, patternString } from './stix-pattern.js';

describe('STIX patterns', () => {
  it('escapes exactly the quote and the backslash', () => {
    expect(patternString('a\'b\\c"d')).toBe("'a\\'b\\\\c\"d'");
  });

  it('parses what it formats, for any value', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (url, domain) => {
        const keys = [
          { type: 'URL' as const, value: url },
          { type: 'DomainName' as const, value: domain },
        ];
        expect(parsePattern(formatPattern(keys))).toEqual(keys);
      }),
    );
  });

  it('accepts = and ISSUBSET joined by OR and AND, parentheses, quoted or bare hash names, any spacing', () => {
    expect(parsePattern("[ ( file:hashes.'SHA-256' = 'AA' AND file:hashes.sha1='bb' ) OR file:hashes.'MD5' = 'cc' ]")).toEqual([
      { type: 'SHA256Hash', value: 'AA' },
      { type: 'SHA1Hash', value: 'bb' },
      { type: 'MD5Hash', value: 'cc' },
    ]);
    expect(parsePattern("[ipv6-addr:value issubset '2001:db8::/32']")).toEqual([{ type: 'IPNetwork', value: '2001:db8::/32' }]);
  });

  it('refuses anything else with a reason', () => {
    const refusal = (pattern: string) => {
      try {
        parsePattern(pattern);
      } catch (error) {
        if (error instanceof PatternRefused) return error.message;
        throw error;
      }
      return 'accepted';
    };
    expect(refusal("domain-name:value = 'a'")).toMatch(/start with an observation/);
    expect(refusal("[domain-name:value = 'a'] OR [domain-name:value = 'b']")).toMatch(/one observation/);
    expect(refusal("[domain-name:value = 'a'] REPEATS 2 TIMES")).toMatch(/qualifiers \(REPEATS\)/);
    expect(refusal("[domain-name:value = 'a' FOLLOWEDBY domain-name:value = 'b']")).toMatch(/not closed/);
    expect(refusal("[NOT domain-name:value = 'a']")).toMatch(/NOT is not supported/);
    expect(refusal("[domain-name:value MATCHES 'a']")).toMatch(/MATCHES is not supported/);
    expect(refusal("[domain-name:value IN ('a', 'b')]")).toMatch(/IN is not supported/);
    expect(refusal('[domain-name:value = 5]')).toMatch(/string literal/);
    expect(refusal("[ipv4-addr:value > '1.2.3.4']")).toMatch(/> is not supported/);
    expect(refusal("[(domain-name:value = 'a']")).toMatch(/parenthesis/);
    expect(refusal("[domain-name:value = 'a' # ]")).toMatch(/unexpected character "#"/);
    expect(refusal("[url:value ISSUBSET 'http://a/']")).toMatch(/url:value ISSUBSET is not supported/);
    expect(refusal("[network-traffic:dst_ref.value = '1.2.3.4']")).toMatch(/not supported/);
  });
});
