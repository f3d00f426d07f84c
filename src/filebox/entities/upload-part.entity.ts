import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('filebox_upload_part')
export class UploadPartEntity {
  @PrimaryColumn({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @PrimaryColumn({ type: 'integer' })
  number: number;

  @Column({ type: 'integer' })
  size: number;

  /** Storage blob of this upload of the part; a re-upload gets a new key. */
  @Column({ name: 'storage_key', type: 'uuid' })
  storageKey: string;

  @Column({ name: 'uploaded_at', type: 'timestamptz' })
  uploadedAt: Date;
}
