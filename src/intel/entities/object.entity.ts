import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { ObjectKey, ObjectType } from '../../common/indicators/indicators.js';

/** An indicator object of a collection. Written only through ObjectsRepository's SQL. */
@Entity('intel_object')
@Index('IDX_intel_object_collection_id', ['collectionId', 'id'])
export class ObjectEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'collection_id', type: 'integer' })
  collectionId: number;

  @Column({ type: 'text' })
  type: ObjectType;

  /** The view's key array, kept in step with intel_object_key so that listing needs no join. */
  @Column({ type: 'jsonb' })
  keys: ObjectKey[];

  @Column({ type: 'jsonb' })
  context: Record<string, unknown>;

  /** Past this moment the object is gone (hidden at once, removed by the expiry job); null: never. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  /** The UUID of this life of the object (a re-add after a removal or an expiry is a new life): its STIX indicator id. */
  @Column({ type: 'uuid', default: () => 'gen_random_uuid()' })
  uid: string;

  /** The first add of this life. */
  @Column({ name: 'added_at', type: 'timestamptz', default: () => 'now()' })
  addedAt: Date;

  /** The api claim (extensions §13 "Claims"): the first and last native write that added or updated it; null: no api claim. */
  @Column({ name: 'api_first_seen_at', type: 'timestamptz', nullable: true })
  apiFirstSeenAt: Date | null;

  @Column({ name: 'api_last_seen_at', type: 'timestamptz', nullable: true })
  apiLastSeenAt: Date | null;
}
