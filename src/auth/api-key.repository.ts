import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { ResourceAction } from '../common/guard/access.js';
import type { TlpRank } from '../common/markings/tlp.js';
import type { SizedRow } from '../common/pagination/page.js';
import { sizeBoundedPage } from '../common/pagination/size-bounded-page.js';
import { PreparedStatement } from '../common/sql/prepared-statement.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ADMIN_KEY_LOCK } from '../database/advisory-locks.js';

/** A key with everything authentication and the key view need, loaded in one statement. */
export interface ApiKeyRecord {
  id: number;
  description: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** The first 8 characters of the value; null for keys made before prefixes were kept. */
  prefix: string | null;
  lastUsedAddress: string | null;
  /** CIDRs the key may be used from; null: anywhere. */
  allowedNetworks: string[] | null;
  permissions: { resourceId: number; actions: ResourceAction[] }[];
  limits: { id: number; resourceId: number; action: ResourceAction; limit: number }[];
  /** The key's TLP ceiling, a rank (extensions §19). */
  maxTlp: TlpRank;
  /** The key's reliability, as its rank (extensions §18, src/scoring/admiralty.ts: reliabilityRank). */
  reliability: number;
  /** The view's version (its tag): moves with every change of the row, its use included. */
  version: number;
}

/** The columns of a key record, over `auth_api_key k`. */
const KEY_COLUMNS = `
  k.id, k.description, k.created_at AS "createdAt", k.expires_at AS "expiresAt",
         k.revoked_at AS "revokedAt", k.last_used_at AS "lastUsedAt", k.prefix,
         k.last_used_address AS "lastUsedAddress", k.allowed_networks AS "allowedNetworks", k.max_tlp AS "maxTlp",
         k.reliability, k.version,
         COALESCE((SELECT json_agg(json_build_object('resourceId', p.resource_id, 'actions', p.actions)
                                   ORDER BY p.resource_id)
                     FROM auth_permission p WHERE p.key_id = k.id), '[]') AS permissions,
         COALESCE((SELECT json_agg(json_build_object('id', l.id, 'resourceId', l.resource_id,
                                                     'action', l.action, 'limit', l.max_requests) ORDER BY l.id)
                     FROM auth_request_limit l WHERE l.key_id = k.id), '[]') AS limits`;

const SELECT_KEY = `SELECT ${KEY_COLUMNS} FROM auth_api_key k`;

const FIND_BY_HASH = new PreparedStatement<ApiKeyRecord>('auth_key_by_hash', `${SELECT_KEY} WHERE k.key_hash = $1`);
const FIND_BY_ID = new PreparedStatement<ApiKeyRecord>('auth_key_by_id', `${SELECT_KEY} WHERE k.id = $1`);

export interface NewApiKey {
  keyHash: Buffer;
  prefix: string | null;
  allowedNetworks: string[] | null;
  description: string | null;
  expiresAt: Date | null;
  permissions: { resourceId: number; actions: ResourceAction[] }[];
  limits: { resourceId: number; action: ResourceAction; limit: number }[];
  maxTlp: TlpRank;
  reliability: number;
}

/** The settings `PATCH /auth/keys/{id}` changes. */
export interface KeySettings {
  maxTlp: TlpRank;
  reliability: number;
}

@Injectable()
export class ApiKeyRepository {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Requests with `X-Api-Key` whose key is not cached run this: prepared (see PreparedStatement). */
  async findByHash(keyHash: Buffer): Promise<ApiKeyRecord | undefined> {
    return (await FIND_BY_HASH.run(this.dataSource, [keyHash]))[0];
  }

  /** Bearer-token requests whose key is not cached run this: prepared (see PreparedStatement). */
  async findById(id: number): Promise<ApiKeyRecord | undefined> {
    return (await FIND_BY_ID.run(this.dataSource, [id]))[0];
  }

  async listPage(filter: { revoked?: boolean; description?: string }, afterId: number, take: number) {
    const params: unknown[] = [afterId, take];
    const where = ['k.id > $1::bigint']; // bigint: a forged cursor beyond int4 is an empty page, not an error
    if (filter.revoked !== undefined) where.push(filter.revoked ? 'k.revoked_at IS NOT NULL' : 'k.revoked_at IS NULL');
    if (filter.description !== undefined) {
      params.push(`%${filter.description.replace(/[\\%_]/g, (char) => `\\${char}`)}%`);
      where.push(`k.description ILIKE $${params.length}`);
    }
    // Bounded by size as well (PAGE_MAX_BYTES), so that a fetch holds at most the cap plus one key: a key
    // may carry 1,000 permissions and 1,000 limits (about 100 bytes each in the view) beside its description.
    params.push(this.config.pageMaxBytes);
    const page = sizeBoundedPage(
      {
        select: KEY_COLUMNS,
        from: `FROM auth_api_key k WHERE ${where.join(' AND ')}`,
        orderBy: 'k.id',
        rowBytes: `(COALESCE(octet_length(k.description), 0) + 200
                    + 100 * ((SELECT count(*) FROM auth_permission p WHERE p.key_id = k.id)
                             + (SELECT count(*) FROM auth_request_limit l WHERE l.key_id = k.id)))`,
      },
      '$2',
      `$${params.length}`,
    );
    const rows: (ApiKeyRecord & SizedRow)[] = await this.dataSource.query(`${page} ORDER BY id`, params);
    return rows;
  }

  /** Inserts a key with its permissions and limits; the caller provides the transaction. */
  async insert(manager: EntityManager, key: NewApiKey): Promise<number> {
    const [{ id }]: { id: number }[] = await manager.query(
      `INSERT INTO auth_api_key (key_hash, description, expires_at, prefix, allowed_networks, max_tlp, reliability)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [key.keyHash, key.description, key.expiresAt, key.prefix, key.allowedNetworks, key.maxTlp, key.reliability],
    );
    if (key.permissions.length > 0) {
      await manager.query(
        `INSERT INTO auth_permission (key_id, resource_id, actions)
         SELECT $1, p.resource_id, ARRAY(SELECT json_array_elements_text(p.actions))
           FROM json_to_recordset($2::json) AS p(resource_id integer, actions json)`,
        [id, JSON.stringify(key.permissions.map((p) => ({ resource_id: p.resourceId, actions: p.actions })))],
      );
    }
    if (key.limits.length > 0) {
      await manager.query(
        `INSERT INTO auth_request_limit (key_id, resource_id, action, period, max_requests)
         SELECT $1, l.resource_id, l.action, 'Day', l.max_requests
           FROM json_to_recordset($2::json) AS l(resource_id integer, action text, max_requests integer)`,
        [id, JSON.stringify(key.limits.map((l) => ({ resource_id: l.resourceId, action: l.action, max_requests: l.limit })))],
      );
    }
    return id;
  }

  /** Sets `revoked_at` once; revoking again keeps the first moment (and the tag). Returns false for an unknown key. */
  async revoke(manager: EntityManager, id: number): Promise<boolean> {
    // Wrapped in a SELECT: TypeORM answers a bare UPDATE with [rows, rowCount], which is never empty.
    const rows: unknown[] = await manager.query(
      `WITH revoked AS (
         UPDATE auth_api_key SET revoked_at = COALESCE(revoked_at, now()), version = version + (revoked_at IS NULL)::int
          WHERE id = $1 RETURNING id
       ) SELECT id FROM revoked`,
      [id],
    );
    return rows.length > 0;
  }

  /** The settings a PATCH compares with, its row locked to the end of the manager's transaction; undefined for an unknown key. */
  async lockSettings(manager: EntityManager, id: number): Promise<(KeySettings & { version: number }) | undefined> {
    const rows: (KeySettings & { version: number })[] = await manager.query(
      `SELECT version, max_tlp AS "maxTlp", reliability FROM auth_api_key WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return rows[0];
  }

  /** New settings, and a new tag; the row is the caller's (lockSettings). */
  async setSettings(manager: EntityManager, id: number, settings: KeySettings): Promise<void> {
    await manager.query(`UPDATE auth_api_key SET max_tlp = $2, reliability = $3, version = version + 1 WHERE id = $1`, [
      id,
      settings.maxTlp,
      settings.reliability,
    ]);
  }

  /** Once a minute per key, or at once from another address; the statement re-checks both. The view changes: so does its tag. */
  async touchLastUsed(id: number, address: string | null): Promise<void> {
    await this.dataSource.query(
      `UPDATE auth_api_key SET last_used_at = now(), last_used_address = $2, version = version + 1
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute'
                           OR last_used_address IS DISTINCT FROM $2)`,
      [id, address],
    );
  }

  async countKeys(manager: EntityManager): Promise<number> {
    const [{ count }]: { count: number }[] = await manager.query(`SELECT count(*)::int AS count FROM auth_api_key`);
    return count;
  }

  async existsByHash(manager: EntityManager, keyHash: Buffer): Promise<boolean> {
    const rows: unknown[] = await manager.query(`SELECT 1 FROM auth_api_key WHERE key_hash = $1`, [keyHash]);
    return rows.length > 0;
  }

  /** Serialises the admin key's bootstrap and creation across instances, to the end of the manager's transaction. */
  async lockAdminKeys(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [ADMIN_KEY_LOCK]);
  }
}
