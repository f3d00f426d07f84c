import { applyDecorators, UseFilters, UseInterceptors } from '@nestjs/common';
import { ApiExtension, ApiExtraModels, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AcceptsBasicCredentials } from '../common/guard/access.decorators.js';
import { ERROR_BODY_EXTENSION } from '../common/http/openapi-document.js';
import { TaxiiErrorBody } from './dto/taxii.dto.js';
import { TAXII_MEDIA_TYPE, TaxiiErrorFilter, TaxiiMediaInterceptor } from './taxii-http.js';
import { TAXII_DEFAULT_LIMIT, TAXII_MAX_LIMIT } from './taxii-limits.js';

/**
 * What every TAXII controller is: Basic credentials accepted (realm `taxii`), TAXII media types and error
 * bodies (this controller only: never application-wide), documented as such.
 */
export const TaxiiController = () =>
  applyDecorators(
    ApiTags('taxii'),
    AcceptsBasicCredentials('taxii'),
    UseFilters(TaxiiErrorFilter),
    UseInterceptors(TaxiiMediaInterceptor),
    ApiProduces(TAXII_MEDIA_TYPE),
    ApiExtraModels(TaxiiErrorBody),
    ApiExtension(ERROR_BODY_EXTENSION, { mediaType: TAXII_MEDIA_TYPE, schema: TaxiiErrorBody.name }),
  );

const query = (name: string, description: string) => ApiQuery({ name, required: false, type: String, description });

/** The query parameters of the paged reads (objects, an object, manifest; `versions` takes a subset). */
export const TaxiiPageQuery = (filters: 'all' | 'versions') =>
  applyDecorators(
    query('added_after', 'Only what was added after this time (`date_added`, e.g. the last `X-TAXII-Date-Added-Last`).'),
    ApiQuery({ name: 'limit', required: false, type: Number, description: `Objects per page: ${TAXII_DEFAULT_LIMIT} by default, ${TAXII_MAX_LIMIT} at most.` }),
    query('next', 'From the previous page: carries the whole query, the other parameters are then not needed.'),
    query('match[spec_version]', 'Comma-separated STIX versions (only 2.1 is served).'),
    query(
      'maxTLP',
      "Leave out what is marked above this TLP level (`TLP:CLEAR` … `TLP:RED`, case-insensitive): narrows the key's `maxTLP`, never " +
        'widens it. `next` carries it.',
    ),
    query(
      'warninglists',
      '`apply` (default): objects with a key on an enabled warninglist acting at `excludeFromExport` or beyond are left out ' +
        '(counted in `X-Excluded-Count`); `ignore` serves them too.',
    ),
    ...(filters === 'all'
      ? [
          query('match[type]', 'Comma-separated STIX types.'),
          query('match[id]', 'Comma-separated STIX ids.'),
          query('match[version]', '`last` (default), `first`, `all`, or comma-separated `modified` timestamps.'),
        ]
      : []),
  );

/** The response headers of the paged reads. */
export const DATE_ADDED_HEADERS = {
  'X-TAXII-Date-Added-First': { description: '`date_added` of the first object of the page.', schema: { type: 'string' } },
  'X-TAXII-Date-Added-Last': { description: '`date_added` of the last object of the page: the next `added_after` when polling.', schema: { type: 'string' } },
  'X-Excluded-Count': {
    description:
      'Stored objects this page walked past (one for its indicator and observable together) because they have a key on a warninglist acting at `excludeFromExport` or beyond.',
    schema: { type: 'integer' },
  },
};
