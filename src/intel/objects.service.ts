import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { KEY_TYPES, normalizeKey, normalizeKeySet, type ObjectKey } from '../common/indicators/indicators.js';
import type { ObjectFormDto } from '../common/indicators/object-form.dto.js';
import { afterIdFromCursor, sliceAfterId } from '../common/pagination/cursor.js';
import { type PageQueryDto, PageResult, pageRequestOf } from '../common/pagination/page.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import { encodeChangesCursor } from './changes.service.js';
import { CollectionsService } from './collections.service.js';
import type { DeleteObjectQueryDto, ObjectView } from './dto/object.dto.js';
import { type KeyHit, type ObjectWrite, ObjectsRepository } from './objects.repository.js';
import { ObjectErrors } from './objects.errors.js';

/** Keys in one stable order (a File has at most one key per hash type, so the type alone orders them). */
function sortKeys(keys: ObjectKey[]): ObjectKey[] {
  return [...keys].sort((a, b) => KEY_TYPES.indexOf(a.type) - KEY_TYPES.indexOf(b.type));
}

/**
 * PostgreSQL's jsonb refuses `\u0000` and unpaired surrogates, which JSON (and JSON.stringify) allow.
 * Matches such an escape in JSON.stringify output, i.e. one not itself escaped by a backslash.
 */
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * The decisions §7 add rules for an object with normalised `keys`, given the objects those keys already
 * belong to: the write to make, or null when the add changes nothing.
 */
function planAdd(form: ObjectFormDto, keys: ObjectKey[], context: string, hits: KeyHit[]): ObjectWrite | null {
  if (hits.length === 0) return { kind: 'insert', type: form.type, keys, context };
  if (hits.length > 1) throw ObjectErrors.keySetConflict('the keys belong to two or more different objects');
  const [hit] = hits;
  const clash = keys.find((key) => hit.keys.some((own) => own.type === key.type && own.value !== key.value));
  if (clash) {
    throw ObjectErrors.keySetConflict(`the object already has a different ${clash.type} key than "${clash.value}"`);
  }
  const newKeys = keys.filter((key) => !hit.keys.some((own) => own.type === key.type));
  if (newKeys.length === 0 && hit.sameContext) return null;
  return { kind: 'update', objectId: hit.id, keys: sortKeys([...hit.keys, ...newKeys]), newKeys, context };
}

@Injectable()
export class ObjectsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: ObjectsRepository,
    private readonly collections: CollectionsService,
    private readonly schemas: SchemaRegistryService,
  ) {}

  /**
   * Add or upsert. The schema check runs on the submitted object (normalised keys, new context), before
   * any lock: the stored object differs from it only by keys it already had, which passed the key-set
   * rules, and error locations then point into what the client sent.
   */
  async add(collectionName: string, form: ObjectFormDto): Promise<void> {
    // 404 first, as for the change feed: an unknown collection is not a question of the object's keys.
    const collection = await this.collections.findByName(collectionName);
    const keys = sortKeys(normalizeKeySet(form.type, form.keys));
    const context = JSON.stringify(form.context);
    if (UNSTORABLE_ESCAPE.test(context)) throw ObjectErrors.unstorableContext();
    await this.schemas.validate('intel', collection.schemaId, { type: form.type, keys, context: form.context });

    // Unlocked pre-check: when the current committed state already makes this add a no-op (an identical
    // re-send) or a conflict, answer now without taking the collection lock. That is safe because the
    // request may be ordered at the moment of this read: a serial execution at that point would have
    // produced exactly this answer and no change record.
    const hits = await this.repository.findHits(this.dataSource, collection.id, keys, context);
    const planned = planAdd(form, keys, context, hits);
    if (planned === null) return;
    if (planned.kind === 'insert' && (await this.repository.insertIfKeysFree(collection.id, planned))) return;

    await this.dataSource.transaction(async (manager) => {
      await this.repository.lockCollection(manager, collection.id);
      // Decided again under the lock: another writer may have changed these objects since the pre-check.
      const write = planAdd(form, keys, context, await this.repository.findHits(manager, collection.id, keys, context));
      if (write) await this.repository.write(manager, collection.id, write);
    });
  }

  /** Idempotent: an absent object is a success with no change record. */
  async remove(collectionName: string, query: DeleteObjectQueryDto): Promise<void> {
    const collection = await this.collections.findByName(collectionName);
    const key = normalizeKey({ type: query.objectKeyType, value: query.objectKey });
    // Same reasoning as the add pre-check: absent now means the delete may be ordered now, as a no-op.
    if ((await this.repository.findHits(this.dataSource, collection.id, [key], null)).length === 0) return;
    // One statement: it takes the collection lock first, and if a concurrent delete won the race it
    // deletes and records nothing (the sequence number it took is then simply unused).
    await this.repository.write(this.dataSource, collection.id, { kind: 'remove', key });
  }

  /** Keyset pages in insertion order; the first page also carries the changes cursor of its snapshot. */
  async list(collectionName: string, query: PageQueryDto): Promise<PageResult<ObjectView>> {
    const page = pageRequestOf(query);
    const collection = await this.collections.findByName(collectionName);
    const afterId = afterIdFromCursor(page.cursor);
    const { lastSeq, rows } = await this.repository.listPage(collection.id, afterId, page.limit + 1);
    const { items, next } = sliceAfterId(rows, page.limit, (row) => Number(row.position));
    const views = items.map(({ type, keys, context }) => ({ type, keys, context }));
    const related =
      page.cursor === undefined
        ? { path: `/intel/collections/${collection.name}/objects/changes`, cursor: encodeChangesCursor(collection.id, lastSeq) }
        : undefined;
    return new PageResult(views, next, related);
  }
}
