import { SightingFilterQueryDto } from '../sightings/sighting-filter.js';

/**
 * The query members of the read policy's filters, mixed into the query DTOs of the reads that take them
 * (listings, exports). Today the sighting filters; a new filter adds its members here.
 */
export class ReadFiltersQueryDto extends SightingFilterQueryDto {}
