import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { normalizeKey, type ObjectKey } from '../common/indicators/indicators.js';
import type { TlpRank } from '../common/markings/tlp.js';
import { afterIdCursor, afterIdFromCursor } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../common/pagination/page.js';
import type { ReadPolicy } from '../read-policy/read-policy.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import { WarninglistMatcherService } from '../warninglists/warninglist-matcher.service.js';
import { ChangeSequencer } from './change-sequencer.js';
import { ChangesService, encodeChangesCursor } from './changes.service.js';
import { CollectionsService, type CollectionRecord } from './collections.service.js';
import type { DeleteObjectQueryDto, ListObjectsQueryDto, ObjectAddDto, ScoredObjectView } from './dto/object.dto.js';
import { ObjectExpiryRepository } from './object-expiry.repository.js';
import { ObjectFeedRepository } from './object-feed.repository.js';
import { scoredView, type JudgedHit, type WrittenChange } from './object-rows.js';
import { addOutcome, claimBehind, planAdd, prepareObject, schemaInstance, tlpParameter, type AddOutcome, type PreparedObject } from './object-rules.js';
import { ObjectsRepository } from './objects.repository.js';
import { EXTENSION_ORIGIN, type WriteOrigin } from './write-origin.js';

/**
 * Decisions of one add under the collection's exclusive lock: the second one finds expired what expired
 * after the first (the only change possible under the lock), so a third is needed only if the wall clock
 * was set back in between; after that the add fails rather than loop.
 */
const DECISIONS_UNDER_LOCK = 3;

@Injectable()
export class ObjectsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: ObjectsRepository,
    private readonly expiry: ObjectExpiryRepository,
    private readonly feed: ObjectFeedRepository,
    private readonly collections: CollectionsService,
    private readonly schemas: SchemaRegistryService,
    private readonly changes: ChangesService,
    private readonly sequencer: ChangeSequencer,
    private readonly warninglists: WarninglistMatcherService,
  ) {}

  /**
   * Add or upsert (decisions §7), and what it did. `Unchanged` (an identical re-send, its marking included)
   * writes no change record; the answer to the client is the same whatever the outcome. `tlp`: the request's
   * marking (its `tlp` parameter, unchecked: 400 InvalidData for anything but a TLP level); absent, the
   * collection's `defaultTLP`.
   */
  add(origin: WriteOrigin, collectionName: string, form: ObjectAddDto, tlp?: unknown): Promise<AddOutcome>;
  /** The add of an extension module (src/extensions), recorded as `via: 'extension'`, marked with the collection's `defaultTLP`. */
  add(collectionName: string, form: ObjectAddDto): Promise<AddOutcome>;
  add(...args: [WriteOrigin, string, ObjectAddDto, unknown?] | [string, ObjectAddDto]): Promise<AddOutcome> {
    return typeof args[0] === 'string'
      ? this.addAs(EXTENSION_ORIGIN, args[0], args[1] as ObjectAddDto)
      : this.addAs(...(args as [WriteOrigin, string, ObjectAddDto, unknown?]));
  }

  private async addAs(origin: WriteOrigin, collectionName: string, form: ObjectAddDto, tlp?: unknown): Promise<AddOutcome> {
    const marking = tlpParameter(tlp);
    // 404 first, as for the change feed: an unknown collection is not a question of the object's keys.
    const collection = await this.collections.findByName(collectionName);
    const object = await this.prepare(collection, form, marking ?? collection.defaultTlp);
    const { keys, contextJson } = object;
    const [refused] = await this.warninglists.refusals([keys]);
    if (refused) throw refused;

    // Unlocked pre-check: when the current committed state already makes this add a no-op (an identical
    // re-send) or a conflict, answer now without taking the collection's writer lock. That is safe because
    // the request may be ordered at the moment of this read: a serial execution at that point would have
    // produced exactly this answer and no change record.
    // A key of an expired object needs the lock: that object is removed (Expired) first.
    const hits = await this.repository.findHits(this.dataSource, collection.id, keys, contextJson, object.expiry);
    if (!hits.some((hit) => hit.expired)) {
      const planned = planAdd(object, hits);
      if (planned === null) {
        const refreshing = this.refreshing(origin, object, hits[0]);
        if (refreshing !== null)
          await this.dataSource.transaction((manager) => this.repository.refreshClaims(manager, collection.id, [hits[0].id], refreshing));
        return 'Unchanged';
      }
      // An insert or update written only if what it was decided on still holds (under the object's row
      // lock and the keys' rows, beside other single writers): the request is then ordered at its write.
      const written = await this.repository.writeAsDecided(origin, collection.id, planned);
      if (written) {
        this.changes.announce(collection, [written]);
        return addOutcome(planned);
      }
    }

    const { outcome, written } = await this.dataSource.transaction(async (manager) => {
      await this.repository.lockCollection(manager, collection.id);
      const removed: WrittenChange[] = [];
      // Decided again under the lock: another writer may have changed these objects since the pre-check.
      // Under the lock only time still changes them: an object live at the decision may have expired when
      // its update holds the row, which then writes nothing; the next decision finds it expired.
      for (let decision = 1; decision <= DECISIONS_UNDER_LOCK; decision++) {
        const current = await this.repository.findHits(manager, collection.id, keys, contextJson, object.expiry);
        removed.push(...(await this.expireHits(manager, origin, collection.id, current)));
        const live = current.filter((hit) => !hit.expired);
        const write = planAdd(object, live);
        if (write === null) {
          const refreshing = this.refreshing(origin, object, live[0]);
          if (refreshing !== null) await this.repository.refreshClaims(manager, collection.id, [live[0].id], refreshing);
          return { outcome: addOutcome(write), written: removed };
        }
        const change = await this.repository.write(manager, origin, collection.id, write);
        if (change) return { outcome: addOutcome(write), written: [...removed, change] };
      }
      // Otherwise the statement's conditions and planAdd's disagree: a bug, and answering it as done would
      // lose an acknowledged write.
      throw new Error('an add decided under the collection writer lock wrote nothing');
    });
    this.changes.announce(collection, written);
    return outcome;
  }

  /**
   * The reliability with which an identical re-send (planAdd found nothing to write on `hit`) must still refresh
   * the object's api claim, or null when it need not: a native write whose key is more reliable, or that comes
   * more than an hour after the claim's last time (extensions §18, the anchor). The common re-send sends nothing.
   */
  private refreshing(origin: WriteOrigin, object: PreparedObject, hit: JudgedHit): number | null {
    const { reliability } = origin;
    return reliability !== null && object.tlp !== null && claimBehind(hit, reliability) ? reliability : null;
  }

  /**
   * Under the collection's exclusive writer lock: removes (Remove, Expired) the expired objects among `hits`, so that their
   * keys are free and a re-add creates the object anew (`Add`). Shared with batches.
   */
  async expireHits(
    manager: EntityManager,
    origin: WriteOrigin,
    collectionId: number,
    hits: { id: string; expired: boolean; decidedAt: string }[],
  ): Promise<WrittenChange[]> {
    const expired = hits.filter((hit) => hit.expired);
    if (expired.length === 0) return [];
    return this.expiry.expire(
      manager,
      origin,
      collectionId,
      expired.map((hit) => hit.id),
      expired.length,
      expired[0].decidedAt,
    );
  }

  /**
   * Everything of an add that needs no lock, for single adds and batch items alike: normalisation and the
   * schema check. The check runs on the submitted object (normalised keys, new context): the stored
   * object differs from it only by keys it already had, which passed the key-set rules, and error
   * locations then point into what the client sent. `tlp`: the write's marking (PreparedObject.tlp).
   */
  async prepare(collection: CollectionRecord, form: ObjectAddDto, tlp: TlpRank | null): Promise<PreparedObject> {
    const object = prepareObject(form, collection.objectTtlSeconds, tlp);
    await this.schemas.validate('intel', collection.schemaId, schemaInstance(object));
    return object;
  }

  /** Idempotent: an absent object is a success with no change record. */
  remove(origin: WriteOrigin, collectionName: string, query: DeleteObjectQueryDto): Promise<void>;
  /** The delete of an extension module (src/extensions), recorded as `via: 'extension'`. */
  remove(collectionName: string, query: DeleteObjectQueryDto): Promise<void>;
  remove(...args: [WriteOrigin, string, DeleteObjectQueryDto] | [string, DeleteObjectQueryDto]): Promise<void> {
    return args.length === 2 ? this.removeAs(EXTENSION_ORIGIN, ...args) : this.removeAs(...args);
  }

  private async removeAs(origin: WriteOrigin, collectionName: string, query: DeleteObjectQueryDto): Promise<void> {
    const collection = await this.collections.findByName(collectionName);
    const key = normalizeKey({ type: query.objectKeyType, value: query.objectKey });
    // Same reasoning as the add pre-check: absent now means the delete may be ordered now, as a no-op.
    // An expired object is absent already (its Remove, Expired, comes from the expiry job).
    const hits = await this.repository.findHits(this.dataSource, collection.id, [key], null);
    if (hits.every((hit) => hit.expired)) return;
    // One statement under the shared writer lock: if a concurrent delete won the race it deletes and
    // records nothing.
    const removed = await this.repository.write(this.dataSource, origin, collection.id, { kind: 'remove', key });
    if (removed) this.changes.announce(collection, [removed]);
  }

  /**
   * Deletes the live object of one life (a standard feed names objects by it): `false` when that life has
   * ended. The delete statement checks the life itself, so a key re-added meanwhile (a new life) is kept.
   */
  async removeLife(origin: WriteOrigin, collectionName: string, uid: string): Promise<boolean> {
    const collection = await this.collections.findByName(collectionName);
    const keys = await this.repository.keysOfLife(collection.id, uid);
    if (keys === undefined) return false;
    const removed = await this.repository.write(this.dataSource, origin, collection.id, { kind: 'remove', key: keys[0], uid });
    if (removed) this.changes.announce(collection, [removed]);
    return removed !== null;
  }

  /** Whether a live object of the collection holds any of these keys (normalised here: InvalidKeyFormat). */
  async holdsAnyKey(collectionName: string, keys: ObjectKey[]): Promise<boolean> {
    const collection = await this.collections.findByName(collectionName);
    const hits = await this.repository.findHits(this.dataSource, collection.id, keys.map(normalizeKey), null);
    return hits.some((hit) => !hit.expired);
  }

  /**
   * Keyset pages in insertion order; the first page also carries the changes cursor of its snapshot
   * (decisions §8: the page plus the changes after the cursor make the collection, exactly). When its
   * snapshot holds changes not numbered yet, the page is read again by a statement that numbers them in
   * the same snapshot (ChangeSequencer.numberAndRead), so that the cursor follows exactly what the page shows;
   * it carries the page's marking ceiling too, so that the feed goes on with what the listing showed.
   */
  async list(policy: ReadPolicy, collectionName: string, query: ListObjectsQueryDto): Promise<PageResult<ScoredObjectView>> {
    const page = pageRequestOf(query);
    const collection = await this.collections.findByName(collectionName);
    const afterId = afterIdFromCursor(page.cursor);
    let listed = await this.feed.listPage(policy, collection.id, afterId, page.limit + 1);
    if (page.cursor === undefined && listed.pending) {
      listed = await this.sequencer.numberAndRead(collection.id, (manager, ctes) =>
        this.feed.listPage(policy, collection.id, afterId, page.limit + 1, { manager, ctes }),
      );
    }
    const { lastSeq, rows } = listed;
    const related =
      page.cursor === undefined
        ? { path: `/intel/collections/${collection.name}/objects/changes`, cursor: encodeChangesCursor(collection.id, lastSeq, policy.ceiling) }
        : undefined;
    return keysetPage(rows, page.limit, (row) => afterIdCursor(Number(row.position)), scoredView, related);
  }
}
