import type { KeyType } from '../../common/indicators/indicators.js';
import { type StoredObject, storedObject } from '../objects.repository.js';

export const EXPORT_FORMATS = ['txt', 'csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The formats whose lines are keys, not objects: only they take `keyType`. */
export const KEY_FORMATS: readonly ExportFormat[] = ['txt', 'csv'];

export const URL_SCHEMES = ['keep', 'omit'] as const;
export type UrlScheme = (typeof URL_SCHEMES)[number];

/** What one export lists; part of its ETag. */
export interface ExportParams {
  format: ExportFormat;
  keyType: KeyType | null;
  urlScheme: UrlScheme;
}

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

/** A row of the CSV export: one key of one object. */
export interface KeyRow {
  type: string;
  keyType: string;
  value: string;
  expiresAt: string | null;
  context: Record<string, unknown>;
}

/** RFC 4180: a field with a quote, comma, CR or LF is quoted, its quotes doubled; records end with CRLF. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export const CSV_HEADER = ['type', 'key type', 'key value', 'expiresAt', 'context'].join(',') + '\r\n';

export function csvRecord(row: KeyRow): string {
  return [row.type, row.keyType, row.value, row.expiresAt ?? '', JSON.stringify(row.context)].map(csvField).join(',') + '\r\n';
}

/** The object view of the listing, one per line. */
export function ndjsonLine(object: StoredObject): string {
  return JSON.stringify(storedObject(object)) + '\n';
}

/**
 * A batch of rows as the body's next chunk. `txt` rows are the values themselves (normalised key values
 * never hold a line break: URLs are percent-encoded, other types have no such character).
 */
export function chunkOf(format: ExportFormat, rows: unknown[]): string {
  switch (format) {
    case 'txt':
      return (rows as string[][]).map((row) => row[0] + '\n').join('');
    case 'csv':
      return (rows as KeyRow[]).map(csvRecord).join('');
    case 'ndjson':
      return (rows as StoredObject[]).map(ndjsonLine).join('');
  }
}

/** What a body starts with, before any row. */
export function prologueOf(format: ExportFormat): string {
  return format === 'csv' ? CSV_HEADER : '';
}
