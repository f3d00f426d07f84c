import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { normalizeKey, type ObjectKey } from '../common/indicators/indicators.js';
import { MAX_BATCH_ITEMS } from '../intel/batch/batch-body.js';
import type { BatchItemView, BatchReportView } from '../intel/batch/batch.dto.js';
import { BatchService } from '../intel/batch/batch.service.js';
import { CollectionsService } from '../intel/collections.service.js';
import { ObjectsService } from '../intel/objects.service.js';
import type { WriteOrigin } from '../intel/write-origin.js';
import { CONTEXT_EXTENSION_ID, SERVICE_IDENTITY_ID } from '../stix/stix-ids.js';
import { fromStix, type StixImport } from '../stix/stix-projection.js';

const SERVICE_OBJECT_IDS = new Set([SERVICE_IDENTITY_ID, CONTEXT_EXTENSION_ID]);
import { TOO_LARGE } from './taxii-http.js';
import { STIX_BUNDLE_TYPES } from './taxii-limits.js';
import { TaxiiErrors } from './taxii.errors.js';

/** A key compared as stored (normalised) when it can be, else as written. */
function keyId(key: ObjectKey): string {
  try {
    const normal = normalizeKey(key);
    return `${normal.type}\n${normal.value}`;
  } catch {
    return `${key.type}\n${key.value}`;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * STIX objects into a collection, through the intel batch path (the same rules, normalisation, schema check
 * and change records as any batch): TAXII envelopes and STIX bundle files alike. The answer is the batch
 * report with one item per STIX object, in their order.
 *
 * An observable travels with its indicator: one whose keys an indicator of the same request has is that
 * indicator's (Unchanged); one alone is stored as an object with an empty context, unless an object of the
 * collection already holds its keys (Unchanged: a bare observable never replaces a context).
 */
@Injectable()
export class StixImportService {
  constructor(
    private readonly batch: BatchService,
    private readonly objects: ObjectsService,
    private readonly collections: CollectionsService,
  ) {}

  /** The `objects` of a TAXII envelope or STIX bundle body (bytes): 400 when not JSON or empty, 413 when too large. */
  parse(body: unknown, member = 'objects'): unknown[] {
    if (body === TOO_LARGE) throw TaxiiErrors.tooLarge();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : '');
    } catch {
      throw TaxiiErrors.invalidEnvelope('the body is not valid JSON');
    }
    const objects = isPlainObject(parsed) ? parsed[member] : undefined;
    if (!Array.isArray(objects) || objects.length === 0) throw TaxiiErrors.invalidEnvelope(`the body has no "${member}"`);
    if (objects.length > MAX_BATCH_ITEMS) throw TaxiiErrors.tooLarge();
    return objects;
  }

  /** A STIX bundle file on the native API: its media type checked (415), 404 before any body error. */
  async importBundle(origin: WriteOrigin, collectionName: string, body: unknown, contentType: string | undefined): Promise<BatchReportView> {
    await this.collections.findByName(collectionName);
    const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    if (!STIX_BUNDLE_TYPES.includes(mediaType)) {
      throw new ApiError('UnsupportedMediaType', 'a STIX bundle is sent as application/json or application/stix+json');
    }
    return this.import(origin, collectionName, this.parse(body));
  }

  async import(origin: WriteOrigin, collectionName: string, objects: unknown[]): Promise<BatchReportView> {
    const mapped: StixImport[] = objects.map(fromStix);
    const indicatorKeys = new Set(
      mapped.flatMap((item) => (item.kind === 'object' && !item.sco ? item.form.keys.map(keyId) : [])),
    );
    const results: (BatchItemView | undefined)[] = [];
    const forms: { index: number; form: unknown }[] = [];
    for (const [index, item] of mapped.entries()) {
      if (SERVICE_OBJECT_IDS.has((objects[index] as { id?: unknown } | null)?.id as string)) {
        // The service's own identity and extension definition, as it serves them: nothing to store.
        results[index] = { index, status: 'Unchanged' };
      } else if (item.kind === 'refused') {
        results[index] = { index, status: 'Failed', error: { code: 'StixNotSupported', message: item.reason } };
      } else if (item.sco && item.form.keys.every((key) => indicatorKeys.has(keyId(key)))) {
        results[index] = { index, status: 'Unchanged' };
      } else if (item.sco && (await this.heldAlready(collectionName, item.form.keys, index, results))) {
        // answered by heldAlready
      } else {
        forms.push({ index, form: item.form });
      }
    }
    if (forms.length > 0) {
      const report = await this.batch.applyItems(origin, collectionName, forms.map((entry) => entry.form));
      report.items.forEach((outcome, at) => (results[forms[at].index] = { ...outcome, index: forms[at].index }));
    }
    const items = results as BatchItemView[];
    const count = (status: BatchItemView['status']) => items.filter((item) => item.status === status).length;
    return {
      added: count('Added'),
      updated: count('Updated'),
      unchanged: count('Unchanged'),
      removed: 0,
      failed: count('Failed'),
      items,
    };
  }

  /** Whether a lone observable's keys are held by an object already (its result is then set: Unchanged or Failed). */
  private async heldAlready(collectionName: string, keys: ObjectKey[], index: number, results: (BatchItemView | undefined)[]): Promise<boolean> {
    try {
      if (!(await this.objects.holdsAnyKey(collectionName, keys))) return false;
      results[index] = { index, status: 'Unchanged' };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 404) throw error;
      results[index] = { index, status: 'Failed', error: { code: error.code, message: error.message } };
    }
    return true;
  }
}
