import { describe, expect, it } from '@jest/globals';
import { CreateApiKeyDto } from '../auth/dto/api-key.dto.js';
import { ApiError } from '../common/errors/api-error.js';
import { RegisterTaskDto } from '../insight/dto/task.dto.js';
// Registers SchemaNotFound, the code of the refusal below.
import '../schema-registry/schema-registry.errors.js';
import { refusalOf, validatedForm } from './forms.js';

const TASK_FIELDS = { 'params.schemaID': 'schemaID', 'params.objectKeys': 'objectKeys', 'params.fileID': 'fileID' };

async function refusal(type: new () => object, body: object, fields: Record<string, string>) {
  try {
    await validatedForm(type, body);
  } catch (error) {
    return refusalOf(error, fields);
  }
  throw new Error('the form was accepted');
}

describe('console forms', () => {
  it('gives the DTO instance of a valid form', async () => {
    const dto = await validatedForm(RegisterTaskDto, { params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'a.example' }] } });
    expect(dto).toBeInstanceOf(RegisterTaskDto);
    expect(dto.params.objectKeys).toEqual([{ type: 'DomainName', value: 'a.example' }]);
  });

  it('refuses by the DTO rules and puts each problem under its field', async () => {
    const keys = [{ type: 'IPNetwork', value: '10.0.0.0/8' }];
    expect(await refusal(RegisterTaskDto, { params: { schemaID: 'not a schema!', objectKeys: keys, fileID: 'x' } }, TASK_FIELDS)).toEqual({
      status: 400,
      message: 'The form was not accepted: see the marked fields.',
      fields: {
        schemaID: 'schemaID must be a schema identifier',
        objectKeys: expect.stringMatching(/^\[0\]\.type: type must be one of the following values: /),
        fileID: 'fileID must be a UUID',
      },
    });
  });

  it('keeps problems no field shows in the message', async () => {
    const body = { permissions: [{ resource: { id: 'x' }, actions: ['Read'] }], description: 'd'.repeat(1025) };
    const { message, fields } = await refusal(CreateApiKeyDto, body, { description: 'description' });
    expect(fields).toEqual({ description: 'description must be shorter than or equal to 1024 characters' });
    expect(message).toContain('permissions[0].resource.id: id must be an integer number');
  });

  it('shows an API refusal of the service as the message, and throws server errors on', () => {
    expect(refusalOf(new ApiError('SchemaNotFound', 'no such schema'), TASK_FIELDS)).toEqual({ status: 422, message: 'no such schema', fields: {} });
    const failure = new ApiError('ServiceUnavailable', 'down');
    expect(() => refusalOf(failure, TASK_FIELDS)).toThrow(failure);
    expect(() => refusalOf(new TypeError('bug'), TASK_FIELDS)).toThrow('bug');
  });
});
