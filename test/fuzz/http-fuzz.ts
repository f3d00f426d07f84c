import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import type { OpenApiDocument, Operation, SchemaObject } from '../support/openapi.js';

/** One generated request, as sent on the wire. */
export interface FuzzRequest {
  method: string;
  /** The OpenAPI path template it was made from, for reports. */
  template: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

export interface FuzzAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** Values that break parsers, validators, SQL and path handling, besides random ones. */
const NASTY = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  '\u202e',
  '\uffff',
  '🙂',
  '%',
  '%00',
  '%zz',
  '%2e%2e%2f',
  '../../etc/passwd',
  '..',
  '.',
  '/',
  '\\',
  "'",
  '"',
  "'; DROP TABLE auth_api_key; --",
  '$1',
  '${x}',
  '{{x}}',
  '-1',
  '0',
  '1',
  '2147483648',
  '9007199254740993',
  '99999999999999999999999',
  '1e309',
  '-0',
  '0x10',
  '1.5',
  'NaN',
  'Infinity',
  'null',
  'true',
  '[]',
  '{}',
  'x'.repeat(5000),
  '\t\r\n',
  '__proto__',
  'constructor',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'd41d8cd98f00b204e9800998ecf8427e',
  'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  '10.0.0.1',
  '10.0.0.0/8',
  '::1',
  'example.com',
  'a@example.com',
  'MD5Hash',
  'SHA1Hash',
  'IPAddress',
  'File',
  'Read',
  'Write',
  '2026-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  'not-a-date',
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 24 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 24 }), weight: 2 },
  { arbitrary: fc.integer().map(String), weight: 1 },
  { arbitrary: fc.uuid(), weight: 1 },
);

const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 31 - 1, 2 ** 53 + 2, -(2 ** 63), 1.5, 1e308, -0, 1048576, 67108864),
  fc.double(),
);

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 3 },
  { arbitrary: hostileString, weight: 2 },
  { arbitrary: hostileNumber, weight: 1 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}), weight: 1 },
);

function resolve(document: OpenApiDocument, schema: SchemaObject): SchemaObject {
  if (schema.$ref) return resolve(document, document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]);
  if (schema.allOf?.length) {
    // Merged: the properties of every part, so that the body looks like what the operation expects.
    const parts = schema.allOf.map((part) => resolve(document, part));
    return { type: 'object', properties: Object.assign({}, ...parts.map((part) => part.properties ?? {})) };
  }
  return schema;
}

/**
 * A value shaped like `schema` (so that it passes the outer checks and reaches the rules behind them), whose
 * leaves are hostile, and where any node may be of the wrong type or carry an unknown field.
 */
function shaped(document: OpenApiDocument, raw: SchemaObject, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(document, raw) as Schema;
  const example = schema.example;
  let arbitrary: fc.Arbitrary<unknown>;
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (depth > 5) {
    arbitrary = anyJson;
  } else if (alternatives?.length) {
    arbitrary = fc.oneof(...alternatives.map((alternative) => shaped(document, alternative, depth + 1)));
  } else if (schema.type === 'object' || schema.properties) {
    const properties = Object.entries(schema.properties ?? {});
    const model = Object.fromEntries(properties.map(([name, property]) => [name, shaped(document, property, depth + 1)]));
    const required = (schema.required ?? []).filter((name) => name in model);
    // Mostly with the required fields (any optional ones at random), sometimes without them.
    const record = fc.oneof(
      { arbitrary: fc.record(model, { requiredKeys: required }), weight: 8 },
      { arbitrary: fc.record(model, { requiredKeys: [] }), weight: 1 },
    );
    const extra =
      typeof schema.additionalProperties === 'object'
        ? fc.dictionary(hostileString, shaped(document, schema.additionalProperties, depth + 1), { maxKeys: 3 })
        : fc.oneof({ arbitrary: fc.constant({}), weight: 15 }, { arbitrary: fc.dictionary(hostileString, anyJson, { maxKeys: 2 }), weight: 1 });
    arbitrary = fc.tuple(record, extra).map(([known, unknown]) => ({ ...unknown, ...known }));
  } else if (schema.type === 'array') {
    arbitrary = fc.array(shaped(document, schema.items ?? {}, depth + 1), { maxLength: 3 });
  } else if (schema.type === 'string') {
    // The documented values (enum, example) get a request past the outer checks; hostile ones test the rest.
    const documented = [...(schema.enum ?? []), ...(typeof example === 'string' ? [example] : [])];
    arbitrary = documented.length ? fc.oneof({ arbitrary: fc.constantFrom(...documented), weight: 3 }, { arbitrary: hostileString, weight: 1 }) : hostileString;
  } else if (schema.type === 'integer' || schema.type === 'number') {
    const documented = [...(typeof example === 'number' ? [example] : []), 1, 2, 3, 4, 5, 6, 100];
    arbitrary = fc.oneof({ arbitrary: fc.constantFrom(...documented), weight: 2 }, { arbitrary: hostileNumber, weight: 1 });
  } else if (schema.type === 'boolean') {
    arbitrary = fc.boolean();
  } else {
    arbitrary = anyJson;
  }
  // Mostly the expected type, so that a body gets past the shape checks to the rules behind them.
  return fc.oneof({ arbitrary, weight: 24 }, { arbitrary: anyJson, weight: 1 });
}

type Schema = SchemaObject & {
  additionalProperties?: boolean | SchemaObject;
  anyOf?: SchemaObject[];
  example?: unknown;
  pattern?: string;
  minimum?: number;
};

/**
 * The arbitrary of each pattern, built once: fast-check builds one from a regular expression slowly (40 ms for
 * `[a-z0-9._-]{1,128}`), and `requestsFor` builds a request's arbitraries anew for each request (its `chain`),
 * a quarter of the fuzz test's CPU (65 → 48 CPU-s). An arbitrary holds no state: the shared one draws the same values.
 */
const patternArbitraries = new Map<string, fc.Arbitrary<string> | undefined>();
function patternArbitrary(pattern: string): fc.Arbitrary<string> | undefined {
  if (!patternArbitraries.has(pattern)) {
    let arbitrary: fc.Arbitrary<string> | undefined;
    try {
      arbitrary = fc.stringMatching(new RegExp(pattern), { size: 'xsmall' });
    } catch {
      // A pattern JavaScript cannot compile, or fast-check cannot model (a lookahead): plain text instead.
    }
    patternArbitraries.set(pattern, arbitrary);
  }
  return patternArbitraries.get(pattern);
}

/** A string the schema documents as acceptable: an enum value, the example, or one matching its format or pattern. */
function plausibleString(schema: Schema): fc.Arbitrary<string> {
  const documented = [...(schema.enum ?? []), ...(typeof schema.example === 'string' ? [schema.example] : [])];
  if (documented.length) return fc.constantFrom(...documented);
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date-time') return fc.constant(new Date(Date.now() + 86_400_000).toISOString());
  const matching = schema.pattern === undefined ? undefined : patternArbitrary(schema.pattern);
  if (matching) return matching;
  return fc.constantFrom('fuzz', 'a', 'fuzzed');
}

/** A value the operation should accept, as far as the document says: the base that mutations then spoil. */
function plausible(document: OpenApiDocument, raw: SchemaObject, everyField = false, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(document, raw) as Schema;
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (depth > 5) return fc.constant(null);
  if (alternatives?.length) return fc.oneof(...alternatives.map((alternative) => plausible(document, alternative, everyField, depth + 1)));
  if (schema.type === 'object' || schema.properties) {
    const model = Object.fromEntries(
      Object.entries(schema.properties ?? {}).map(([name, property]) => [name, plausible(document, property, everyField, depth + 1)]),
    );
    const required = (schema.required ?? []).filter((name) => name in model);
    if (everyField) return fc.record(model);
    // The required fields, and now and then the optional ones too (each may carry rules of its own).
    return fc.oneof(
      { arbitrary: fc.record(Object.fromEntries(required.map((name) => [name, model[name]]))), weight: 2 },
      { arbitrary: fc.record(model, { requiredKeys: required }), weight: 1 },
    );
  }
  if (schema.type === 'array') {
    // An array of enum values may carry its enum on the array rather than on the items.
    const items = schema.enum?.length ? { ...schema.items, type: 'string', enum: schema.enum } : (schema.items ?? {});
    return fc.array(plausible(document, items, everyField, depth + 1), { minLength: 1, maxLength: 2 });
  }
  if (schema.type === 'string') return plausibleString(schema);
  if (schema.type === 'integer' || schema.type === 'number') {
    return fc.constantFrom(
      ...(typeof schema.example === 'number' ? [schema.example] : []),
      ...(typeof schema.minimum === 'number' ? [schema.minimum] : []),
      1,
      2,
      3,
    );
  }
  if (schema.type === 'boolean') return fc.boolean();
  return fc.constant({});
}

/** Every place in a JSON value (the root included), as paths. */
function places(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const children = Array.isArray(value)
    ? value.flatMap((item, index) => places(item, [...path, index]))
    : value && typeof value === 'object'
      ? Object.entries(value).flatMap(([key, item]) => places(item, [...path, key]))
      : [];
  return [path, ...children];
}

function replaced(value: unknown, path: (string | number)[], by: unknown): unknown {
  if (path.length === 0) return by;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[head] = replaced(copy[head], rest, by);
  return copy;
}

/** Characters no store, log or parser should take unexamined, appended to a text that was otherwise fine. */
const NASTY_TAILS = ['\u0000', '\u0000', '\u0000', '\ud800', '\udc00', '\u202e', '\r\n', '\uffff', "'"];

/**
 * A plausible value with exactly one place spoiled, so that each field's own handling of hostile input is
 * reached: either any place replaced by a hostile value, or one of its texts with a nasty character appended.
 */
function oneSpoiled(document: OpenApiDocument, schema: SchemaObject): fc.Arbitrary<unknown> {
  const replace = fc.tuple(fc.nat(), fc.oneof(hostileString, hostileNumber, anyJson));
  const append = fc.tuple(fc.nat(), fc.constantFrom(...NASTY_TAILS));
  // Every field present, so that any of them can be the spoiled one.
  return fc
    .tuple(
      plausible(document, schema, true),
      fc.oneof(
        replace.map((spoil) => ['replace', ...spoil] as const),
        append.map((spoil) => ['append', ...spoil] as const),
      ),
    )
    .map(([value, [mode, pick, by]]) => {
      const at = (path: (string | number)[]) => path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
      const all = places(value);
      const texts = all.filter((path) => typeof at(path) === 'string');
      if (mode === 'append' && texts.length > 0) {
        const path = texts[pick % texts.length];
        return replaced(value, path, `${at(path) as string}${by as string}`);
      }
      return replaced(value, all[pick % all.length], by);
    });
}

/** Bodies no parser should trust: broken JSON, deep nesting, prototype keys, non-UTF-8 bytes. */
const brokenJson: fc.Arbitrary<Buffer> = fc.oneof(
  fc
    .constantFrom(
      '',
      '{',
      '{"a":1,}',
      '[',
      'null',
      '"x"',
      '1',
      '{"a":1,"a":2}',
      '{"__proto__":{"polluted":1}}',
      '{"constructor":{"prototype":{"polluted":1}}}',
      '['.repeat(400) + ']'.repeat(400),
      '{"a":'.repeat(300) + '1' + '}'.repeat(300),
      '{"x":"\\ud800"}',
      '{"x":"\\u0000"}',
      '{"x":1e999}',
    )
    .map((text) => Buffer.from(text)),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  fc.json({ maxDepth: 3 }).map((text) => Buffer.from(text)),
);

const headerValue = fc.string({ unit: fc.constantFrom(...'\t !"#$%&\'()*+,-./0123456789:;<=>?@AZaz[\\]^_`{|}~é'), maxLength: 40 });

/** Extra headers of the kinds the service reads, with hostile values (on one request in six). */
const someHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    'If-Match': fc.oneof(headerValue, fc.constantFrom('*', '"1"', '"0"', 'W/"1"', '"99999999999999999999"')),
    'If-None-Match': fc.oneof(headerValue, fc.constantFrom('*', '"1"')),
    Range: fc.oneof(headerValue, fc.constantFrom('bytes=0-0', 'bytes=-1', 'bytes=5-1', 'bytes=0-1,2-3', 'bytes=99999999999999999999-')),
    'X-Api-Version': fc.oneof({ arbitrary: fc.constant('1'), weight: 1 }, { arbitrary: headerValue, weight: 1 }),
    'X-Request-Id': headerValue,
    Accept: fc.oneof(headerValue, fc.constantFrom('application/x-ndjson', 'text/html', '*/*')),
    'Content-Encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown'),
  },
  { requiredKeys: [] },
);
const extraHeaders = fc.oneof({ arbitrary: fc.constant({}), weight: 5 }, { arbitrary: someHeaders, weight: 1 });

const contentTypes = fc.constantFrom(
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/x-ndjson',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'application/octet-stream',
);

/** A multipart body with fields named like the operation's (or not), hostile contents, sometimes broken framing. */
function multipart(fieldNames: string[]): fc.Arbitrary<{ body: Buffer; type: string }> {
  const field = fc.record({
    name: fc.oneof({ arbitrary: fc.constantFrom(...fieldNames, 'file'), weight: 4 }, { arbitrary: hostileString, weight: 1 }),
    filename: fc.option(
      hostileString.map((name) => name.replace(/["\r\n]/g, '')),
      { nil: undefined },
    ),
    content: fc.oneof(
      hostileString.map((text) => Buffer.from(text)),
      fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
    ),
  });
  return fc.tuple(fc.array(field, { maxLength: 4 }), fc.constantFrom('whole', 'unterminated', 'wrong-boundary')).map(([fields, framing]) => {
    const boundary = 'fuzzboundary7MA4YWxk';
    const pieces: Buffer[] = [];
    for (const part of fields) {
      const disposition = `form-data; name="${part.name.replace(/["\r\n]/g, '')}"` + (part.filename === undefined ? '' : `; filename="${part.filename}"`);
      pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`), part.content, Buffer.from('\r\n'));
    }
    if (framing !== 'unterminated') pieces.push(Buffer.from(`--${boundary}--\r\n`));
    const declared = framing === 'wrong-boundary' ? 'another' : boundary;
    return { body: Buffer.concat(pieces), type: `multipart/form-data; boundary=${declared}` };
  });
}

/** Percent-encodes the UTF-8 bytes of `text` (a lone surrogate, which encodeURIComponent refuses, becomes U+FFFD). */
function encode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

/** A path parameter: a real id of this instance (to get past the lookups) or a hostile one, percent-encoded or raw. */
function pathValue(known: readonly string[]): fc.Arbitrary<string> {
  const value = known.length ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: hostileString, weight: 2 }) : hostileString;
  return fc.oneof(
    { arbitrary: value.map(encode), weight: 6 },
    { arbitrary: fc.constantFrom('%', '%zz', '%C0%AF', '%00', '..%2F..', '%25', '%F0%9F', '%ED%A0%80'), weight: 1 },
  );
}

function queryString(operation: Operation, known: Record<string, readonly string[]>): fc.Arbitrary<string> {
  const declared = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
  const name = declared.length ? fc.oneof({ arbitrary: fc.constantFrom(...declared), weight: 8 }, { arbitrary: hostileString, weight: 1 }) : hostileString;
  const value = fc.oneof({ arbitrary: hostileString, weight: 4 }, { arbitrary: fc.constantFrom(...(known.cursor ?? ['']), '1', '1000'), weight: 1 });
  const pairs = fc
    .array(fc.tuple(name, value), { maxLength: declared.length ? 4 : 2 })
    .map((list) => list.map(([key, text]) => `${encode(key)}=${encode(text)}`).join('&'));
  return fc.oneof(
    // An operation without query parameters mostly gets none; an unknown parameter stops the request early.
    { arbitrary: fc.constant(''), weight: declared.length ? 1 : 6 },
    { arbitrary: pairs, weight: 6 },
    { arbitrary: fc.constantFrom('limit=%zz', 'cursor=%', 'cursor=%ED%A0%80', 'limit[]=1', 'limit[a]=1', 'a=1&a=2&a=3', '=', '&&&'), weight: 1 },
  );
}

/**
 * Requests for every operation of the served OpenAPI document: an operation added later is fuzzed without
 * touching this file. `known` maps path-parameter names to real values of the instance.
 */
export function requestsFor(
  document: OpenApiDocument,
  known: Record<string, readonly string[]>,
  identities: fc.Arbitrary<Record<string, string>>,
  methods: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
): fc.Arbitrary<FuzzRequest> {
  const operations = Object.entries(document.paths)
    .flatMap(([template, byMethod]) => Object.entries(byMethod).map(([method, operation]) => ({ template, method: method.toUpperCase(), operation })))
    .filter(({ method }) => methods.includes(method));
  return fc.constantFrom(...operations).chain(({ template, method, operation }) => {
    const names = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
    const path = fc
      .tuple(...names.map((name) => pathValue(known[name] ?? [])))
      .map((values) => values.reduce((built, value, index) => built.replace(`{${names[index]}}`, value), template));
    const content = operation.requestBody?.content ?? {};
    let body: fc.Arbitrary<{ body: Buffer | undefined; type: string | undefined }>;
    if (content['application/json']) {
      body = fc.oneof(
        ...[
          { arbitrary: oneSpoiled(document, content['application/json'].schema), weight: 6 },
          { arbitrary: plausible(document, content['application/json'].schema), weight: 1 },
          { arbitrary: shaped(document, content['application/json'].schema), weight: 2 },
        ].map(({ arbitrary, weight }) => ({
          arbitrary: arbitrary.map((value) => ({ body: Buffer.from(JSON.stringify(value) ?? 'null'), type: 'application/json' })),
          weight,
        })),
        { arbitrary: fc.tuple(brokenJson, fc.oneof(fc.constant('application/json'), contentTypes)).map(([raw, type]) => ({ body: raw, type })), weight: 1 },
      );
    } else if (content['multipart/form-data']) {
      const fields = Object.keys(resolve(document, content['multipart/form-data'].schema).properties ?? {});
      body = fc.oneof(
        { arbitrary: multipart(fields.length ? fields : ['file']), weight: 5 },
        { arbitrary: fc.tuple(brokenJson, contentTypes).map(([raw, type]) => ({ body: raw, type })), weight: 1 },
      );
    } else {
      // No body expected: mostly none, sometimes one anyway.
      body = fc.oneof(
        { arbitrary: fc.constant({ body: undefined, type: undefined }), weight: 4 },
        { arbitrary: fc.tuple(brokenJson, fc.oneof(fc.constant('application/json'), contentTypes)).map(([raw, type]) => ({ body: raw, type })), weight: 1 },
      );
    }
    return fc
      .record({ path, query: queryString(operation, known), body, identity: identities, extra: extraHeaders })
      .map(({ path: builtPath, query, body: chosen, identity, extra }) => {
        const headers: Record<string, string> = { ...extra, ...identity };
        if (chosen.type) headers['Content-Type'] = chosen.type;
        // A Content-Encoding the body does not have is a hostile header too, but only where there is a body.
        if (!chosen.body) delete headers['Content-Encoding'];
        return { method, template, path: query ? `${builtPath}?${query}` : builtPath, headers, body: chosen.body };
      });
  });
}

/** Sends one request as generated (no client-side normalisation of the path), with a 30 s bound. */
export function send(base: string, fuzz: FuzzRequest): Promise<FuzzAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolvePromise, reject) => {
    const request = httpRequest(
      {
        host: hostname,
        port,
        method: fuzz.method,
        path: fuzz.path,
        headers: { ...fuzz.headers, 'Content-Length': String(fuzz.body?.length ?? 0) },
        timeout: 30_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolvePromise({
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error('no answer within 30 s')));
    request.on('error', reject);
    request.end(fuzz.body);
  });
}
