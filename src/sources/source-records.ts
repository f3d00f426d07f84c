import { streamCsv } from '../formats/csv.js';
import type { Chunks } from '../formats/chunks.js';
import type { FormatRecord } from '../formats/forms.js';
import { streamNdjson } from '../formats/ndjson.js';
import { streamTextList } from '../formats/text.js';
import type { SourceKind, SourceSettings } from './source-form.js';

/**
 * The records of a body of a line kind, read as it arrives (src/formats): `text` lists, `csv` with a
 * header (its leading `#` dropped, every cell trimmed, as ThreatFox writes it), `ndjson`. Every object
 * starts from the source's `context`.
 */
export function recordsOf(kind: SourceKind, settings: SourceSettings, body: Chunks): AsyncGenerator<FormatRecord> {
  const context = settings.context;
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
      }) as AsyncGenerator<FormatRecord>;
    case 'ndjson':
      return streamNdjson(body, { valueField: settings.valueField!, contextFields: settings.contextFields ?? [], context });
    default:
      throw new Error(`no records for a ${kind} source`);
  }
}
