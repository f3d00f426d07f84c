import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A collection of indicator objects, tied to one intel schema and guarded by its own auth resource. */
@Entity('intel_collection')
export class CollectionEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'text', unique: true })
  name: string;

  @Column({ name: 'schema_id', type: 'text' })
  schemaId: string;

  /** The tag: `"<version>"`; incremented when the schema changes. */
  @Column({ type: 'integer' })
  version: number;

  /** The collection's resource (a child of `intel`), which permissions on the collection refer to. */
  /** Objects without their own expiresAt expire this long after their last add; null: never. */
  @Column({ name: 'object_ttl_seconds', type: 'integer', nullable: true })
  objectTtlSeconds: number | null;

  /** The marking (a TLP rank, 0 CLEAR … 4 RED) of native writes that name none. */
  @Column({ name: 'default_tlp', type: 'smallint', default: 0 })
  defaultTlp: number;

  @Column({ name: 'resource_id', type: 'integer', unique: true })
  resourceId: number;

  /** The collection's TAXII 2.1 id, fixed at registration. */
  @Column({ name: 'taxii_id', type: 'uuid', unique: true, default: () => 'gen_random_uuid()' })
  taxiiId: string;

  /** The time of the last feed position given (see ChangeSequencer). */
  @Column({ name: 'last_seq_at', type: 'timestamptz', default: () => 'now()' })
  lastSeqAt: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
