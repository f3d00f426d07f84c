import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { ResourceAction } from '../../common/guard/access.js';

@Entity('auth_request_limit')
@Index('UQ_auth_request_limit_target', ['keyId', 'resourceId', 'action'], { unique: true })
export class RequestLimitEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'key_id', type: 'integer' })
  keyId: number;

  @Column({ name: 'resource_id', type: 'integer' })
  resourceId: number;

  @Column({ type: 'text' })
  action: ResourceAction;

  @Column({ type: 'text' })
  period: 'Day';

  @Column({ name: 'max_requests', type: 'integer' })
  limit: number;
}
