import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ApiKeyIdParamDto, CreateApiKeyDto, UpdateApiKeyDto } from '../../auth/dto/api-key.dto.js';
import { CreateSessionDto } from '../../filebox/dto/session.dto.js';
import { QuotaDto } from '../../insight/dto/quota.dto.js';
import { CompleteTaskDto, FailTaskDto, HeartbeatDto, TakeTasksDto } from '../../insight/dto/task-queue.dto.js';
import { RegisterTaskDto, TaskIdParamDto } from '../../insight/dto/task.dto.js';
import { RemoveItemDto } from '../../intel/batch/batch.dto.js';
import { CollectionNameParamDto, CreateCollectionDto, UpdateCollectionDto } from '../../intel/dto/collection.dto.js';
import { CollectionIdParamDto, ObjectAddDto } from '../../intel/dto/object.dto.js';
import { LookupDto } from '../../intel/lookup/lookup.dto.js';
import { SchemaIdParamDto } from '../../schema-registry/dto/schema.dto.js';
import {
  CheckDto,
  CreateWarninglistDto,
  ReplaceWarninglistDto,
  UpdateWarninglistDto,
  WarninglistNameParamDto,
} from '../../warninglists/dto/warninglist.dto.js';
import { ApiError } from '../errors/api-error.js';
import { RESOURCE_ACTIONS } from '../guard/access.js';
import { INSIGHT_KEY_TYPES, INSIGHT_OBJECT_TYPES, KEY_TYPES, OBJECT_TYPES } from '../indicators/indicators.js';
import { compiledValidation } from './compiled-validation.js';
import { inspectJsonBody } from './json-body.js';
import { AppValidationPipe } from './validation.pipe.js';

/** The global pipe without the fast path: class-validator and class-transformer on every body. */
class LibraryPipe extends AppValidationPipe {
  protected override readonly compiled = false;
}

const SEED = 20261123;

/** Every class, key and value of a result, in order, so that two results compare exactly. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return { class: Object.getPrototypeOf(value)?.constructor?.name ?? null, entries: Object.keys(record).map((key) => [key, shape(record[key])]) };
  }
  return value === undefined ? { undefined: true } : value;
}

async function outcome(pipe: AppValidationPipe, type: Function, json: string, source: 'body' | 'param' = 'body'): Promise<unknown> {
  try {
    return { accepted: shape(await pipe.transform(JSON.parse(json), { type: source, metatype: type as never, data: undefined })) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { refused: { status: error.status, code: error.code, message: error.message, details: error.details } };
  }
}

// ---- valid bodies of each DTO, then spoiled in the ways clients and fuzzers spoil them ----

const text = fc.string({ maxLength: 12 });
const key = (types: readonly string[]) => fc.record({ type: fc.constantFrom(...types), value: fc.oneof(text, fc.stringMatching(/^[0-9a-f]{32}$/)) });
const context = fc.dictionary(fc.oneof(text, fc.constantFrom('toString', 'valueOf', 'hasOwnProperty', 'a')), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
const objectForm = (objectTypes: readonly string[], keyTypes: readonly string[]) =>
  fc.record({ type: fc.constantFrom(...objectTypes), keys: fc.array(key(keyTypes), { maxLength: 3 }), context }, { requiredKeys: ['type', 'keys'] });
const uuid = fc.uuid();
const schemaId = fc.constantFrom('phishing', 'a.b-c~d', 'x');
/** TLP spellings as a form may send them, and some it may not (null, other levels, other types). */
const tlpSpelling = fc.constantFrom<unknown>('TLP:RED', 'tlp:white', ' TLP:amber+strict ', 'TLP:AMBER', 'TLP:WHITE+', 'PAP:RED', null, 4);
const leaseToken = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('hex'));
const resourceRef = fc.record({ id: fc.integer({ min: 1, max: 100 }) });
/** TLP levels as input may spell them, and look-alikes that are none. */
const tlp = fc.constantFrom('TLP:CLEAR', 'tlp:white', ' TLP:Green ', 'TLP:AMBER+STRICT', 'TLP:RED', 'TLP:AMBER-STRICT', 'RED', 'TLP:');
/** A warninglist's POST form (and PUT's), with these members required. */
const warninglistForm = (requiredKeys: ('name' | 'kind' | 'entries')[]) =>
  fc.record(
    {
      name: fc.constantFrom('a', 'list-1', 'x.y_z'),
      description: text,
      kind: fc.constantFrom('values', 'cidr', 'hostname', 'substring'),
      keyTypes: fc.subarray([...KEY_TYPES]),
      action: fc.constantFrom('annotate', 'excludeFromExport', 'rejectOnIngest'),
      enabled: fc.boolean(),
      entries: fc.array(fc.oneof(text, fc.integer()), { maxLength: 4 }),
    },
    { requiredKeys },
  );

const BODIES: Array<[string, Function, fc.Arbitrary<Record<string, unknown>>]> = [
  [
    'ObjectAddDto',
    ObjectAddDto,
    fc
      .tuple(objectForm(OBJECT_TYPES, KEY_TYPES), fc.option(fc.constantFrom('2030-01-01T00:00:00Z', '2030-01-01T00:00:00.5+02:00')))
      .map(([form, expiresAt]) => (expiresAt === null ? form : { ...form, expiresAt })),
  ],
  ['RemoveItemDto (a batch item)', RemoveItemDto, fc.record({ remove: key(KEY_TYPES) })],
  [
    'CompleteTaskDto',
    CompleteTaskDto,
    fc.record({ taskID: uuid, leaseToken, result: objectForm(INSIGHT_OBJECT_TYPES, INSIGHT_KEY_TYPES) }, { requiredKeys: ['taskID', 'result'] }),
  ],
  [
    'FailTaskDto',
    FailTaskDto,
    fc.record(
      {
        taskID: uuid,
        leaseToken,
        error: fc.record(
          {
            code: fc.string({ minLength: 1, maxLength: 8 }),
            message: text,
            kind: fc.constantFrom('permanent', 'transient', 'rateLimited'),
            retryAfterSeconds: fc.integer({ min: 1, max: 86400 }),
          },
          { requiredKeys: ['code', 'message'] },
        ),
      },
      { requiredKeys: ['taskID', 'error'] },
    ),
  ],
  [
    'TakeTasksDto',
    TakeTasksDto,
    fc.record(
      {
        limit: fc.integer({ min: 1, max: 1000 }),
        wait: fc.integer({ min: 0, max: 60 }),
        schemas: fc.array(schemaId, { minLength: 1, maxLength: 3 }),
        executor: fc.string({ minLength: 1, maxLength: 16 }),
      },
      { requiredKeys: ['limit'] },
    ),
  ],
  [
    'QuotaDto',
    QuotaDto,
    fc.record(
      {
        perMinute: fc.integer({ min: 1, max: 1000 }),
        perHour: fc.integer({ min: 1, max: 1000 }),
        perDay: fc.integer({ min: 1, max: 1000 }),
        maxLeased: fc.integer({ min: 1, max: 1000 }),
      },
      { requiredKeys: [] },
    ),
  ],
  [
    'HeartbeatDto',
    HeartbeatDto,
    fc.record(
      {
        taskID: uuid,
        leaseToken,
        extendSeconds: fc.integer({ min: 1, max: 3600 }),
        progress: fc.record({ percent: fc.double({ min: 0, max: 100, noNaN: true }), message: fc.string({ maxLength: 16 }) }, { requiredKeys: ['percent'] }),
      },
      { requiredKeys: ['taskID', 'leaseToken'] },
    ),
  ],
  [
    'LookupDto',
    LookupDto,
    fc.record(
      { keys: fc.array(key(KEY_TYPES), { minLength: 1, maxLength: 4 }), collections: fc.array(schemaId, { maxLength: 3 }) },
      { requiredKeys: ['keys'] },
    ),
  ],
  [
    'CreateApiKeyDto',
    CreateApiKeyDto,
    fc.record(
      {
        permissions: fc.array(fc.record({ resource: resourceRef, actions: fc.subarray([...RESOURCE_ACTIONS]) }), { maxLength: 3 }),
        requestLimits: fc.array(
          fc.record({
            target: fc.record({ resource: resourceRef, action: fc.constantFrom(...RESOURCE_ACTIONS) }),
            limit: fc.integer({ min: 1 }),
            period: fc.constant('Day'),
          }),
          { maxLength: 2 },
        ),
        expiresAt: fc.constant('2030-01-02T03:04:05Z'),
        description: text,
        maxTLP: tlp,
      },
      { requiredKeys: ['permissions'] },
    ),
  ],
  ['UpdateApiKeyDto', UpdateApiKeyDto, fc.record({ maxTLP: tlp }, { requiredKeys: [] })],
  [
    'CreateCollectionDto',
    CreateCollectionDto,
    fc.record(
      { name: schemaId, schemaID: schemaId, objectTTLSeconds: fc.option(fc.integer({ min: 1, max: 1000 })), defaultTLP: tlpSpelling },
      { requiredKeys: ['name', 'schemaID'] },
    ),
  ],
  [
    'UpdateCollectionDto',
    UpdateCollectionDto,
    fc.record({ schemaID: schemaId, objectTTLSeconds: fc.option(fc.integer({ min: 1 })), defaultTLP: tlpSpelling }, { requiredKeys: [] }),
  ],
  ['CreateWarninglistDto', CreateWarninglistDto, warninglistForm(['name', 'kind', 'entries'])],
  // PUT's body: the POST form, its name optional (the service compares it with the path's).
  ['ReplaceWarninglistDto', ReplaceWarninglistDto, warninglistForm(['kind', 'entries'])],
  [
    'UpdateWarninglistDto',
    UpdateWarninglistDto,
    fc.record(
      { description: text, keyTypes: fc.option(fc.subarray([...KEY_TYPES])), action: fc.constantFrom('annotate', 'rejectOnIngest'), enabled: fc.boolean() },
      { requiredKeys: [] },
    ),
  ],
  ['CheckDto', CheckDto, fc.record({ values: fc.array(fc.oneof(text, key(KEY_TYPES)), { maxLength: 4 }) })],
  ['CreateSessionDto', CreateSessionDto, fc.record({ partSize: fc.integer({ min: 1024 * 1024, max: 64 * 1024 * 1024 }) })],
  [
    'RegisterTaskDto',
    RegisterTaskDto,
    fc.record(
      {
        params: fc.record({ schemaID: schemaId, objectKeys: fc.array(key(INSIGHT_KEY_TYPES), { maxLength: 2 }), fileID: uuid }, { requiredKeys: ['schemaID'] }),
        priority: fc.integer({ min: 1, max: 5 }),
        maxAttempts: fc.integer({ min: 1, max: 20 }),
        dedupe: fc.constantFrom('none', 'inflight', 'result'),
        maxAgeSeconds: fc.integer({ min: 1, max: 31536000 }),
      },
      { requiredKeys: ['params'] },
    ),
  ],
];

/** Path parameters as the router gives them (strings), valid and not: the names the patterns allow and refuse. */
const pathValue = fc.oneof(
  text,
  fc.stringMatching(/^[A-Za-z0-9._~-]{1,20}$/),
  fc.integer({ min: 0, max: 2 ** 40 }).map(String),
  fc.constantFrom('', '.', '..', '0', '01', 'a b', 'x'.repeat(129), '\u00e9', 'phishing'),
);
const PARAMS: Array<[string, Function, fc.Arbitrary<Record<string, unknown>>]> = [
  ['CollectionIdParamDto', CollectionIdParamDto, fc.record({ collection_id: pathValue })],
  ['WarninglistNameParamDto', WarninglistNameParamDto, fc.record({ name: pathValue })],
  ['CollectionNameParamDto', CollectionNameParamDto, fc.record({ collectionName: pathValue })],
  ['SchemaIdParamDto', SchemaIdParamDto, fc.record({ schema_id: pathValue })],
  ['ApiKeyIdParamDto', ApiKeyIdParamDto, fc.record({ api_key_id: fc.oneof(fc.integer({ min: 1, max: 999_999_999 }).map(String), pathValue) })],
  ['TaskIdParamDto', TaskIdParamDto, fc.record({ task_id: fc.oneof(uuid, pathValue) })],
];

/** Values that break validators: wrong types, bounds, enum look-alikes, nested shapes where values belong. */
const spoilt: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    null,
    true,
    0,
    -1,
    1.5,
    1e21,
    2 ** 31,
    1025,
    65,
    '',
    ' ',
    'x'.repeat(4097),
    'md5hash',
    'MD5Hash',
    'File',
    'IPNetwork',
    'Day',
    'Read',
    '2030-01-01',
    [],
    {},
    [null],
    [{}],
    [[]],
    { type: 'MD5Hash' },
    { id: '1' },
  ),
);
const NAMES = ['extra', 'toString', 'valueOf', 'hasOwnProperty', 'type', 'value', 'keys', 'context', 'id', 'limit', 'wait', 'result', 'error', '0'];

interface Spoiling {
  kind: 'replace' | 'delete' | 'add' | 'wrap' | 'grow';
  pick: number;
  name: string;
  value: unknown;
  length: number;
}
const spoiling: fc.Arbitrary<Spoiling> = fc.record({
  kind: fc.constantFrom('replace', 'delete', 'add', 'wrap', 'grow'),
  pick: fc.nat(),
  name: fc.constantFrom(...NAMES),
  value: spoilt,
  length: fc.constantFrom(5, 65, 1001),
});

/** Every container in the body with the key it hangs under in its parent (the body itself has none). */
function containers(value: unknown, parent?: unknown, key?: string | number): Array<{ node: unknown; parent?: unknown; key?: string | number }> {
  const here = [{ node: value, parent, key }];
  if (typeof value !== 'object' || value === null) return here;
  const children = Object.entries(value).flatMap(([name, child]) => containers(child, value, Array.isArray(value) ? Number(name) : name));
  return [...here, ...children];
}

function spoil(body: unknown, spoilings: Spoiling[]): unknown {
  let root = structuredClone(body);
  for (const { kind, pick, name, value, length } of spoilings) {
    const all = containers(root);
    const { node, parent, key } = all[pick % all.length];
    const set = (next: unknown) => {
      if (parent === undefined) root = next;
      else (parent as Record<string | number, unknown>)[key!] = next;
    };
    if (kind === 'replace') set(value);
    else if (kind === 'wrap') set([node]);
    else if (kind === 'delete' && parent !== undefined) {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete (parent as Record<string, unknown>)[key as string];
    } else if (kind === 'add' && typeof node === 'object' && node !== null) {
      if (Array.isArray(node)) node.push(value);
      else (node as Record<string, unknown>)[name] = value;
    } else if (kind === 'grow' && Array.isArray(node)) {
      set(Array.from({ length }, (_, index) => structuredClone(node[index % Math.max(node.length, 1)] ?? value)));
    }
  }
  return root;
}

/**
 * The pipe with the fast path answers every spoiled value of `valid` exactly as the library alone does, and
 * the fast path alone accepts exactly what the library accepts (`source`: where the value comes from).
 */
async function agreesWithLibrary(source: 'body' | 'param', type: Function, valid: fc.Arbitrary<Record<string, unknown>>): Promise<void> {
  const fast = compiledValidation(type)!;
  const library = new LibraryPipe();
  const pipe = new AppValidationPipe();
  const accepted = { fast: 0, library: 0 };
  await fc.assert(
    fc.asyncProperty(valid, fc.array(spoiling, { maxLength: 2 }), async (body, spoilings) => {
      const json = JSON.stringify(spoil(body, spoilings)) ?? 'null';
      const reference = await outcome(library, type, json, source);
      expect(await outcome(pipe, type, json, source)).toEqual(reference);
      // The verdict of the fast path alone, on the bodies the pipe's own checks let through to it.
      const parsed: unknown = JSON.parse(json);
      if (inspectJsonBody(parsed, { attributeNames: true, text: true }) || typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return;
      const verdict = fast(parsed) !== undefined;
      expect(verdict).toBe('accepted' in (reference as object));
      if (verdict) accepted.fast += 1;
      if ('accepted' in (reference as object)) accepted.library += 1;
    }),
    { seed: SEED, numRuns: 400 },
  );
  // The generator reaches both sides: bodies accepted (then through the fast path) and refused.
  expect(accepted.fast).toBe(accepted.library);
  expect(accepted.library).toBeGreaterThan(40);
  expect(accepted.library).toBeLessThan(380);
}

describe("compiled validation (the global pipe's fast path)", () => {
  it.each(BODIES)('is compiled for %s', (_name, type) => {
    expect(compiledValidation(type)).toBeDefined();
  });

  it.each(BODIES)(
    '%s: accepts exactly the bodies class-validator accepts, gives the same instance, and the pipe answers every body as without it',
    (_name, type, valid) => agreesWithLibrary('body', type, valid),
  );

  it.each(PARAMS)('is compiled for the path parameters of %s', (_name, type) => {
    expect(compiledValidation(type)).toBeDefined();
  });

  it.each(PARAMS)('%s: accepts exactly the path parameters class-validator accepts, and the pipe answers every value as without it', (_name, type, valid) =>
    agreesWithLibrary('param', type, valid),
  );

  it("keeps the context as parsed (the same object, attributes named like methods included), as the DTO's @Transform does", () => {
    const body = { type: 'File', keys: [{ type: 'MD5Hash', value: 'd41d8cd98f00b204e9800998ecf8427e' }], context: { toString: 1, a: { valueOf: 2 } } };
    const instance = compiledValidation(ObjectAddDto)!(body) as ObjectAddDto;
    expect(instance).toBeInstanceOf(ObjectAddDto);
    expect(instance.context).toBe(body.context);
    expect(instance.keys[0].constructor.name).toBe('ObjectKeyDto');
  });
});
