import { inferObjectType, normalizeKey, type ObjectKey, type ObjectType } from '../common/indicators/indicators.js';
import type { TlpRank } from '../common/markings/tlp.js';
import { recordCredibility, type CredibilityScale } from '../scoring/admiralty.js';

/**
 * What every format gives: object forms (as the intel batch path takes them; keys normalised unless a
 * record says otherwise), per-item rejections, and a whole-input failure as a typed record. No format
 * throws on its input and none knows about HTTP: the endpoint or the source run maps a failure to its own
 * error (the import to 400 InvalidData, a source run to outcome `failed`).
 */

export interface ObjectForm {
  type: ObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
  expiresAt?: string;
}

/** One item the format could not turn into a form: where it was (line or index), what it held, and why. */
export interface Rejection {
  /** 1-based line of a line format (the record's first line for CSV), else the 0-based index of the item. */
  line?: number;
  index?: number;
  value: string;
  reason: string;
}

/** Why a whole input cannot be read: nothing of it should be applied. */
export type FormatFailureCode = 'NotUtf8' | 'NotJson' | 'MalformedCsv' | 'MissingColumn' | 'NoItems' | 'TooManyItems' | 'NotAnEvent' | 'NotTaxii' | 'HtmlPage';

export interface FormatFailure {
  code: FormatFailureCode;
  message: string;
  /** The line of an NDJSON value that is not JSON. */
  line?: number;
  /** The CSV column named but absent from the header. */
  column?: string;
  /** The envelope member that is missing or empty (`objects`). */
  member?: string;
}

export const failure = (code: FormatFailureCode, message: string, extra: Omit<FormatFailure, 'code' | 'message'> = {}): FormatFailure => ({
  code,
  message,
  ...extra,
});

/**
 * A record of a streamed format: a form, a rejected item, or (last) the failure that ended the input. A
 * form's `tlp` is the marking the record carries itself (a STIX object's marking refs, a MISP event's and
 * attribute's tags), absent when it carries none: the reader (a source's run) raises its own by it. Its
 * `credibility` is the Admiralty value (0..100, extensions §18) the record gives itself (a CSV column, an
 * NDJSON member, a STIX `confidence`, a MISP admiralty-scale tag), absent when it gives none in its scale:
 * the reader then takes its own.
 */
export type FormatRecord =
  | { kind: 'form'; line: number; form: ObjectForm; tlp?: TlpRank; credibility?: number }
  | { kind: 'rejected'; rejection: Rejection }
  | { kind: 'failed'; failure: FormatFailure };

/** Where a line format's records give their own credibility: a column or member, and its scale. */
export interface CredibilityOption {
  field: string;
  scale: CredibilityScale;
}

/** The records of one line with the credibility `raw` (the line's cell or member) gives, when in its scale. */
export function* credited<R extends FormatRecord>(records: Iterable<R>, raw: unknown, scale: CredibilityScale | undefined): Generator<R> {
  const credibility = scale === undefined ? undefined : recordCredibility(raw, scale);
  for (const record of records) yield record.kind === 'form' && credibility !== undefined ? { ...record, credibility } : record;
}

/** A format read whole: its forms and rejections, or why it cannot be read. */
export type Parsed<T = ObjectForm> = { ok: true; forms: T[]; rejected: Rejection[] } | { ok: false; failure: FormatFailure };

/** A key in its stored form, or the reason the intel rules refuse it (their message). */
export function normalized(key: ObjectKey): { key: ObjectKey } | { reason: string } {
  try {
    return { key: normalizeKey(key) };
  } catch (error) {
    return { reason: (error as Error).message };
  }
}

/** The form of one normalised key. */
export const formOf = (key: ObjectKey, context: Record<string, unknown>): ObjectForm => ({ type: inferObjectType([key]), keys: [key], context });

/** How keys are compared: type and stored value. */
export const keyId = (key: ObjectKey): string => `${key.type}\n${key.value}`;

/** Collects a stream of records into a whole parse: the first failure wins. */
export async function collect(records: AsyncIterable<FormatRecord>): Promise<Parsed> {
  const forms: ObjectForm[] = [];
  const rejected: Rejection[] = [];
  for await (const record of records) {
    if (record.kind === 'failed') return { ok: false, failure: record.failure };
    if (record.kind === 'form') forms.push(record.form);
    else rejected.push(record.rejection);
  }
  return { ok: true, forms, rejected };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
