import type { Documents } from '../../data/documents.ts'
import type { Doc, NodePath } from '../../store/store.ts'
import { HttpError } from '../../http-error.ts'
import { isObject } from '../../json/values.ts'

/*
 * json-server 0.17's reading of a query string, where it differs from
 * restdir's (docs/json-server.md, "The json-server mode"): `_delay`, the first
 * `q` only, and filters on fields no document has left out.
 */

/** The longest `_delay`, as `--delay`'s: ten minutes. */
const MAX_DELAY = 600_000

/**
 * Takes 0.17's per-request parameters out of `query`, so that the rest reads
 * as restdir's: `_delay=MS` (returned, in milliseconds; 0 without it) and every
 * `q` but the first, which is all 0.17 searches for.
 */
export function takeJsonServerParameters(query: URLSearchParams): number {
  const qs = query.getAll('q')
  if (qs.length > 1) query.set('q', qs[0])
  const delay = query.get('_delay')
  if (delay === null) return 0
  query.delete('_delay')
  if (!/^\d{1,7}$/.test(delay.trim()) || Number(delay) > MAX_DELAY) {
    throw new HttpError(400, `_delay must be a number of milliseconds from 0 to ${MAX_DELAY} (got ${JSON.stringify(delay.slice(0, 40))}).`)
  }
  return Number(delay)
}

/** A plain `field=value` key, as 0.17 reads it: not restdir's `_` parameters, `q`, `field:op` or `field_op`. */
function isPlainFilter(key: string): boolean {
  return key !== '' && key !== 'q' && !key.startsWith('_') && !key.includes(':') && !/_(eq|ne|lt|lte|gt|gte|in|contains|like)$/.test(key)
}

/**
 * json-server 0.17 leaves out a `field=value` filter when no document of the
 * collection has that field (so `?callback=` and typos match everything).
 * Asked only of a listing that matched nothing: returns the query without the
 * filters on absent fields, or undefined when every filtered field is somewhere.
 */
export async function withoutAbsentFields(documents: Documents, path: NodePath, query: URLSearchParams): Promise<URLSearchParams | undefined> {
  const candidates = [...new Set(query.keys())].filter(isPlainFilter)
  if (candidates.length === 0) return undefined
  const docs = (await documents.list(path)) ?? []
  const absent = candidates.filter((key) => !docs.some((doc) => hasPath(doc, key)))
  if (absent.length === 0) return undefined
  const relaxed = new URLSearchParams(query)
  for (const key of absent) relaxed.delete(key)
  return relaxed
}

/** Whether `doc` has the dotted path `a.b` as its own keys, null values included (lodash's `has`). */
function hasPath(doc: Doc, dotted: string): boolean {
  let value: unknown = doc
  for (const key of dotted.split('.')) {
    if (!(isObject(value) || Array.isArray(value)) || !Object.hasOwn(value, key)) return false
    value = (value as Record<string, unknown>)[key]
  }
  return true
}
