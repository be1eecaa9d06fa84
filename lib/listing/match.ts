import type { Doc } from '../store/store.ts'
import { isObject, valueAt } from '../json/values.ts'
import type { Filter } from './filters.ts'
import type { Pace } from '../data/pace.ts'
import { LIKE_IN_ONE_STEP, likePattern } from './like.ts'
import { typedMatches } from './typed.ts'

/**
 * Whether a document passes every filter of a listing (docs/http-api.md, "Listing queries"), spending the work on `pace` as it goes: a filter value is
 * compared with each field it names, `q` with every text of the document, so
 * a document of a megabyte costs what a megabyte costs and is checked in
 * slices, with other requests served between them.
 */
export async function matchesFilters(doc: Doc, filters: readonly Filter[], pace: Pace): Promise<boolean> {
  for (const filter of filters) if (!(await matchesFilter(doc, filter, pace))) return false
  return true
}

/** Texts longer than this are searched a piece at a time, so that one search is never one long step. */
export const SEARCH_PIECE = 64 * 1024

async function matchesFilter(doc: Doc, filter: Filter, pace: Pace): Promise<boolean> {
  if (filter.operator === 'or') {
    for (const branch of filter.branches) if (await matchesFilters(doc, branch, pace)) return true
    return false
  }
  if (filter.operator === 'q') {
    const texts = await lowerTexts(doc, pace)
    for (const wanted of filter.values) if (!(await someContains(texts, wanted, pace))) return false
    return true
  }
  const value = filter.operator === 'typed' && filter.segments ? memberAt(doc, filter.segments) : valueAt(doc, filter.field)
  return fieldMatches(filter, value, pace)
}

/** The member at `segments`, one name a step (a name may hold a dot), own members only, as valueAt reads a dotted path. */
function memberAt(doc: Doc, segments: readonly string[]): unknown {
  let value: unknown = doc
  for (const key of segments) {
    if (!isObject(value) && !Array.isArray(value)) return undefined
    if (!Object.hasOwn(value, key)) return undefined
    value = (value as Record<string, unknown>)[key]
  }
  return value
}

/** Whether any filter names a member by `segments` (TypedFilter), which only the scan of every document reads. */
export function namesDottedMember(filters: readonly Filter[]): boolean {
  return filters.some((filter) => (filter.operator === 'or' ? filter.branches.some(namesDottedMember) : filter.operator === 'typed' && filter.segments !== undefined))
}

/** valueMatches, spending the work on `pace`: a long text is searched a piece at a time. */
export async function fieldMatches(filter: FieldFilter, value: unknown, pace: Pace): Promise<boolean> {
  const present = value !== undefined && value !== null
  const text = present ? String(value) : ''
  // An array or object becomes text here, at a cost of its length.
  const turn = pace(text.length)
  if (turn) await turn
  if (present && text.length > LIKE_IN_ONE_STEP && filter.operator === 'like') {
    // A regular expression on a long text: matched a piece at a time (lib/listing/like.ts).
    for (const source of filter.values) if (await likePattern(source).testPaced(text, pace)) return true
    return false
  }
  if (present && text.length > SEARCH_PIECE && filter.operator === 'contains') {
    // A long text is searched in pieces; the answer is the one valueMatches gives.
    const lower = await lowerCase(text, pace)
    for (const wanted of filter.values) if (await contains(lower, wanted.toLowerCase(), pace)) return true
    return false
  }
  return valueMatches(filter, value)
}

/** A filter on one field, as `valueMatches` takes it. */
export type FieldFilter = Extract<Filter, { field: string }>

/**
 * Whether a field's value (undefined when the document has none) passes a
 * field filter: the one rule, for a document's value and for the value a
 * listing index keeps (lib/listing/collection-index.ts). json-server 1.0's
 * typed filters have a rule of their own (typed.ts), its own case.
 */
export function valueMatches(filter: FieldFilter, value: unknown): boolean {
  const present = value !== undefined && value !== null
  const text = present ? String(value) : ''
  switch (filter.operator) {
    case 'eq':
    case 'in':
      return present && filter.values.includes(text)
    case 'ne':
      return !present || !filter.values.includes(text)
    case 'like':
      // A regular expression, ignoring case, as json-server 0.17 reads it, run in linear time (lib/listing/like.ts).
      return present && filter.values.some((source) => likePattern(source).test(text))
    case 'contains': {
      if (!present) return false
      const lower = text.toLowerCase()
      return filter.values.some((wanted) => lower.includes(wanted.toLowerCase()))
    }
    case 'startsWith':
    case 'endsWith': {
      if (!present) return false
      const lower = text.toLowerCase()
      const atStart = filter.operator === 'startsWith'
      return filter.values.some((wanted) => (atStart ? lower.startsWith(wanted.toLowerCase()) : lower.endsWith(wanted.toLowerCase())))
    }
    case 'typed':
      return typedMatches(filter, value)
    default: {
      if (!present) return false
      // The field's number is worked out once, not once per bound: it costs the length of its text.
      const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN
      const bounds = filter.values.map((bound) => compareLoosely(number, text, bound))
      if (filter.operator === 'gte') return bounds.every((order) => order >= 0)
      if (filter.operator === 'gt') return bounds.every((order) => order > 0)
      if (filter.operator === 'lte') return bounds.every((order) => order <= 0)
      return bounds.every((order) => order < 0)
    }
  }
}

/** Numbers (and numeric strings) compare as numbers, anything else as strings. */
function compareLoosely(number: number, text: string, bound: string): number {
  const boundNumber = bound.trim() === '' ? NaN : Number(bound)
  if (!Number.isNaN(number) && !Number.isNaN(boundNumber)) return number - boundNumber
  return text < bound ? -1 : text > bound ? 1 : 0
}

async function lowerCase(text: string, pace: Pace): Promise<string> {
  const lower = text.toLowerCase()
  const turn = pace(text.length)
  if (turn) await turn
  return lower
}

/**
 * Every string, number and boolean of a document, lower-cased, for `q`, at
 * once: what a listing index keeps (see lowerTexts).
 */
export function searchTextsOf(doc: Doc): string[] {
  const texts: string[] = []
  const pending: unknown[] = [doc]
  // In document order, as lowerTexts visits them.
  while (pending.length > 0) {
    const value = pending.pop()
    if (Array.isArray(value)) for (let index = value.length - 1; index >= 0; index--) pending.push(value[index])
    else if (isObject(value)) {
      const values = Object.values(value)
      for (let index = values.length - 1; index >= 0; index--) pending.push(values[index])
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') texts.push(String(value).toLowerCase())
  }
  return texts
}

/** Every string, number and boolean of a document, lower-cased, for `q` (which ignores case); keys are not searched. */
async function lowerTexts(doc: Doc, pace: Pace): Promise<string[]> {
  const texts: string[] = []
  const frames: { values: unknown[]; next: number }[] = [{ values: [doc], next: 0 }]
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]
    if (frame.next === frame.values.length) {
      frames.pop()
      continue
    }
    const value = frame.values[frame.next++]
    let cost = 0
    if (Array.isArray(value)) frames.push({ values: value, next: 0 })
    else if (isObject(value)) {
      const values = Object.values(value)
      frames.push({ values, next: 0 })
      cost = values.length
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      const text = String(value).toLowerCase()
      texts.push(text)
      cost = text.length
    }
    const turn = pace(cost)
    if (turn) await turn
  }
  return texts
}

async function someContains(texts: readonly string[], wanted: string, pace: Pace): Promise<boolean> {
  for (const text of texts) {
    if (text.length > SEARCH_PIECE) {
      if (await contains(text, wanted, pace)) return true
      continue
    }
    // Most texts are short: searched here, without a promise each.
    if (text.includes(wanted)) return true
    const turn = pace(text.length)
    if (turn) await turn
  }
  return false
}

/** `text.includes(wanted)`, a piece of SEARCH_PIECE characters at a time (pieces overlap by the length of `wanted`, less one). */
export async function contains(text: string, wanted: string, pace: Pace): Promise<boolean> {
  for (let start = 0; start === 0 || start < text.length; start += SEARCH_PIECE) {
    const piece = text.length <= SEARCH_PIECE ? text : text.slice(start, start + SEARCH_PIECE + wanted.length - 1)
    if (piece.includes(wanted)) return true
    const turn = pace(piece.length)
    if (turn) await turn
  }
  return false
}
