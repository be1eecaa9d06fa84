import { isObject } from '../json/values.ts'

/*
 * json-server 1.0's filters, as its matches-where.ts holds them (docs/json-server.md,
 * "json-server 1.0's mode"), for `--json-server 1`: values keep their JSON type and
 * compare as JavaScript compares them (`1` is not `"1"`; `<` is JavaScript's `<`), and a
 * `_where` object without a known operator holds for an item whose field is no object.
 * restdir's own filters compare text (lib/listing/match.ts); these are a filter kind of
 * their own, `typed`, so that the listing's usual way never looks at a type.
 */

/**
 * The comparisons of json-server 1.0 (`views:gt=20`, `_where={"views":{"gt":20}}`),
 * which also reads 0.17's suffixes (`views_gte=20`); restdir's own filters take them too.
 */
export const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'startsWith', 'endsWith'] as const

/** A typed filter's test: one of 1.0's operators, or `notObject` (a field that is no object, where 1.0 stops looking). */
export type TypedComparison = (typeof OPERATORS)[number] | 'notObject'

/**
 * A value a typed filter compares with: a JSON scalar as it is, or an array or object,
 * which stands for itself (strictly equal to nothing) and compares by the text
 * JavaScript's String() makes of it.
 */
export type TypedValue = string | number | boolean | null | { readonly text: string }

/**
 * `values` holds String() of each operand: the text a listing index's postings and
 * a store's SQL read (lib/listing/index-query.ts, lib/store/postgres/listing-query.ts).
 */
export interface TypedFilter {
  operator: 'typed'
  field: string
  /**
   * The member's path one name a step, when a name holds a dot (`_where={"author.name":…}`
   * names `item["author.name"]`, as 1.0 reads it), which `field`, dotted, cannot say. Such a
   * filter is judged by the scan of every document (lib/listing/match.ts) alone.
   */
  segments?: readonly string[]
  comparison: TypedComparison
  operands: TypedValue[]
  values: string[]
}

/** String() of an operand: what `contains` looks for, and what an array or object compares as. */
export function textOf(operand: TypedValue): string {
  return operand !== null && typeof operand === 'object' ? operand.text : String(operand)
}

/**
 * String() of a JSON value as JavaScript writes it (ECMA-262 Array.prototype.join: items
 * joined by commas, null as nothing; an object `[object Object]`), without calling any
 * member the value holds.
 */
export function javascriptText(value: unknown): string {
  if (Array.isArray(value)) return value.map((item) => (item === null || item === undefined ? '' : javascriptText(item))).join(',')
  if (isObject(value)) return '[object Object]'
  return String(value)
}

/**
 * Whether a field's value (undefined when the item has none) passes a typed filter, as
 * 1.0's matchesWhere judges it: a missing field passes no operator; `eq`, `ne` and
 * `in` are `===` and `!==`; `contains`, `startsWith` and `endsWith` take strings
 * alone, ignoring case; `lt`, `lte`, `gt` and `gte` are JavaScript's own `<`, `<=`,
 * `>`, `>=` (ECMA-262 §7.2.13, IsLessThan: two strings by code unit, else as numbers).
 */
export function typedMatches(filter: TypedFilter, value: unknown): boolean {
  if (filter.comparison === 'notObject') return !isObject(value)
  if (value === undefined) return false
  const { operands } = filter
  switch (filter.comparison) {
    case 'eq':
    case 'in':
      return operands.some((operand) => operand === value)
    case 'ne':
      return operands.every((operand) => operand !== value)
    case 'contains':
    case 'startsWith':
    case 'endsWith': {
      if (typeof value !== 'string') return false
      const lower = value.toLowerCase()
      const wanted = textOf(operands[0]).toLowerCase()
      return filter.comparison === 'contains' ? lower.includes(wanted) : filter.comparison === 'startsWith' ? lower.startsWith(wanted) : lower.endsWith(wanted)
    }
    default: {
      // Both sides as the primitives JavaScript's `<` turns them into first (ToPrimitive); then the operator itself decides.
      const field = primitiveOf(value) as number
      const bound = (operands[0] !== null && typeof operands[0] === 'object' ? operands[0].text : operands[0]) as number
      if (filter.comparison === 'lt') return field < bound
      if (filter.comparison === 'lte') return field <= bound
      if (filter.comparison === 'gt') return field > bound
      return field >= bound
    }
  }
}

function primitiveOf(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? javascriptText(value) : value
}
