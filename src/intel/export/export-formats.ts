import { createHash } from 'node:crypto';
import type { KeyType } from '../../common/indicators/indicators.js';
import { tlpOf, type TlpRank } from '../../common/markings/tlp.js';
import { CONTEXT_EXTENSION_DEFINITION, SERVICE_IDENTITY, toIndicator, toSco } from '../../stix/stix-projection.js';
import { objectView, storedObject, type MarkedRow, type StoredObject } from '../object-rows.js';

export const EXPORT_FORMATS = ['txt', 'csv', 'ndjson', 'stix'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The formats whose lines are keys, not objects: only they take `keyType`. */
export const KEY_FORMATS: readonly ExportFormat[] = ['txt', 'csv'];

export const URL_SCHEMES = ['keep', 'omit'] as const;
export type UrlScheme = (typeof URL_SCHEMES)[number];

/** How one export lists what the read policy lets it read; part of its ETag with the policy's own part. */
export interface ExportParams {
  format: ExportFormat;
  keyType: KeyType | null;
  urlScheme: UrlScheme;
}

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson; charset=utf-8',
  stix: 'application/stix+json;version=2.1',
};

/** What a body needs besides its rows: the collection (STIX indicators name it) and the body's ETag. */
export interface BodyContext {
  collection: string;
  tag: string;
}

/** A row of the STIX export: an object with its marking, its life (the indicator's id and `created`) and last change time. */
export interface LifeRow extends StoredObject {
  tlp: TlpRank;
  uid: string;
  addedAt: string;
  modified: string;
  /** Its score without decay now (extensions §18). */
  confidence: number;
}

/**
 * A bundle's id: equal tags must give equal bytes (a strong ETag), so it is derived from the tag, but STIX 2.1
 * wants a UUIDv4 (`stix2-validator --strict` refuses a v5: "{103} not a valid UUIDv4 ID"). So: the first 128
 * bits of a SHA-256 of the tag with the version (4) and variant (10xx) bits set, as RFC 9562 §5.4 lays them out.
 */
export function bundleIdOf(tag: string): string {
  const bytes = createHash('sha256').update(`bundle ${tag}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `bundle--${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A row of the CSV export: one key of one object. */
export interface KeyRow {
  type: string;
  keyType: string;
  value: string;
  expiresAt: string | null;
  context: Record<string, unknown>;
  tlp: TlpRank;
}

/** RFC 4180: a field with a quote, comma, CR or LF is quoted, its quotes doubled; records end with CRLF. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** The marking comes last: the columns a reader took by position before markings keep their places. */
export const CSV_HEADER = ['type', 'key type', 'key value', 'expiresAt', 'context', 'tlp'].join(',') + '\r\n';

export function csvRecord(row: KeyRow): string {
  return [row.type, row.keyType, row.value, row.expiresAt ?? '', JSON.stringify(row.context), tlpOf(row.tlp)].map(csvField).join(',') + '\r\n';
}

/** The object view of the listing (with its marking), one per line. */
export function ndjsonLine(object: MarkedRow): string {
  return JSON.stringify(objectView(object)) + '\n';
}

/**
 * The last version of an object's indicator and its observable, as TAXII serves them (the shared STIX
 * projection), each after a comma: the bundle's first objects are the identity and extension definition.
 */
export function stixObjects(row: LifeRow, collection: string): string {
  const object = storedObject(row);
  const indicator = toIndicator({
    indicatorUuid: row.uid,
    collection,
    object,
    firstAdded: row.addedAt,
    modified: row.modified,
    tlp: row.tlp,
    confidence: row.confidence,
  });
  return `,${JSON.stringify(indicator)},${JSON.stringify(toSco(object, row.tlp))}`;
}

/**
 * A batch of rows as the body's next chunk. `txt` rows are the values themselves (normalised key values
 * never hold a line break: URLs are percent-encoded, other types have no such character).
 */
export function chunkOf(format: ExportFormat, rows: unknown[], body: BodyContext): string {
  switch (format) {
    case 'txt':
      return (rows as string[][]).map((row) => row[0] + '\n').join('');
    case 'csv':
      return (rows as KeyRow[]).map(csvRecord).join('');
    case 'ndjson':
      return (rows as MarkedRow[]).map(ndjsonLine).join('');
    case 'stix':
      return (rows as LifeRow[]).map((row) => stixObjects(row, body.collection)).join('');
  }
}

/** What a body starts with, before any row. */
export function prologueOf(format: ExportFormat, body: BodyContext): string {
  if (format === 'csv') return CSV_HEADER;
  if (format !== 'stix') return '';
  const constants = [SERVICE_IDENTITY, CONTEXT_EXTENSION_DEFINITION].map((object) => JSON.stringify(object)).join(',');
  return `{"type":"bundle","id":"${bundleIdOf(body.tag)}","objects":[${constants}`;
}

/** What a body ends with, after every row. */
export function epilogueOf(format: ExportFormat): string {
  return format === 'stix' ? ']}' : '';
}
