import express, { type RequestHandler } from 'express';
import { MAX_BATCH_BYTES } from '../batch/batch-body.js';
import { ImportErrors } from './import.errors.js';

/** The import route, for the body reader that configureApp mounts ahead of the JSON body parser. */
export const IMPORT_ROUTE = '/intel/collections/:collection_id/import';

/** The body as bytes whatever its type, up to the batch limit (413 beyond); decoded by `importText`. */
export function importBodyReader(): RequestHandler {
  return express.raw({ type: () => true, limit: MAX_BATCH_BYTES });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The body as text: UTF-8 (a BOM is dropped), not empty, no NUL (a binary file). Any other charset
 * named by Content-Type is 415; everything else wrong is 400 InvalidData. Nothing is written in any case.
 */
export function importText(body: unknown, contentType: string | undefined): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') throw ImportErrors.charset(charset);
  const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
  if (bytes.includes(0)) throw ImportErrors.binary();
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw ImportErrors.notUtf8();
  }
  if (text.trim() === '') throw ImportErrors.empty();
  return text;
}
