import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

/** Query of every paged endpoint; endpoints with filters extend it. */
export class PageQueryDto {
  @ApiPropertyOptional({ description: 'Opaque cursor from a previous page\'s `Link: rel="next"`.' })
  @IsOptional()
  @IsString()
  cursor?: string;

  @ApiPropertyOptional({
    description: `Page size, default ${DEFAULT_PAGE_LIMIT}; larger values are clamped to ${MAX_PAGE_LIMIT}.`,
    type: 'integer',
    minimum: 1,
  })
  @IsOptional()
  @Matches(/^\d+$/, { message: 'limit must be an integer of at least 1' })
  @Matches(/[1-9]/, { message: 'limit must be an integer of at least 1' })
  limit?: string;
}

export interface PageRequest {
  /** Clamped to 1..MAX_PAGE_LIMIT. */
  limit: number;
  /** The raw opaque cursor (an empty one means the first page); each endpoint decodes it. */
  cursor: string | undefined;
}

export function pageRequestOf(query: PageQueryDto): PageRequest {
  const limit = query.limit === undefined ? DEFAULT_PAGE_LIMIT : Math.min(Number(query.limit), MAX_PAGE_LIMIT);
  return { limit, cursor: query.cursor === '' ? undefined : query.cursor };
}

/** A page of items. The global result interceptor sends `items` as a bare array plus the `Link` header. */
export class PageResult<T> {
  constructor(
    readonly items: T[],
    /** Cursor of the next page; absent on the last page. */
    readonly nextCursor?: string,
    /** A `rel="related"` link (the changes cursor of the object listing). */
    readonly related?: { path: string; cursor: string },
  ) {}
}
