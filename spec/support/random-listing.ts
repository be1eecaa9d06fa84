import type { Random } from './random.ts'

// Random documents and random listing queries (docs/http-api.md, "Listing queries") for the
// differential specs, which ask two ways of listing the same query and compare the answers.
// Each spec gives its own values and its own kinds of query: a store that cannot hold some
// values (PostgreSQL keeps no NUL character and no -0) or answer some queries leaves them out.

/** What a spec's documents hold and what its queries ask. */
export interface ListingMix {
  /** Values of the documents' fields and of the queries' filters. */
  texts: readonly string[]
  numericTexts: readonly string[]
  numbers: readonly number[]
  oddNumbers: readonly string[]
  /** Values only the queries' filters use. */
  queryOnlyValues: readonly string[]
  /** The fields the conditions name. */
  filterFields: readonly string[]
  /** The fields `_sort` names. */
  sortFields: readonly string[]
  /** The kinds of condition, drawn evenly: a kind listed twice is drawn twice as often. */
  conditions: readonly ConditionKind[]
  /** The operators of a `field:op=` comparison (json-server 1.0). */
  comparisons: readonly string[]
  /** The operators of a `_where` branch. */
  whereOperators: readonly string[]
  /** The kinds of window, drawn evenly like the conditions. */
  windows: readonly WindowKind[]
}

/**
 * `equal` is `field=`; `not-equal` `field_ne=`; `range` `field_lt=` and the like (0.17); `like`
 * `field_like=`; `text` `field:contains=` and the like; `in` `field:in=a,b`; `compare` a
 * `field:op=` from `comparisons`; `q` a full-text search; `id` an `id=` of a whole number up to 60.
 */
export type ConditionKind = 'equal' | 'not-equal' | 'range' | 'like' | 'text' | 'in' | 'compare' | 'q' | 'id'

/** `per-page` is `_page`/`_per_page`; `page-limit` `_page`/`_limit`; `start-end`, `limit` and `zero-limit` as named; `whole` none. */
export type WindowKind = 'per-page' | 'page-limit' | 'start-end' | 'limit' | 'zero-limit' | 'whole'

/** One value from one of `sets`, the set drawn first, so a small set is drawn as often as a large one. */
export function randomScalar(random: Random, sets: readonly (readonly unknown[])[]): unknown {
  return random.pick(random.pick(sets))
}

/** A document with fields `a`, `n`, `b`, `o` (an object with `p`, or not) and `tags`, any of them missing or null; with `id` when given. */
export function randomDoc(random: Random, mix: ListingMix, id?: string): Record<string, unknown> {
  const doc: Record<string, unknown> = id === undefined ? {} : { id }
  const { texts, numericTexts, numbers, oddNumbers } = mix
  const put = (key: string, value: unknown) => {
    if (value !== undefined) doc[key] = value
  }
  const maybe = <T>(value: () => T): T | undefined => (random.chance(0.15) ? undefined : random.chance(0.05) ? (null as T) : value())
  put('a', maybe(() => randomScalar(random, [texts, texts, numbers, [true, false]])))
  put('n', maybe(() => randomScalar(random, [numbers, numericTexts, [true]])))
  put('b', maybe(() => randomScalar(random, [texts, oddNumbers, numbers])))
  put('o', maybe(() => (random.chance(0.8) ? { p: randomScalar(random, [texts, numbers, numericTexts]) } : random.pick([{}, 'flat', 3]))))
  put('tags', maybe(() => random.pick([[], ['a'], ['a', 'b'], [2], [null], [['x']], [{ p: 1 }], ['B', 'a']])))
  return doc
}

/** A query string: filters (or a `_where` of two branches), perhaps a sort, and a window. */
export function randomQuery(random: Random, mix: ListingMix): string {
  const query = new URLSearchParams()
  if (random.chance(0.1)) {
    const branch = () => ({ [random.pick(['a', 'n', 'b'])]: { [random.pick(mix.whereOperators)]: randomValue(random, mix) } })
    query.set('_where', JSON.stringify({ or: [branch(), branch()] }))
  } else {
    for (let count = random.int(3); count > 0; count--) for (const [key, value] of randomCondition(random, mix)) query.append(key, value)
  }
  if (random.chance(0.7)) {
    const keys = Array.from({ length: random.between(1, 2) }, () => `${random.chance(0.4) ? '-' : ''}${random.pick(mix.sortFields)}`)
    query.set('_sort', keys.join(','))
  }
  switch (random.pick(mix.windows)) {
    case 'per-page': query.set('_page', String(random.between(1, 12))); query.set('_per_page', String(random.between(1, 30))); break
    case 'page-limit': query.set('_page', String(random.between(1, 6))); query.set('_limit', String(random.between(1, 30))); break
    case 'start-end': query.set('_start', String(random.int(50))); query.set('_end', String(random.int(80))); break
    case 'limit': query.set('_limit', String(random.between(1, 40))); break
    case 'zero-limit': query.set('_limit', '0'); break
    case 'whole': break
  }
  return query.toString()
}

function randomValue(random: Random, mix: ListingMix): string {
  return String(randomScalar(random, [mix.texts, mix.numericTexts, mix.numbers.map(String), mix.oddNumbers, mix.queryOnlyValues]))
}

/**
 * One condition as the query parameters that ask it. Equality draws a value
 * repeated now and then (`a=x&a=x`, `a:in=x,x`), which must match each
 * document once, as the value alone does.
 */
function randomCondition(random: Random, mix: ListingMix): [string, string][] {
  const field = random.pick(mix.filterFields)
  const kind = random.pick(mix.conditions)
  if (kind === 'equal') {
    const value = randomValue(random, mix)
    return random.chance(0.3) ? [[field, value], [field, value]] : [[field, value]]
  }
  if (kind === 'in') {
    const first = randomValue(random, mix)
    return [[`${field}:in`, `${first},${random.chance(0.3) ? first : randomValue(random, mix)}`]]
  }
  return [oneCondition(random, mix, field, kind)]
}

function oneCondition(random: Random, mix: ListingMix, field: string, kind: Exclude<ConditionKind, 'equal' | 'in'>): [string, string] {
  switch (kind) {
    case 'not-equal': return [`${field}_ne`, randomValue(random, mix)]
    case 'range': return [`${field}_${random.pick(['lt', 'lte', 'gt', 'gte'])}`, randomValue(random, mix)]
    case 'like': return [`${field}_like`, randomValue(random, mix).slice(0, 2)]
    case 'text': return [`${field}:${random.pick(['contains', 'startsWith', 'endsWith'])}`, randomValue(random, mix).slice(0, 2)]
    case 'compare': return [`${field}:${random.pick(mix.comparisons)}`, randomValue(random, mix)]
    case 'q': return ['q', randomValue(random, mix).slice(0, 2)]
    case 'id': return ['id', String(random.between(1, 60))]
  }
}
