import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ConsoleSessionsRepository } from './console-sessions.repository.js';

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
    private readonly repository: ConsoleSessionsRepository,
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
    await this.repository.insert(id, digest(secret), keyId, this.config.console.sessionMaxHours, keyExpiresAt);
    return `${id}.${secret}`;
  }

  /** The live session the cookie value names, or undefined; refreshes its idle clock at most once a minute. */
  async resolve(token: string | undefined): Promise<ConsoleSession | undefined> {
    const match = token === undefined ? null : TOKEN.exec(token);
    if (!match) return undefined;
    const [, id, secret] = match;
    const rows = await this.repository.live(id, this.config.console.sessionIdleMinutes);
    if (rows.length === 0 || !timingSafeEqual(rows[0].secretHash, digest(secret))) return undefined;
    if (rows[0].stale) await this.repository.touch(id);
    return { id, keyId: rows[0].keyId };
  }

  async end(sessionId: string): Promise<void> {
    await this.repository.delete(sessionId);
  }

  /** Every session of a key (revoked, expired or unknown). */
  async endKey(keyId: number): Promise<void> {
    await this.repository.deleteOfKey(keyId);
  }

  /** Removes ended sessions (they are refused anyway; this only keeps the table small). */
  async prune(): Promise<void> {
    await this.repository.deleteEnded(this.config.console.sessionIdleMinutes);
  }
}
