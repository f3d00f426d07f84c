import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { ContentDigests } from './content-meter.js';

/** A file's row, `size` as PostgreSQL returns a bigint (text). */
export interface FileRow {
  id: string;
  name: string | null;
  size: string;
  sha256: Buffer;
  sha512: Buffer;
  /** A session file's part blobs (each `part_size` bytes but the last); null: the one blob keyed by `id`. */
  part_size: number | null;
  part_keys: string[] | null;
}

/** The statements of `filebox_file` (FilesService holds the rules). */
@Injectable()
export class FilesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async sha256Hex(fileId: string): Promise<string | undefined> {
    const rows: { sha256: string }[] = await this.dataSource.query(`SELECT encode(sha256, 'hex') AS sha256 FROM filebox_file WHERE id = $1`, [fileId]);
    return rows[0]?.sha256;
  }

  async insert(
    manager: EntityManager,
    fileId: string,
    name: string | null,
    digests: ContentDigests,
    parts: { partSize: number; keys: string[] } | undefined,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO filebox_file (id, name, size, md5, sha1, sha256, sha512, part_size, part_keys)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [fileId, name, digests.size, digests.md5, digests.sha1, digests.sha256, digests.sha512, parts?.partSize ?? null, parts?.keys ?? null],
    );
  }

  async find(fileId: string): Promise<FileRow | undefined> {
    const rows: FileRow[] = await this.dataSource.query(`SELECT id, name, size, sha256, sha512, part_size, part_keys FROM filebox_file WHERE id = $1`, [
      fileId,
    ]);
    return rows[0];
  }
}
