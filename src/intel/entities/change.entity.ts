import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import type { WriteVia } from '../write-origin.js';

export const CHANGE_OPERATIONS = ['Add', 'Update', 'Remove'] as const;
export type ChangeOperation = (typeof CHANGE_OPERATIONS)[number];

/**
 * Why an object was removed: an explicit delete, its expiry, the end of its last claim (extensions §13), or its
 * score below its collection's threshold with `decayedAction: expire` (extensions §18).
 */
export const REMOVE_REASONS = ['Deleted', 'Expired', 'Withdrawn', 'Decayed'] as const;
export type RemoveReason = (typeof REMOVE_REASONS)[number];

/**
 * Why the feed shows a key a `Remove`: a stored reason, or `Restricted`, the record that raised the object above
 * the key's `maxTLP` (extensions §19), which only the key's ceiling makes a removal: never stored.
 */
export const FEED_REMOVE_REASONS = [...REMOVE_REASONS, 'Restricted'] as const;
export type FeedRemoveReason = (typeof FEED_REMOVE_REASONS)[number];

/**
 * One change-feed record. `id` is drawn when the record is written; `seq`, its position in the
 * collection's feed, is given by the sequencer once the record has committed (null until then).
 */
@Entity('intel_change')
@Index('IDX_intel_change_created_at', ['createdAt'])
@Unique('UQ_intel_change_collection_seq', ['collectionId', 'seq'])
export class ChangeEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'collection_id', type: 'integer' })
  collectionId: number;

  @Column({ type: 'bigint', nullable: true })
  seq: string | null;

  @Column({ type: 'text' })
  operation: ChangeOperation;

  /** The object view after the change (the last state for Remove). */
  @Column({ type: 'jsonb' })
  object: Record<string, unknown>;

  /** Set on Remove records (null on those written before reasons were recorded: deletes). */
  @Column({ type: 'text', nullable: true })
  reason: RemoveReason | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** The object's life (intel_object.uid) and its first add. */
  @Column({ name: 'object_uid', type: 'uuid' })
  objectUid: string;

  @Column({ name: 'object_added_at', type: 'timestamptz' })
  objectAddedAt: Date;

  /** Attribution (extensions §14, see WriteOrigin); null on records written before it was recorded. */
  @Column({ type: 'text', nullable: true })
  via: WriteVia | null;

  @Column({ name: 'key_id', type: 'integer', nullable: true })
  keyId: number | null;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId: string | null;

  @Column({ type: 'text', nullable: true })
  source: string | null;

  /** The position's time, given with `seq` by the sequencer: strictly increasing per collection. */
  @Column({ name: 'seq_at', type: 'timestamptz', nullable: true })
  seqAt: Date | null;
}
