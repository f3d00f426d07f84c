import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, ErrorCode } from '../errors/api-error.js';
import { compiledValidation } from './compiled-validation.js';
import { inspectJsonBody, MAX_JSON_DEPTH } from './json-body.js';

interface FieldError {
  field: string;
  problems: string[];
}

function flatten(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = /^\d+$/.test(error.property) ? `${prefix}[${error.property}]` : prefix ? `${prefix}.${error.property}` : error.property;
    const own = error.constraints ? [{ field, problems: Object.values(error.constraints) }] : [];
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

const UNSTORABLE_TEXT_MESSAGE = 'text may not contain U+0000 or an unpaired UTF-16 surrogate (the database cannot store them)';

const CODE_BY_SOURCE: Record<string, ErrorCode> = {
  body: 'InvalidData',
  query: 'InvalidQueryArgument',
  param: 'InvalidPathArgument',
};

/**
 * The global pipe: class-validator DTOs with unknown fields refused, and the failure coded by where the
 * bad value came from (body → InvalidData, query → InvalidQueryArgument, path → InvalidPathArgument).
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  /**
   * Bodies and path parameters the compiled fast path accepts skip class-validator; false leaves them all to
   * the library (the reference compiled-validation.spec.ts holds the fast path to).
   */
  protected readonly compiled: boolean = true;

  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      stopAtFirstError: false,
      validationError: { target: false, value: false },
      exceptionFactory: (errors: ValidationError[]) => new FieldErrors(flatten(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body') {
      // Names and text are checked only where the base pipe validates: bodies validated through a DTO.
      const validated = this.toValidate(metadata);
      const problem = inspectJsonBody(value, { attributeNames: validated, text: validated });
      if (problem?.kind === 'tooDeep') {
        throw new ApiError('InvalidData', `the request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
      }
      if (problem?.kind === 'nonFiniteNumber') {
        throw new ApiError('InvalidData', 'the request body holds a number out of the range of a double (e.g. 1e400)');
      }
      if (problem?.kind === 'reservedAttribute') {
        throw new ApiError('InvalidData', `attributes may not be named __proto__, constructor or prototype (${problem.pointer})`, {
          InstanceLocation: problem.pointer,
        });
      }
      if (problem?.kind === 'unstorableText') {
        throw new ApiError('InvalidData', `${UNSTORABLE_TEXT_MESSAGE} (at ${problem.pointer || '/'})`, {
          InstanceLocation: problem.pointer,
        });
      }
    }
    // Query and path values reach text columns (filters, names, keys) whether or not a DTO declares them.
    const inUrl = metadata.type === 'query' || metadata.type === 'param';
    if (inUrl && inspectJsonBody(value, { attributeNames: false, text: true })?.kind === 'unstorableText') {
      throw new ApiError(CODE_BY_SOURCE[metadata.type], `${metadata.type === 'query' ? 'query' : 'path'} ${UNSTORABLE_TEXT_MESSAGE}`);
    }
    if (metadata.type === 'body' && metadata.metatype && this.toValidate(metadata) && !isPlainObject(value)) {
      throw new ApiError('InvalidData', 'the request body must be a JSON object');
    }
    // Only what class-validator would accept as it is; everything else takes the library's path below. Path
    // parameters too: most routes have a DTO of them, checked on every request (query DTOs convert types,
    // which the fast path leaves to the library anyway).
    const fast =
      (metadata.type === 'body' || metadata.type === 'param') &&
      this.compiled &&
      metadata.metatype &&
      this.toValidate(metadata) &&
      compiledValidation(metadata.metatype)?.(value);
    if (fast) return fast;
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (!(error instanceof FieldErrors)) throw error;
      const summary = error.fields.map((entry) => `${entry.field}: ${entry.problems.join(', ')}`).join('; ');
      throw new ApiError(CODE_BY_SOURCE[metadata.type] ?? 'BadRequest', summary || 'invalid request', {
        errors: error.fields,
      });
    }
  }
}

/** Carries the field errors out of the base pipe so that transform() can pick the code for the source. */
class FieldErrors extends Error {
  constructor(readonly fields: FieldError[]) {
    super('validation failed');
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
