import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import addFormats from 'ajv-formats';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageQueryDto, type PageResult } from '../common/pagination/page.js';
import { assertTagMatches, TaggedResult } from '../common/tags/tag.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { InvalidatedCache } from '../database/invalidated-cache.js';
import { InvalidationBus } from '../database/invalidation-bus.js';
import { SCHEMA_ID_PATTERN, type SchemaCommonView, type SchemaRegistrationView } from './dto/schema.dto.js';
import { safePattern } from './safe-pattern.js';
import { SchemaRegistryErrors, type SchemaViolation } from './schema-registry.errors.js';
import { SchemasRepository } from './schemas.repository.js';

export type SchemaNamespace = 'intel' | 'insight';

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** Bounds the memory one Ajv instance holds (see compile()). */
const COMPILES_PER_INSTANCE = 1000;

/**
 * Most violations a SchemaCheckFail lists. A 2 MiB array of wrong items has a million violations: listing
 * them all answered with a 135 MB error body, and a 16 MiB one could not be serialised at all (a 500).
 */
export const MAX_REPORTED_VIOLATIONS = 1000;

/**
 * Collecting every violation costs time and memory in proportion to the instance (a 16 MiB array of wrong
 * items took 6 s and 1.4 GB in Ajv's allErrors mode). A fail-fast pass decides valid or not; the full
 * report runs only for instances up to this size, larger ones report their first violation.
 */
export const FULL_REPORT_MAX_CHARS = 256 * 1024;

/** A schema version compiled twice: fail-fast for the decision, all errors for the report. */
interface Validator {
  firstError: ValidateFunction;
  allErrors: ValidateFunction;
}

/**
 * Strict mode is off on purpose: in 2020-12 unknown keywords (our own `schemaID`, vendor `x-*` fields) and
 * unknown formats are annotations, so rejecting them would refuse valid documents. `addUsedSchema: false`
 * keeps a document's `$id` out of the shared instance, so two schemas may carry the same `$id`. Patterns run on
 * a linear-time engine (see safePattern).
 */
function createAjv(allErrors: boolean): Ajv2020 {
  const ajv = new Ajv2020({ allErrors, strict: false, addUsedSchema: false, logger: false, code: { regExp: safePattern } });
  addFormats.default(ajv);
  return ajv;
}

/** A document that passed every registration rule, with what is stored about it. */
interface CheckedDocument {
  schemaId: string;
  title: string;
  /** The stored form; its byte-exact equality decides whether a PUT changes anything. */
  text: string;
  validator: Validator;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSchemaCursor(value: unknown): value is { s: string } {
  return isPlainObject(value) && Object.keys(value).length === 1 && typeof value.s === 'string' && SCHEMA_ID_PATTERN.test(value.s);
}

/** Ajv's `schemaPath` is already a URI fragment (`#/properties/...`): prefixing the schema id makes it absolute. */
function violationOf(schemaId: string, error: ErrorObject): SchemaViolation {
  return {
    AbsoluteKeywordLocation: `${schemaId}${error.schemaPath}`,
    InstanceLocation: error.instancePath,
    Message: error.message ?? `fails the ${error.keyword} keyword`,
  };
}

/** The schema registry shared by intel and insight; the namespaces never see each other's schemas. */
@Injectable()
export class SchemaRegistryService {
  private ajv = { firstError: createAjv(false), allErrors: createAjv(true) };
  private compilesOnInstance = 0;

  /** The compiled validator of each schema's newest version seen by this instance, keyed `<namespace>/<id>`. */
  private readonly validators = new Map<string, { version: number; validator: Validator }>();

  /** The current version of each schema: every validation needs it, only a PUT changes it. */
  private readonly versions: InvalidatedCache<number>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly schemas: SchemasRepository,
    bus: InvalidationBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.versions = new InvalidatedCache(bus, 'schema');
  }

  async register(namespace: SchemaNamespace, document: unknown): Promise<SchemaRegistrationView> {
    const checked = this.check(document);
    if (!(await this.schemas.insert(namespace, checked.schemaId, checked))) throw SchemaRegistryErrors.duplicate(checked.schemaId);
    this.remember(namespace, checked.schemaId, 1, checked.validator);
    return { schemaID: checked.schemaId };
  }

  async replace(namespace: SchemaNamespace, schemaId: string, ifMatch: string, document: unknown): Promise<void> {
    const checked = this.check(document);
    if (checked.schemaId !== schemaId) throw SchemaRegistryErrors.schemaIdChanged(schemaId, checked.schemaId);
    const version = await this.dataSource.transaction(async (manager) => {
      const row = await this.schemas.lock(manager, namespace, schemaId);
      if (row === undefined) throw SchemaRegistryErrors.notFound(schemaId);
      // A replay (the SDK retries PUT on transport errors) of the document already in place succeeds
      // whatever its tag: the caller's intent is fulfilled and nothing changes.
      if (row.text === checked.text) return undefined;
      assertTagMatches(ifMatch, row.version);
      await this.schemas.update(manager, namespace, schemaId, checked);
      await this.versions.publish(manager, `${namespace}/${schemaId}`);
      return row.version + 1;
    });
    if (version === undefined) return;
    this.versions.evictLocally(`${namespace}/${schemaId}`);
    this.remember(namespace, schemaId, version, checked.validator);
  }

  async view(namespace: SchemaNamespace, schemaId: string): Promise<TaggedResult<Record<string, unknown>>> {
    const row = await this.schemas.document(namespace, schemaId);
    if (row === undefined) throw SchemaRegistryErrors.notFound(schemaId);
    return new TaggedResult(row.document, row.version);
  }

  async list(namespace: SchemaNamespace, query: PageQueryDto): Promise<PageResult<SchemaCommonView>> {
    const page = pageRequestOf(query);
    // '' sorts before every id: schema_id is COLLATE "C", so the keyset order is plain byte order.
    const after = page.cursor === undefined ? '' : decodeCursor(page.cursor, isSchemaCursor).s;
    const rows = await this.schemas.page(namespace, after, page.limit + 1, this.config.pageMaxBytes);
    return keysetPage(
      rows,
      page.limit,
      (row) => encodeCursor({ s: row.schemaID }),
      ({ schemaID, title }) => ({ schemaID, title }),
    );
  }

  /**
   * A caller inside a transaction passes its manager: asking the pool for a second connection while holding
   * one starves the pool under concurrency (every holder waits for a connection none will release).
   */
  async exists(namespace: SchemaNamespace, schemaId: string, manager?: EntityManager): Promise<boolean> {
    return this.schemas.exists(namespace, schemaId, manager);
  }

  /**
   * Validates `instance` (an object `{type, keys, context}`) against the schema's current version.
   * 422 SchemaNotFound if the schema does not exist; 422 SchemaCheckFail with every violation otherwise (at
   * most MAX_REPORTED_VIOLATIONS of them, with `errorCount` when there are more; only the first one for an
   * instance larger than FULL_REPORT_MAX_CHARS).
   */
  async validate(namespace: SchemaNamespace, schemaId: string, instance: unknown): Promise<void> {
    const validator = await this.currentValidator(namespace, schemaId);
    if (validator.firstError(instance)) return;
    if (JSON.stringify(instance).length > FULL_REPORT_MAX_CHARS) {
      const first = (validator.firstError.errors ?? []).map((error) => violationOf(schemaId, error));
      throw SchemaRegistryErrors.checkFailed(schemaId, first, undefined, false);
    }
    validator.allErrors(instance);
    const errors = validator.allErrors.errors ?? [];
    const violations = errors.slice(0, MAX_REPORTED_VIOLATIONS).map((error) => violationOf(schemaId, error));
    throw SchemaRegistryErrors.checkFailed(schemaId, violations, errors.length);
  }

  /**
   * The validator of the current version. The version comes from a cache that a PUT through any instance
   * invalidates (see InvalidatedCache), so the PUT takes effect for the next write; the document is read
   * and compiled only when that version is not compiled yet.
   */
  private async currentValidator(namespace: SchemaNamespace, schemaId: string): Promise<Validator> {
    const key = `${namespace}/${schemaId}`;
    const version = await this.versions.get(key, () => this.schemas.version(namespace, schemaId));
    if (version === undefined) throw SchemaRegistryErrors.schemaNotFound(namespace, schemaId);
    const cached = this.validators.get(key);
    if (cached && cached.version >= version) return cached.validator;
    const row = (await this.schemas.document(namespace, schemaId))!;
    const validator = this.compile(row.document);
    this.remember(namespace, schemaId, row.version, validator);
    return validator;
  }

  private remember(namespace: SchemaNamespace, schemaId: string, version: number, validator: Validator): void {
    const key = `${namespace}/${schemaId}`;
    const cached = this.validators.get(key);
    if (!cached || cached.version < version) this.validators.set(key, { version, validator });
  }

  /** decisions §6: every rule a document must pass before it is stored; any failure is 400 InvalidData. */
  private check(document: unknown): CheckedDocument {
    if (!isPlainObject(document)) throw SchemaRegistryErrors.invalidDocument('the schema document must be a JSON object');
    const schemaId = document.schemaID;
    if (typeof schemaId !== 'string' || !SCHEMA_ID_PATTERN.test(schemaId)) {
      throw SchemaRegistryErrors.invalidDocument(`schemaID must be a string matching ${SCHEMA_ID_PATTERN.source} (URL-safe, at most 128 characters)`);
    }
    if (Object.hasOwn(document, '$schema') && document.$schema !== DRAFT_2020_12) {
      throw SchemaRegistryErrors.invalidDocument(`$schema, when given, must be ${DRAFT_2020_12}`);
    }
    const title = typeof document.title === 'string' ? document.title : '';
    // The title is also kept as text for the list, and PostgreSQL text cannot hold U+0000.
    if (title.includes('\u0000')) throw SchemaRegistryErrors.invalidDocument('title must not contain U+0000');
    return {
      schemaId,
      title,
      text: JSON.stringify(document),
      validator: this.compile(document),
    };
  }

  private compile(document: unknown): Validator {
    // Ajv keeps every compiled document in its instance. removeSchema() is no way out: for a document whose
    // $id is a meta-schema URI it would unregister that meta-schema for every later compile. So the instance
    // is replaced now and then instead; validators compiled by an older one keep working.
    if (++this.compilesOnInstance > COMPILES_PER_INSTANCE) {
      this.ajv = { firstError: createAjv(false), allErrors: createAjv(true) };
      this.compilesOnInstance = 1;
    }
    try {
      const firstError = this.ajv.firstError.compile(document as Record<string, unknown>);
      // An async validator returns a promise, which would pass every object unchecked.
      if ((firstError as { $async?: boolean }).$async) {
        throw SchemaRegistryErrors.invalidDocument('asynchronous schemas ($async) are not supported');
      }
      return { firstError, allErrors: this.ajv.allErrors.compile(document as Record<string, unknown>) };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw SchemaRegistryErrors.invalidDocument(
        `the document does not compile as JSON Schema 2020-12: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
