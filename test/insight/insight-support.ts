import { expect } from '@jest/globals';
import type { TestApp } from '../support/test-app.js';

/** Result schema used by the insight tests: a verdict with an optional score. */
export const VERDICT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  schemaID: 'verdict',
  title: 'Verdict',
  type: 'object',
  properties: {
    type: { enum: ['File', 'DomainName', 'URL', 'IPAddress'] },
    keys: { type: 'array', minItems: 1 },
    context: {
      type: 'object',
      properties: {
        verdict: { enum: ['malicious', 'benign'] },
        score: { type: 'integer', minimum: 0, maximum: 100 },
      },
      required: ['verdict'],
      additionalProperties: false,
    },
  },
  required: ['type', 'keys', 'context'],
};

export const GOOD_RESULT = {
  type: 'DomainName',
  keys: [{ type: 'DomainName', value: 'example.com' }],
  context: { verdict: 'malicious' },
};

export async function registerSchema(t: TestApp, document: Record<string, unknown> = VERDICT_SCHEMA) {
  const response = await t.insight.createSchema(document);
  expect(response.status).toBe(201);
}

/** Registers a task as the admin and returns its id. */
export async function registerTask(t: TestApp, params: Record<string, unknown> = domainParams()): Promise<string> {
  const response = await t.insight.registerTask(params);
  expect(response.status).toBe(201);
  return (response.body as { taskID: string }).taskID;
}

export function domainParams(domain = 'example.com') {
  return { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: domain }] };
}

export interface QueueItem {
  id: string;
  createdAt: string;
  params: Record<string, unknown>;
}

/** Takes tasks as the admin. */
export async function take(t: TestApp, limit: number): Promise<QueueItem[]> {
  const response = await t.insight.take(limit);
  expect(response.status).toBe(200);
  return response.body as QueueItem[];
}

export function complete(t: TestApp, taskID: string, result: unknown = GOOD_RESULT) {
  return t.insight.complete({ taskID, result });
}

export function fail(t: TestApp, taskID: string, error: unknown = { code: 'ErrTestCode', message: 'Error test code' }) {
  return t.insight.fail({ taskID, error });
}

export async function viewTask(t: TestApp, taskID: string) {
  const response = await t.insight.task(taskID);
  expect(response.status).toBe(200);
  return response.body as Record<string, unknown>;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
