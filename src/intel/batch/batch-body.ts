import express, { type RequestHandler } from 'express';
import { ApiError, CommonErrors } from '../../common/errors/api-error.js';
import { jsonLines } from '../../formats/ndjson.js';

/** The batch route, for the body reader that configureApp mounts ahead of the JSON body parser. */
export const BATCH_ROUTE = '/intel/collections/:collection_id/objects/batch';
export const MAX_BATCH_BYTES = 32 * 1024 * 1024;
export const MAX_BATCH_ITEMS = 10_000;

export const JSON_TYPE = 'application/json';
export const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson', 'application/jsonl'];

/**
 * Reads a batch body as bytes, up to MAX_BATCH_BYTES (413 beyond), whatever its type: a batch may be
 * larger than the JSON bodies of other routes and may be NDJSON, which is parsed by `parseBatch` once the
 * route has been authorised. Mounted before the global JSON parser, which then finds the body consumed.
 */
export function batchBodyReader(): RequestHandler {
  return express.raw({ type: () => true, limit: MAX_BATCH_BYTES });
}

const tooMany = () => CommonErrors.tooLarge(`a batch holds at most ${MAX_BATCH_ITEMS} items`);

/**
 * The items of a batch body: a JSON array, or NDJSON (one JSON value per line; blank lines are skipped).
 * Not parseable, not an array, a bad line, no items → 400 InvalidData; more than MAX_BATCH_ITEMS → 413;
 * another media type → 415. Nothing of the batch is applied in any of these cases.
 */
export function parseBatch(body: unknown, contentType: string | undefined): unknown[] {
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : '';
  let items: unknown[];
  if (mediaType === JSON_TYPE) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw CommonErrors.invalidData('the request body is not valid JSON');
    }
    if (!Array.isArray(parsed)) throw CommonErrors.invalidData('the request body must be a JSON array of items');
    items = parsed;
  } else if (NDJSON_TYPES.includes(mediaType)) {
    items = [];
    for (const parsed of jsonLines(text)) {
      if (items.length === MAX_BATCH_ITEMS) throw tooMany();
      if ('notJson' in parsed) throw CommonErrors.invalidData(`line ${parsed.line} of the NDJSON body is not valid JSON`, { line: parsed.line });
      items.push(parsed.value);
    }
  } else {
    throw new ApiError('UnsupportedMediaType', `a batch is sent as ${JSON_TYPE} (an array of items) or ${NDJSON_TYPES[0]} (one item per line)`);
  }
  if (items.length === 0) throw CommonErrors.invalidData('a batch needs at least one item');
  if (items.length > MAX_BATCH_ITEMS) throw tooMany();
  return items;
}
