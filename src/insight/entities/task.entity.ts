import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { InsightObjectType, ObjectKey } from '../../common/indicators/index.js';

export const TASK_STATES = ['Pending', 'Completed', 'Failed'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export interface TaskResult {
  type: InsightObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
}

/**
 * An enrichment task. `object_keys` and `result` are `json`, not `jsonb`: nothing queries inside them,
 * `json` is cheaper to write on the hot completion path and keeps the submitted key order.
 */
@Entity('insight_task')
export class TaskEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'schema_id', type: 'text' })
  schemaId: string;

  /** Normalised keys; null when the task names only a file. */
  @Column({ name: 'object_keys', type: 'json', nullable: true })
  objectKeys: ObjectKey[] | null;

  @Column({ name: 'file_id', type: 'uuid', nullable: true })
  fileId: string | null;

  /** Stays `Pending` while leased (decisions §9). */
  @Column({ type: 'text' })
  state: TaskState;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** How many times the task was taken from the queue. */
  @Column({ type: 'integer' })
  deliveries: number;

  /** End of the current (or last) lease; null until first taken. */
  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt: Date | null;

  @Column({ type: 'json', nullable: true })
  result: TaskResult | null;

  @Column({ name: 'error_code', type: 'text', nullable: true })
  errorCode: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage: string | null;
}
