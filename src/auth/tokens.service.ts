import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { TokenView } from './dto/token.dto.js';
import { TokenSecretRepository } from './token-secret.repository.js';

/**
 * Bearer tokens: `<keyId>.<expiresAtSeconds>.<HMAC-SHA256>`, signed with a secret kept in the database so
 * that every instance accepts every other's tokens. A token carries no rights of its own: each request
 * re-reads its key, so revoking or expiring the key invalidates the token at once.
 */
@Injectable()
export class TokensService implements OnModuleInit {
  private secret: Buffer;

  constructor(
    private readonly secrets: TokenSecretRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    // First instance to start creates the secret; the others (and later restarts) read the same one.
    this.secret = await this.secrets.readOrCreate(randomBytes(32));
  }

  issue(keyId: number, keyExpiresAt: Date | null): TokenView {
    const now = Math.floor(Date.now() / 1000);
    let expiresAt = now + this.config.tokenTtlSeconds;
    if (keyExpiresAt) expiresAt = Math.min(expiresAt, Math.floor(keyExpiresAt.getTime() / 1000));
    const payload = `${keyId}.${expiresAt}`;
    return { accessToken: `${payload}.${this.sign(payload)}`, tokenType: 'Bearer', expiresIn: Math.max(expiresAt - now, 0) };
  }

  /** The key id of a well-formed, correctly signed, unexpired token; undefined otherwise. */
  verify(token: string): number | undefined {
    const match = /^([1-9]\d{0,9})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) return undefined;
    const [, keyId, expiresAt, signature] = match;
    const expected = Buffer.from(this.sign(`${keyId}.${expiresAt}`), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    if (Number(expiresAt) <= Math.floor(Date.now() / 1000)) return undefined;
    return Number(keyId);
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }
}
