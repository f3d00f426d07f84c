import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/errors/api-error.js';
import type { ObjectKey, ObjectType } from '../../common/indicators/indicators.js';
import { mostRestrictive, type TlpRank } from '../../common/markings/tlp.js';
import type { ChangeOperation, RemoveReason } from '../entities/change.entity.js';
import type { ApiClaimFreshness, Expiry, KeyHit } from '../object-rows.js';
import { claimBehind, objectMarking, planAdd, type PreparedObject } from '../object-rules.js';

/** A batch item after the checks that need no lock: what to do, or why it already failed. */
export type PreparedItem =
  { kind: 'add'; object: PreparedObject } | { kind: 'remove'; key: ObjectKey; reason?: RemoveReason } | { kind: 'failed'; error: ApiError };

/** `NotApplied` only in the 422 report of an atomic batch: the item was fine, but another failed. */
export const ITEM_STATUSES = ['Added', 'Updated', 'Unchanged', 'Removed', 'Absent', 'Failed', 'NotApplied'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

export type ItemOutcome = { status: Exclude<ItemStatus, 'Failed'> } | { status: 'Failed'; error: ApiError };

/** A stored object one of the batch's keys belongs to. `context` is the parsed jsonb; its api claim's freshness as read. */
export interface OwningObject extends ApiClaimFreshness {
  id: string;
  type: ObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
  /** Its expiry (ISO text) or null. */
  expiresAt: string | null;
  /** Past its expiry: removed (Expired) before the batch is planned, never one of its owners. */
  expired: boolean;
  /** The time `expired` was judged at (timestamptz as text). */
  decidedAt: string;
  /** Its life's UUID and first add (timestamptz as text, microseconds kept). */
  uid: string;
  addedAt: string;
  /** Its claims' markings (`api_tlp`, `claimed_tlp`; null without such a claim), whose most restrictive is its marking. */
  apiTlp: TlpRank | null;
  claimedTlp: TlpRank | null;
}

/** A change record of the batch, in order: the object's state after it (its last state for a Remove). */
export interface PlannedChange {
  operation: ChangeOperation;
  /** Why a Remove removed (`Deleted` unless the item says otherwise); null for the other operations. */
  reason: RemoveReason | null;
  type: ObjectType;
  keys: ObjectKey[];
  contextJson: string;
  expiry: Expiry;
  /** The object's life; `addedAt` null for an object this batch creates (its statement's time). */
  uid: string;
  addedAt: string | null;
  /** The object's marking after the change (its marking for a Remove) and before it (null for an Add). */
  tlp: TlpRank;
  wasTlp: TlpRank | null;
}

/** What the batch leaves in the tables: the net effect of all its items on every object they touched. */
export interface BatchPlan {
  outcomes: ItemOutcome[];
  changes: PlannedChange[];
  /** Stored objects that end up removed. */
  deletes: string[];
  /**
   * Stored objects that end up with other keys, another context or another api claim; `newKeys` are keys
   * they did not have, `tlp` the marking of their api claim as the items leave it (null: none; written only
   * by a write that claims for the api, see api-claim.ts), `claimedTlp` the marking of their source claims
   * (claimed-marking.ts; null: none).
   */
  updates: {
    id: string;
    keys: ObjectKey[];
    newKeys: ObjectKey[];
    contextJson: string;
    expiry: Expiry;
    tlp: TlpRank | null;
    claimedTlp: TlpRank | null;
  }[];
  /**
   * Stored objects no item changes whose api claim an identical native re-send must still refresh (extensions
   * §18, the anchor; `claimBehind`): no change record.
   */
  refreshes: string[];
  /** Objects created by the batch that still exist at its end; `tlp` and `claimedTlp` as for `updates`. */
  inserts: { type: ObjectType; keys: ObjectKey[]; contextJson: string; expiry: Expiry; uid: string; tlp: TlpRank | null; claimedTlp: TlpRank | null }[];
}

/**
 * The markings of the source claims on keys (BatchRepository.claimMarkings), by key (`type\nvalue`): per key,
 * the most restrictive claim of the collection's sources; a key no source claims is absent.
 */
export type ClaimMarkings = ReadonlyMap<string, TlpRank>;

/** An object as the items see it while the batch is replayed. */
interface Tracked {
  /** The stored id, or `new:<n>` for an object created by this batch. */
  id: string;
  stored: boolean;
  type: ObjectType;
  keys: ObjectKey[];
  storedKeys: ObjectKey[];
  context: unknown;
  contextJson: string;
  expiry: Expiry;
  present: boolean;
  changed: boolean;
  uid: string;
  addedAt: string | null;
  /** The marking of its api claim as the items leave it (null: none, or kept by a source's item) and of its source claims. */
  apiTlp: TlpRank | null;
  claimedTlp: TlpRank | null;
  /** Its api claim as read (null for an object the batch creates), and whether a native item re-sent it unchanged. */
  claim: ApiClaimFreshness | null;
  resent: boolean;
}

const keyId = (key: ObjectKey) => `${key.type}\n${key.value}`;

/**
 * jsonb equality for JSON values that came through JSON.parse (the submitted context and the stored one
 * as the driver parses it): objects equal by their members whatever the order, arrays element by
 * element, numbers by value. That is the `o.context = $ctx::jsonb` test of the single-object pre-check,
 * evaluated without a round trip, since stored contexts were themselves written from JavaScript values.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((value, index) => sameJson(value, other[index]));
  }
  const left = Object.keys(a);
  const right = b as Record<string, unknown>;
  if (left.length !== Object.keys(right).length) return false;
  return left.every((key) => Object.hasOwn(right, key) && sameJson((a as Record<string, unknown>)[key], right[key]));
}

/**
 * Replays the items in order over the stored objects their keys name, with exactly the rules of the
 * single endpoints (`planAdd` for an add; a remove of an absent key is a success without a change), so
 * that two items naming the same object behave as two single requests in that order. Pure: the caller
 * reads `owners` under the collection's exclusive writer lock and writes the returned net effect before
 * releasing it.
 *
 * The markings of the change records are replayed here too, from the owners' claims as read: each record's
 * marking before is the one the previous record of that object left (the stored one for its first), after
 * is the marking of the claims the item leaves (`objectMarking`, the rule of the generated column). Correct
 * under concurrency because every writer of the collection's objects holds its writer lock (single writes
 * shared, batches, runs and the expiry job exclusively) while it writes, and sources' claims change only
 * within a run's transaction, before its items are read: from the read of `owners` to the commit no other
 * transaction can change these rows, so the markings read are those the writes replace, and the plan's last
 * record of each object has the marking its row ends with. An object an item writes takes the marking of the
 * source claims on its keys as they are now (`claims`, read with the owners, those of a run's own claims
 * included, settled before its items are written): so a source's claim raises the Add or Update that
 * writes the object itself, never a later record.
 *
 * `reliability`: the writer's key's (WriteOrigin; null for a source's run), with which an item re-sending a
 * stored object unchanged still refreshes its api claim when it is behind (`refreshes`).
 */
export function planBatch(items: PreparedItem[], owners: OwningObject[], claims: ClaimMarkings, reliability: number | null = null): BatchPlan {
  const byKey = new Map<string, Tracked>();
  const tracked: Tracked[] = [];
  for (const owner of owners) {
    const object: Tracked = {
      id: owner.id,
      stored: true,
      type: owner.type,
      keys: owner.keys,
      storedKeys: owner.keys,
      context: owner.context,
      contextJson: JSON.stringify(owner.context),
      expiry: { at: owner.expiresAt, ttlSeconds: null },
      present: true,
      changed: false,
      uid: owner.uid,
      addedAt: owner.addedAt,
      apiTlp: owner.apiTlp,
      claimedTlp: owner.claimedTlp,
      claim: { apiReliability: owner.apiReliability, apiSeenLately: owner.apiSeenLately },
      resent: false,
    };
    tracked.push(object);
    for (const key of owner.keys) byKey.set(keyId(key), object);
  }
  const byId = new Map(tracked.map((object) => [object.id, object]));
  const changes: PlannedChange[] = [];
  const marking = (object: Tracked) => objectMarking(object.apiTlp, object.claimedTlp);
  const claimedOf = (keys: ObjectKey[]): TlpRank | null => {
    const ranks = keys.map((key) => claims.get(keyId(key)));
    return ranks.some((rank) => rank !== undefined) ? mostRestrictive(ranks) : null;
  };
  /** Records the change that left `object` as it is now; `wasTlp` its marking before (none for an Add). */
  const record = (operation: ChangeOperation, object: Tracked, wasTlp: TlpRank | null, reason: RemoveReason | null = null) =>
    changes.push({
      operation,
      reason,
      type: object.type,
      keys: object.keys,
      contextJson: object.contextJson,
      expiry: object.expiry,
      uid: object.uid,
      addedAt: object.addedAt,
      tlp: marking(object),
      wasTlp,
    });

  const outcomes = items.map((item): ItemOutcome => {
    if (item.kind === 'failed') return { status: 'Failed', error: item.error };
    if (item.kind === 'remove') {
      const object = byKey.get(keyId(item.key));
      if (!object) return { status: 'Absent' };
      for (const key of object.keys) byKey.delete(keyId(key));
      object.present = false;
      record('Remove', object, marking(object), item.reason ?? 'Deleted');
      return { status: 'Removed' };
    }
    const { object: submitted } = item;
    const hitObjects = [...new Set(submitted.keys.map((key) => byKey.get(keyId(key))).filter((o) => o !== undefined))];
    // As the single add decides: a time to live always moves the expiry; a fixed one (or none) is compared.
    const sameExpiry = (o: Tracked) => (submitted.expiry.ttlSeconds !== null ? null : o.expiry.ttlSeconds === null && o.expiry.at === submitted.expiry.at);
    const hits: KeyHit[] = hitObjects.map((o) => ({
      id: o.id,
      keys: o.keys,
      sameContext: sameJson(o.context, submitted.context),
      sameExpiry: sameExpiry(o),
      expired: false,
      apiTlp: o.apiTlp,
    }));
    let write;
    try {
      write = planAdd(submitted, hits);
    } catch (error) {
      if (error instanceof ApiError) return { status: 'Failed', error };
      throw error;
    }
    if (write === null) {
      // A native item's (one with a marking: a source's has none) re-send still anchors the object's api claim.
      if (submitted.tlp !== null) byId.get(hits[0].id)!.resent = true;
      return { status: 'Unchanged' };
    }
    if (write.kind === 'insert') {
      const object: Tracked = {
        id: `new:${tracked.length}`,
        stored: false,
        type: write.type,
        keys: write.keys,
        storedKeys: [],
        context: submitted.context,
        contextJson: write.context,
        expiry: write.expiry,
        present: true,
        changed: true,
        // A new life (a re-add of removed keys included): a new UUID.
        uid: randomUUID(),
        addedAt: null,
        apiTlp: write.tlp,
        claimedTlp: claimedOf(write.keys),
        claim: null,
        resent: false,
      };
      tracked.push(object);
      byId.set(object.id, object);
      for (const key of object.keys) byKey.set(keyId(key), object);
      record('Add', object, null);
      return { status: 'Added' };
    }
    if (write.kind !== 'update') throw new Error(`planAdd returned a ${write.kind}`);
    const object = byId.get(write.objectId)!;
    const wasTlp = marking(object);
    Object.assign(object, { keys: write.keys, context: submitted.context, contextJson: write.context, expiry: write.expiry, changed: true });
    // A source's item (no marking) leaves the api claim as it is.
    if (write.tlp !== null) object.apiTlp = write.tlp;
    object.claimedTlp = claimedOf(object.keys);
    for (const key of write.newKeys) byKey.set(keyId(key), object);
    record('Update', object, wasTlp);
    return { status: 'Updated' };
  });

  const plan: BatchPlan = { outcomes, changes, deletes: [], updates: [], refreshes: [], inserts: [] };
  for (const object of tracked) {
    if (object.stored && !object.present) plan.deletes.push(object.id);
    else if (object.stored && object.changed) {
      const had = new Set(object.storedKeys.map(keyId));
      const newKeys = object.keys.filter((key) => !had.has(keyId(key)));
      const { keys, contextJson, expiry, apiTlp: tlp, claimedTlp } = object;
      plan.updates.push({ id: object.id, keys, newKeys, contextJson, expiry, tlp, claimedTlp });
    } else if (object.present && object.resent && object.claim !== null && reliability !== null && claimBehind(object.claim, reliability)) {
      plan.refreshes.push(object.id);
    } else if (!object.stored && object.present) {
      const { type, keys, contextJson, expiry, uid, apiTlp: tlp, claimedTlp } = object;
      plan.inserts.push({ type, keys, contextJson, expiry, uid, tlp, claimedTlp });
    }
  }
  return plan;
}
