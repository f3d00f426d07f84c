import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ResourceAction } from '../../common/guard/access.js';

@Entity('auth_permission')
export class PermissionEntity {
  @PrimaryColumn({ name: 'key_id', type: 'integer' })
  keyId: number;

  @PrimaryColumn({ name: 'resource_id', type: 'integer' })
  resourceId: number;

  @Column({ type: 'text', array: true })
  actions: ResourceAction[];
}
