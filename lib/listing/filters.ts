import type { Doc } from '../store/store.ts'
import { HttpError } from '../http/errors.ts'
import { isObject, valueAt } from '../data/json.ts'

/**
 * What one listing request may ask for, so that its cost per document is
 * bounded (README, "Listing queries"): every filter value is checked against
 * every document, so their number is capped, and so is each text's length.
 */
export interface ListingLimits {
  /** Most `_sort` fields (`--max-sort-keys`). */
  maxSortKeys: number
  /** Most filter values, `q` included, a repeated parameter counting each value (`--max-filters`). */
  maxFilters: number
}

export const defaultListingLimits: ListingLimits = { maxSortKeys: 8, maxFilters: 32 }

/** Longest filter value, `q` text or field path (fixed: no legitimate query comes near it). */
export const MAX_FILTER_TEXT = 256

/**
 * One filter of a listing query, in json-server's dialect (README, "Listing queries"):
 * `field=value` (repeated: any of the values), `field_ne=`, `field_gte=`,
 * `field_lte=`, `field_like=`, and `q=` for full-text search. `field` may be
 * a dotted path (`author.name`). Values are compared as strings, so `?age=3`
 * matches both `3` and `"3"`.
 */
export interface Filter {
  operator: 'eq' | 'ne' | 'gte' | 'lte' | 'like' | 'q'
  field: string
  values: string[]
}

const operatorSuffix = /_(ne|gte|lte|like)$/

export function parseFilters(query: URLSearchParams, limits: ListingLimits = defaultListingLimits): Filter[] {
  const filters: Filter[] = []
  let count = 0
  for (const key of new Set(query.keys())) {
    // `_sort`, `_page`, … are the query's own words; unknown ones are ignored, never taken as fields.
    if (key.startsWith('_') || key === '') continue
    const values = query.getAll(key)
    count += values.length
    if (count > limits.maxFilters) {
      throw new HttpError(400, `The query has more than ${limits.maxFilters} filter values (each value of a repeated parameter and of q counts); that is the limit (--max-filters).`)
    }
    if (key.length > MAX_FILTER_TEXT) throw new HttpError(400, `A filter names a field longer than ${MAX_FILTER_TEXT} characters, the limit.`)
    const long = values.find((value) => value.length > MAX_FILTER_TEXT)
    if (long !== undefined) throw new HttpError(400, `The value of ${key.length > 40 ? key.slice(0, 40) + '…' : key} is longer than ${MAX_FILTER_TEXT} characters, the limit for a filter or q.`)
    if (key === 'q') {
      filters.push({ operator: 'q', field: '', values: values.map((value) => value.toLowerCase()) })
      continue
    }
    const suffix = operatorSuffix.exec(key)
    if (suffix) filters.push({ operator: suffix[1] as Filter['operator'], field: key.slice(0, suffix.index), values })
    else filters.push({ operator: 'eq', field: key, values })
  }
  return filters
}

export function matchesFilters(doc: Doc, filters: readonly Filter[]): boolean {
  return filters.every((filter) => matchesFilter(doc, filter))
}

function matchesFilter(doc: Doc, filter: Filter): boolean {
  if (filter.operator === 'q') return filter.values.every((text) => containsText(doc, text))
  const value = valueAt(doc, filter.field)
  const present = value !== undefined && value !== null
  const text = present ? String(value) : ''
  switch (filter.operator) {
    case 'eq':
      return present && filter.values.includes(text)
    case 'ne':
      return !present || !filter.values.includes(text)
    case 'like':
      // Plain text, ignoring case: json-server takes a regular expression, but one from a query string could hang the server.
      return present && filter.values.some((wanted) => text.toLowerCase().includes(wanted.toLowerCase()))
    case 'gte':
      return present && filter.values.every((bound) => compareLoosely(value, bound) >= 0)
    case 'lte':
      return present && filter.values.every((bound) => compareLoosely(value, bound) <= 0)
  }
}

/** Numbers (and numeric strings) compare as numbers, anything else as strings. */
function compareLoosely(value: unknown, bound: string): number {
  const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN
  const boundNumber = bound.trim() === '' ? NaN : Number(bound)
  if (!Number.isNaN(number) && !Number.isNaN(boundNumber)) return number - boundNumber
  const text = String(value)
  return text < bound ? -1 : text > bound ? 1 : 0
}

/** Full-text search (`q`): some string, number or boolean anywhere in the document contains the text, ignoring case. */
function containsText(value: unknown, lowerText: string): boolean {
  if (Array.isArray(value)) return value.some((item) => containsText(item, lowerText))
  if (isObject(value)) return Object.keys(value).some((key) => containsText(value[key], lowerText))
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return String(value).toLowerCase().includes(lowerText)
  }
  return false
}
