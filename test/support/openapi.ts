import { afterAll, beforeAll } from '@jest/globals';
import { createTestApp, type TestApp } from './test-app.js';

/** The parts of an OpenAPI 3 document the OpenAPI checks read. */
export interface SchemaObject {
  $ref?: string;
  type?: string;
  format?: string;
  items?: SchemaObject;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  enum?: string[];
  allOf?: SchemaObject[];
  oneOf?: SchemaObject[];
}
export interface Operation {
  summary?: string;
  description?: string;
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: SchemaObject }> };
  responses: Record<string, { content?: Record<string, { schema: SchemaObject }>; headers?: Record<string, unknown> }>;
  /** Alternatives, each a set of schemes (`[]` on operations that need no credentials). */
  security?: Record<string, string[]>[];
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, SchemaObject> };
}

/** The service's published document, fetched without credentials as any client would. */
export async function fetchOpenApi(t: TestApp): Promise<OpenApiDocument> {
  const response = await t.http().get('/openapi.json');
  if (response.status !== 200) throw new Error(`/openapi.json answered ${response.status}`);
  return JSON.parse(response.text) as OpenApiDocument;
}

/** Follows `$ref` and a lone `allOf` wrapper to the schema object itself. */
export function resolveSchema(document: OpenApiDocument, schema: SchemaObject): SchemaObject {
  if (schema.$ref) return resolveSchema(document, document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]);
  if (schema.allOf?.length === 1) return resolveSchema(document, schema.allOf[0]);
  return schema;
}

/** `METHOD /path` of every operation whose path `include` accepts, sorted. */
export function operationsWhere(document: OpenApiDocument, include: (path: string) => boolean): string[] {
  return Object.entries(document.paths)
    .filter(([path]) => include(path))
    .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

/** The published document of an application booted for the enclosing `describe` block (closed after it). */
export function publishedOpenApi(): { readonly document: OpenApiDocument; resolve: (schema: SchemaObject) => SchemaObject } {
  let app: TestApp | undefined;
  let document: OpenApiDocument | undefined;
  beforeAll(async () => {
    app = await createTestApp();
    document = await fetchOpenApi(app);
  });
  afterAll(async () => {
    await app?.close();
  });
  const loaded = () => {
    if (!document) throw new Error('the OpenAPI document is read before the application started');
    return document;
  };
  return {
    get document() {
      return loaded();
    },
    resolve: (schema) => resolveSchema(loaded(), schema),
  };
}
