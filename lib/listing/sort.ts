import type { Doc } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { valueAt } from '../json/values.ts'
import { MAX_FILTER_TEXT } from './filters.ts'
import type { Pace } from '../data/pace.ts'

export interface SortKey {
  field: string
  descending: boolean
}

/**
 * `_sort=a,b&_order=asc,desc` (json-server 0.17) and `_sort=a,-b` (json-server 1.x):
 * each field with its own order, ascending unless told otherwise.
 */
export function parseSort(query: URLSearchParams, maxKeys: number): SortKey[] {
  const sort = query.get('_sort')
  if (sort === null || sort.trim() === '') return []
  const fields = sort.split(',', maxKeys + 1)
  if (fields.length > maxKeys) throw new HttpError(400, `_sort names more than ${maxKeys} fields; that is the limit (--max-sort-keys).`)
  const orders = (query.get('_order') ?? '').split(',', maxKeys + 1).map((order) => order.trim().toLowerCase())
  return fields.map((raw, index) => {
    const field = raw.trim().replace(/^-/, '')
    if (field === '') throw new HttpError(400, `_sort names an empty field (${JSON.stringify(sort)}); list fields separated by commas.`)
    if (field.length > MAX_FILTER_TEXT) throw new HttpError(400, `_sort names a field longer than ${MAX_FILTER_TEXT} characters, the limit.`)
    const order = orders[index] ?? ''
    if (order !== '' && order !== 'asc' && order !== 'desc') {
      throw new HttpError(400, `_order must be asc or desc for each _sort field (got ${JSON.stringify(orders[index])}).`)
    }
    return { field, descending: order === 'desc' || raw.trim().startsWith('-') }
  })
}

/**
 * A stable sort by each key in turn; documents without a value for a key come
 * last, whatever the order. Each document's sort values are worked out once,
 * and the sort is a merge sort that spends each comparison on `pace` (two
 * long texts cost as much to compare as the shorter of them is long), so a
 * big collection, or a few huge values, are sorted in slices with other
 * requests served between them.
 */
export async function sortDocs(docs: Doc[], keys: readonly SortKey[], pace: Pace): Promise<Doc[]> {
  if (keys.length === 0) return docs
  const rows: Row[] = []
  for (const doc of docs) {
    let cost = 0
    const values = keys.map((key) => {
      const value = sortValueOf(valueAt(doc, key.field))
      cost += value.text.length
      return value
    })
    rows.push({ doc, values })
    const turn = pace(cost)
    if (turn) await turn
  }
  let comparing = 0
  const compareRows = (left: Row, right: Row): number => {
    for (let index = 0; index < keys.length; index++) comparing += Math.min(left.values[index].text.length, right.values[index].text.length)
    return compareSortValues(keys, left.values, right.values)
  }
  const sorted = await mergeSort(rows, compareRows, () => {
    const cost = comparing
    comparing = 0
    return pace(cost)
  })
  return sorted.map((row) => row.doc)
}

interface Row {
  doc: Doc
  values: SortValue[]
}

/**
 * A stable bottom-up merge sort that calls `afterCompare` after each
 * comparison and awaits what it returns, if anything: Array.prototype.sort
 * cannot stop halfway to let other requests in.
 */
export async function mergeSort<T>(items: T[], compare: (a: T, b: T) => number, afterCompare: () => Promise<void> | undefined): Promise<T[]> {
  let from = items.slice()
  let to = new Array<T>(items.length)
  for (let width = 1; width < from.length; width *= 2) {
    for (let low = 0; low < from.length; low += 2 * width) {
      const middle = Math.min(low + width, from.length)
      const high = Math.min(low + 2 * width, from.length)
      let left = low
      let right = middle
      let next = low
      while (left < middle && right < high) {
        // The left one first when equal: that keeps the sort stable.
        to[next++] = compare(from[right], from[left]) < 0 ? from[right++] : from[left++]
        const turn = afterCompare()
        if (turn) await turn
      }
      while (left < middle) to[next++] = from[left++]
      while (right < high) to[next++] = from[right++]
    }
    ;[from, to] = [to, from]
  }
  return from
}

/**
 * A total order over JSON values: numbers and numeric strings by value (so
 * ids imported as "2" and "10" sort as 2 < 10), then booleans, then other
 * strings by code unit, then arrays and objects by their JSON text.
 */
export interface SortValue {
  rank: number
  number: number
  text: string
}

const MISSING = 4
const numericString = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i

export function sortValueOf(value: unknown): SortValue {
  if (value === undefined || value === null) return { rank: MISSING, number: 0, text: '' }
  if (typeof value === 'number' || (typeof value === 'string' && numericString.test(value))) return { rank: 0, number: Number(value), text: '' }
  if (typeof value === 'boolean') return { rank: 1, number: Number(value), text: '' }
  if (typeof value === 'string') return { rank: 2, number: 0, text: value }
  return { rank: 3, number: 0, text: JSON.stringify(value) }
}

/**
 * The order of two documents by their values for `keys` (as sortValueOf
 * makes them), 0 when they tie on every key: the one comparison, for
 * sortDocs and for a listing index (lib/listing/index-query.ts).
 */
export function compareSortValues(keys: readonly SortKey[], left: readonly SortValue[], right: readonly SortValue[]): number {
  for (let index = 0; index < keys.length; index++) {
    const a = left[index]
    const b = right[index]
    if (a.rank === MISSING || b.rank === MISSING) {
      if (a.rank !== b.rank) return a.rank === MISSING ? 1 : -1
      continue
    }
    const order = compareValues(a, b)
    if (order !== 0) return keys[index].descending ? -order : order
  }
  return 0
}

function compareValues(a: SortValue, b: SortValue): number {
  if (a.rank !== b.rank) return a.rank - b.rank
  // Not a subtraction: two infinities ("1e999") are equal, where their difference is NaN.
  if (a.rank <= 1) return a.number < b.number ? -1 : a.number > b.number ? 1 : 0
  return a.text < b.text ? -1 : a.text > b.text ? 1 : 0
}
