/** The specs' one seeded random source (mulberry32), so a failing randomized run can be replayed from its seed. */
export interface Random {
  seed: number
  /** A float in [0, 1). */
  next(): number
  /** An integer in [0, max). */
  int(max: number): number
  /** An integer in [min, max]. */
  between(min: number, max: number): number
  chance(probability: number): boolean
  pick<T>(items: readonly T[]): T
  /** `length` characters drawn from `alphabet` (any string; split by code point). */
  text(length: number, alphabet?: string): string
}

const DEFAULT_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789 -_.éß中😀"\\/\n\t'

export function seeded(seed: number): Random {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let mixed = state
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1)
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61)
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296
  }
  const int = (max: number) => Math.floor(next() * max)
  return {
    seed,
    next,
    int,
    between: (min, max) => min + int(max - min + 1),
    chance: (probability) => next() < probability,
    pick: (items) => items[int(items.length)],
    text(length, alphabet = DEFAULT_ALPHABET) {
      const characters = [...alphabet]
      let result = ''
      for (let index = 0; index < length; index++) result += characters[int(characters.length)]
      return result
    },
  }
}

/** The seed from an environment variable, or a fresh one (printed by the test, so a failure can be replayed). */
export function seedFrom(variable: string): number {
  const given = process.env[variable]
  if (given !== undefined && given !== '') return Number(given) >>> 0
  return Math.floor(Math.random() * 2 ** 32)
}

/** JSON text with object keys sorted, so two documents compare equal whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']'
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((key) => JSON.stringify(key) + ':' + canonical((value as Record<string, unknown>)[key]))
    return '{' + entries.join(',') + '}'
  }
  return JSON.stringify(value)
}

type JsonObject = Record<string, unknown>

/**
 * JSON Merge Patch (RFC 7396 §2), written apart from the server's, as the
 * tests' own model. Builds with defineProperty so a `__proto__` key stays data.
 */
export function mergePatchModel(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch
  const result: JsonObject = {}
  const set = (key: string, value: unknown) =>
    Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true })
  const base = target !== null && typeof target === 'object' && !Array.isArray(target) ? (target as JsonObject) : {}
  for (const key of Object.keys(base)) set(key, base[key])
  for (const [key, value] of Object.entries(patch as JsonObject)) {
    if (value === null) delete result[key]
    else set(key, mergePatchModel(Object.hasOwn(result, key) ? result[key] : undefined, value))
  }
  return result
}
