import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { KeyType } from '../../common/indicators/indicators.js';

/** One normalised key of an object; the primary key makes a key belong to at most one object per collection. */
@Entity('intel_object_key')
@Index('IDX_intel_object_key_object', ['objectId'])
export class ObjectKeyEntity {
  @PrimaryColumn({ name: 'collection_id', type: 'integer' })
  collectionId: number;

  @PrimaryColumn({ name: 'key_type', type: 'text' })
  keyType: KeyType;

  @PrimaryColumn({ type: 'text' })
  value: string;

  @Column({ name: 'object_id', type: 'bigint' })
  objectId: string;
}
