/** A small fetch-based client for setting the stage (keys, tokens, schemas, collections); never timed. */
export class Api {
  constructor(
    readonly baseUrl: string,
    private readonly auth: Record<string, string>,
  ) {}

  withKey(key: string): Api {
    return new Api(this.baseUrl, { 'X-Api-Key': key });
  }

  withToken(token: string): Api {
    return new Api(this.baseUrl, { Authorization: `Bearer ${token}` });
  }

  async request(
    method: string,
    path: string,
    options: { json?: unknown; body?: Buffer | FormData; headers?: Record<string, string>; expect?: number[] } = {},
  ): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
    const headers: Record<string, string> = { ...this.auth, ...options.headers };
    let body: RequestInit['body'];
    if (options.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.body !== undefined) {
      body = options.body;
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    const expect = options.expect ?? [200, 201, 204];
    if (!expect.includes(response.status)) {
      throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  async json<T>(method: string, path: string, json?: unknown): Promise<T> {
    return (await this.request(method, path, { json })).body as T;
  }

  /** `GET /auth/token` with this client's key (the SDK's way to get a bearer token). */
  async token(): Promise<string> {
    return (await this.json<{ accessToken: string }>('GET', '/auth/token')).accessToken;
  }

  /** Generates a key (the caller must be allowed to grant what it asks for). */
  async createKey(spec: {
    permissions: { resource: number; actions: string[] }[];
    limits?: { resource: number; action: string; limit: number }[];
    description?: string;
    /** The key's TLP ceiling (`TLP:GREEN` …); the service's default without it (the creator's own). */
    maxTLP?: string;
  }): Promise<{ id: number; key: string }> {
    return this.json('POST', '/auth/keys', {
      permissions: spec.permissions.map((p) => ({ resource: { id: p.resource }, actions: p.actions })),
      ...(spec.limits && {
        requestLimits: spec.limits.map((l) => ({ target: { resource: { id: l.resource }, action: l.action }, limit: l.limit, period: 'Day' })),
      }),
      description: spec.description ?? 'bench',
      ...(spec.maxTLP && { maxTLP: spec.maxTLP }),
    });
  }

  /** Id of the child resource `name` of a built-in parent (a collection's resource under `intel`). */
  async childResourceId(parentId: number, name: string): Promise<number> {
    let path: string | undefined = `/auth/resources?parentID=${parentId}&limit=1000`;
    while (path) {
      const response = await this.request('GET', path);
      const found = (response.body as { id: number; name: string }[]).find((resource) => resource.name === name);
      if (found) return found.id;
      path = parseLinks(response.headers.get('link') ?? undefined).next;
    }
    throw new Error(`no resource "${name}" under ${parentId}`);
  }

  /** `METHOD /path/{param}` strings of every route in the service's OpenAPI document. */
  async routes(): Promise<Set<string>> {
    const document = await this.json<{ paths: Record<string, Record<string, unknown>> }>('GET', '/openapi.json');
    const routes = new Set<string>();
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) routes.add(`${method.toUpperCase()} ${path}`);
    }
    return routes;
  }
}

/** Parses a `Link` header into rel → URL. */
export function parseLinks(header: string | string[] | undefined): Record<string, string> {
  const links: Record<string, string> = {};
  const text = Array.isArray(header) ? header.join(', ') : (header ?? '');
  for (const part of text.split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>;\s*rel="?([a-z]+)"?/.exec(part.trim());
    if (match) links[match[2]] = match[1];
  }
  return links;
}

export function cursorOf(link: string): string | null {
  return new URL(link, 'http://x').searchParams.get('cursor');
}
