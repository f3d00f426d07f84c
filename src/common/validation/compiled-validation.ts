import { TransformationType, type TransformFnParams } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';

/**
 * A fast path for the global pipe, compiled once per DTO class from the class-validator and class-transformer
 * metadata of its decorators (which stay the only declaration of the rules). For a body it answers the DTO
 * instance that `plainToInstance` + `validate` would give when the library would find no error, and
 * `undefined` otherwise: the pipe then runs the library, so every error answer is still the library's own,
 * word for word. The fast path only has to agree with the library on what it accepts;
 * `compiled-validation.spec.ts` holds it to that on generated bodies for every body DTO.
 *
 * Why: on the hot routes (a re-sent object, a task completion, a lookup of 1,000 keys) the library's generic
 * walk (metadata look-ups per object, an error object per property, a deep copy of every value, then a promise)
 * cost more than the rest of the request's own work (BENCHMARKS.md, rows 3b, 6, 11). The price is this second
 * reading of the decorators' metadata, which must follow the libraries' semantics: a class using anything not
 * modelled here (groups, `always`, async or promise validation, `@Allow`, `@Expose`/`@Exclude`, discriminators,
 * type conversions, Sets and Maps) gets no fast path at all.
 *
 * What it reproduces, for the pipe's options (transform, whitelist, forbidNonWhitelisted, forbidUnknownValues,
 * no groups) and class-transformer's defaults:
 * - class-transformer: `new Class()`, then each attribute of the body in order, except those it skips
 *   (`__proto__`, `constructor`, names of methods); `@Type(() => Class)` values built the same way (arrays item
 *   by item); primitives as they are; other arrays and objects copied; `@Transform` functions called with the
 *   same arguments (the copy made only if a transform reads `value`).
 * - class-validator: no attribute without rules (whitelist); per property, the conditions (`@IsOptional`,
 *   `@ValidateIf`), then each constraint's own `validate` function (the one the library calls; `each` over
 *   arrays), then nested objects, which must be instances of their class.
 *
 * Bodies reach the pipe from JSON.parse or qs (urlencoded): neither makes sparse arrays nor binary values,
 * and the pipe refuses `__proto__`, `constructor` and `prototype` before this runs, so the base pipe's own
 * clean-ups (closing array gaps, stripping prototype keys, looking for binary values) change nothing here.
 */
export type CompiledValidation = (body: unknown) => object | undefined;

/** Thrown inside the fast path to leave the body to class-validator (a value JSON cannot hold). */
const GIVE_UP = Symbol('give up');

/** The options class-transformer hands to `@Transform` functions when called with none (its defaults). */
const TRANSFORM_OPTIONS = Object.freeze({
  enableCircularCheck: false,
  enableImplicitConversion: false,
  excludeExtraneousValues: false,
  excludePrefixes: undefined,
  exposeDefaultValues: false,
  exposeUnsetFields: true,
  groups: undefined,
  ignoreDecorators: false,
  strategy: undefined,
  targetMaps: undefined,
  version: undefined,
});

type Constructor = new () => object;

interface Check {
  validate: (value: unknown, args: ValidationArguments) => unknown;
  each: boolean;
  constraints: unknown[];
  validateIf?: (object: object, value: unknown) => boolean;
}

interface PropertyPlan {
  name: string;
  /** The plan of `@Type(() => Class)`. */
  nested?: ClassPlan;
  transforms: Array<(params: TransformFnParams) => unknown>;
  conditions: Array<(object: object, value: unknown) => boolean>;
  checks: Check[];
  validateNested: boolean;
}

interface ClassPlan {
  type: Constructor;
  properties: Map<string, PropertyPlan>;
}

const compiled = new WeakMap<Function, CompiledValidation | null>();

/** The fast path for `type`, or `undefined` when its decorators use something the fast path does not model. */
export function compiledValidation(type: Function): CompiledValidation | undefined {
  let fast = compiled.get(type);
  if (fast === undefined) {
    fast = compile(type);
    compiled.set(type, fast);
  }
  return fast ?? undefined;
}

function compile(type: Function): CompiledValidation | null {
  const plans: Plans = new Map();
  const root = planFor(type, undefined, plans);
  // Nested classes are planned now too, so that an unsupported one disables the fast path from the start.
  if (!root || [...plans.values()].some((bySchema) => [...bySchema.values()].includes(null))) return null;
  return (body) => {
    if (!isPlainObject(body)) return undefined;
    try {
      const instance = build(root, body);
      return isCertainlyValid(root, instance) ? instance : undefined;
    } catch {
      // GIVE_UP, or a validator or transform that throws: the library's walk meets the same and reports it.
      return undefined;
    }
  };
}

/** Plans by class, then by the schema name class-validator looks its rules up with (see planFor). */
type Plans = Map<Function, Map<string | undefined, ClassPlan | null>>;

function planFor(type: Function, schema: string | undefined, plans: Plans): ClassPlan | null {
  let bySchema = plans.get(type);
  if (!bySchema) plans.set(type, (bySchema = new Map()));
  if (bySchema.has(schema)) return bySchema.get(schema)!;
  bySchema.set(schema, null);
  const plan = makePlan(type, schema, plans);
  bySchema.set(schema, plan);
  return plan;
}

function makePlan(type: Function, schema: string | undefined, plans: Plans): ClassPlan | null {
  if (type.length > 0) return null;
  const transformer = defaultMetadataStorage;
  if (transformer.getStrategy(type) !== 'none' || transformer.getExposedMetadatas(type).length > 0 || transformer.getExcludedMetadatas(type).length > 0) {
    return null;
  }
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(type, schema as string, false, false, undefined);
  // Without rules class-validator refuses every object (forbidUnknownValues): leave those to it.
  if (metadatas.length === 0) return null;
  const properties = new Map<string, PropertyPlan>();
  for (const [name, group] of Object.entries(storage.groupByPropertyName(metadatas))) {
    const property: PropertyPlan = { name, transforms: [], conditions: [], checks: [], validateNested: false };
    for (const metadata of group) {
      if (metadata.groups?.length || metadata.always !== undefined) return null;
      if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
        property.conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
      } else if (metadata.type === ValidationTypes.NESTED_VALIDATION) {
        if (typeof metadata.target !== 'function') return null;
        property.validateNested = true;
      } else if (metadata.type === ValidationTypes.CUSTOM_VALIDATION || metadata.type === ValidationTypes.IS_DEFINED) {
        for (const constraint of storage.getTargetValidatorConstraints(metadata.constraintCls)) {
          if (constraint.async) return null;
          const instance = constraint.instance as { validate: Check['validate'] };
          property.checks.push({
            validate: instance.validate.bind(instance),
            each: metadata.each,
            constraints: metadata.constraints,
            validateIf: metadata.validateIf,
          });
        }
      } else {
        // Promise validation, @Allow: not modelled.
        return null;
      }
    }
    const typeMetadata = transformer.findTypeMetadata(type, name);
    if (typeMetadata) {
      const { typeFunction, options, reflectedType } = typeMetadata;
      // A type chosen per value (a function of its arguments, a discriminator), Set and Map: not modelled.
      if (!typeFunction || typeFunction.length > 0 || options?.discriminator) return null;
      if (reflectedType === Set || reflectedType === Map) return null;
      const target = typeFunction() as Function;
      // Conversions (to strings, numbers, dates...) are not modelled: only classes with rules of their own.
      if ([String, Number, Boolean, Date, Buffer, Object, Array, Set, Map].includes(target as never)) return null;
      // class-validator looks nested rules up with the name of the class declaring @ValidateNested as schema.
      const nestedBy = group.find((metadata) => metadata.type === ValidationTypes.NESTED_VALIDATION)?.target;
      const nestedPlan = planFor(target, typeof nestedBy === 'function' ? nestedBy.name : undefined, plans);
      if (!nestedPlan) return null;
      property.nested = nestedPlan;
    }
    for (const transform of transformer.findTransformMetadatas(type, name, TransformationType.PLAIN_TO_CLASS)) {
      if (transform.options?.groups?.length) continue;
      if (transform.options?.since !== undefined || transform.options?.until !== undefined) return null;
      property.transforms.push(transform.transformFn);
    }
    properties.set(name, property);
  }
  return { type: type as Constructor, properties };
}

/** class-transformer's `plainToInstance` for a plain body (anything else gives up). */
function build(plan: ClassPlan, body: Record<string, unknown>): Record<string, unknown> {
  const instance = new plan.type() as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (skipsAttribute(plan.type, instance, key)) continue;
    const property = plan.properties.get(key);
    const raw = body[key];
    const typed = property?.nested;
    const built = typed && buildNested(typed, raw);
    if (!property?.transforms.length) {
      instance[key] = typed ? built : copyUntyped(raw);
      continue;
    }
    // The transforms get class-transformer's copy of the value: made only if one of them reads it.
    let copied: { value: unknown } | undefined;
    let read = typed ? () => built : () => (copied ??= { value: copyUntyped(raw) }).value;
    for (const transform of property.transforms) {
      const params = { key, obj: body, type: TransformationType.PLAIN_TO_CLASS, options: TRANSFORM_OPTIONS } as TransformFnParams;
      Object.defineProperty(params, 'value', { enumerable: true, get: read });
      const result = transform(params);
      read = () => result;
    }
    instance[key] = read();
  }
  return instance;
}

/**
 * The attributes class-transformer leaves out of an instance: `__proto__` and `constructor`, and those the
 * instance already has as a method (`toString`, `valueOf`, ... for a plain object) or its prototype as a
 * read-only property.
 */
function skipsAttribute(type: Function, instance: Record<string, unknown>, key: string): boolean {
  if (key === '__proto__' || key === 'constructor') return true;
  const descriptor = Object.getOwnPropertyDescriptor(type.prototype, key);
  return (descriptor !== undefined && !descriptor.set) || instance[key] instanceof Function;
}

/** A value of a `@Type(() => Class)` property: arrays (at any depth) item by item, objects as the class. */
function buildNested(plan: ClassPlan, raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object') return raw;
  if (Array.isArray(raw)) return raw.map((item) => buildNested(plan, item));
  if (!isPlainObject(raw)) throw GIVE_UP;
  return build(plan, raw);
}

/** class-transformer's copy of a value without a type: primitives as they are, arrays and objects copied. */
function copyUntyped(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object') return raw;
  if (Array.isArray(raw)) return raw.map(copyUntyped);
  if (!isPlainObject(raw)) throw GIVE_UP;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(raw)) {
    if (!skipsAttribute(Object, copy, key)) copy[key] = copyUntyped(raw[key]);
  }
  return copy;
}

/**
 * class-validator's verdict on an instance built above: true only when it would find no error; false also
 * where this does not model the library (Sets, Maps), so that the library decides.
 */
function isCertainlyValid(plan: ClassPlan, instance: Record<string, unknown>): boolean {
  for (const key of Object.keys(instance)) {
    if (!plan.properties.has(key)) return false;
  }
  for (const property of plan.properties.values()) {
    const value = instance[property.name];
    if (value instanceof Set || value instanceof Map) return false;
    if (!property.conditions.every((condition) => condition(instance, value))) continue;
    for (const check of property.checks) {
      if (check.validateIf && !check.validateIf(instance, value)) continue;
      const args: ValidationArguments = {
        targetName: plan.type.name,
        property: property.name,
        object: instance,
        value,
        constraints: check.constraints,
      };
      if (check.each && Array.isArray(value)) {
        if (!value.every((item) => check.validate(item, args))) return false;
      } else if (!check.validate(value, args)) {
        return false;
      }
    }
    if (property.validateNested && value !== undefined && !isNestedValid(property.nested, value)) return false;
  }
  return true;
}

function isNestedValid(nested: ClassPlan | undefined, value: unknown): boolean {
  if (Array.isArray(value)) return value.every((item) => isNestedValid(nested, item));
  // What class-transformer did not build as the nested class (a primitive, null) is an error.
  if (!nested || typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== nested.type.prototype) return false;
  return isCertainlyValid(nested, value as Record<string, unknown>);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
