import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A warninglist's settings (migration Warninglists); its entries are `warninglist_entry` rows. */
@Entity('warninglist')
export class WarninglistEntity {
  @PrimaryColumn({ type: 'integer' }) id: number;
  @Column({ type: 'text', unique: true }) name: string;
  @Column({ type: 'text' }) description: string;
  @Column({ type: 'text' }) kind: string;
  @Column({ name: 'key_types', type: 'text', array: true, nullable: true }) keyTypes: string[] | null;
  @Column({ type: 'text' }) action: string;
  @Column({ type: 'boolean' }) enabled: boolean;
  @Column({ type: 'text', nullable: true }) version: string | null;
  @Column({ name: 'document_sha256', type: 'text', nullable: true }) documentSha256: string | null;
  @Column({ name: 'entry_count', type: 'integer' }) entryCount: number;
  /** Moves with every change (the list's tag); from the sequence warninglist_revision. */
  @Column({ type: 'bigint' }) revision: string;
  /** Moves when the entries are replaced: compiled entries are cached by it. */
  @Column({ name: 'entries_revision', type: 'bigint' }) entriesRevision: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
