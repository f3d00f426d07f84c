import { CsvError, parse as parseStream } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { inferObjectType, KEY_TYPES, type KeyType, type ObjectKey } from '../common/indicators/indicators.js';
import { decodedRecords, textOf, type Chunks } from './chunks.js';
import { credited, failure, formOf, normalized, type CredibilityOption, type FormatFailure, type FormatRecord, type Rejection } from './forms.js';
import { valueRecords } from './text.js';

/**
 * CSV with a header row, columns named by header: the import's `format=csv` (`parseCsv`, a whole text)
 * and a source of kind `csv` (`streamCsv`, as it arrives). Pure: no I/O.
 */

export interface CsvOptions {
  valueColumn: string;
  /** The column holding the key type; without it the type is found as the free-text import finds it. */
  typeColumn?: string;
  /** Columns copied into each object's context when not empty. */
  contextColumns?: string[];
  /** The context every object starts from. */
  context?: Record<string, unknown>;
  delimiter?: string;
  /** Lines dropped before the header line (a feed's preamble). */
  skipLines?: number;
  /** The header's leading `#` and spaces are dropped (ThreatFox's `# "first_seen_utc", ...`). */
  commentedHeader?: boolean;
  /** Every cell trimmed (ThreatFox's `", "` separators); otherwise only the value is. */
  trim?: boolean;
  /** The column holding each row's own credibility (a source's `credibilityField`), and its scale. */
  credibility?: CredibilityOption;
}

/**
 * A row whose key is not valid. `unchecked` is the row as a form all the same, for a caller that lets the
 * batch path name what is wrong (the import does, so that every row is accounted for in its report).
 */
export interface CsvRejection extends Rejection {
  unchecked?: { type: string; keys: { type: string; value: string }[]; context: Record<string, unknown> };
}

export type CsvRecord = Exclude<FormatRecord, { kind: 'rejected' }> | { kind: 'rejected'; rejection: CsvRejection };

/**
 * Key type names of common feeds (MISP attribute types, plain words), lower case, beside our own
 * (`MD5Hash`, any case). An address with a prefix (`ip-dst` `10.0.0.0/8`) is a network.
 */
const TYPE_NAMES: Record<string, KeyType> = {
  ...Object.fromEntries(KEY_TYPES.map((type) => [type.toLowerCase(), type])),
  md5: 'MD5Hash',
  sha1: 'SHA1Hash',
  sha256: 'SHA256Hash',
  sha512: 'SHA512Hash',
  domain: 'DomainName',
  hostname: 'DomainName',
  fqdn: 'DomainName',
  url: 'URL',
  uri: 'URL',
  link: 'URL',
  ip: 'IPAddress',
  'ip-src': 'IPAddress',
  'ip-dst': 'IPAddress',
  ipv4: 'IPAddress',
  ipv6: 'IPAddress',
  cidr: 'IPNetwork',
  network: 'IPNetwork',
  subnet: 'IPNetwork',
};

function keyTypeOf(name: string, value: string): KeyType | undefined {
  const type = Object.hasOwn(TYPE_NAMES, name.trim().toLowerCase()) ? TYPE_NAMES[name.trim().toLowerCase()] : undefined;
  return type === 'IPAddress' && value.includes('/') ? 'IPNetwork' : type;
}

/** The header line with the preamble before it dropped and, for a commented header, its `#` and spaces. */
function withoutPreamble(head: string, options: CsvOptions): string {
  let start = 0;
  for (let skipped = 0; skipped < (options.skipLines ?? 0); skipped++) {
    const end = head.indexOf('\n', start);
    if (end < 0) return '';
    start = end + 1;
  }
  const rest = head.slice(start);
  return options.commentedHeader ? rest.replace(/^[#\s]+/, '') : rest;
}

const parserOptions = (options: CsvOptions, columns: (names: string[]) => string[]) => ({
  bom: true,
  skip_empty_lines: true,
  info: true,
  columns,
  ...(options.delimiter !== undefined && { delimiter: options.delimiter }),
  ...(options.trim && { trim: true }),
});

type Row = { record: Record<string, string>; info: { lines: number } };

function missingColumn(header: string[], options: CsvOptions): FormatFailure | undefined {
  const named = [options.typeColumn, options.valueColumn, ...(options.contextColumns ?? []), options.credibility?.field].filter(
    (column) => column !== undefined,
  );
  const missing = named.find((column) => !header.includes(column));
  return missing === undefined ? undefined : failure('MissingColumn', `the CSV header has no column "${missing}"`, { column: missing });
}

const malformed = (error: unknown) => failure('MalformedCsv', `the CSV body is malformed: ${(error as Error).message}`);

/** The records of one row: the key of its type and value cells (or its value alone), its context cells, its credibility cell. */
function* rowRecords(row: Row, options: CsvOptions): Generator<CsvRecord> {
  const { field, scale } = options.credibility ?? {};
  yield* credited(keyRecords(row, options), field === undefined ? undefined : row.record[field], scale);
}

function* keyRecords({ record, info }: Row, options: CsvOptions): Generator<CsvRecord> {
  const line = info.lines + (options.skipLines ?? 0);
  const value = record[options.valueColumn].trim();
  const context = { ...options.context };
  for (const column of options.contextColumns ?? []) if (record[column] !== '') context[column] = record[column];
  if (options.typeColumn === undefined) {
    yield* valueRecords(line, value, context);
    return;
  }
  const rawType = record[options.typeColumn];
  const type = keyTypeOf(rawType, value);
  const checked = type === undefined ? { reason: `unknown key type "${rawType}"` } : normalized({ type, value });
  if ('key' in checked) {
    yield { kind: 'form', line, form: formOf(checked.key, context) };
    return;
  }
  const unchecked = { type: type === undefined ? rawType : inferObjectType([{ type, value } as ObjectKey]), keys: [{ type: type ?? rawType, value }], context };
  yield { kind: 'rejected', rejection: { line, value, reason: checked.reason, unchecked } };
}

/**
 * A whole CSV text: a row per record, in order, or a failure: `MalformedCsv` (the parser's message) before
 * `MissingColumn` (a named column absent from the header).
 */
export function parseCsv(text: string, options: CsvOptions): { ok: true; records: CsvRecord[] } | { ok: false; failure: FormatFailure } {
  let header: string[] = [];
  let rows: Row[];
  try {
    rows = parseSync(
      withoutPreamble(text, options),
      parserOptions(options, (names) => (header = names)),
    ) as unknown as Row[];
  } catch (error) {
    return { ok: false, failure: malformed(error) };
  }
  const missing = missingColumn(header, options);
  if (missing !== undefined) return { ok: false, failure: missing };
  return { ok: true, records: rows.flatMap((row) => [...rowRecords(row, options)]) };
}

/** The text of the chunks with the preamble handled: held until the header line is whole, then passed on. */
async function* bodyText(input: Chunks, options: CsvOptions): AsyncGenerator<string> {
  const needed = (options.skipLines ?? 0) + 1;
  let head = '';
  let passing = false;
  for await (const text of textOf(input)) {
    if (passing) {
      yield text;
      continue;
    }
    head += text;
    if (head.split('\n').length > needed) {
      passing = true;
      yield withoutPreamble(head, options);
    }
  }
  if (!passing) yield withoutPreamble(head, options);
}

/**
 * A CSV as it arrives (a source of kind `csv`): a missing named column fails at the header, a malformed
 * row fails where it is (the records before it were given already: a run applies all or nothing).
 */
export function streamCsv(input: Chunks, options: CsvOptions): AsyncGenerator<CsvRecord> {
  return decodedRecords(csvRecords(input, options)) as AsyncGenerator<CsvRecord>;
}

async function* csvRecords(input: Chunks, options: CsvOptions): AsyncGenerator<CsvRecord> {
  let missing: FormatFailure | undefined;
  const parser = parseStream(
    parserOptions(options, (names) => {
      missing = missingColumn(names, options);
      return names;
    }),
  );
  const feeding = (async () => {
    try {
      for await (const text of bodyText(input, options)) {
        // A parser that failed or was left never drains: its close ends the wait, and the feeding.
        if (!parser.write(text)) await new Promise((resolve) => parser.once('drain', resolve).once('close', resolve));
        if (parser.destroyed) return;
      }
      parser.end();
    } catch (error) {
      parser.destroy(error as Error);
    }
  })();
  try {
    for await (const row of parser as AsyncIterable<Row>) {
      if (missing !== undefined) break;
      yield* rowRecords(row, options);
    }
  } catch (error) {
    if (error instanceof CsvError) {
      yield { kind: 'failed', failure: malformed(error) };
      return;
    }
    throw error;
  } finally {
    parser.destroy();
    await feeding;
  }
  if (missing !== undefined) yield { kind: 'failed', failure: missing };
}
