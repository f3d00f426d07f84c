import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { Metrics } from '../common/metrics/metrics.js';
import type { AppConfig } from '../config/app-config.js';
import { InvalidationBus } from '../database/invalidation-bus.js';
import { FULL_REPORT_MAX_CHARS, MAX_REPORTED_VIOLATIONS, SchemaRegistryService } from './schema-registry.service.js';
import { SchemasRepository } from './schemas.repository.js';

const PHISHING = {
  schemaID: 'phishing-schema',
  type: 'object',
  properties: {
    type: { enum: ['DomainName'] },
    context: {
      type: 'object',
      properties: { size: { type: 'integer', minimum: 10 }, label: { type: 'string' } },
      required: ['label'],
    },
  },
};

/** A stand-in for the schemas table: one row, whose version and document the test changes. */
function fakeTable(row: { version: number; document: Record<string, unknown> } | undefined) {
  const documentReads: number[] = [];
  const dataSource = {
    query: async (sql: string) => {
      if (!row) return [];
      if (sql.includes('SELECT document')) {
        documentReads.push(row.version);
        return [{ document: row.document, version: row.version }];
      }
      return [{ version: row.version }];
    },
  } as unknown as DataSource;
  // A bus that never connected is never trusted: versions are read from the (fake) table every time.
  const bus = new InvalidationBus({} as AppConfig, dataSource, new Metrics({ metricsPort: 0 } as AppConfig));
  return { service: new SchemaRegistryService(dataSource, new SchemasRepository(dataSource), bus, {} as AppConfig), documentReads };
}

async function errorOf(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('SchemaRegistryService.validate', () => {
  it('accepts a matching object', async () => {
    const { service } = fakeTable({ version: 1, document: PHISHING });
    await expect(service.validate('intel', 'phishing-schema', { type: 'DomainName', keys: [], context: { size: 10, label: 'x' } })).resolves.toBeUndefined();
  });

  it('answers 422 SchemaNotFound for an absent schema', async () => {
    const { service } = fakeTable(undefined);
    const error = await errorOf(service.validate('intel', 'nope', {}));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'SchemaNotFound', status: 422 });
  });

  it('reports every violation in the wire form, the first one also at the top of the details', async () => {
    const { service } = fakeTable({ version: 1, document: PHISHING });
    const error = await errorOf(service.validate('intel', 'phishing-schema', { type: 'URL', keys: [], context: { size: 3 } }));
    expect(error.code).toBe('SchemaCheckFail');
    const violations = [
      {
        AbsoluteKeywordLocation: 'phishing-schema#/properties/type/enum',
        InstanceLocation: '/type',
        Message: 'must be equal to one of the allowed values',
      },
      {
        AbsoluteKeywordLocation: 'phishing-schema#/properties/context/required',
        InstanceLocation: '/context',
        Message: "must have required property 'label'",
      },
      {
        AbsoluteKeywordLocation: 'phishing-schema#/properties/context/properties/size/minimum',
        InstanceLocation: '/context/size',
        Message: 'must be >= 10',
      },
    ];
    expect(error.details).toEqual({ ...violations[0], errors: violations });
  });

  it('lists at most MAX_REPORTED_VIOLATIONS violations and then says how many there were', async () => {
    const document = { schemaID: 'strings', properties: { context: { properties: { a: { items: { type: 'string' } } } } } };
    const { service } = fakeTable({ version: 1, document });
    const items = MAX_REPORTED_VIOLATIONS * 3;
    const error = await errorOf(service.validate('intel', 'strings', { type: 'URL', keys: [], context: { a: Array.from({ length: items }, (_, i) => i) } }));
    const details = error.details as { errors: { InstanceLocation: string }[]; errorCount: number; InstanceLocation: string };
    expect(error.code).toBe('SchemaCheckFail');
    expect(details.errors).toHaveLength(MAX_REPORTED_VIOLATIONS);
    expect(details.errors[MAX_REPORTED_VIOLATIONS - 1].InstanceLocation).toBe(`/context/a/${MAX_REPORTED_VIOLATIONS - 1}`);
    expect(details.errorCount).toBe(items);
    expect(details.InstanceLocation).toBe('/context/a/0');
    expect(error.message).toContain(`and ${items - 1} more violations`);

    // At the cap exactly, nothing is left out and no count is added.
    const atCap = await errorOf(service.validate('intel', 'strings', { context: { a: Array.from({ length: MAX_REPORTED_VIOLATIONS }, (_, i) => i) } }));
    expect((atCap.details as { errors: unknown[] }).errors).toHaveLength(MAX_REPORTED_VIOLATIONS);
    expect(atCap.details).not.toHaveProperty('errorCount');
  });

  it('reports only the first violation of an instance too large for a full report', async () => {
    const document = { schemaID: 'strings', properties: { context: { properties: { a: { items: { type: 'string' } } } } } };
    const { service } = fakeTable({ version: 1, document });
    // Far more wrong items than fit under the full-report size: collecting them all is what must not happen.
    const items = FULL_REPORT_MAX_CHARS;
    const error = await errorOf(service.validate('intel', 'strings', { type: 'URL', keys: [], context: { a: Array.from({ length: items }, () => 1) } }));
    expect(error.code).toBe('SchemaCheckFail');
    expect(error.details).toEqual({
      AbsoluteKeywordLocation: 'strings#/properties/context/properties/a/items/type',
      InstanceLocation: '/context/a/0',
      Message: 'must be string',
      errors: [
        {
          AbsoluteKeywordLocation: 'strings#/properties/context/properties/a/items/type',
          InstanceLocation: '/context/a/0',
          Message: 'must be string',
        },
      ],
      complete: false,
    });
    // A valid instance of the same size passes.
    await expect(service.validate('intel', 'strings', { context: { a: Array.from({ length: items }, () => 'x') } })).resolves.toBeUndefined();
  });

  it('compiles once per version and uses a new version as soon as the table has it', async () => {
    const row = { version: 1, document: PHISHING as Record<string, unknown> };
    const { service, documentReads } = fakeTable(row);
    const small = { type: 'DomainName', keys: [], context: { size: 3, label: 'x' } };
    await expect(service.validate('intel', 'phishing-schema', small)).rejects.toBeInstanceOf(ApiError);
    await expect(service.validate('intel', 'phishing-schema', small)).rejects.toBeInstanceOf(ApiError);
    expect(documentReads).toEqual([1]);

    // Another instance replaced the schema: the next validation reads and compiles version 2.
    row.version = 2;
    row.document = { ...PHISHING, properties: { ...PHISHING.properties, context: { type: 'object' } } };
    await expect(service.validate('intel', 'phishing-schema', small)).resolves.toBeUndefined();
    await expect(service.validate('intel', 'phishing-schema', small)).resolves.toBeUndefined();
    expect(documentReads).toEqual([1, 2]);
  });
});
