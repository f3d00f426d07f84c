import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('filebox_upload_session')
export class UploadSessionEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'part_size', type: 'integer' })
  partSize: number;

  /** Set once the session is completed. */
  @Column({ name: 'file_id', type: 'uuid', nullable: true })
  fileId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Idle sessions (decisions §1 UPLOAD_SESSION_TTL_HOURS) are swept by this. */
  @Column({ name: 'last_activity_at', type: 'timestamptz' })
  lastActivityAt: Date;
}
