import type { CodeOptions } from 'ajv/dist/2020.js';
import { RE2JS } from 're2js';
import { SchemaRegistryErrors } from './schema-registry.errors.js';

/**
 * The regular-expression engine of schema `pattern` and `patternProperties` (Ajv's `code.regExp`). Schemas are
 * written by clients, and a backtracking engine (JavaScript's own) runs a pattern like `^(a+)+$` for minutes
 * on a short string, holding the event loop for every client. RE2JS (a pure JavaScript port of RE2, no native
 * build) matches in time linear in the input; JavaScript pattern syntax is translated to RE2's first (`\uXXXX`,
 * `\u{...}`, `\cX`, `[^]`). What RE2 cannot run in linear time (backreferences, lookahead, lookbehind) does
 * not compile: the schema is refused at registration.
 */
export const safePattern: NonNullable<CodeOptions['regExp']> = Object.assign(
  (pattern: string) => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch (error) {
      throw SchemaRegistryErrors.unsupportedPattern(pattern, error instanceof Error ? error.message : String(error));
    }
    // Ajv keys its cache of compiled patterns by toString(): it must tell patterns apart.
    return { test: (input: string) => compiled.test(input), toString: () => `re2:${pattern}` };
  },
  { code: 'safePattern' },
);
