import type { Chunks } from '../formats/chunks.js';
import { streamCsv } from '../formats/csv.js';
import { failure, type FormatRecord } from '../formats/forms.js';
import { streamNdjson } from '../formats/ndjson.js';
import { streamTextList } from '../formats/text.js';
import type { SourceKind, SourceSettings } from './source-form.js';

/** An HTML answer by its media type (`text/html`, `application/xhtml+xml`, any parameters). */
const HTML_TYPE = /^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i;
/** An HTML page by its first non-blank characters (a UTF-8 BOM, read as latin1 below, and whitespace skipped). */
const HTML_START = /^(?:\xEF\xBB\xBF)?\s*<(?:!doctype\s+html|html)[\s>]/i;
/** How many bytes are read before deciding: a doctype after more leading blanks than this is not looked for. */
const SNIFFED = 1024;

/**
 * The records of a body of a line kind, read as it arrives (src/formats): `text` lists, `csv` with a
 * header (its leading `#` dropped, every cell trimmed, as ThreatFox writes it), `ndjson`. Every object
 * starts from the source's `context`. An HTML page (a `Content-Type: text/html` answer, or a body that
 * starts with `<!doctype html` or `<html`) is no list of any kind: a maintenance or error page served with
 * 200 would otherwise give its links and host names as indicators. It fails the run (`HtmlPage`) before a
 * line is parsed.
 */
export async function* recordsOf(
  kind: SourceKind,
  settings: SourceSettings,
  body: AsyncIterable<Uint8Array>,
  contentType: string | null,
): AsyncGenerator<FormatRecord> {
  if (contentType !== null && HTML_TYPE.test(contentType)) {
    yield { kind: 'failed', failure: failure('HtmlPage', `the server answered ${contentType.trim()}, an HTML page, not a ${kind} list`) };
    return;
  }
  const iterator = body[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let size = 0;
  let done = false;
  while (size < SNIFFED) {
    const next = await iterator.next();
    if (next.done === true) {
      done = true;
      break;
    }
    head.push(next.value);
    size += next.value.byteLength;
  }
  if (HTML_START.test(Buffer.concat(head).toString('latin1'))) {
    await iterator.return?.();
    yield { kind: 'failed', failure: failure('HtmlPage', `the body is an HTML page, not a ${kind} list`) };
    return;
  }
  const rest = (async function* replayed() {
    yield* head;
    if (!done) yield* { [Symbol.asyncIterator]: () => iterator };
  })();
  yield* parse(kind, settings, rest);
}

function parse(kind: SourceKind, settings: SourceSettings, body: Chunks): AsyncGenerator<FormatRecord> {
  const context = settings.context;
  // Each record's own credibility (extensions §18), where the source names its column or member.
  const credibility =
    settings.credibilityField === undefined ? {} : { credibility: { field: settings.credibilityField, scale: settings.credibilityScale ?? 'admiralty' } };
  switch (kind) {
    case 'text':
      return streamTextList(body, context);
    case 'csv':
      return streamCsv(body, {
        valueColumn: settings.valueColumn!,
        ...(settings.typeColumn !== undefined && { typeColumn: settings.typeColumn }),
        contextColumns: settings.contextColumns ?? [],
        context,
        delimiter: settings.delimiter ?? ',',
        skipLines: settings.skipLines ?? 0,
        commentedHeader: true,
        trim: true,
        ...credibility,
      }) as AsyncGenerator<FormatRecord>;
    case 'ndjson':
      return streamNdjson(body, { valueField: settings.valueField!, contextFields: settings.contextFields ?? [], context, ...credibility });
    default:
      throw new Error(`no records for a ${kind} source`);
  }
}
