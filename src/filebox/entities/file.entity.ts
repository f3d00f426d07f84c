import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A stored file's metadata; its content is the storage blob keyed by `id`. */
@Entity('filebox_file')
export class FileEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  /** Last path segment of the uploaded file name; null for files assembled from a session. */
  @Column({ type: 'text', nullable: true })
  name: string | null;

  /** bigint: pg returns it as a string. */
  @Column({ type: 'bigint' })
  size: string;

  @Column({ type: 'bytea' })
  md5: Buffer;

  @Column({ type: 'bytea' })
  sha1: Buffer;

  @Column({ type: 'bytea' })
  sha256: Buffer;

  @Column({ type: 'bytea' })
  sha512: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
