import { ApiError, CommonErrors } from '../common/errors/api-error.js';
import { MAX_SIGHTING_ITEMS } from './dto/sighting.dto.js';

/** Errors of sightings requests; a malformed item is that item's `Invalid` (sighting-items.ts), not an error. */
export const SightingErrors = {
  notAnArray: () => CommonErrors.invalidData('the request body must be a JSON array of sightings'),
  empty: () => CommonErrors.invalidData('the request body needs at least one sighting'),
  tooMany: () => new ApiError('RequestEntityTooLarge', `a request holds at most ${MAX_SIGHTING_ITEMS} sightings`),
  invalidTime: (name: string) => CommonErrors.invalidQuery(`${name} is not a valid date-time`),
};
