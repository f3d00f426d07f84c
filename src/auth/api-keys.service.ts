import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Principal, type ResourceAction, type ResourceNode } from '../common/guard/access.js';
import { parseCidr } from '../common/http/client-address.js';
import { rankOf, tlpOf, type TlpRank } from '../common/markings/tlp.js';
import { afterIdCursor, afterIdFromCursor } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../common/pagination/page.js';
import { assertTagMatches, TaggedResult } from '../common/tags/tag.js';
import { DEFAULT_RELIABILITY, reliabilityOfRank, reliabilityRank, type Reliability } from '../scoring/admiralty.js';
import { ApiKeyCache } from './api-key-cache.js';
import { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { AuthErrors } from './auth.errors.js';
import type {
  ApiKeyIdParamDto,
  ApiKeyRegistrationView,
  ApiKeyUsageView,
  ApiKeyView,
  CreateApiKeyDto,
  ListApiKeysQueryDto,
  UpdateApiKeyDto,
} from './dto/api-key.dto.js';
import { generateKeyValue, hashKeyValue, keyPrefix } from './key-material.js';
import { RequestLimitsService, secondsUntilUtcMidnight } from './request-limits.service.js';
import { ResourcesService } from './resources.service.js';

const MAX_LIMIT_VALUE = 2_147_483_647;
const MAX_INT4 = 2_147_483_647;

@Injectable()
export class ApiKeysService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly keys: ApiKeyRepository,
    private readonly resources: ResourcesService,
    private readonly cache: ApiKeyCache,
    private readonly limits: RequestLimitsService,
  ) {}

  /** decisions §3 key generation: every check runs before anything is written. */
  async create(caller: Principal, form: CreateApiKeyDto): Promise<ApiKeyRegistrationView> {
    const limitsForm = form.requestLimits ?? [];
    const referenced = [...form.permissions.map((p) => p.resource.id), ...limitsForm.map((l) => l.target.resource.id)];
    const nodes = await this.resources.findByIds([...new Set(referenced)]);
    const missing = referenced.find((id) => !nodes.has(id));
    if (missing !== undefined) throw AuthErrors.resourceNotFound(missing);

    const expiresAt = form.expiresAt === undefined || form.expiresAt === null ? null : new Date(form.expiresAt);
    if (expiresAt && (Number.isNaN(expiresAt.getTime()) || !isCalendarDate(form.expiresAt!))) {
      throw AuthErrors.invalidExpiry();
    }
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw AuthErrors.expiryInPast();
    const badNetwork = form.allowedNetworks?.find((network) => parseCidr(network) === undefined);
    if (badNetwork !== undefined) throw AuthErrors.invalidNetwork(badNetwork);
    // A key cannot hand out more than it has: neither a way around its own request limits nor a longer life.
    if (caller.limits.length > 0) throw AuthErrors.limitedCreator();
    if (caller.expiresAt && (!expiresAt || expiresAt > caller.expiresAt)) throw AuthErrors.outlivesCreator();

    const granted = new Map<number, Set<ResourceAction>>();
    for (const permission of form.permissions) {
      const actions = granted.get(permission.resource.id) ?? new Set<ResourceAction>();
      permission.actions.forEach((action) => actions.add(action));
      granted.set(permission.resource.id, actions);
    }
    for (const [resourceId, actions] of granted) {
      for (const action of actions) {
        if (!caller.canGrant(nodes.get(resourceId)!, action)) throw AuthErrors.cannotGrant(resourceId, action);
      }
    }
    // Nor a key that sees more than it does: absent, the new key's ceiling is the creator's own.
    const maxTlp = ceilingOf(form.maxTLP) ?? caller.maxTlp;
    if (!caller.canGrantTlp(maxTlp)) throw AuthErrors.cannotGrantTlp(maxTlp, caller.maxTlp);
    const newKey = new Principal(0, granted, [], null);

    const targets = new Set<string>();
    for (const limit of limitsForm) {
      const { id } = limit.target.resource;
      const target = `${id}/${limit.target.action}`;
      if (targets.has(target)) throw AuthErrors.limitSetConflict(id, limit.target.action);
      targets.add(target);
      if (limit.limit < 1 || limit.limit > MAX_LIMIT_VALUE) {
        throw AuthErrors.invalidRequestLimit(`limit must be between 1 and ${MAX_LIMIT_VALUE}`);
      }
      if (!covers(newKey, nodes.get(id)!, limit.target.action)) {
        throw AuthErrors.invalidRequestLimit(`the key's permissions do not cover ${limit.target.action} on resource ${id}, so a limit on it means nothing`);
      }
    }

    const value = generateKeyValue();
    const id = await this.dataSource.transaction((manager) =>
      this.keys.insert(manager, {
        keyHash: hashKeyValue(value),
        prefix: keyPrefix(value),
        allowedNetworks: form.allowedNetworks ?? null,
        description: form.description ?? null,
        expiresAt,
        permissions: [...granted]
          .filter(([, actions]) => actions.size > 0)
          .map(([resourceId, actions]) => ({
            resourceId,
            actions: [...actions],
          })),
        limits: limitsForm.map((limit) => ({
          resourceId: limit.target.resource.id,
          action: limit.target.action,
          limit: limit.limit,
        })),
        maxTlp,
        // Any value: a reliability is no access, so there is nothing of the creator's for it to exceed.
        reliability: reliabilityRankOf(form.reliability) ?? reliabilityRank(DEFAULT_RELIABILITY),
      }),
    );
    return { id, key: value };
  }

  /** One key's view with its tag (`If-Match` of a PATCH). */
  async view(params: ApiKeyIdParamDto): Promise<TaggedResult<ApiKeyView>> {
    const id = keyIdOf(params);
    const record = await this.keys.findById(id);
    if (!record) throw AuthErrors.keyNotFound(id);
    return new TaggedResult(toView(record), record.version);
  }

  /**
   * The members sent, under `If-Match` when sent (checks in this order: 404, 412, 403). New settings reach
   * every instance's key cache as a revocation does, so the key's next request reads (with its ceiling) and
   * writes (with its reliability) by them; `{}` and the current values change nothing and keep the tag.
   */
  async update(caller: Principal, params: ApiKeyIdParamDto, ifMatch: string | undefined, form: UpdateApiKeyDto): Promise<TaggedResult<ApiKeyView>> {
    const id = keyIdOf(params);
    const maxTlp = ceilingOf(form.maxTLP);
    const reliability = reliabilityRankOf(form.reliability);
    const changed = await this.dataSource.transaction(async (manager) => {
      const current = await this.keys.lockSettings(manager, id);
      if (!current) throw AuthErrors.keyNotFound(id);
      if (ifMatch !== undefined) assertTagMatches(ifMatch, current.version);
      if (maxTlp !== undefined && !caller.canGrantTlp(maxTlp)) throw AuthErrors.cannotGrantTlp(maxTlp, caller.maxTlp);
      const settings = { maxTlp: maxTlp ?? current.maxTlp, reliability: reliability ?? current.reliability };
      if (settings.maxTlp === current.maxTlp && settings.reliability === current.reliability) return false;
      await this.keys.setSettings(manager, id, settings);
      await this.cache.publishChange(manager, id);
      return true;
    });
    // This instance drops it before answering, so no request sent after the answer is served from its cache.
    if (changed) this.cache.evictLocally(id);
    return this.view(params);
  }

  async list(query: ListApiKeysQueryDto): Promise<PageResult<ApiKeyView>> {
    const page = pageRequestOf(query);
    const rows = await this.keys.listPage(
      {
        revoked: query.revoked === undefined ? undefined : query.revoked === 'true',
        description: query.description,
      },
      afterIdFromCursor(page.cursor),
      page.limit + 1,
    );
    return keysetPage(rows, page.limit, (row) => afterIdCursor(row.id), toView);
  }

  /** Today's counts against each of the key's request limits, exact once no instance holds units ahead of use. */
  async usage(params: ApiKeyIdParamDto): Promise<ApiKeyUsageView> {
    const id = keyIdOf(params);
    const record = await this.keys.findById(id);
    if (!record) throw AuthErrors.keyNotFound(id);
    const counts = await this.limits.todayCounts(record.limits.map((limit) => limit.id));
    const view = toView(record);
    return {
      day: new Date().toISOString().slice(0, 10),
      resetSeconds: secondsUntilUtcMidnight(),
      requestLimits: record.limits.map((limit, index) => {
        const used = Math.min(counts.get(limit.id) ?? 0, limit.limit);
        return { ...view.requestLimits[index], used, remaining: limit.limit - used };
      }),
    };
  }

  async revoke(params: ApiKeyIdParamDto): Promise<void> {
    const id = keyIdOf(params);
    const found = await this.dataSource.transaction(async (manager) => {
      const revoked = await this.keys.revoke(manager, id);
      // Delivered to every instance when the revocation commits: their key caches drop the key.
      if (revoked) await this.cache.publishChange(manager, id);
      return revoked;
    });
    if (!found) throw AuthErrors.keyNotFound(id);
    // This instance drops it before answering, so no request sent after the 204 is served from its cache.
    this.cache.evictLocally(id);
  }
}

function keyIdOf(params: ApiKeyIdParamDto): number {
  const id = Number(params.api_key_id);
  // Ids beyond the integer column cannot exist (and would make PostgreSQL refuse the parameter).
  if (id > MAX_INT4) throw AuthErrors.keyNotFound(id);
  return id;
}

/** A ceiling as the DTO let it through (`IsTlp`); undefined when absent or null. */
function ceilingOf(maxTLP: string | null | undefined): TlpRank | undefined {
  return maxTLP === undefined || maxTLP === null ? undefined : rankOf(maxTLP);
}

/** A reliability as the DTO let it through (`IsIn`), as its stored rank; undefined when absent or null. */
function reliabilityRankOf(reliability: Reliability | null | undefined): number | undefined {
  return reliability === undefined || reliability === null ? undefined : reliabilityRank(reliability);
}

/** `Date` rolls impossible days over (Feb 30 → Mar 2); the written calendar date must exist. */
function isCalendarDate(timestamp: string): boolean {
  const [year, month, day] = timestamp.slice(0, 10).split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A limit on `(R, A)` is meaningful when the limited key could make such a request at all. */
function covers(key: Principal, resource: ResourceNode, action: ResourceAction): boolean {
  return action === 'Read' || action === 'Write' ? key.holds(resource, action) : key.hasDirect(resource.id, action);
}

function toView(record: ApiKeyRecord): ApiKeyView {
  return {
    id: record.id,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    description: record.description,
    lastUsedAt: record.lastUsedAt,
    revoked: record.revokedAt !== null,
    permissions: record.permissions.map((p) => ({ resource: { id: p.resourceId }, actions: p.actions })),
    requestLimits: record.limits.map((l) => ({
      target: { resource: { id: l.resourceId }, action: l.action },
      limit: l.limit,
      period: 'Day',
    })),
    prefix: record.prefix,
    lastUsedAddress: record.lastUsedAddress,
    allowedNetworks: record.allowedNetworks,
    maxTLP: tlpOf(record.maxTlp),
    reliability: reliabilityOfRank(record.reliability),
  };
}
