import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A protected resource: the six built-ins of decisions §3, plus one child of `intel` per collection. */
@Entity('auth_resource')
@Index('UQ_auth_resource_parent_name', ['parentId', 'name'], { unique: true })
export class ResourceEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'parent_id', type: 'integer', nullable: true })
  parentId: number | null;
}
