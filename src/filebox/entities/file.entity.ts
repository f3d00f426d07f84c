import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A stored file's metadata; its content is the storage blob keyed by `id`, or its part blobs. */
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

  /** Set for a file assembled from a session: its content is these part blobs, each `partSize` bytes but the last. */
  @Column({ name: 'part_size', type: 'integer', nullable: true })
  partSize: number | null;

  @Column({ name: 'part_keys', type: 'uuid', array: true, nullable: true })
  partKeys: string[] | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
