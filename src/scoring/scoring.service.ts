import { Injectable } from '@nestjs/common';
import { normalizeKey, type ObjectKey } from '../common/indicators/indicators.js';
import type { ObjectKeyQueryDto } from '../common/indicators/object-form.dto.js';
import { parseDateTime } from '../common/validation/date-time.js';
import { CollectionsService } from '../intel/collections.service.js';
import type { ReadPolicy } from '../read-policy/read-policy.js';
import type { ScoreExplanationView, ScoreOverrideDto, ScoreQueryDto } from './dto/score.dto.js';
import { explanationOf } from './explanation.js';
import { ScoringErrors } from './scoring.errors.js';
import { ScoringRepository, type OverrideValues } from './scoring.repository.js';

const NO_OVERRIDE: OverrideValues = { score: null, until: null, reason: null, keyId: null };

/** The moment an RFC 3339 date-time names, within the years PostgreSQL reads as ISO text (an offset can push 9999-12-31 past them). */
function momentOf(text: string): Date | undefined {
  const at = parseDateTime(text);
  return at !== undefined && at.getUTCFullYear() <= 9999 ? at : undefined;
}

/**
 * Why an object has its score, and the scores analysts set by hand (extensions §18). Every read is under the
 * request's read policy (an object above the key's marking ceiling does not exist for it, as for provenance),
 * and so are the overrides, whose answer is the explanation.
 */
@Injectable()
export class ScoringService {
  constructor(
    private readonly repository: ScoringRepository,
    private readonly collections: CollectionsService,
  ) {}

  /** The explanation at `at` (default now); 404 ObjectNotFound when no live object the policy lets the request see holds the key. */
  async explain(policy: ReadPolicy, collectionName: string, query: ScoreQueryDto): Promise<ScoreExplanationView> {
    const at = query.at === undefined ? new Date() : momentOf(query.at);
    if (at === undefined) throw ScoringErrors.invalidAt();
    const { collectionId, key } = await this.objectOf(collectionName, query);
    const row = await this.repository.inputs(policy, collectionId, key, at);
    if (row === undefined) throw ScoringErrors.objectNotFound();
    return explanationOf(row, at);
  }

  /**
   * Sets the object's score until `until` (or its deletion, or the end of the object's life): stored on the
   * object's row, so a removal ends it, and not a change record (the feed shows no score). The answer is the
   * explanation as of now, read in the same transaction: the override just set, whatever another request sets
   * right after.
   */
  async override(policy: ReadPolicy, keyId: number, collectionName: string, query: ObjectKeyQueryDto, form: ScoreOverrideDto): Promise<ScoreExplanationView> {
    const until = this.untilOf(form.until);
    const { collectionId, key } = await this.objectOf(collectionName, query);
    const values = { score: form.score, until: until?.toISOString() ?? null, reason: form.reason, keyId };
    const explained = await this.repository.setOverride(policy, collectionId, key, values, async (manager) => {
      const at = new Date();
      const row = await this.repository.inputs(policy, collectionId, key, at, manager);
      return row && explanationOf(row, at);
    });
    if (explained === undefined) throw ScoringErrors.objectNotFound();
    return explained;
  }

  /** Ends the object's override (none: nothing to end, still a success); 404 ObjectNotFound as for `explain`. */
  async clearOverride(policy: ReadPolicy, collectionName: string, query: ObjectKeyQueryDto): Promise<void> {
    const { collectionId, key } = await this.objectOf(collectionName, query);
    const cleared = await this.repository.setOverride(policy, collectionId, key, NO_OVERRIDE, async () => true);
    if (cleared === undefined) throw ScoringErrors.objectNotFound();
  }

  private untilOf(until: string | null | undefined): Date | null {
    if (until === undefined || until === null) return null;
    const at = momentOf(until);
    if (at === undefined) throw ScoringErrors.invalidUntil();
    if (at.getTime() <= Date.now()) throw ScoringErrors.untilNotFuture();
    return at;
  }

  /** The collection (404 NotFound) and the key normalised as on writes (422 InvalidKeyFormat). */
  private async objectOf(collectionName: string, query: ObjectKeyQueryDto): Promise<{ collectionId: number; key: ObjectKey }> {
    const collection = await this.collections.findByName(collectionName);
    return { collectionId: collection.id, key: normalizeKey({ type: query.objectKeyType, value: query.objectKey }) };
  }
}
