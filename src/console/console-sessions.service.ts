import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

export interface ConsoleSession {
  id: string;
  keyId: number;
}

/** `<id>.<secret>`, both base64url: the id finds the row, the secret proves the holder. */
const TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/**
 * Server-side console sessions in PostgreSQL, so any instance serves any session. Only a SHA-256 of the
 * secret is stored. A session ends at sign-out, after CONSOLE_SESSION_IDLE_MINUTES unused, after
 * CONSOLE_SESSION_MAX_HOURS, at its key's expiry, and when its key is found revoked.
 */
@Injectable()
export class ConsoleSessionsService implements OnModuleInit, OnModuleDestroy {
  private stopPruning?: () => void;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  onModuleInit(): void {
    this.stopPruning = schedulePeriodicJob('ConsoleSessions', this.config.jobIntervalSeconds, () => this.prune());
  }

  onModuleDestroy(): void {
    this.stopPruning?.();
  }

  /** A new session of `keyId`; returns the cookie value (never stored). */
  async create(keyId: number, keyExpiresAt: Date | null): Promise<string> {
    const id = randomBytes(16).toString('base64url');
    const secret = randomBytes(32).toString('base64url');
    await this.dataSource.query(
      `INSERT INTO console_session (id, secret_hash, key_id, expires_at)
       VALUES ($1, $2, $3, LEAST(now() + make_interval(hours => $4), $5::timestamptz))`,
      [id, digest(secret), keyId, this.config.console.sessionMaxHours, keyExpiresAt],
    );
    return `${id}.${secret}`;
  }

  /** The live session the cookie value names, or undefined; refreshes its idle clock at most once a minute. */
  async resolve(token: string | undefined): Promise<ConsoleSession | undefined> {
    const match = token === undefined ? null : TOKEN.exec(token);
    if (!match) return undefined;
    const [, id, secret] = match;
    const rows: { keyId: number; secretHash: Buffer; stale: boolean }[] = await this.dataSource.query(
      `SELECT key_id AS "keyId", secret_hash AS "secretHash", last_seen_at < now() - interval '1 minute' AS stale
         FROM console_session
        WHERE id = $1 AND expires_at > now() AND last_seen_at > now() - make_interval(mins => $2)`,
      [id, this.config.console.sessionIdleMinutes],
    );
    if (rows.length === 0 || !timingSafeEqual(rows[0].secretHash, digest(secret))) return undefined;
    if (rows[0].stale) await this.dataSource.query(`UPDATE console_session SET last_seen_at = now() WHERE id = $1`, [id]);
    return { id, keyId: rows[0].keyId };
  }

  async end(sessionId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM console_session WHERE id = $1`, [sessionId]);
  }

  /** Every session of a key (revoked, expired or unknown). */
  async endKey(keyId: number): Promise<void> {
    await this.dataSource.query(`DELETE FROM console_session WHERE key_id = $1`, [keyId]);
  }

  /** Removes ended sessions (they are refused anyway; this only keeps the table small). */
  async prune(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM console_session WHERE expires_at <= now() OR last_seen_at <= now() - make_interval(mins => $1)`,
      [this.config.console.sessionIdleMinutes],
    );
  }
}
