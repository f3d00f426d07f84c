import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

/** An upload session's row: its part size and, once completed, its file. */
export interface SessionRow {
  part_size: number;
  file_id: string | null;
}

/** The statements of `filebox_upload_session` and `filebox_upload_part` (SessionsService holds the rules). */
@Injectable()
export class UploadSessionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(id: string, partSize: number): Promise<void> {
    await this.dataSource.query(`INSERT INTO filebox_upload_session (id, part_size) VALUES ($1, $2)`, [id, partSize]);
  }

  /** The session, locked until the transaction ends when `lock` is set. */
  async find(manager: EntityManager, sessionId: string, lock: boolean): Promise<SessionRow | undefined> {
    const rows: SessionRow[] = await manager.query(`SELECT part_size, file_id FROM filebox_upload_session WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [
      sessionId,
    ]);
    return rows[0];
  }

  /** The session's parts in order of their numbers. */
  parts(manager: EntityManager, sessionId: string): Promise<{ number: number; size: number; storage_key: string }[]> {
    return manager.query(`SELECT number, size, storage_key FROM filebox_upload_part WHERE session_id = $1 ORDER BY number`, [sessionId]);
  }

  /** The session is completed as `fileId`; its part rows go (the blobs now belong to the file). */
  async complete(manager: EntityManager, sessionId: string, fileId: string): Promise<void> {
    await manager.query(`UPDATE filebox_upload_session SET file_id = $2, last_activity_at = now() WHERE id = $1`, [sessionId, fileId]);
    await manager.query(`DELETE FROM filebox_upload_part WHERE session_id = $1`, [sessionId]);
  }

  /**
   * Removes sessions idle for `ttlHours` with their parts, in one statement: the parts' blob keys come back
   * from the same delete that removes their rows. SKIP LOCKED leaves alone a session that is being completed.
   */
  async deleteIdle(ttlHours: number): Promise<{ sessions: number; keys: string[] }> {
    const [row]: { sessions: number; keys: string[] }[] = await this.dataSource.query(
      `WITH idle AS (
         SELECT id FROM filebox_upload_session
         WHERE last_activity_at < now() - make_interval(hours => $1)
         FOR UPDATE SKIP LOCKED
       ), parts AS (
         DELETE FROM filebox_upload_part p USING idle WHERE p.session_id = idle.id RETURNING p.storage_key
       ), sessions AS (
         DELETE FROM filebox_upload_session s USING idle WHERE s.id = idle.id RETURNING s.id
       )
       SELECT (SELECT count(*) FROM sessions)::int AS sessions,
              ARRAY(SELECT storage_key::text FROM parts) AS keys`,
      [ttlHours],
    );
    return row;
  }

  /**
   * One statement locks the session row (so that a part cannot slip in while the session is being
   * completed) and records the activity: its `file_id`, undefined when there is no such session.
   */
  async touch(manager: EntityManager, sessionId: string): Promise<Pick<SessionRow, 'file_id'> | undefined> {
    const [session]: Pick<SessionRow, 'file_id'>[] = await manager.query(
      `WITH touched AS (UPDATE filebox_upload_session SET last_activity_at = now() WHERE id = $1 RETURNING file_id)
       SELECT file_id FROM touched`,
      [sessionId],
    );
    return session;
  }

  /** Writes the part, replacing one of the same number: the blob key it replaced, if any. */
  async upsertPart(manager: EntityManager, sessionId: string, number: number, size: number, key: string): Promise<string | null> {
    const [row]: { replaced: string | null }[] = await manager.query(
      `WITH previous AS (
         SELECT storage_key FROM filebox_upload_part WHERE session_id = $1 AND number = $2
       )
       INSERT INTO filebox_upload_part (session_id, number, size, storage_key) VALUES ($1, $2, $3, $4)
       ON CONFLICT (session_id, number)
         DO UPDATE SET size = EXCLUDED.size, storage_key = EXCLUDED.storage_key, uploaded_at = now()
       RETURNING (SELECT storage_key::text FROM previous) AS replaced`,
      [sessionId, number, size, key],
    );
    return row.replaced;
  }
}
