import type { ObjectKey, ObjectType } from '../common/indicators/indicators.js';
import { tlpOf, type Tlp, type TlpRank } from '../common/markings/tlp.js';
import type { ChangeOperation, RemoveReason } from './entities/change.entity.js';

/**
 * The shapes the objects' repositories share: what the add and delete rules read and write
 * (objects.repository.ts), what a write or an expiry recorded (object-expiry.repository.ts), and the object
 * view of a stored row, for every reader of objects.
 */

/** An existing object that one of the submitted keys points at. */
export interface KeyHit {
  id: string;
  keys: ObjectKey[];
  /** Its stored context equals the submitted one (jsonb equality); null when no context was given. */
  sameContext: boolean | null;
  /** Its expiry equals the submitted fixed one (both none included); null when the add moves it (a TTL). */
  sameExpiry: boolean | null;
  /** Past its expiry: logically gone, removed (Remove, Expired) before anything else is decided. */
  expired: boolean;
  /** The marking of its api claim (`api_tlp`); null while no native write claims it. */
  apiTlp: TlpRank | null;
}

/**
 * An object's api claim as a decision reads it (API_CLAIM_FRESHNESS of api-claim.ts), to tell whether an
 * identical native re-send must still refresh it: its reliability, and whether it was seen within the hour.
 */
export interface ApiClaimFreshness {
  apiReliability: number | null;
  apiSeenLately: boolean | null;
}

/** A key hit as read for a decision, with the time its `expired` was judged at (timestamptz as text: microseconds kept). */
export type JudgedHit = KeyHit & ApiClaimFreshness & { decidedAt: string };

/**
 * When a written object expires: at a fixed moment (its own `expiresAt`, ISO text), `ttlSeconds` after the
 * write (the collection's time to live), or never (both null).
 */
export interface Expiry {
  at: string | null;
  ttlSeconds: number | null;
}

/**
 * One write of the object add/delete rules; `context` is JSON text, `tlp` the marking of the api claim it
 * makes (null for a write that makes none: a source's, see api-claim.ts).
 */
export type ObjectWrite =
  | { kind: 'insert'; type: ObjectType; keys: ObjectKey[]; context: string; expiry: Expiry; tlp: TlpRank | null }
  | {
      kind: 'update';
      objectId: string;
      keys: ObjectKey[];
      newKeys: ObjectKey[];
      context: string;
      expiry: Expiry;
      tlp: TlpRank | null;
      /** The object's keys the update was decided on: it is written only while they are still its keys. */
      decidedOnKeys: ObjectKey[];
    }
  | { kind: 'remove'; key: ObjectKey; uid?: string };

/** The write of an add (ObjectWrite without the remove). */
export type AddWrite = Exclude<ObjectWrite, { kind: 'remove' }>;

export interface StoredObject {
  type: ObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds; absent when the object never expires. */
  expiresAt?: string;
}

/** A change record as written, for what is announced after the commit. */
export interface WrittenChange {
  operation: ChangeOperation;
  object: StoredObject;
  /** Set on `Remove` only. */
  reason?: RemoveReason;
}

/** A written object's columns as the statements return them. */
export interface RawObject {
  type: ObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
  expiresAt: string | null;
}

/** The object view of a row: fields in the view's order (type, keys, context, expiresAt when set). */
export function storedObject({ type, keys, context, expiresAt }: RawObject | StoredObject): StoredObject {
  return { type, keys, context, ...(expiresAt != null && { expiresAt }) };
}

/** A live object's row as readers select it: its columns and its marking (`tlp`, a rank). */
export type MarkedRow = RawObject & { tlp: number };

/** A live object as readers answer it (listings, network search, lookups, provenance): the stored object and its marking. */
export type ObjectView = StoredObject & { tlp: Tlp };

export function objectView(row: (RawObject | StoredObject) & { tlp: number }): ObjectView {
  return { ...storedObject(row), tlp: tlpOf(row.tlp) };
}

/**
 * A live object's row with its score (extensions §18: computed by the statement that read the row, at the request's
 * `scoreAt` or time), as the listing and lookups read it.
 */
export type ScoredRow = MarkedRow & { score: number };

/** The view of a scored row (listings, lookups): the object view and its score. Not the feed's, history's or exports' (scores move with time). */
export type ScoredView = ObjectView & { score: number };

export function scoredView(row: ScoredRow): ScoredView {
  return { ...objectView(row), score: row.score };
}
