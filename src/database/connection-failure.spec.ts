import { describe, expect, it } from '@jest/globals';
import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isDatabaseUnavailable } from './connection-failure.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED')],
    ['refused on every address', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])],
    ['a connection cut under a query', new QueryFailedError('SELECT 1', [], new Error('Connection terminated unexpectedly'))],
    ['a server starting or recovering (57P03)', new QueryFailedError('SELECT 1', [], withCode('57P03'))],
    ['an administrator shutdown (57P01)', withCode('57P01')],
    ['a connection exception (08006)', withCode('08006')],
    ['no connection slot (53300)', withCode('53300')],
    ['a transaction whose connection failed', new QueryRunnerProviderAlreadyReleasedError()],
    ['a query on a transaction whose connection failed', new QueryRunnerAlreadyReleasedError()],
  ])('is true for %s', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', new QueryFailedError('INSERT', [], withCode('23505'))],
    ['a syntax error', withCode('42601')],
    ['a missing file', withCode('ENOENT')],
    ['a plain error', new Error('boom')],
    ['a non-error', 'ECONNREFUSED'],
  ])('is false for %s', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
