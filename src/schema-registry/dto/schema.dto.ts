import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';

/** decisions §6: URL-safe, so that the SDK can put it into a path as-is. */
export const SCHEMA_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/;

export class SchemaIdParamDto {
  @ApiProperty({ pattern: SCHEMA_ID_PATTERN.source })
  @Matches(SCHEMA_ID_PATTERN, { message: 'schema_id must be a schema identifier' })
  schema_id: string;
}

export class SchemaRegistrationView {
  @ApiProperty()
  schemaID: string;
}

export class SchemaCommonView {
  @ApiProperty()
  schemaID: string;

  @ApiProperty({ description: 'The document\'s `title`; "" when it has none.' })
  title: string;
}

/** OpenAPI shape of a schema document: free-form JSON Schema 2020-12 with a top-level `schemaID`. */
export const SCHEMA_DOCUMENT_OPENAPI = {
  type: 'object',
  required: ['schemaID'],
  properties: {
    schemaID: { type: 'string', pattern: SCHEMA_ID_PATTERN.source },
    $schema: { type: 'string', enum: ['https://json-schema.org/draft/2020-12/schema'] },
    title: { type: 'string' },
  },
  additionalProperties: true,
};

/** OpenAPI documentation of the tag and paging headers (the result interceptor writes them). */
export const ETAG_HEADER = {
  ETag: { description: 'The tag, `"<n>"`; send it back in `If-Match`.', schema: { type: 'string' } },
};
export const LINK_HEADER = {
  Link: { description: 'The next page: `<path?cursor=...>; rel="next"`; absent on the last page.', schema: { type: 'string' } },
};
export const IF_MATCH_HEADER = {
  name: 'If-Match',
  required: true,
  description: 'The `ETag` of the latest view: missing → 400 BadRequest, stale → 412 ResourceModified.',
};
