import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { Principal, type ResourceAction } from '../common/guard/access.js';
import { ApiKeyCache } from './api-key-cache.js';
import { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { AuthErrors } from './auth.errors.js';
import { hashKeyValue } from './key-material.js';
import { TokensService } from './tokens.service.js';

const LAST_USED_RESOLUTION_MS = 60_000;
const MAX_TRACKED_KEYS = 10_000;

/** Turns request credentials into a Principal (decisions §2). */
@Injectable()
export class AuthService {
  /** When this instance last wrote each key's lastUsedAt (cached records do not see later writes). */
  private readonly lastTouched = new Map<number, number>();
  /** One Principal per cached record, built once. */
  private readonly principals = new WeakMap<ApiKeyRecord, Principal>();

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly cache: ApiKeyCache,
    private readonly tokens: TokensService,
  ) {}

  /**
   * `Authorization: Bearer <token>` or `X-Api-Key: <key>`; with `apiKeyOnly`, only the key header counts.
   * Anything missing, malformed, expired or revoked is 401.
   */
  async authenticate(headers: IncomingHttpHeaders, apiKeyOnly = false): Promise<Principal> {
    const authorization = apiKeyOnly ? undefined : headers.authorization;
    const apiKey = headers['x-api-key'];
    let record: ApiKeyRecord | undefined;
    if (typeof authorization === 'string' && authorization !== '') {
      const match = /^Bearer +(\S+)\s*$/i.exec(authorization);
      const keyId = match ? this.tokens.verify(match[1]) : undefined;
      if (keyId === undefined) throw AuthErrors.unauthorized('the bearer token is invalid or expired');
      record = await this.cache.byId(keyId, () => this.keys.findById(keyId));
    } else if (typeof apiKey === 'string' && apiKey !== '') {
      if (apiKey.length <= 256) {
        const keyHash = hashKeyValue(apiKey);
        record = await this.cache.byHash(keyHash, () => this.keys.findByHash(keyHash));
      }
    } else {
      throw AuthErrors.unauthorized();
    }
    return this.principalOf(record);
  }

  /**
   * The key of a console session, checked as on every API request (the same cache, so a revocation on any
   * instance ends the session within the cache's invalidation time); 401 when revoked, expired or unknown.
   */
  async authenticateKeyId(keyId: number): Promise<Principal> {
    return this.principalOf(await this.cache.byId(keyId, () => this.keys.findById(keyId)));
  }

  private async principalOf(record: ApiKeyRecord | undefined): Promise<Principal> {
    if (!record || record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= Date.now())) {
      throw AuthErrors.unauthorized('the API key is unknown, revoked or expired');
    }
    await this.touch(record);
    let principal = this.principals.get(record);
    if (!principal) {
      principal = toPrincipal(record);
      this.principals.set(record, principal);
    }
    return principal;
  }

  /** At most one lastUsedAt write per key a minute (decisions §2); the statement itself re-checks the minute. */
  private async touch(record: ApiKeyRecord): Promise<void> {
    const now = Date.now();
    const last = this.lastTouched.get(record.id) ?? (record.lastUsedAt ? new Date(record.lastUsedAt).getTime() : 0);
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    if (this.lastTouched.size >= MAX_TRACKED_KEYS) this.lastTouched.clear();
    this.lastTouched.set(record.id, now);
    await this.keys.touchLastUsed(record.id);
  }
}

function toPrincipal(record: ApiKeyRecord): Principal {
  const permissions = new Map<number, Set<ResourceAction>>(
    record.permissions.map((permission) => [permission.resourceId, new Set(permission.actions)]),
  );
  return new Principal(record.id, permissions, record.limits, record.expiresAt);
}
