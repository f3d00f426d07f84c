import type { KeyType, ObjectKey } from '../common/indicators/indicators.js';

/**
 * STIX 2.1 patterns of one object's keys: written as one observation expression whose comparisons are joined
 * by OR, and read back by a small tokenizer and recursive-descent parser that accepts exactly the
 * comparisons the service can store (`=` and `ISSUBSET` on the supported object paths, joined by OR or AND,
 * optionally grouped by parentheses, inside ONE observation). Everything else is refused with a reason.
 * Pure functions.
 */

/** The STIX hash names of the hash key types, in the order keys are sorted (KEY_TYPES). */
export const HASH_NAMES: Partial<Record<KeyType, string>> = {
  MD5Hash: 'MD5',
  SHA1Hash: 'SHA-1',
  SHA256Hash: 'SHA-256',
  SHA512Hash: 'SHA-512',
};

/** A hash name of a pattern or an SCO as a key type; the spelling without the hyphen is accepted too. */
export function hashKeyType(name: string): KeyType | undefined {
  const upper = name.toUpperCase();
  for (const [type, stixName] of Object.entries(HASH_NAMES)) {
    if (upper === stixName || upper === stixName.replace('-', '')) return type as KeyType;
  }
  return undefined;
}

/** IPv6 when it has a colon: keys are stored normalised, so that is the whole test. */
export function addressType(value: string): 'ipv4-addr' | 'ipv6-addr' {
  return value.includes(':') ? 'ipv6-addr' : 'ipv4-addr';
}

/** A string literal of a pattern: `'` and `\` escaped by a backslash (STIX 2.1 patterning §9.2). */
export function patternString(value: string): string {
  return `'${value.replace(/[\\']/g, (character) => `\\${character}`)}'`;
}

/** One comparison of the pattern for a key. */
function comparison(key: ObjectKey): string {
  const hash = HASH_NAMES[key.type];
  // A property name with a hyphen must be quoted in an object path; plain names stay bare.
  if (hash !== undefined) return `file:hashes.${hash.includes('-') ? `'${hash}'` : hash} = ${patternString(key.value)}`;
  switch (key.type) {
    case 'DomainName':
      return `domain-name:value = ${patternString(key.value)}`;
    case 'URL':
      return `url:value = ${patternString(key.value)}`;
    case 'IPAddress':
      return `${addressType(key.value)}:value = ${patternString(key.value)}`;
    case 'IPNetwork':
      return `${addressType(key.value)}:value ISSUBSET ${patternString(key.value)}`;
    default:
      throw new Error(`no pattern for key type ${key.type}`);
  }
}

/** The pattern of an object: every key compared, in one observation, joined by OR. */
export function formatPattern(keys: ObjectKey[]): string {
  return `[${keys.map(comparison).join(' OR ')}]`;
}

/** Why a pattern cannot be stored as an object. */
export class PatternRefused extends Error {}

type Token =
  | { kind: 'punct'; text: '[' | ']' | '(' | ')' | ':' | '.' }
  | { kind: 'word'; text: string }
  | { kind: 'string'; text: string }
  | { kind: 'other'; text: string };

const WORD = /[A-Za-z_][A-Za-z0-9_-]*/y;
const NUMBER = /-?\d+(?:\.\d+)?/y;
/** Operators and separators of the STIX grammar (longest first), tokenized so that a refusal can name them. */
const OPERATORS = ['!=', '<=', '>=', '<', '>', '=', ','];

function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < pattern.length) {
    const character = pattern[at];
    if (/\s/.test(character)) {
      at++;
    } else if ('[]():.'.includes(character)) {
      tokens.push({ kind: 'punct', text: character as '[' });
      at++;
    } else if (character === "'") {
      let text = '';
      at++;
      for (;;) {
        if (at >= pattern.length) throw new PatternRefused('a string literal is not closed');
        const next = pattern[at];
        if (next === "'") break;
        if (next === '\\') {
          const escaped = pattern[at + 1];
          if (escaped !== "'" && escaped !== '\\') throw new PatternRefused(`the escape \\${escaped ?? ''} is not allowed in a string literal`);
          text += escaped;
          at += 2;
        } else {
          text += next;
          at++;
        }
      }
      at++;
      tokens.push({ kind: 'string', text });
    } else {
      const operator = OPERATORS.find((op) => pattern.startsWith(op, at));
      WORD.lastIndex = at;
      NUMBER.lastIndex = at;
      const word = WORD.exec(pattern);
      const number = word ? null : NUMBER.exec(pattern);
      if (operator !== undefined) {
        tokens.push({ kind: 'other', text: operator });
        at += operator.length;
      } else if (word) {
        tokens.push({ kind: 'word', text: word[0] });
        at += word[0].length;
      } else if (number) {
        tokens.push({ kind: 'other', text: number[0] });
        at += number[0].length;
      } else {
        throw new PatternRefused(`unexpected character "${character}" at offset ${at}`);
      }
    }
  }
  return tokens;
}

/** Recursive descent over the tokens of one pattern. */
class Parser {
  private at = 0;

  constructor(private readonly tokens: Token[]) {}

  /** pattern := '[' expression ']' end */
  pattern(): ObjectKey[] {
    this.expect('[', 'a pattern must start with an observation "["');
    const keys = this.expression();
    this.expect(']', 'the observation is not closed by "]"');
    const rest = this.peek();
    if (rest !== undefined) {
      throw new PatternRefused(
        rest.kind === 'word' && /^(WITHIN|START|STOP|REPEATS)$/i.test(rest.text)
          ? `qualifiers (${rest.text.toUpperCase()}) are not supported`
          : 'only one observation expression is supported',
      );
    }
    return keys;
  }

  /** expression := term (('OR' | 'AND') term)* */
  private expression(): ObjectKey[] {
    const keys = this.term();
    for (;;) {
      const next = this.peek();
      if (next?.kind !== 'word' || !/^(OR|AND)$/.test(next.text)) return keys;
      this.at++;
      keys.push(...this.term());
    }
  }

  /** term := '(' expression ')' | comparison */
  private term(): ObjectKey[] {
    if (this.peek()?.text === '(' && this.peek()?.kind === 'punct') {
      this.at++;
      const keys = this.expression();
      this.expect(')', 'a parenthesis is not closed');
      return keys;
    }
    return [this.comparison()];
  }

  /** comparison := objectType ':' property ('.' (word | string))* ('=' | 'ISSUBSET') string */
  private comparison(): ObjectKey {
    const objectType = this.word('an object type');
    if (objectType === 'NOT') throw new PatternRefused('NOT is not supported');
    this.expect(':', `"${objectType}" must be followed by ":" and a property`);
    const path = [this.word('a property name')];
    while (this.peek()?.text === '.' && this.peek()?.kind === 'punct') {
      this.at++;
      const step = this.next();
      if (step?.kind !== 'word' && step?.kind !== 'string') throw new PatternRefused('a property name must follow "."');
      path.push(step.text);
    }
    const operator = this.next();
    if (operator === undefined) throw new PatternRefused('a comparison has no operator');
    const op = operator.kind === 'word' ? operator.text.toUpperCase() : operator.text;
    if (op !== '=' && op !== 'ISSUBSET') throw new PatternRefused(`the operator ${op} is not supported (only = and ISSUBSET)`);
    const value = this.next();
    if (value?.kind !== 'string') throw new PatternRefused('a comparison must compare with a string literal');
    return { type: keyTypeOf(objectType, path, op), value: value.text };
  }

  private word(what: string): string {
    const token = this.next();
    if (token?.kind !== 'word') throw new PatternRefused(`${what} was expected${token ? `, not "${token.text}"` : ''}`);
    return token.text;
  }

  private expect(text: string, message: string): void {
    const token = this.next();
    if (token?.kind !== 'punct' || token.text !== text) throw new PatternRefused(message);
  }

  private peek(): Token | undefined {
    return this.tokens[this.at];
  }

  private next(): Token | undefined {
    return this.tokens[this.at++];
  }
}

/** The key type a comparison of `objectType:path` with `op` stores, or a refusal. */
function keyTypeOf(objectType: string, path: string[], op: string): KeyType {
  const where = `${objectType}:${path.join('.')}`;
  if (objectType === 'file' && path.length === 2 && path[0] === 'hashes' && op === '=') {
    const type = hashKeyType(path[1]);
    if (type !== undefined) return type;
    throw new PatternRefused(`the hash ${path[1]} is not supported (MD5, SHA-1, SHA-256, SHA-512)`);
  }
  const isValue = path.length === 1 && path[0] === 'value';
  if (isValue && op === '=' && objectType === 'domain-name') return 'DomainName';
  if (isValue && op === '=' && objectType === 'url') return 'URL';
  if (isValue && (objectType === 'ipv4-addr' || objectType === 'ipv6-addr')) return op === '=' ? 'IPAddress' : 'IPNetwork';
  throw new PatternRefused(`${where} ${op} is not supported`);
}

/**
 * The keys a STIX pattern compares (not yet normalised), or PatternRefused with the reason. The keys
 * still have to form one object (normalizeKeySet).
 */
export function parsePattern(pattern: string): ObjectKey[] {
  return new Parser(tokenize(pattern)).pattern();
}
