import type { PageResult } from '../common/pagination/page.js';

/** The `cursor` query parameter of a console list, when one is given. */
export function cursorParam(query: Record<string, unknown>): string | undefined {
  return typeof query.cursor === 'string' && query.cursor !== '' ? query.cursor : undefined;
}

/** The cursor of the page after `page`, when there is one (console lists link it; no count is computed). */
export function nextCursor(page: PageResult<unknown>): string | undefined {
  return page.hasNext && page.items.length > 0 ? page.cursorAfter(page.items.length - 1) : undefined;
}
