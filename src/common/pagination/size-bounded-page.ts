/** A keyset page query in parts, as sizeBoundedPage assembles it. */
export interface PageQueryParts {
  /** The SELECT list of a row. */
  select: string;
  /** FROM and WHERE. */
  from: string;
  /** The keyset order (unique), e.g. `collection_id, id`. */
  orderBy: string;
  /** A row's size in bytes: a cheap expression, e.g. a stored generated column (see the migration PageBytes). */
  rowBytes: string;
}

/**
 * A keyset page query bounded by size as well as by rows, so that a page of large rows is never fetched
 * whole (1000 objects with contexts of 4 MiB would be 4 GB in the process before anything could cut them).
 * `limit` and `maxBytes` are the placeholders of the row limit and of the byte cap.
 *
 * A running total over the rows in page order keeps the rows that start below the cap: the page, plus at
 * most one row that crosses the cap, which says with `pageFull` that rows after it were left out. So a fetch
 * holds at most the cap plus one row. The sizes are estimates (stored JSON text, not the view as sent); the
 * result interceptor cuts the page exactly, by its serialised size. The window only adds up the sizes of the
 * rows the LIMIT reads anyway, in the order the index already delivers them (no sort, no extra scan), and
 * the large values of the rows it leaves out are never read (TOAST is fetched only for returned rows).
 */
export function sizeBoundedPage(parts: PageQueryParts, limit: string, maxBytes: string): string {
  return `SELECT * FROM (
            SELECT ${parts.select},
                   sum(${parts.rowBytes}) OVER page_order - (${parts.rowBytes}) < ${maxBytes} AS "startsWithin",
                   sum(${parts.rowBytes}) OVER page_order >= ${maxBytes} AS "pageFull"
              ${parts.from}
            WINDOW page_order AS (ORDER BY ${parts.orderBy} ROWS UNBOUNDED PRECEDING)
             ORDER BY ${parts.orderBy}
             LIMIT ${limit}
          ) sized
          WHERE "startsWithin"`;
}
