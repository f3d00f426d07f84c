import type { ObjectKey } from '../../common/indicators/indicators.js';
import type { SightingSummaryView } from './history.dto.js';

/**
 * The sighting summary of an object, for its provenance (extensions §14). Provided by the sightings area
 * under this token; unbound, provenance answers `sightings: null`.
 */
export const SIGHTING_SUMMARIES = Symbol('SIGHTING_SUMMARIES');

export interface SightingSummaries {
  /** The summary over all `keys` of one live object of the collection; null when it has none. */
  summaryOf(collectionId: number, keys: ObjectKey[]): Promise<SightingSummaryView | null>;
}
