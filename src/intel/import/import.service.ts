import { Injectable } from '@nestjs/common';
import { parseCsv, type CsvOptions } from '../../formats/csv.js';
import { keyId } from '../../formats/forms.js';
import { extractForms } from '../../formats/text.js';
import { MAX_BATCH_ITEMS } from '../batch/batch-body.js';
import { BatchService } from '../batch/batch.service.js';
import { CollectionsService } from '../collections.service.js';
import { tlpParameter } from '../object-rules.js';
import type { WriteOrigin } from '../write-origin.js';
import { importText } from './import-body.js';
import type { ImportQueryDto, ImportView } from './import.dto.js';
import { ImportErrors } from './import.errors.js';

/** A JSON object from a query parameter or header; `fail` for anything else. */
function jsonObject(raw: string, fail: () => Error): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw fail();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw fail();
  return parsed as Record<string, unknown>;
}

/** The context given to every imported object: from `context` or `X-Import-Context`, at most one; `{}` without. */
export function importContext(query: string | undefined, header: string | undefined): Record<string, unknown> {
  if (query !== undefined && header !== undefined) throw ImportErrors.twoContexts();
  if (query !== undefined) return jsonObject(query, ImportErrors.contextQuery);
  return header === undefined ? {} : jsonObject(header, ImportErrors.contextHeader);
}

/**
 * `POST .../import`: objects found in a text or CSV body, written through the batch path (the same
 * checks, change records and report as `POST .../objects/batch`), or only shown (`dryRun=true`).
 */
@Injectable()
export class ImportService {
  constructor(
    private readonly collections: CollectionsService,
    private readonly batch: BatchService,
  ) {}

  async apply(
    origin: WriteOrigin,
    collectionName: string,
    query: ImportQueryDto,
    body: unknown,
    contentType: string | undefined,
    contextHeader: string | undefined,
  ): Promise<ImportView> {
    const csv = query.format === 'csv';
    if (csv && (query.typeColumn === undefined || query.valueColumn === undefined)) throw ImportErrors.csvColumnsRequired();
    if (!csv && (query.typeColumn ?? query.valueColumn ?? query.contextColumns) !== undefined) throw ImportErrors.csvColumnsNotTaken();
    const context = importContext(query.context, contextHeader);
    const tlp = tlpParameter(query.tlp);
    const collection = await this.collections.findByName(collectionName);
    const text = importText(body, contentType);
    const objects = csv
      ? csvItems(text, { typeColumn: query.typeColumn!, valueColumn: query.valueColumn!, contextColumns: columnList(query.contextColumns), context })
      : extractForms(text, context);
    if (objects.length > MAX_BATCH_ITEMS) throw ImportErrors.tooMany(objects.length);
    if (query.dryRun === 'true') return { objects: objects as Record<string, unknown>[] };
    const report = await this.batch.applyItems(origin, collection.name, objects, { atomic: query.atomic === 'true', tlp });
    return { objects: objects as Record<string, unknown>[], report };
  }
}

/**
 * One batch item per distinct key of a CSV: a row whose key is not valid still becomes an item, one the
 * batch reports as failed (with the row's type and value), so that every row is accounted for. A later
 * row of the same key is dropped (first one wins).
 */
function csvItems(text: string, options: CsvOptions): unknown[] {
  const parsed = parseCsv(text, options);
  if (!parsed.ok) throw ImportErrors.csv(parsed.failure);
  const seen = new Set<string>();
  const items: unknown[] = [];
  for (const record of parsed.records) {
    if (record.kind === 'rejected') items.push(record.rejection.unchecked);
    else if (record.kind === 'form' && !seen.has(keyId(record.form.keys[0]))) {
      seen.add(keyId(record.form.keys[0]));
      items.push(record.form);
    }
  }
  return items;
}

function columnList(raw: string | undefined): string[] {
  return raw === undefined
    ? []
    : raw
        .split(',')
        .map((column) => column.trim())
        .filter((column) => column !== '');
}
