import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import type { ObjectKey } from '../common/indicators/indicators.js';
import type { TlpRank } from '../common/markings/tlp.js';
import { parseStixDocument, stixItems } from '../formats/stix.js';
import type { BatchItemView, BatchReportView } from '../intel/batch/batch.dto.js';
import { BatchService, MAX_BATCH_ITEMS } from '../intel/batch/batch.service.js';
import { CollectionsService } from '../intel/collections.service.js';
import { ObjectsService } from '../intel/objects.service.js';
import type { WriteOrigin } from '../intel/write-origin.js';
import { TOO_LARGE } from './taxii-http.js';
import { STIX_BUNDLE_TYPES } from './taxii-limits.js';
import { TaxiiErrors } from './taxii.errors.js';

/**
 * STIX objects into a collection, through the intel batch path (the same rules, normalisation, schema check
 * and change records as any batch): TAXII envelopes and STIX bundle files alike. The answer is the batch
 * report with one item per STIX object, in their order.
 *
 * An observable travels with its indicator: one whose keys an indicator of the same request has is that
 * indicator's (Unchanged); one alone is stored as an object with an empty context, unless an object of the
 * collection already holds its keys (Unchanged: a bare observable never replaces a context).
 *
 * Markings (extensions §19): each object is written marked by its own `object_marking_refs` (TLP 1.0 or 2.0
 * marking definitions, the most restrictive of several), else by the collection's `defaultTLP`, as a native
 * write naming no marking; marking-definition objects are what objects refer to, not indicators: each is
 * `Unchanged`, nothing stored.
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
    const parsed = parseStixDocument(Buffer.isBuffer(body) ? body.toString('utf8') : '', MAX_BATCH_ITEMS, member);
    if (parsed.ok) return parsed.objects;
    throw parsed.failure.code === 'TooManyItems' ? TaxiiErrors.tooLarge() : TaxiiErrors.invalidEnvelope(parsed.failure.message);
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
    const results: (BatchItemView | undefined)[] = [];
    const forms: { index: number; form: unknown; tlp?: TlpRank }[] = [];
    for (const [index, item] of stixItems(objects).entries()) {
      if (item.kind === 'carried') {
        results[index] = { index, status: 'Unchanged' };
      } else if (item.kind === 'refused') {
        results[index] = { index, status: 'Failed', error: { code: 'StixNotSupported', message: item.reason } };
      } else if (item.sco && (await this.heldAlready(collectionName, item.form.keys, index, results))) {
        // answered by heldAlready
      } else {
        forms.push({ index, form: item.form, tlp: item.tlp });
      }
    }
    if (forms.length > 0) {
      const report = await this.batch.applyItems(
        origin,
        collectionName,
        forms.map((entry) => entry.form),
        { tlp: forms.map((entry) => entry.tlp) },
      );
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
