import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Requests counted against one limit in one UTC day window. */
@Entity('auth_request_count')
export class RequestCountEntity {
  @PrimaryColumn({ name: 'limit_id', type: 'integer' })
  limitId: number;

  @PrimaryColumn({ name: 'window_start', type: 'date' })
  windowStart: string;

  @Column({ type: 'integer' })
  count: number;

  /** Units the last grant added (read back by the granting statement itself). */
  @Column({ type: 'integer', default: 0 })
  granted: number;

  /** Until when (database clock) an instance may still spend units of this counter granted ahead of use. */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;
}
