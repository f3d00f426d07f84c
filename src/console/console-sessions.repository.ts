import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** A live session's row, as `resolve` checks it. */
export interface LiveSessionRow {
  keyId: number;
  secretHash: Buffer;
  /** Last seen over a minute ago: its idle clock is due a refresh. */
  stale: boolean;
}

/** The statements of `console_session` (ConsoleSessionsService holds the rules). */
@Injectable()
export class ConsoleSessionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(id: string, secretHash: Buffer, keyId: number, maxHours: number, keyExpiresAt: Date | null): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO console_session (id, secret_hash, key_id, expires_at)
       VALUES ($1, $2, $3, LEAST(now() + make_interval(hours => $4), $5::timestamptz))`,
      [id, secretHash, keyId, maxHours, keyExpiresAt],
    );
  }

  /** The session `id` if it is live: not past its end, used within `idleMinutes`. */
  live(id: string, idleMinutes: number): Promise<LiveSessionRow[]> {
    return this.dataSource.query(
      `SELECT key_id AS "keyId", secret_hash AS "secretHash", last_seen_at < now() - interval '1 minute' AS stale
         FROM console_session
        WHERE id = $1 AND expires_at > now() AND last_seen_at > now() - make_interval(mins => $2)`,
      [id, idleMinutes],
    );
  }

  async touch(id: string): Promise<void> {
    await this.dataSource.query(`UPDATE console_session SET last_seen_at = now() WHERE id = $1`, [id]);
  }

  async delete(id: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM console_session WHERE id = $1`, [id]);
  }

  async deleteOfKey(keyId: number): Promise<void> {
    await this.dataSource.query(`DELETE FROM console_session WHERE key_id = $1`, [keyId]);
  }

  /** Ended sessions: past their end or idle longer than `idleMinutes`. */
  async deleteEnded(idleMinutes: number): Promise<void> {
    await this.dataSource.query(`DELETE FROM console_session WHERE expires_at <= now() OR last_seen_at <= now() - make_interval(mins => $1)`, [idleMinutes]);
  }
}
