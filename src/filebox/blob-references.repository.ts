import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** Which stored blobs the file and part rows refer to (the storage sweep's question). */
@Injectable()
export class BlobReferencesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The keys no file or session part refers to. One statement, one snapshot: session completion moves a
   * session's keys from its part rows to its file row in one transaction, so a key being moved is seen in
   * one place or the other, never in neither.
   */
  async unreferenced(keys: string[]): Promise<string[]> {
    const rows: { key: string }[] = await this.dataSource.query(
      `SELECT k::text AS key FROM unnest($1::uuid[]) AS k
        WHERE NOT EXISTS (SELECT 1 FROM filebox_file f WHERE f.id = k)
          AND NOT EXISTS (SELECT 1 FROM filebox_file f WHERE f.part_keys @> ARRAY[k])
          AND NOT EXISTS (SELECT 1 FROM filebox_upload_part p WHERE p.storage_key = k)`,
      [keys],
    );
    return rows.map((row) => row.key);
  }
}
