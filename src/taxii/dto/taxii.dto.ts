import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** TAXII 2.1 resources (§4–5) as the OpenAPI document shows them; the services build them as plain objects. */

export class TaxiiErrorBody {
  @ApiProperty({ description: 'The HTTP reason phrase.' }) title: string;
  @ApiProperty({ description: 'What went wrong, for people.' }) description: string;
  @ApiProperty({ description: 'The HTTP status, as a string.', example: '404' }) http_status: string;
  @ApiProperty({ description: "The service's error code (the same codes as its other routes).", example: 'NotFound' }) error_code: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) details?: Record<string, unknown>;
}

export class DiscoveryView {
  @ApiProperty() title: string;
  @ApiProperty() description: string;
  @ApiProperty({ description: 'The default API root.' }) default: string;
  @ApiProperty({ type: [String] }) api_roots: string[];
}

export class ApiRootView {
  @ApiProperty() title: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: [String], example: ['application/taxii+json;version=2.1'] }) versions: string[];
  @ApiProperty({ description: 'The largest POST body, in bytes.' }) max_content_length: number;
}

export class TaxiiCollectionView {
  @ApiProperty({ format: 'uuid', description: 'Fixed when the intel collection was registered.' }) id: string;
  @ApiProperty({ description: 'The intel collection name.' }) title: string;
  @ApiProperty() description: string;
  @ApiProperty({ description: 'The intel collection name.' }) alias: string;
  @ApiProperty() can_read: boolean;
  @ApiProperty() can_write: boolean;
  @ApiProperty({ type: [String], example: ['application/stix+json;version=2.1'] }) media_types: string[];
}

export class TaxiiCollectionsView {
  @ApiPropertyOptional({ type: [TaxiiCollectionView] }) collections?: TaxiiCollectionView[];
}

export class EnvelopeView {
  @ApiProperty({ description: 'More objects may follow: ask again with `next`.' }) more: boolean;
  @ApiPropertyOptional({ description: 'Present exactly when `more` is true; carries the whole query.' }) next?: string;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'STIX 2.1 objects.' })
  objects?: Record<string, unknown>[];
}

export class ManifestRecordView {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'When the version was added to the collection (UTC, microseconds).' }) date_added: string;
  @ApiProperty() version: string;
  @ApiProperty({ example: 'application/stix+json;version=2.1' }) media_type: string;
}

export class ManifestView {
  @ApiProperty() more: boolean;
  @ApiPropertyOptional() next?: string;
  @ApiPropertyOptional({ type: [ManifestRecordView] }) objects?: ManifestRecordView[];
}

export class VersionsView {
  @ApiProperty() more: boolean;
  @ApiPropertyOptional() next?: string;
  @ApiPropertyOptional({ type: [String] }) versions?: string[];
}

export class StatusDetailView {
  @ApiProperty() id: string;
  @ApiProperty() version: string;
  @ApiPropertyOptional() message?: string;
}

export class StatusView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['complete', 'pending'] }) status: string;
  @ApiProperty() request_timestamp: string;
  @ApiProperty() total_count: number;
  @ApiProperty() success_count: number;
  @ApiProperty() failure_count: number;
  @ApiProperty() pending_count: number;
  @ApiPropertyOptional({ type: [StatusDetailView] }) successes?: StatusDetailView[];
  @ApiPropertyOptional({ type: [StatusDetailView] }) failures?: StatusDetailView[];
}

/** The request body of `POST .../objects/`. */
export class EnvelopeBody {
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'STIX 2.1 objects.' })
  objects: Record<string, unknown>[];
}
