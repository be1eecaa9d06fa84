import { createHash } from 'node:crypto'
import type { ListingPlan } from '../store.ts'
import { addToSchemaOnce, plainField, sortKeys, unsureSort, type ListingSql, type SqlSortKey } from './listing-query.ts'

/**
 * Listing indexes (docs/postgres.md, "Indexes for listings"): for a shape of
 * listing (a collection, the fields of its equality filters, its sort), an
 * expression index of that collection's documents in the very order of the
 * listing, and the statement that answers a plan of that shape through it:
 * the page walks its own entries of the index, and the count the entries of
 * the matching documents, with none of their JSON read. The index's
 * expressions and the statement's are written by the same functions here,
 * so that PostgreSQL matches them.
 */

/** The longest value, in UTF-8 bytes, an index keeps, so that no document makes an index row past btree's limit of some 2 700 bytes (a write would fail). */
export const LONGEST_KEY = 256
/** What an index may hold: this many equality fields and sort keys at most. */
const MOST_EQUAL = 3
const MOST_SORT = 2
/** Changes when the index's expressions change, so that an index of other expressions is never taken for one of these. */
const DEFINITION_VERSION = 'listing index 1'

/**
 * Functions the indexes call, made with the query schema. PostgreSQL builds and
 * analyzes an index with a search_path of its own (`pg_catalog`), where
 * restdir_string could not find the functions it calls; this one carries its own.
 * It is String() of the value (restdir_string), or null when that is longer
 * than LONGEST_KEY: an equality on a longer value is never asked of the index.
 */
export const INDEX_FUNCTIONS = [
  `CREATE FUNCTION restdir_index_string(value jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path FROM CURRENT AS $$
     SELECT CASE WHEN octet_length(string) <= ${LONGEST_KEY} THEN string END FROM (SELECT restdir_string(value) AS string) AS computed
   $$`,
]

interface Connecting {
  connect(): Promise<{ query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>; release(): void }>
}

/**
 * Adds INDEX_FUNCTIONS to the query schema where they are missing, under the
 * schema's advisory lock (as ensureQuerySchema): an addition that an earlier
 * restdir of the same schema version leaves alone.
 */
export function ensureIndexFunctions(pool: Connecting): Promise<void> {
  return addToSchemaOnce(pool, `SELECT to_regprocedure('restdir_index_string(jsonb)') IS NOT NULL AS present`, INDEX_FUNCTIONS)
}

/** A shape of listing that an index can serve. */
export interface IndexShape {
  /** The collection's key (keys.ts pathKey). */
  parentKey: string
  /** The fields of the equality filters, sorted, each once. */
  equal: string[]
  sort: { field: string; descending: boolean }[]
}

/**
 * The shape of a plan an index can answer, or undefined: equality filters of
 * one value each (`field=`, `:eq`, a `:in` of one, `_where`'s plain values) on
 * fields through objects, and at most two sort keys.
 */
export function indexShape(parentKey: string, plan: ListingPlan): IndexShape | undefined {
  const equal = new Set<string>()
  for (const filter of plan.filters) {
    if (filter.operator !== 'eq' && filter.operator !== 'in') return undefined
    if (filter.field === undefined || filter.values?.length !== 1 || !plainField(filter.field)) return undefined
    if (Buffer.byteLength(filter.values[0]) > LONGEST_KEY) return undefined
    equal.add(filter.field)
  }
  if (!plan.sort.every((key) => plainField(key.field))) return undefined
  if (equal.size > MOST_EQUAL || plan.sort.length > MOST_SORT || equal.size + plan.sort.length === 0) return undefined
  return { parentKey, equal: [...equal].sort(), sort: plan.sort.map(({ field, descending }) => ({ field, descending })) }
}

/** The index's name: derived from its shape alone, so every instance names it alike. */
export function indexName(shape: IndexShape): string {
  const digest = createHash('sha256').update(JSON.stringify([DEFINITION_VERSION, shape.parentKey, shape.equal, shape.sort])).digest('hex')
  return `restdir_listing_${digest.slice(0, 24)}`
}

/** What the index is for, in words, for the log: `/books/ by author, -views`. */
export function describeShape(shape: IndexShape): string {
  const keys = [...shape.equal, ...shape.sort.map((key) => `${key.descending ? '-' : ''}${key.field}`)]
  return `${shape.parentKey} by ${keys.join(', ')}`
}

/** The columns of a shape's index, each an expression and its direction; `literal` writes a field's segment. */
function columns(shape: IndexShape, literal: (text: string) => string): { equal: (field: string) => string; unsure?: string; sort: SqlSortKey[] } {
  const value = (field: string) => `nullif(doc${field.split('.').map((segment) => ` -> ${literal(segment)}`).join('')}, 'null'::jsonb)`
  const equal = (field: string) => `restdir_index_string(${value(field)}) COLLATE "C"`
  const sort = shape.sort.flatMap((key) => sortKeys(value(key.field), key.descending, LONGEST_KEY))
  if (shape.sort.length === 0) return { equal, sort }
  // The rows the SQL sort cannot order as the listing does (unsureSort), and those whose text is too long for the index.
  const doubts = shape.sort.flatMap((key) => {
    const field = value(key.field)
    return [unsureSort(field), `(jsonb_typeof(${field}) = 'string' AND octet_length(${field} #>> '{}') > ${LONGEST_KEY})`]
  })
  return { equal, unsure: `coalesce(${doubts.join(' OR ')}, false)`, sort }
}

/** A text as an SQL literal, whatever `standard_conforming_strings` says. */
function literal(text: string): string {
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}

/**
 * The statement that makes the shape's index, concurrently, so that writes go
 * on while it builds (docs/postgres.md, "Indexes for listings"): the
 * collection's documents only, by the equality fields, then whether the sort
 * is sure, then the sort keys.
 */
export function indexDefinition(shape: IndexShape): string {
  const { equal, unsure, sort } = columns(shape, (segment) => `${literal(segment)}::text`)
  const keys = [...shape.equal.map((field) => `(${equal(field)})`), ...(unsure ? [`(${unsure})`] : []), ...sort.map((key) => `(${key.sql}) ${key.direction}`)]
  return `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexName(shape)} ON restdir_nodes (${keys.join(', ')}) WHERE parent = ${literal(shape.parentKey)} AND doc IS NOT NULL`
}

/**
 * The statement answering `plan` (of `shape`) through the shape's index, with
 * the columns listingSql answers: the count by the index's entries for the
 * equality filters, whether any of those is unsure for the sort (one probe of
 * the index), whether the collection holds a document SQL does not read, and
 * the page in the index's order, ties in id order (`order`). Without
 * `checks`, the least statement for the page (the count and the texts, the
 * bench's floor): neither doubt is looked for, and the answer may be wrong.
 *
 * The collection and the fields are literals, as in the index, and only the
 * values are parameters, so that a plan made without the values (a generic
 * plan) still matches the index's expressions and its WHERE. Where each
 * equality field is asked once, the text is the shape's alone, and the
 * statement is named for it: each connection parses and plans it once
 * (PostgreSQL keeps the generic plan once it costs no more than those made
 * for the values), at most two per index.
 */
export function indexedListingSql(shape: IndexShape, plan: ListingPlan, order: string, checks = true): ListingSql {
  const values: unknown[] = []
  const parameter = (value: unknown, type: string) => {
    values.push(value)
    return `$${values.length}::${type}`
  }
  const { equal, unsure, sort } = columns(shape, (segment) => `${literal(segment)}::text`)
  // The filters in the shape's order of fields, so that one shape makes one text.
  const filters = [...plan.filters].sort((a, b) => shape.equal.indexOf(a.field!) - shape.equal.indexOf(b.field!))
  const conditions = filters.map((filter) => `${equal(filter.field!)} = ${parameter(filter.values![0], 'text')}`)
  const where = [`parent = ${literal(shape.parentKey)}`, 'doc IS NOT NULL', ...conditions].join(' AND ')
  const limit = plan.end === undefined ? null : Math.max(0, plan.end - plan.start)
  const keys = [...sort.map((key) => `${key.sql} ${key.direction}`), order]
  const text = `SELECT (SELECT count(*) FROM restdir_nodes WHERE ${where})::bigint AS total,
      ${unsure && checks ? `EXISTS (SELECT 1 FROM restdir_nodes WHERE ${where} AND ${unsure} = true)` : 'false'} AS unsure,
      ${checks ? `EXISTS (SELECT 1 FROM restdir_nodes WHERE parent = ${literal(shape.parentKey)} AND text IS NOT NULL AND doc IS NULL)` : 'false'} AS unread,
      array_to_json(ARRAY(SELECT text FROM restdir_nodes WHERE ${where}${unsure ? ` AND ${unsure} = false` : ''}
        ORDER BY ${keys.join(', ')} OFFSET (SELECT ${parameter(plan.start, 'bigint')}) LIMIT (SELECT ${parameter(limit, 'bigint')}))) AS page`
  const once = filters.length === shape.equal.length
  return once ? { name: `${indexName(shape)}_${checks ? 'page' : 'least'}`, text, values } : { text, values }
}
