import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { Principal, type ResourceAction } from '../common/guard/access.js';
import { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { AuthErrors } from './auth.errors.js';
import { hashKeyValue } from './key-material.js';
import { TokensService } from './tokens.service.js';

const LAST_USED_RESOLUTION_MS = 60_000;

/** Turns request credentials into a Principal (decisions §2). */
@Injectable()
export class AuthService {
  constructor(
    private readonly keys: ApiKeyRepository,
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
      record = await this.keys.findById(keyId);
    } else if (typeof apiKey === 'string' && apiKey !== '') {
      record = apiKey.length <= 256 ? await this.keys.findByHash(hashKeyValue(apiKey)) : undefined;
    } else {
      throw AuthErrors.unauthorized();
    }
    if (!record || record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= Date.now())) {
      throw AuthErrors.unauthorized('the API key is unknown, revoked or expired');
    }
    if (!record.lastUsedAt || Date.now() - new Date(record.lastUsedAt).getTime() >= LAST_USED_RESOLUTION_MS) {
      // At most one write per key a minute (decisions §2); the statement itself re-checks the minute.
      await this.keys.touchLastUsed(record.id);
    }
    return toPrincipal(record);
  }
}

function toPrincipal(record: ApiKeyRecord): Principal {
  const permissions = new Map<number, Set<ResourceAction>>(
    record.permissions.map((permission) => [permission.resourceId, new Set(permission.actions)]),
  );
  return new Principal(record.id, permissions, record.limits, record.expiresAt);
}
