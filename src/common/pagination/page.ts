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

/**
 * A page of items. The global result interceptor sends `items` as a bare JSON array plus the `Link` header,
 * cutting the page short where its serialised size would pass PAGE_MAX_BYTES (a short page is allowed by the
 * paging rules: the client follows the next link whatever the page's length).
 */
export class PageResult<T> {
  constructor(
    readonly items: T[],
    /**
     * The cursor that continues right after `items[index]`: the next link of a page cut after that item. After
     * the last item, and at -1 on an empty page, it may lie past rows the page read but does not show (the
     * change feed's records above a key's ceiling).
     */
    readonly cursorAfter: (index: number) => string,
    /**
     * Whether the page, when sent whole, still gets a next link: more rows exist (or may: the fetch was cut
     * by size), or the change feed's rule (a next link on every page that read records, shown or not: an
     * empty page links `cursorAfter(-1)` then).
     */
    readonly hasNext: boolean,
    /** A `rel="related"` link (the changes cursor of the object listing). */
    readonly related?: { path: string; cursor: string },
  ) {}
}

/** What a keyset query bounded by size (sizeBoundedPage) adds to its rows. */
export interface SizedRow {
  /** On the last row fetched: the byte cap was reached there, so rows after it may have been left out. */
  pageFull?: boolean;
}

/**
 * A page from keyset rows fetched in cursor order with `limit + 1` as their LIMIT: the extra row only says
 * that a next page exists, as does a fetch that the byte cap cut short.
 */
export function keysetPage<Row extends object, T>(
  rows: Row[],
  limit: number,
  cursorAfter: (row: Row) => string,
  view: (row: Row) => T,
  related?: PageResult<T>['related'],
): PageResult<T> {
  const items = rows.slice(0, limit);
  const hasNext = rows.length > limit || (rows[rows.length - 1] as SizedRow | undefined)?.pageFull === true;
  return new PageResult(items.map(view), (index) => cursorAfter(items[index]), hasNext, related);
}
