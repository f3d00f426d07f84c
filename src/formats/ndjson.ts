import { decodedRecords, linesOf, type Chunks } from './chunks.js';
import { credited, failure, isPlainObject, type CredibilityOption, type FormatRecord } from './forms.js';
import { valueRecords } from './text.js';

/**
 * NDJSON: one JSON value per line, blank lines skipped. `jsonLines` reads a whole text (the batch body);
 * `streamNdjson` reads a source of kind `ndjson` as it arrives. Pure: no I/O.
 */

/** One line's value, or that it is not JSON. */
export type JsonLine = { line: number; value: unknown } | { line: number; notJson: true };

function jsonLine(line: number, text: string): JsonLine | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    return { line, value: JSON.parse(trimmed) };
  } catch {
    return { line, notJson: true };
  }
}

/** The values of a whole NDJSON text, in order, lazily (a reader may stop at a limit or the first bad line). */
export function* jsonLines(text: string): Generator<JsonLine> {
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const parsed = jsonLine(index + 1, lines[index]);
    if (parsed !== undefined) yield parsed;
  }
}

export interface NdjsonOptions {
  /** The member holding the indicator (Spamhaus DROP's `cidr`); a line without it as a string is skipped. */
  valueField: string;
  /** Members copied into the context of the line's objects (when present and not null). */
  contextFields?: string[];
  /** The context every object starts from. */
  context?: Record<string, unknown>;
  /** The member holding each line's own credibility (a source's `credibilityField`), and its scale. */
  credibility?: CredibilityOption;
}

/**
 * A source of kind `ndjson`: per line, the indicator in `valueField` (its type found as the free-text
 * import finds it). Lines without that member, such as a trailing metadata line, are skipped; a line that
 * is not JSON, or whose value holds no indicator, is rejected with its number. A body none of whose lines
 * is a JSON object is not NDJSON at all (an HTML or plain-text page): it fails (`NotJson`) at its end.
 */
export function streamNdjson(input: Chunks, options: NdjsonOptions): AsyncGenerator<FormatRecord> {
  return decodedRecords(ndjsonRecords(input, options));
}

async function* ndjsonRecords(input: Chunks, options: NdjsonOptions): AsyncGenerator<FormatRecord> {
  let lines = 0;
  let objects = 0;
  for await (const { line, text } of linesOf(input)) {
    const parsed = jsonLine(line, text);
    if (parsed === undefined) continue;
    lines += 1;
    if ('notJson' in parsed) {
      yield { kind: 'rejected', rejection: { line, value: text.trim(), reason: 'the line is not valid JSON' } };
      continue;
    }
    const { value } = parsed;
    if (isPlainObject(value)) objects += 1;
    if (!isPlainObject(value) || !Object.hasOwn(value, options.valueField) || typeof value[options.valueField] !== 'string') continue;
    const context = { ...options.context };
    for (const field of options.contextFields ?? []) if (Object.hasOwn(value, field) && value[field] !== null) context[field] = value[field];
    const { field, scale } = options.credibility ?? {};
    yield* credited(valueRecords(line, value[options.valueField] as string, context), field === undefined ? undefined : value[field], scale);
  }
  if (lines > 0 && objects === 0) yield { kind: 'failed', failure: failure('NotJson', `no line of the body is a JSON object (${lines} non-blank lines)`) };
}
