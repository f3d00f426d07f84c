import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { TLP_INPUT_HINT, TLP_LEVELS } from '../../common/markings/tlp.js';
import { CREDIBILITIES, CREDIBILITY_SCALES, RELIABILITIES } from '../../scoring/admiralty.js';
import { REMOVAL_POLICIES, SOURCE_KINDS, SOURCE_MODES, SOURCE_NAME_PATTERN } from '../source-form.js';

/** The kinds and removal policies a form may name, for the forms of other areas (the console's). */
export { REMOVAL_POLICIES, SOURCE_KINDS };

export class SourceNameParamDto {
  @ApiProperty({ pattern: SOURCE_NAME_PATTERN.source })
  @Matches(SOURCE_NAME_PATTERN, { message: 'name must be 1-128 of a-z 0-9 . _ -' })
  name: string;
}

export class SourceRegistrationView {
  @ApiProperty()
  name: string;
}

export class RunStartedView {
  @ApiProperty({ format: 'uuid' })
  runID: string;
}

export class RemovalView {
  @ApiProperty({ enum: REMOVAL_POLICIES })
  policy: string;

  @ApiPropertyOptional({ type: 'integer', description: 'With `afterMissedRuns`: successful runs without the indicator before its claim ends.' })
  runs?: number;
}

export class BasicAuthView {
  @ApiProperty({ description: 'The password is write-only and never shown.' })
  username: string;
}

/** The source form of extensions §13, for the OpenAPI document (the service checks the body itself). */
export const SOURCE_FORM_SCHEMA = {
  type: 'object',
  required: ['name', 'collection', 'kind', 'url'],
  properties: {
    name: { type: 'string', pattern: SOURCE_NAME_PATTERN.source },
    collection: { type: 'string' },
    kind: { type: 'string', enum: [...SOURCE_KINDS] },
    url: { type: 'string', format: 'uri' },
    enabled: { type: 'boolean', default: true },
    intervalSeconds: { type: 'integer', minimum: 60, maximum: 604800, default: 3600 },
    mode: { type: 'string', enum: [...SOURCE_MODES] },
    removal: {
      type: 'object',
      properties: { policy: { type: 'string', enum: [...REMOVAL_POLICIES] }, runs: { type: 'integer', minimum: 1 } },
      required: ['policy'],
    },
    context: { type: 'object', additionalProperties: true },
    headers: { type: 'object', additionalProperties: { type: 'string' }, nullable: true, description: 'Write-only values (e.g. `Auth-Key`).' },
    basicAuth: {
      type: 'object',
      nullable: true,
      properties: { username: { type: 'string' }, password: { type: 'string', description: 'Write-only.' } },
      required: ['username'],
    },
    maxRemovalRatio: { type: 'number', minimum: 0, maximum: 1, default: 0.5 },
    minItems: { type: 'integer', minimum: 0, default: 1 },
    tlp: {
      type: 'string',
      default: 'TLP:CLEAR',
      description: `The marking of its claims, raised by a record's own (a \`taxii21\` object's \`object_marking_refs\`, a \`misp\` event's or attribute's \`tlp:\` tags): ${TLP_INPUT_HINT}.`,
    },
    reliability: {
      type: 'string',
      enum: [...RELIABILITIES],
      default: 'F',
      description: 'Admiralty reliability of the source (A reliable … E unreliable, F cannot be judged).',
    },
    credibility: {
      type: 'integer',
      enum: [...CREDIBILITIES],
      default: 6,
      description: 'Admiralty credibility of its records (1 confirmed … 5 improbable, 6 cannot be judged), unless a record gives its own.',
    },
    credibilityField: {
      type: 'string',
      nullable: true,
      description:
        "`csv` (a column named by the header) or `ndjson` (a member): each record's own credibility; missing or out of scale, the source's. `null` clears it.",
    },
    credibilityScale: {
      type: 'string',
      enum: [...CREDIBILITY_SCALES],
      default: 'admiralty',
      description: 'With `credibilityField`: `admiralty` 1…6 or `percent` 0..100.',
    },
    valueColumn: { type: 'string', description: '`csv`: the column holding the indicator.' },
    typeColumn: { type: 'string', description: '`csv`: the column holding its type (else inferred).' },
    contextColumns: { type: 'array', items: { type: 'string' } },
    delimiter: { type: 'string', default: ',' },
    skipLines: { type: 'integer', minimum: 0, default: 0 },
    valueField: { type: 'string', description: '`ndjson`: the member holding the indicator.' },
    contextFields: { type: 'array', items: { type: 'string' } },
    collectionID: { type: 'string', description: '`taxii21`: the collection of the API root.' },
    pageSize: { type: 'integer', minimum: 1, maximum: 10000, description: "`taxii21`: the `limit` of each page (default: the server's)." },
    toIdsOnly: { type: 'boolean', default: true, description: '`misp`: only attributes flagged `to_ids`.' },
  },
} as const;

export class SourceView {
  @ApiProperty()
  name: string;

  @ApiProperty()
  collection: string;

  @ApiProperty({ enum: SOURCE_KINDS })
  kind: string;

  @ApiProperty()
  url: string;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({ type: 'integer' })
  intervalSeconds: number;

  @ApiProperty({ enum: SOURCE_MODES })
  mode: string;

  @ApiProperty({ type: RemovalView })
  removal: RemovalView;

  @ApiProperty({ type: 'object', additionalProperties: true })
  context: Record<string, unknown>;

  @ApiProperty({ type: [String], description: 'The names of the headers sent; their values are write-only.' })
  headers: string[];

  @ApiPropertyOptional({ type: BasicAuthView })
  basicAuth?: BasicAuthView;

  @ApiProperty()
  maxRemovalRatio: number;

  @ApiProperty({ type: 'integer' })
  minItems: number;

  @ApiProperty({ enum: TLP_LEVELS, description: "The marking of its claims, which a record's own marking may raise." })
  tlp: string;

  @ApiProperty({ enum: RELIABILITIES, description: 'Admiralty reliability of the source (A reliable … E unreliable, F cannot be judged).' })
  reliability: string;

  @ApiProperty({ type: 'integer', enum: CREDIBILITIES, description: 'Admiralty credibility of its records, unless a record gives its own.' })
  credibility: number;

  @ApiPropertyOptional({ description: "`csv` or `ndjson`: the column or member holding each record's own credibility." })
  credibilityField?: string;

  @ApiPropertyOptional({ enum: CREDIBILITY_SCALES, description: 'With `credibilityField`: its scale.' })
  credibilityScale?: string;

  @ApiPropertyOptional()
  valueColumn?: string;

  @ApiPropertyOptional()
  typeColumn?: string;

  @ApiPropertyOptional({ type: [String] })
  contextColumns?: string[];

  @ApiPropertyOptional()
  delimiter?: string;

  @ApiPropertyOptional({ type: 'integer' })
  skipLines?: number;

  @ApiPropertyOptional()
  valueField?: string;

  @ApiPropertyOptional({ type: [String] })
  contextFields?: string[];

  @ApiPropertyOptional()
  collectionID?: string;

  @ApiPropertyOptional({ type: 'integer' })
  pageSize?: number;

  @ApiPropertyOptional()
  toIdsOnly?: boolean;

  @ApiProperty({ enum: ['ok', 'failing', 'disabled'] })
  state: string;

  @ApiProperty({ type: String, nullable: true, format: 'date-time' })
  lastRunAt: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time' })
  lastSuccessAt: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description:
      'While enabled, when the next scheduled run is due: a new or re-enabled source, due at once, shows when it became due (a past time until it runs). null while disabled.',
  })
  nextRunAt: string | null;

  @ApiProperty({ type: 'integer' })
  consecutiveFailures: number;

  @ApiProperty({ type: 'integer', description: 'How many object keys the source claims now.' })
  claims: number;
}

export class RejectionView {
  @ApiPropertyOptional({ type: 'integer' })
  line?: number;

  @ApiProperty()
  value: string;

  @ApiProperty()
  reason: string;
}

export class RunErrorView {
  @ApiProperty()
  code: string;

  @ApiProperty()
  message: string;
}

/** What a run found and did: the counts of a run's log entry that a dry run (`POST …/test`) answers too. */
export class RunResultView {
  @ApiProperty({ type: 'integer', nullable: true })
  httpStatus: number | null;

  @ApiProperty({ type: 'integer', description: 'Records parsed, rejected ones included.' })
  items: number;

  @ApiProperty({ type: 'integer' })
  added: number;

  @ApiProperty({ type: 'integer' })
  updated: number;

  @ApiProperty({ type: 'integer' })
  withdrawn: number;

  @ApiProperty({ type: 'integer' })
  rejected: number;

  @ApiProperty({ type: [RejectionView], description: 'The first 100 rejected records.' })
  rejections: RejectionView[];
}

export class RunView extends RunResultView {
  @ApiProperty({ format: 'uuid' })
  runID: string;

  @ApiProperty({ enum: ['schedule', 'manual'] })
  trigger: string;

  @ApiProperty({ format: 'date-time' })
  startedAt: string;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', description: 'null while it runs.' })
  finishedAt: string | null;

  @ApiProperty({ type: String, nullable: true, enum: ['ok', 'notModified', 'unchanged', 'suspect', 'failed'] })
  outcome: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  bytes: number | null;

  @ApiProperty({ type: RunErrorView, nullable: true })
  error: RunErrorView | null;
}

export class DryRunView extends RunResultView {
  @ApiProperty({ type: 'integer' })
  unchanged: number;

  @ApiProperty({ description: 'Whether a run would be suspect (no claim would end).' })
  suspect: boolean;

  @ApiProperty({ type: RunErrorView, nullable: true, description: 'Why a run would fail (nothing else is then set).' })
  error: RunErrorView | null;
}

export class SourceClaimView {
  @ApiProperty()
  type: string;

  @ApiProperty()
  value: string;

  @ApiProperty({ format: 'date-time' })
  firstSeenAt: string;

  @ApiProperty({ format: 'date-time' })
  lastSeenAt: string;

  @ApiProperty({ type: 'integer' })
  missedRuns: number;
}
