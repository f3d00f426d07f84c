import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export const CHANGE_OPERATIONS = ['Add', 'Update', 'Remove'] as const;
export type ChangeOperation = (typeof CHANGE_OPERATIONS)[number];

/** Why an object was removed: an explicit delete, or its expiry. */
export const REMOVE_REASONS = ['Deleted', 'Expired'] as const;
export type RemoveReason = (typeof REMOVE_REASONS)[number];

/** One change-feed record; `seq` is the collection's commit-ordered sequence number. */
@Entity('intel_change')
@Index('IDX_intel_change_created_at', ['createdAt'])
export class ChangeEntity {
  @PrimaryColumn({ name: 'collection_id', type: 'integer' })
  collectionId: number;

  @PrimaryColumn({ type: 'bigint' })
  seq: string;

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
}
