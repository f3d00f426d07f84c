import { describe, expect, it } from '@jest/globals';
import { inspectJsonBody, MAX_JSON_DEPTH } from './json-body.js';

describe('inspectJsonBody', () => {
  it.each<[string, string, string | undefined]>([
    ['a plain body', '{"a": {"b": [1, {"c": null}]}, "toString": 1}', undefined],
    ['the names as values', '{"a": "constructor", "b": ["__proto__", "prototype"]}', undefined],
    ['__proto__ at the top', '{"__proto__": {}}', '/__proto__'],
    ['constructor deep inside arrays', '{"a": [[{"b": {"constructor": 1}}]]}', '/a/0/0/b/constructor'],
    ['prototype under an escaped name', '{"x/y~z": {"prototype": 2}}', '/x~1y~0z/prototype'],
  ])('finds reserved attribute names: %s', (_name, json, pointer) => {
    const problem = inspectJsonBody(JSON.parse(json), { attributeNames: true, text: true });
    expect(problem).toEqual(pointer === undefined ? undefined : { kind: 'reservedAttribute', pointer });
  });

  it('leaves the names alone where attribute names are not checked', () => {
    expect(inspectJsonBody(JSON.parse('{"__proto__": {"constructor": 1}}'), { attributeNames: false, text: false })).toBeUndefined();
  });

  it.each<[string, unknown, string | undefined]>([
    ['U+0000 in a value', { a: ['x\u0000'] }, '/a/0'],
    ['U+0000 in a name', { 'a\u0000': 1 }, '/a\u0000'],
    ['a lone high surrogate', { a: 'x\ud800' }, '/a'],
    ['a lone low surrogate', { a: '\udc00y' }, '/a'],
    ['a surrogate pair', { a: '🐢 \ud83d\udc22' }, undefined],
    ['a literal backslash-u0000 text', { a: '\\u0000' }, undefined],
  ])('finds unstorable text: %s', (_name, body, pointer) => {
    expect(inspectJsonBody(body, { attributeNames: false, text: true })).toEqual(pointer === undefined ? undefined : { kind: 'unstorableText', pointer });
    expect(inspectJsonBody(body, { attributeNames: false, text: false })).toBeUndefined();
  });

  it('reports a non-finite number, before a reserved name', () => {
    expect(inspectJsonBody(JSON.parse('{"constructor": 1, "a": [1e400]}'), { attributeNames: true, text: true })).toEqual({ kind: 'nonFiniteNumber' });
  });

  it('reports over-deep nesting first, without overflowing the stack itself', () => {
    const deep = `${'{"a":'.repeat(100_000)}{"constructor":1e400}${'}'.repeat(100_000)}`;
    expect(inspectJsonBody(JSON.parse(deep), { attributeNames: true, text: true })).toEqual({ kind: 'tooDeep' });
    const atLimit = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    expect(inspectJsonBody(JSON.parse(atLimit), { attributeNames: true, text: true })).toBeUndefined();
    expect(inspectJsonBody(JSON.parse(`[${atLimit}]`), { attributeNames: true, text: true })).toEqual({ kind: 'tooDeep' });
  });
});
