import type { Pace } from '../data/pace.ts'
import { SEARCH_SEPARATOR, type CollectionIndex, type IndexNeeds, type IndexRow } from './collection-index.ts'
import type { Filter } from './filters.ts'
import { contains, fieldMatches, SEARCH_PIECE, valueMatches } from './match.ts'
import { LIKE_IN_ONE_STEP, likePattern } from './like.ts'
import { compareSortValues, mergeSort, sortValueOf, type SortKey, type SortValue } from './sort.ts'

/**
 * Answers a listing query from a collection's index (docs/http-api.md,
 * "Listing queries"): the same documents in the same order as filtering and
 * sorting every document (lib/listing/match.ts, sort.ts), by the same rules,
 * read from compact values. An equality filter (`field=`, `:eq`, `:in`)
 * narrows the candidates to the children holding its values; the others are
 * checked on each candidate; a sort keeps only the best `end` matches.
 */

/** The window of the sorted matches and how many matched. */
export interface IndexAnswer {
  rows: IndexRow[]
  total: number
}

/** Past this many, the window's documents are sorted in full (a merge sort in slices) rather than picked one by one. */
const MOST_PICKED = 1000

/** What a query reads from the index; undefined when the index cannot answer it exactly (a `q` text holding the separator). */
export function indexNeeds(filters: readonly Filter[], sort: readonly SortKey[]): IndexNeeds | undefined {
  const needs: IndexNeeds = { fields: sort.map((key) => key.field), postings: [], search: false }
  const visit = (list: readonly Filter[], top: boolean): boolean => {
    for (const filter of list) {
      if (filter.operator === 'or') {
        if (!filter.branches.every((branch) => visit(branch, false))) return false
      } else if (filter.operator === 'q') {
        if (filter.values.some((value) => value.includes(SEARCH_SEPARATOR))) return false
        needs.search = true
      } else if (filter.operator === 'typed' && filter.segments) {
        // A member whose name holds a dot: the index's columns are dotted paths, so the scan of every document judges it.
        return false
      } else {
        needs.fields.push(filter.field)
        if (top && narrowsByPostings(filter)) needs.postings.push(filter.field)
      }
    }
    return true
  }
  if (!visit(filters, true)) return undefined
  needs.fields = [...new Set(needs.fields)]
  needs.postings = [...new Set(needs.postings)]
  return needs
}

/**
 * The matches of `filters` in `sort` order (ties in the unsorted order), the window
 * [start, end) of them given by `windowOf` once the total is known (a page
 * past the last may become the last).
 */
export async function queryIndex(
  index: CollectionIndex,
  filters: readonly Filter[],
  sort: readonly SortKey[],
  windowOf: (total: number) => { start: number; end: number | undefined },
  pace: Pace,
): Promise<IndexAnswer> {
  const candidates = narrowest(index, filters)
  const matches: number[] = []
  const matchRow = rowMatcher(index, filters, pace)
  // A row's answer is awaited only when it is a promise (a slice used up, a long value): awaiting a
  // boolean would still take a turn of the microtask queue, for every row of the collection. Nothing
  // here is allocated for a row (no iterator, no closure over it), so a scan of many rows makes no garbage.
  const judge = (slot: number): Promise<void> | undefined => {
    const passes = matchRow(slot)
    if (passes === true) matches.push(slot)
    else if (passes !== false) return keepIf(passes, matches, slot)
  }
  const ordered = index.ordered
  const count = candidates ? candidates.length : ordered.length
  let wait: Promise<void> | undefined
  for (let at = 0; at < count; at++) if ((wait = judge(candidates ? candidates[at] : ordered[at].slot))) await wait
  const total = matches.length
  const { start, end } = windowOf(total)
  // Without a sort or a narrowing, the matches are in order already (CollectionIndex.ordered).
  if (!candidates && sort.length === 0) return { rows: matches.slice(start, end).map((slot) => index.row(slot)), total }
  const window = await orderWindow(index, matches, sort, end, pace)
  return { rows: window.slice(start, end).map((entry) => index.row(entry.slot)), total }
}

/** The children an equality filter allows, from the filter with the fewest; undefined when no filter narrows. */
function narrowest(index: CollectionIndex, filters: readonly Filter[]): number[] | undefined {
  let best: Set<number>[] | undefined
  let bestSize = Infinity
  for (const filter of filters) {
    if (!narrowsByPostings(filter)) continue
    const postings = index.postings(filter.field)
    const sets = [...new Set(filter.values)].flatMap((value) => postings.get(value) ?? [])
    const size = sets.reduce((sum, set) => sum + set.size, 0)
    if (size < bestSize) {
      best = sets
      bestSize = size
    }
  }
  if (!best) return undefined
  return best.flatMap((set) => [...set])
}

/**
 * Whether a filter holds only for children whose value's String() is one of its
 * values, which the postings find: an equality (`field=`, `:eq`, `:in`), and
 * json-server 1.0's typed `eq` and `in` (typed.ts), each then checked on the
 * child, save where they look for `null`, which postings do not hold.
 */
function narrowsByPostings(filter: Filter): filter is Extract<Filter, { field: string }> {
  if (filter.operator === 'eq' || filter.operator === 'in') return true
  return filter.operator === 'typed' && (filter.comparison === 'eq' || filter.comparison === 'in') && !filter.operands.includes(null)
}

/**
 * Whether a row passes the filters: at once for short values (the work
 * spent on `pace`), else a piece at a time as for a document (fieldMatches),
 * so a long text never makes one long step. Awaits only when the slice is used up.
 * One per query: its count of the work is made once, not for every row.
 */
function rowMatcher(index: CollectionIndex, filters: readonly Filter[], pace: Pace): (slot: number) => boolean | Promise<boolean> {
  const work = { cost: 0 }
  return (slot) => {
    work.cost = 0
    const quick = quickMatch(index, slot, filters, work)
    if (quick === undefined) return slowMatch(index, slot, filters, pace)
    const turn = pace(work.cost)
    return turn ? after(turn, quick) : quick
  }
}

/** `slot` kept once `passes` says so. */
async function keepIf(passes: Promise<boolean>, matches: number[], slot: number): Promise<void> {
  if (await passes) matches.push(slot)
}

/** `value` once `turn` has passed; apart, so the function that calls it keeps no context for it. */
function after<T>(turn: Promise<void>, value: T): Promise<T> {
  return turn.then(() => value)
}

/** The answer for short values; undefined when a value examined is long or structured (left to slowMatch). */
function quickMatch(index: CollectionIndex, slot: number, filters: readonly Filter[], work: { cost: number }): boolean | undefined {
  for (const filter of filters) {
    let passes: boolean | undefined
    if (filter.operator === 'or') {
      passes = false
      for (const branch of filter.branches) {
        const branchPasses = quickMatch(index, slot, branch, work)
        if (branchPasses === undefined) return undefined
        if (branchPasses) {
          passes = true
          break
        }
      }
    } else if (filter.operator === 'q') {
      const text = index.searchTexts()[slot]
      if (text.length > SEARCH_PIECE) return undefined
      work.cost += text.length * filter.values.length
      passes = searchMatches(text, filter.values)
    } else {
      const value = index.column(filter.field)[slot]
      if (typeof value === 'object' && value !== null) return undefined
      if (typeof value === 'string') {
        if (value.length > (filter.operator === 'like' ? LIKE_IN_ONE_STEP : SEARCH_PIECE)) return undefined
        work.cost += value.length * filter.values.length * (filter.operator === 'like' ? likeSize(filter.values) : 1)
      }
      passes = valueMatches(filter, value)
    }
    if (!passes) return false
  }
  return true
}

async function slowMatch(index: CollectionIndex, slot: number, filters: readonly Filter[], pace: Pace): Promise<boolean> {
  for (const filter of filters) {
    if (filter.operator === 'or') {
      let passes = false
      for (const branch of filter.branches) if ((passes = await slowMatch(index, slot, branch, pace))) break
      if (!passes) return false
    } else if (filter.operator === 'q') {
      const text = index.searchTexts()[slot]
      if (text.length <= SEARCH_PIECE) {
        if (!searchMatches(text, filter.values)) return false
        continue
      }
      for (const wanted of filter.values) if (!(wanted === '' ? text !== '' : await contains(text, wanted, pace))) return false
    } else if (!(await fieldMatches(filter, index.column(filter.field)[slot], pace))) return false
  }
  return true
}

/** `q`: every text is in one of the document's texts; an empty one matches any document with a text (see searchTextsOf). */
function searchMatches(text: string, values: readonly string[]): boolean {
  for (const wanted of values) if (wanted === '' ? text === '' : !text.includes(wanted)) return false
  return true
}

interface Ranked {
  slot: number
  name: string
  values: SortValue[]
}

/**
 * The first `end` matches in sort order, ties in the order of a listing
 * without a sort (as a stable sort of the documents in that order leaves them): picked one by one into a
 * bounded list when the window is small, else a full merge sort.
 */
async function orderWindow(index: CollectionIndex, matches: readonly number[], sort: readonly SortKey[], end: number | undefined, pace: Pace): Promise<Ranked[]> {
  const columns = sort.map((key) => index.column(key.field))
  const compare = (a: Ranked, b: Ranked) => compareSortValues(sort, a.values, b.values) || index.compareRows(index.row(a.slot), index.row(b.slot))
  const rank = (slot: number): Ranked => ({ slot, name: index.row(slot).name, values: columns.map((column) => sortValueOf(column[slot])) })
  if (end === undefined || end > MOST_PICKED) {
    const ranked: Ranked[] = []
    for (const slot of matches) {
      ranked.push(rank(slot))
      const turn = pace()
      if (turn) await turn
    }
    return mergeSort(ranked, compare, () => pace())
  }
  const best: Ranked[] = []
  for (const slot of matches) {
    const turn = pace()
    if (turn) await turn
    if (end === 0) break
    const entry = rank(slot)
    if (best.length === end && compare(entry, best[best.length - 1]) >= 0) continue
    let low = 0
    let high = best.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compare(best[middle], entry) <= 0) low = middle + 1
      else high = middle
    }
    best.splice(low, 0, entry)
    if (best.length > end) best.pop()
  }
  return best
}

/** What matching one character costs for the largest of a `_like`'s patterns (lib/listing/like.ts). */
function likeSize(sources: readonly string[]): number {
  return Math.max(1, ...sources.map((source) => likePattern(source).size))
}
