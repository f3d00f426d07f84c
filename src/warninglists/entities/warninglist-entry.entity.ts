import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One normalised entry of a list, at its position in the list. */
@Entity('warninglist_entry')
export class WarninglistEntryEntity {
  @PrimaryColumn({ name: 'list_id', type: 'integer' }) listId: number;
  @PrimaryColumn({ type: 'integer' }) position: number;
  @Column({ type: 'text' }) value: string;
}
