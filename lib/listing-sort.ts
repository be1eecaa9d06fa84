import type { Doc } from './store/store.ts'
import { HttpError } from './errors.ts'
import { valueAt } from './json.ts'

export interface SortKey {
  field: string
  descending: boolean
}

/**
 * `_sort=a,b&_order=asc,desc` (json-server 0.17) and `_sort=a,-b` (json-server 1.x):
 * each field with its own order, ascending unless told otherwise.
 */
export function parseSort(query: URLSearchParams): SortKey[] {
  const sort = query.get('_sort')
  if (sort === null || sort.trim() === '') return []
  const orders = (query.get('_order') ?? '').split(',').map((order) => order.trim().toLowerCase())
  return sort.split(',').map((raw, index) => {
    const field = raw.trim().replace(/^-/, '')
    if (field === '') throw new HttpError(400, `_sort names an empty field (${JSON.stringify(sort)}); list fields separated by commas.`)
    const order = orders[index] ?? ''
    if (order !== '' && order !== 'asc' && order !== 'desc') {
      throw new HttpError(400, `_order must be asc or desc for each _sort field (got ${JSON.stringify(orders[index])}).`)
    }
    return { field, descending: order === 'desc' || raw.trim().startsWith('-') }
  })
}

/** A stable sort by each key in turn; documents without a value for a key come last, whatever the order. */
export function sortDocs(docs: Doc[], keys: readonly SortKey[]): Doc[] {
  if (keys.length === 0) return docs
  const rows = docs.map((doc) => ({ doc, values: keys.map((key) => valueAt(doc, key.field)) }))
  rows.sort((left, right) => {
    for (let index = 0; index < keys.length; index++) {
      const a = left.values[index]
      const b = right.values[index]
      const aMissing = a === undefined || a === null
      const bMissing = b === undefined || b === null
      if (aMissing || bMissing) {
        if (aMissing !== bMissing) return aMissing ? 1 : -1
        continue
      }
      const order = compareValues(a, b)
      if (order !== 0) return keys[index].descending ? -order : order
    }
    return 0
  })
  return rows.map((row) => row.doc)
}

/**
 * A total order over JSON values: numbers and numeric strings by value (so
 * ids imported as "2" and "10" sort as 2 < 10), then booleans, then other
 * strings by code unit, then arrays and objects by their JSON text.
 */
function compareValues(a: unknown, b: unknown): number {
  const rankA = rankOf(a)
  const rankB = rankOf(b)
  if (rankA !== rankB) return rankA - rankB
  if (rankA === 0) return Number(a) - Number(b)
  if (rankA === 1) return Number(a) - Number(b)
  const textA = rankA === 2 ? (a as string) : JSON.stringify(a)
  const textB = rankB === 2 ? (b as string) : JSON.stringify(b)
  return textA < textB ? -1 : textA > textB ? 1 : 0
}

const numericString = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i

function rankOf(value: unknown): number {
  if (typeof value === 'number' || (typeof value === 'string' && numericString.test(value))) return 0
  if (typeof value === 'boolean') return 1
  if (typeof value === 'string') return 2
  return 3
}
