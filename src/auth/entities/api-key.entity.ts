import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('auth_api_key')
export class ApiKeyEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  /** SHA-256 of the key value; the value itself is never stored. */
  @Column({ name: 'key_hash', type: 'bytea', unique: true })
  keyHash: Buffer;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
