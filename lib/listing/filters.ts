import { likePattern } from './like.ts'
import { HttpError } from '../http-error.ts'
import { isObject, type JsonObject } from '../json/values.ts'
import { javascriptText, OPERATORS, textOf, type TypedComparison, type TypedFilter, type TypedValue } from './typed.ts'

export { OPERATORS }

/**
 * What one listing request may ask for, so that its cost per document is
 * bounded (docs/http-api.md, "Listing queries"): every filter value is checked against
 * every document, so their number is capped, and so is each text's length.
 */
export interface ListingLimits {
  /** Most `_sort` fields (`--max-sort-keys`). */
  maxSortKeys: number
  /**
   * Most filter values, `q` included, a repeated parameter counting each value
   * (`--max-filters`); each condition of `_where` and each `_embed`/`_expand` counts one too.
   */
  maxFilters: number
}

export const defaultListingLimits: ListingLimits = { maxSortKeys: 8, maxFilters: 32 }

/** Longest filter value, `q` text or field path (fixed: no legitimate query comes near it). */
export const MAX_FILTER_TEXT = 256

/** Longest `_where` text, and how deep its `or`s and nested fields may go (fixed). */
export const MAX_WHERE_TEXT = 4096
export const MAX_WHERE_DEPTH = 8

/** json-server 1.0's comparisons (typed.ts), and 0.17's `like`. */
export type Operator = (typeof OPERATORS)[number] | 'like'

/**
 * One condition of a listing query (docs/http-api.md, "Listing queries"): a field
 * compared with values, full-text `q`, or (from `_where`) `or`, which holds
 * when every condition of one of its branches does. `field` may be a dotted
 * path (`author.name`). Values are compared as text, so `?age=3` matches both
 * `3` and `"3"`; ranges compare numbers as numbers. In json-server 1.0's mode,
 * `_where` is read as 1.0 reads it, into typed filters (typed.ts) and `or`s.
 */
export type Filter =
  | { operator: Operator; field: string; values: string[] }
  | TypedFilter
  | { operator: 'q'; values: string[] }
  | { operator: 'or'; branches: Filter[][] }

/** The query's own parameters; any other one starting with `_` is a 400 rather than silently ignored. */
export const KNOWN_PARAMETERS = [
  '_sort', '_order', '_start', '_end', '_limit', '_page', '_per_page', '_embed', '_expand', '_where',
  // `_children` names a node's children; `_changes` (with `since`) follows a collection's changes; `_` is a cache buster.
  '_children', '_changes', '_',
]

const suffixOperator = /^(.+)_(eq|ne|lt|lte|gt|gte|in|contains|like)$/

/** Counts filter values against `--max-filters` over the whole query. */
export class FilterBudget {
  #used = 0
  constructor(readonly limit: number) {}
  spend(count: number): void {
    this.#used += count
    if (this.#used > this.limit) {
      throw new HttpError(400, `The query has more than ${this.limit} filter values (each value of a repeated parameter, of q, of _where and each _embed or _expand counts); that is the limit (--max-filters).`)
    }
  }
}

/** A 400 for a `_` parameter restdir does not know (on a document's URL, which takes no filters). */
export function checkParameters(query: URLSearchParams): void {
  for (const key of query.keys()) if (key.startsWith('_') && !KNOWN_PARAMETERS.includes(key)) throw unknownParameter(key)
}

/** `typed`: json-server 1.0's mode, where every filter comes in `_where` (lib/resources/json-server/version-1.ts) and is read as 1.0 reads it. */
export function parseFilters(query: URLSearchParams, limits: ListingLimits = defaultListingLimits, budget = new FilterBudget(limits.maxFilters), typed = false): Filter[] {
  const filters: Filter[] = []
  for (const key of new Set(query.keys())) {
    if (key.startsWith('_')) {
      if (!KNOWN_PARAMETERS.includes(key)) throw unknownParameter(key)
      continue
    }
    // `since` belongs to `_changes`.
    if (key === '' || (key === 'since' && query.has('_changes'))) continue
    const values = query.getAll(key)
    budget.spend(values.length)
    checkLength(key, values)
    if (key === 'q') {
      filters.push({ operator: 'q', values: values.map((value) => value.toLowerCase()) })
      continue
    }
    const { field, operator } = splitKey(key)
    // A pattern that is no regular expression, or needs backtracking, is a 400 before any document is read.
    if (operator === 'like') for (const value of values) likePattern(value, key)
    filters.push({ operator, field, values: operator === 'in' ? spendList(values, budget) : values })
  }
  const where = query.get('_where')
  if (where !== null) {
    if (filters.length > 0) {
      throw new HttpError(400, '_where cannot be combined with other filters (json-server 1.0 would drop them); put every condition in _where.')
    }
    return typed ? typedWhere(parseWhereObject(where), budget) : parseWhere(where, budget)
  }
  return filters
}

/** `field:op` (json-server 1.0), `field_op` (0.17), or a plain field (equals). */
function splitKey(key: string): { field: string; operator: Operator } {
  const colon = key.lastIndexOf(':')
  if (colon !== -1) {
    const field = key.slice(0, colon)
    const operator = key.slice(colon + 1)
    // `a:` compares the field `a:` itself, as json-server does.
    if (operator === '') return { field: key, operator: 'eq' }
    if (!isOperator(operator)) throw unknownOperator(operator, key)
    if (field === '') throw new HttpError(400, `The filter ${JSON.stringify(key)} names no field before its operator.`)
    return { field, operator }
  }
  const suffix = suffixOperator.exec(key)
  if (suffix) return { field: suffix[1], operator: suffix[2] as Operator }
  return { field: key, operator: 'eq' }
}

function isOperator(text: string): text is (typeof OPERATORS)[number] {
  return (OPERATORS as readonly string[]).includes(text)
}

/** `in` takes a comma-separated list (`id:in=1,2,3`); each item counts as a filter value. */
function spendList(values: string[], budget: FilterBudget): string[] {
  const items = values.flatMap((value) => value.split(',').map((item) => item.trim()))
  budget.spend(items.length - values.length)
  return items
}

function checkLength(key: string, values: readonly string[]): void {
  if (key.length > MAX_FILTER_TEXT) throw new HttpError(400, `A filter names a field longer than ${MAX_FILTER_TEXT} characters, the limit.`)
  const long = values.find((value) => value.length > MAX_FILTER_TEXT)
  if (long !== undefined) throw new HttpError(400, `The value of ${key.length > 40 ? key.slice(0, 40) + '…' : key} is longer than ${MAX_FILTER_TEXT} characters, the limit for a filter or q.`)
}

function unknownParameter(key: string): HttpError {
  const shown = key.length > 40 ? key.slice(0, 40) + '…' : key
  return new HttpError(400, `Unknown query parameter ${JSON.stringify(shown)}; the known ones are ${KNOWN_PARAMETERS.join(', ')} (and q, and fields to filter on).`)
}

function unknownOperator(operator: string, where: string): HttpError {
  const shown = operator.length > 40 ? operator.slice(0, 40) + '…' : operator
  return new HttpError(400, `Unknown operator ${JSON.stringify(shown)} in ${JSON.stringify(where.length > 80 ? where.slice(0, 80) + '…' : where)}; the known ones are ${OPERATORS.join(', ')} (and the suffixes _ne, _lt, _lte, _gt, _gte, _in, _contains, _like).`)
}

/**
 * `_where` (json-server 1.0): a JSON object of conditions, all of which must
 * hold. A key names a field; its value is an object of operators
 * (`{"views":{"gt":100}}`), an object of nested fields (`{"author":{"name":{"eq":"x"}}}`)
 * or a plain value, which must be equal; `"or": [{…}, {…}]` holds when one of its objects does.
 */
function parseWhere(text: string, budget: FilterBudget): Filter[] {
  return whereConditions(parseWhereObject(text), '', 1, budget)
}

function parseWhereObject(text: string): JsonObject {
  if (text.length > MAX_WHERE_TEXT) throw new HttpError(400, `_where is longer than ${MAX_WHERE_TEXT} characters, the limit.`)
  let where: unknown
  try {
    where = JSON.parse(text)
  } catch {
    throw new HttpError(400, `_where must be a JSON object such as {"views":{"gt":100}} (got ${JSON.stringify(text.slice(0, 80))}).`)
  }
  if (!isObject(where)) throw new HttpError(400, '_where must be a JSON object such as {"views":{"gt":100}}.')
  return where
}

function whereConditions(where: Record<string, unknown>, prefix: string, depth: number, budget: FilterBudget): Filter[] {
  if (depth > MAX_WHERE_DEPTH) throw new HttpError(400, `_where nests deeper than ${MAX_WHERE_DEPTH} levels, the limit.`)
  const filters: Filter[] = []
  for (const [key, value] of Object.entries(where)) {
    if (key === 'or') {
      if (!Array.isArray(value) || value.length === 0 || !value.every(isObject)) {
        throw new HttpError(400, '_where: "or" must be a non-empty array of objects of conditions.')
      }
      budget.spend(1)
      filters.push({ operator: 'or', branches: value.map((branch) => whereConditions(branch, prefix, depth + 1, budget)) })
      continue
    }
    const field = prefix === '' ? key : `${prefix}.${key}`
    checkLength(field, [])
    if (!isObject(value)) {
      filters.push({ operator: 'eq', field, values: [whereValue(value, field)] })
      budget.spend(1)
      continue
    }
    const keys = Object.keys(value)
    const operators = keys.filter(isOperator)
    if (operators.length === 0) {
      filters.push(...whereConditions(value, field, depth + 1, budget))
      continue
    }
    const unknown = keys.find((name) => !isOperator(name))
    if (unknown !== undefined) throw unknownOperator(unknown, `_where at ${field}`)
    for (const operator of operators) {
      const operand = value[operator]
      const values = operator === 'in' ? (Array.isArray(operand) ? operand : [operand]).map((item) => whereValue(item, field)) : [whereValue(operand, field)]
      budget.spend(values.length)
      filters.push({ operator, field, values })
    }
  }
  return filters
}

function whereValue(value: unknown, field: string): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    const text = String(value)
    if (text.length > MAX_FILTER_TEXT) throw new HttpError(400, `_where: a value for ${field} is longer than ${MAX_FILTER_TEXT} characters, the limit.`)
    return text
  }
  throw new HttpError(400, `_where: ${field} is compared with ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}; compare with a string, a number or a boolean.`)
}

/** A condition 1.0 never holds true (a plain value, an `or` that is no array): an `or` of no branch. */
const NEVER: Filter = { operator: 'or', branches: [] }

/**
 * 1.0's `_where` (matchesWhere) as typed filters: a field's object of known operators
 * (any other name beside them dropped) compares its value; an object without one holds
 * where the field is no object and otherwise holds its conditions on the field's members;
 * `or` holds when one of its object branches does; a plain value, an array or `null`
 * never holds, nor does an `or` that is no non-empty array.
 */
function typedWhere(where: JsonObject, budget: FilterBudget, prefix: readonly string[] = [], depth = 1): Filter[] {
  if (depth > MAX_WHERE_DEPTH) throw new HttpError(400, `_where nests deeper than ${MAX_WHERE_DEPTH} levels, the limit.`)
  const filters: Filter[] = []
  for (const [key, value] of Object.entries(where)) {
    if (key === 'or') {
      budget.spend(1)
      const branches = Array.isArray(value) ? value.filter(isObject) : []
      filters.push({ operator: 'or', branches: branches.map((branch) => typedWhere(branch, budget, prefix, depth + 1)) })
      continue
    }
    if (!isObject(value)) {
      budget.spend(1)
      filters.push(NEVER)
      continue
    }
    // 1.0 reads `item[key]`: a key holding a dot (`author.name`) names a member of that very name.
    const segments = [...prefix, key]
    const field = segments.join('.')
    if (field.length > MAX_FILTER_TEXT) throw new HttpError(400, `A filter names a field longer than ${MAX_FILTER_TEXT} characters, the limit.`)
    const operators = OPERATORS.filter((operator) => Object.hasOwn(value, operator))
    if (operators.length === 0) {
      budget.spend(1)
      const notObject = typed(segments, 'notObject', [])
      filters.push({ operator: 'or', branches: [[notObject], typedWhere(value, budget, segments, depth + 1)] })
      continue
    }
    for (const operator of operators) {
      const operand = value[operator]
      const operands = operator === 'in' && Array.isArray(operand) ? operand : [operand]
      budget.spend(Math.max(1, operands.length))
      filters.push(typed(segments, operator, operands.map((item) => typedValue(item, field))))
    }
  }
  return filters
}

/** A typed filter on the member at `segments`; `segments` kept only when one holds a dot, which the dotted `field` cannot say. */
function typed(segments: readonly string[], comparison: TypedComparison, operands: TypedValue[]): TypedFilter {
  const filter: TypedFilter = { operator: 'typed', field: segments.join('.'), comparison, operands, values: operands.map(textOf) }
  if (segments.some((segment) => segment.includes('.'))) filter.segments = segments
  return filter
}

function typedValue(value: unknown, field: string): TypedValue {
  const operand: TypedValue = value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : { text: javascriptText(value) }
  if (textOf(operand).length > MAX_FILTER_TEXT) throw new HttpError(400, `_where: a value for ${field} is longer than ${MAX_FILTER_TEXT} characters, the limit.`)
  return operand
}
