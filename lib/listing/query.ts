import { HttpError } from '../http-error.ts'
import { FilterBudget, parseFilters, type Filter, type ListingLimits } from './filters.ts'
import { parseRelations, type Relation, type RelationKeys } from './relations.ts'
import { parseSort, type SortKey } from './sort.ts'

/**
 * A listing query in both of json-server's dialects (docs/http-api.md, "Listing queries"), so their clients work unchanged: filters (`field=`, 0.17's
 * `field_gte=`, 1.0's `field:gt=` and `_where`), full-text `q`,
 * `_sort`/`_order`, a window given by `_start`/`_end`/`_limit`,
 * `_page`/`_limit` (0.17) or `_page`/`_per_page` (1.0, answering a page
 * envelope), and relations to join (`_embed`, `_expand`). Any other `_`
 * parameter is a 400.
 */
export interface ListingQuery {
  filters: Filter[]
  sort: SortKey[]
  relations: Relation[]
  /** Documents [start, end) of the filtered, sorted list; end undefined means to the last. */
  start: number
  end: number | undefined
  /** Set for `_page` queries: they answer with a Link header, and with `_per_page` in json-server 1.0's envelope. */
  page?: { number: number; limit: number; envelope: boolean }
}

/** Reads a listing query from a request's query string; a parameter it cannot take is a 400 that names it. */
/**
 * `keys`: how relations are keyed, json-server's `--foreignKeySuffix` and `--id` (lib/listing/relations.ts);
 * `typed`: json-server 1.0's mode, whose `_where` compares typed values (filters.ts, parseFilters) and whose joins compare keys typed (relations.ts).
 */
export function parseListingQuery(query: URLSearchParams, limits: ListingLimits, keys?: RelationKeys, typed = false): ListingQuery {
  const budget = new FilterBudget(limits.maxFilters)
  const listing: ListingQuery = {
    filters: parseFilters(query, limits, budget, typed),
    sort: parseSort(query, limits.maxSortKeys),
    relations: parseRelations(query, budget, keys, typed),
    start: 0,
    end: undefined,
  }
  const limit = wholeNumber(query, '_limit', 0)
  const page = wholeNumber(query, '_page', 1)
  const perPage = wholeNumber(query, '_per_page', 1)
  if (perPage !== undefined) {
    if (page === undefined) throw new HttpError(400, '_per_page needs _page (json-server 1.0 pages only when both are given): ask for _page=1&_per_page=N.')
    const other = ['_limit', '_start', '_end'].find((name) => query.has(name))
    if (other) throw new HttpError(400, `_per_page (json-server 1.0) pages by itself; drop ${other}, or page with _page and _limit (json-server 0.17).`)
  }
  if (page !== undefined || perPage !== undefined) {
    // `_page` counts from 1 and takes 10 per page unless `_limit` (0.17) or `_per_page` (1.0) says otherwise.
    const size = perPage ?? limit ?? 10
    if (size === 0) throw new HttpError(400, '_limit must be at least 1 with _page.')
    listing.page = { number: page ?? 1, limit: size, envelope: perPage !== undefined }
    listing.start = (listing.page.number - 1) * size
    listing.end = listing.start + size
    return listing
  }
  listing.start = wholeNumber(query, '_start', 0) ?? 0
  const end = wholeNumber(query, '_end', 0)
  listing.end = end ?? (limit === undefined ? undefined : listing.start + limit)
  return listing
}

/** A query parameter that must be a whole number of at least `min`; undefined when absent. */
function wholeNumber(query: URLSearchParams, name: string, min: number): number | undefined {
  const text = query.get(name)
  if (text === null) return undefined
  if (!/^\d{1,15}$/.test(text.trim()) || Number(text) < min) {
    throw new HttpError(400, `${name} must be a whole number${min > 0 ? ` from ${min}` : ''} (got ${JSON.stringify(text)}).`)
  }
  return Number(text)
}
