import { expect } from '@jest/globals';
import type { ResourceAction } from '../../src/common/guard/access.js';
import type { TestApp } from './test-app.js';

export interface KeySpec {
  permissions: { resource: number; actions: ResourceAction[] }[];
  limits?: { resource: number; action: ResourceAction; limit: number }[];
  expiresAt?: string;
  description?: string;
  /** The key's TLP ceiling as input spells it (`TLP:GREEN`); absent: the creator's own. */
  maxTLP?: string;
  /** The key's Admiralty reliability (`A`…`F`); absent: `F`. */
  reliability?: string;
}

/** Generates a key through the API (as the admin) and returns its id and value. */
export async function createKey(testApp: TestApp, spec: KeySpec, asKey = testApp.adminKey) {
  const response = await testApp
    .http()
    .post('/auth/keys')
    .set('X-Api-Key', asKey)
    .send({
      permissions: spec.permissions.map((p) => ({ resource: { id: p.resource }, actions: p.actions })),
      ...(spec.limits && {
        requestLimits: spec.limits.map((l) => ({
          target: { resource: { id: l.resource }, action: l.action },
          limit: l.limit,
          period: 'Day',
        })),
      }),
      ...(spec.expiresAt && { expiresAt: spec.expiresAt }),
      ...(spec.description && { description: spec.description }),
      ...(spec.maxTLP && { maxTLP: spec.maxTLP }),
      ...(spec.reliability && { reliability: spec.reliability }),
    });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: number; key: string };
}

/** Exchanges a key for a bearer token, as the SDK does. */
export async function tokenFor(testApp: TestApp, key: string): Promise<string> {
  const response = await testApp.http().get('/auth/token').set('X-Api-Key', key);
  if (response.status !== 200) throw new Error(`token request failed: ${response.status}`);
  return (response.body as { accessToken: string }).accessToken;
}

/** Parses a `Link` header into rel → URL. */
export function parseLinks(header: string | undefined): Record<string, string> {
  const links: Record<string, string> = {};
  for (const part of (header ?? '').split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>;\s*rel="?([a-z]+)"?/.exec(part.trim());
    if (match) links[match[2]] = match[1];
  }
  return links;
}

/** The `cursor` query parameter of a link URL. */
export function cursorOf(link: string): string | null {
  return new URL(link, 'http://x').searchParams.get('cursor');
}

/**
 * Creates sources as the admin, each answered 201, named `<prefix>-1`, `<prefix>-2`, ... unless the form names
 * one; `url(path)` makes a `text` source's URL from a path of the feed server. Both return the source's name.
 */
export function sourceFactory(app: () => TestApp, prefix: string, url: (path: string) => string = (path) => path) {
  let count = 0;
  const create = async (form: Record<string, unknown>): Promise<string> => {
    const name = (form.name as string | undefined) ?? `${prefix}-${++count}`;
    const created = await app().sources.create({ name, ...form });
    expect(created.status).toBe(201);
    return name;
  };
  const text = (collection: string, path: string, extra: Record<string, unknown> = {}) => create({ collection, kind: 'text', url: url(path), ...extra });
  return { create, text };
}
