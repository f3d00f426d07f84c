import type { IncomingHttpHeaders } from 'node:http';
import type { BlockList } from 'node:net';
import { Injectable } from '@nestjs/common';
import { Principal, type ResourceAction } from '../common/guard/access.js';
import { inNetworks, networkSet, plainAddress } from '../common/http/client-address.js';
import { ApiKeyCache } from './api-key-cache.js';
import { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { AuthErrors } from './auth.errors.js';
import { hashKeyValue } from './key-material.js';
import { TokensService } from './tokens.service.js';

const LAST_USED_RESOLUTION_MS = 60_000;
const MAX_TRACKED_KEYS = 10_000;

/** Which credentials a route takes (its access rule decides). */
export type CredentialSchemes = 'api-key-only' | 'standard' | 'with-basic';

/** Turns request credentials into a Principal (decisions §2). */
@Injectable()
export class AuthService {
  /** When and from where this instance last wrote each key's lastUsedAt (cached records do not see later writes). */
  private readonly lastTouched = new Map<number, { at: number; address: string | null }>();
  /** One Principal per cached record, built once. */
  private readonly principals = new WeakMap<ApiKeyRecord, Principal>();
  /** The allowed networks of a cached record, built once. */
  private readonly networks = new WeakMap<ApiKeyRecord, BlockList>();

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly cache: ApiKeyCache,
    private readonly tokens: TokensService,
  ) {}

  /**
   * `Authorization: Bearer <token>` or `X-Api-Key: <key>`; with `api-key-only`, only the key header counts;
   * `with-basic` also takes `Authorization: Basic` (any user name, the key as password) and
   * `Authorization: Token <key>`, for the clients that speak nothing else (TAXII clients, firewalls).
   * Anything missing, malformed, expired or revoked is 401, as is a key used from outside its allowed
   * networks (`address`: the client's, see TRUST_PROXY), with the same answer as for an unknown key.
   */
  async authenticate(headers: IncomingHttpHeaders, address: string | undefined, schemes: CredentialSchemes = 'standard'): Promise<Principal> {
    const authorization = schemes === 'api-key-only' ? undefined : headers.authorization;
    const apiKey = headers['x-api-key'];
    let record: ApiKeyRecord | undefined;
    if (typeof authorization === 'string' && authorization !== '') {
      const [, scheme = '', credentials = ''] = /^(\S+) +(\S+)\s*$/.exec(authorization) ?? [];
      const kind = scheme.toLowerCase();
      const withBasic = schemes === 'with-basic';
      if (kind === 'bearer') {
        const keyId = this.tokens.verify(credentials);
        if (keyId === undefined) throw AuthErrors.unauthorized('the bearer token is invalid or expired');
        record = await this.cache.byId(keyId, () => this.keys.findById(keyId));
      } else if (withBasic && (kind === 'basic' || kind === 'token')) {
        record = await this.recordOfKey(kind === 'basic' ? basicPassword(credentials) : credentials);
      } else {
        throw AuthErrors.unauthorized(
          withBasic ? 'the Authorization header holds no Basic, Bearer or Token credentials' : 'the bearer token is invalid or expired',
        );
      }
    } else if (typeof apiKey === 'string' && apiKey !== '') {
      record = await this.recordOfKey(apiKey);
    } else {
      throw AuthErrors.unauthorized();
    }
    return this.principalOf(record, address);
  }

  /**
   * The key of a console session, checked as on every API request (the same cache, so a revocation on any
   * instance ends the session within the cache's invalidation time, and the same allowed networks); 401
   * when revoked, expired, unknown or used from elsewhere.
   */
  async authenticateKeyId(keyId: number, address: string | undefined): Promise<Principal> {
    return this.principalOf(await this.cache.byId(keyId, () => this.keys.findById(keyId)), address);
  }

  private async principalOf(record: ApiKeyRecord | undefined, address: string | undefined): Promise<Principal> {
    if (!record || record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= Date.now()) || !this.allowedFrom(record, address)) {
      throw AuthErrors.unauthorized('the API key is unknown, revoked or expired');
    }
    await this.touch(record, plainAddress(address) ?? null);
    let principal = this.principals.get(record);
    if (!principal) {
      principal = toPrincipal(record);
      this.principals.set(record, principal);
    }
    return principal;
  }

  private async recordOfKey(value: string | undefined): Promise<ApiKeyRecord | undefined> {
    if (!value || value.length > 256) return undefined;
    const keyHash = hashKeyValue(value);
    return this.cache.byHash(keyHash, () => this.keys.findByHash(keyHash));
  }

  private allowedFrom(record: ApiKeyRecord, address: string | undefined): boolean {
    if (record.allowedNetworks === null) return true;
    let networks = this.networks.get(record);
    if (!networks) {
      networks = networkSet(record.allowedNetworks);
      this.networks.set(record, networks);
    }
    return inNetworks(networks, address);
  }

  /**
   * At most one lastUsedAt write per key a minute (decisions §2), sooner when the key is used from another
   * address than the last one this instance wrote; the statement itself re-checks both.
   */
  private async touch(record: ApiKeyRecord, address: string | null): Promise<void> {
    const now = Date.now();
    const last = this.lastTouched.get(record.id) ?? {
      at: record.lastUsedAt ? new Date(record.lastUsedAt).getTime() : 0,
      address: record.lastUsedAddress,
    };
    if (now - last.at < LAST_USED_RESOLUTION_MS && last.address === address) return;
    if (this.lastTouched.size >= MAX_TRACKED_KEYS) this.lastTouched.clear();
    this.lastTouched.set(record.id, { at: now, address });
    await this.keys.touchLastUsed(record.id, address);
  }
}

/** The password of `Basic base64(user:password)` (RFC 7617); undefined when it is not of that form. */
function basicPassword(credentials: string): string | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credentials)) return undefined;
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

function toPrincipal(record: ApiKeyRecord): Principal {
  const permissions = new Map<number, Set<ResourceAction>>(record.permissions.map((permission) => [permission.resourceId, new Set(permission.actions)]));
  return new Principal(record.id, permissions, record.limits, record.expiresAt, record.maxTlp, record.reliability);
}
