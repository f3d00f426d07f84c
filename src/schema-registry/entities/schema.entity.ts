import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A registered JSON Schema document, intel and insight in separate namespaces. `document` is `json`, not
 * `jsonb`: jsonb reorders keys, and GET must return the document as registered (decisions §6).
 */
@Entity('schemas')
export class SchemaEntity {
  @PrimaryColumn({ type: 'text' })
  namespace: 'intel' | 'insight';

  @PrimaryColumn({ name: 'schema_id', type: 'text' })
  schemaId: string;

  @Column({ type: 'json' })
  document: Record<string, unknown>;

  /** The tag: `"<version>"`; incremented on every real change. */
  @Column({ type: 'integer' })
  version: number;

  /** The document's `title`, or '' (the list view always carries one). */
  @Column({ type: 'text' })
  title: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
