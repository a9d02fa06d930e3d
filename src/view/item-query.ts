import { SORTS, type ItemQuery, type SortKey } from './run-reader.js';

export const PAGE_SIZES = [25, 50, 100, 200] as const;
const DEFAULT_PAGE_SIZE = 50;

/**
 * The trajectory table's filters, sort and page from the query string; bad values fall back to defaults, listed in
 * `problems`.
 */
export function parseItemQuery(parameters: URLSearchParams): { query: ItemQuery; problems: string[] } {
  const problems: string[] = [];
  const text = (name: string) => {
    const value = parameters.get(name)?.trim();
    return value ? value : undefined;
  };
  const number = (name: string) => {
    const value = text(name);
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (Number.isFinite(parsed)) return parsed;
    problems.push(`${name}: '${value}' is not a number`);
    return undefined;
  };
  const sortText = text('sort') ?? 'row';
  const sort = (SORTS as readonly string[]).includes(sortText) ? (sortText as SortKey) : 'row';
  if (sort !== sortText) problems.push(`sort: '${sortText}' is not one of ${SORTS.join(', ')}`);
  const size = number('size');
  const pageSize = (PAGE_SIZES as readonly number[]).includes(size ?? DEFAULT_PAGE_SIZE)
    ? (size ?? DEFAULT_PAGE_SIZE)
    : DEFAULT_PAGE_SIZE;
  const page = Math.max(1, Math.floor(number('page') ?? 1));
  const query: ItemQuery = {
    status: text('status'),
    finish: text('finish'),
    toolsets: text('toolsets'),
    toolset: text('toolset'),
    errorClass: text('error'),
    rewardMin: number('min'),
    rewardMax: number('max'),
    search: text('q'),
    sort,
    descending: text('order') === 'desc',
    page,
    pageSize,
  };
  return { query, problems };
}

/** The query string of a query (defaults left out), for links that change one thing. */
export function queryParameters(query: ItemQuery): Record<string, string | number | undefined> {
  return {
    status: query.status,
    finish: query.finish,
    toolsets: query.toolsets,
    toolset: query.toolset,
    error: query.errorClass,
    min: query.rewardMin,
    max: query.rewardMax,
    q: query.search,
    sort: query.sort === 'row' ? undefined : query.sort,
    order: query.descending ? 'desc' : undefined,
    size: query.pageSize === DEFAULT_PAGE_SIZE ? undefined : query.pageSize,
    page: query.page === 1 ? undefined : query.page,
  };
}
