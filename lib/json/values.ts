/** Helpers for JSON values that arrive from the network: no key ever reaches a prototype. */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: unknown }

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** What kind of JSON value this is, for a message: `null`, `an array`, `a string`, … */
export function jsonKindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}

/** Sets an own data property, even for keys such as `__proto__` (plain assignment would change the prototype). */
export function defineValue(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/** JSON Merge Patch (RFC 7396 §2): objects merge key by key, `null` removes a key, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch
  const base = isObject(target) ? target : {}
  const result: JsonObject = {}
  // Keys keep their order: existing ones where they were, new ones after.
  for (const key of Object.keys(base)) {
    if (!Object.hasOwn(patch, key)) defineValue(result, key, base[key])
    else if (patch[key] !== null) defineValue(result, key, mergePatch(base[key], patch[key]))
  }
  for (const key of Object.keys(patch)) {
    if (!Object.hasOwn(base, key) && patch[key] !== null) defineValue(result, key, mergePatch(undefined, patch[key]))
  }
  return result
}

/** The value at a dotted path (`a.b.c`), for filters and sorting; own properties only. */
export function valueAt(doc: unknown, dottedPath: string): unknown {
  let value = doc
  for (const key of dottedPath.split('.')) {
    if (!isObject(value) && !Array.isArray(value)) return undefined
    if (!Object.hasOwn(value, key)) return undefined
    value = (value as JsonObject)[key]
  }
  return value
}
