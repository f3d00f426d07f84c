import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export const CHANGE_OPERATIONS = ['Add', 'Update', 'Remove'] as const;
export type ChangeOperation = (typeof CHANGE_OPERATIONS)[number];

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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
