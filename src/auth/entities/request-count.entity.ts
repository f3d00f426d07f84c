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
}
