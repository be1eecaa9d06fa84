import type { Answer, Context } from '../../http/context.ts'
import { preconditionsOf, urlOf } from '../../http/context.ts'
import type { Doc, NodePath } from '../../store/store.ts'
import type { RequireOwners } from '../generic.ts'
import { HttpError } from '../../http-error.ts'
import { NothingStored } from '../../data/documents.ts'
import { jsonAnswer } from '../../http/respond.ts'
import { isObject, type Json, type JsonObject } from '../../json/values.ts'
import { MAX_WHERE_DEPTH, MAX_WHERE_TEXT, OPERATORS } from '../../listing/filters.ts'
import { MAX_RELATIONS, plural, singular } from '../../listing/relations.ts'
import { checkNewChildPath } from '../../path.ts'
import { ID_LENGTH } from '../../store/new-id.ts'
import { isKnownCollection } from './collections.ts'

/*
 * json-server 1.0's answers where they differ from 0.17's (docs/json-server.md,
 * "json-server 1.0's mode"), for `--json-server 1`: its reading of a listing's
 * query (whose typed comparisons are the listing's, lib/listing/typed.ts, and whose
 * numeric ids a db.json's reading turns into strings, lib/store/json-file/read-database.ts), its page envelope, DELETE answering the item and nulling the foreign
 * keys that named it, new items under new ids, and the `"error"` member of its
 * error bodies. The rest of the mode is 0.17's (mode.ts).
 */

/** The parameters json-server 1.0 reads itself (its app.ts, RESERVED_QUERY_KEYS); every other one is a filter. */
const RESERVED = new Set(['_sort', '_page', '_per_page', '_embed', '_where'])

/** restdir's own parameters, which 1.0 has no counterpart for and which stay restdir's: a node's children, its changes. */
const RESTDIR_OWN = new Set(['_children', '_changes'])

/**
 * Segments whose filter json-server 1.0 drops: those its setProperty (dot-prop) will not set, and
 * every member a plain object inherits (`toString`, `valueOf`, `hasOwnProperty`, …), which
 * setProperty finds on the object it builds, a function, and writes the condition into instead
 * (docs/json-server.md, "json-server 1.0's mode"). Dropped here without touching any of them.
 */
const UNSAFE_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor', ...Object.getOwnPropertyNames(Object.prototype)])

/** json-server 1.0's page size when `_page` comes alone. */
const PER_PAGE = 10

/**
 * The biggest page number and size passed on: json-server 1.0 takes any (it
 * clamps the page to the last one, which restdir's envelope does too), and
 * restdir's page arithmetic stays exact below it.
 */
const MAX_PAGE = 1e12

/**
 * A listing's query as json-server 1.0 reads it, written in restdir's terms:
 * every parameter it does not reserve is a filter (`views:gt=`, 0.17's
 * `views_gt=`, a plain `title=`; an unknown operator is dropped; `q`, `_limit`
 * or `title_like` filter on fields of those names, which no item has), the
 * last value of a repeated one counting; all of them become one `_where`, as
 * 1.0 builds one, their values typed as 1.0 coerces them (`7` the number, `true`,
 * `null`), and a `_where` that is a JSON object replaces them (one that is not
 * is ignored). The listing reads that `_where` as 1.0's matchesWhere does, typed
 * (lib/listing/filters.ts, lib/listing/typed.ts). `_page` is read as `parseInt` reads it (not a number:
 * no page at all), the page clamped to 1 and `_per_page` (10 when absent or
 * not a number, 1 when below 1); `_per_page` without `_page` is ignored.
 * With every filter inside `_where`, the 0.17 mode's leaving out of filters on
 * fields no item has (query.ts, which reads plain `field=` keys) never applies:
 * such a filter matches nothing, as in 1.0.
 */
export function version1Query(query: URLSearchParams): URLSearchParams {
  const read = new URLSearchParams()
  const where: JsonObject = Object.create(null)
  for (const [key, value] of query) {
    if (RESERVED.has(key)) continue
    if (RESTDIR_OWN.has(key) || (key === 'since' && query.has('_changes'))) {
      read.append(key, value)
      continue
    }
    const condition = conditionOf(key)
    if (!condition) continue
    if (condition.path.split('.').length > MAX_WHERE_DEPTH) {
      throw new HttpError(400, `The filter ${JSON.stringify(key.slice(0, 80))} names a field more than ${MAX_WHERE_DEPTH} levels deep, the limit.`)
    }
    setCondition(where, condition.path, condition.operator, value)
  }
  // 1.0 takes any JSON object for `_where`, an array too: its items are then conditions on the fields `0`, `1`, ….
  const given = query.get('_where')
  const parsed = given === null ? undefined : parseJson(given)
  if (isObject(parsed) || Array.isArray(parsed)) {
    // One past the bound of length goes as it came, to be refused with that bound named.
    read.set('_where', isObject(parsed) || given!.length > MAX_WHERE_TEXT ? given! : JSON.stringify({ ...parsed }))
  } else if (Object.keys(where).length > 0) read.set('_where', whereText(where))
  for (const sort of query.getAll('_sort').slice(0, 1)) read.set('_sort', sort)
  for (const embed of query.getAll('_embed')) read.append('_embed', embed)
  const page = Number.parseInt(query.get('_page') ?? '', 10)
  if (!Number.isNaN(page)) {
    const perPage = Number.parseInt(query.get('_per_page') ?? '', 10)
    read.set('_page', String(Math.min(Math.max(1, page), MAX_PAGE)))
    read.set('_per_page', String(Number.isNaN(perPage) ? PER_PAGE : Math.min(Math.max(1, perPage), MAX_PAGE)))
  }
  return read
}

/** The filters as one `_where`, within its bound of length, which a long query string could pass. */
function whereText(where: JsonObject): string {
  const text = JSON.stringify(where)
  if (text.length > MAX_WHERE_TEXT) throw new HttpError(400, `The query's filters come to more than ${MAX_WHERE_TEXT} characters in all, the limit.`)
  return text
}

/** An item's query as json-server 1.0 reads it: `_embed` alone, every other parameter ignored (restdir's own kept). */
export function version1ItemQuery(query: URLSearchParams): URLSearchParams {
  const read = new URLSearchParams()
  for (const [key, value] of query) if (key === '_embed' || RESTDIR_OWN.has(key)) read.append(key, value)
  return read
}

/** json-server 1.0's splitKey: `path:op`, then 0.17's `path_op`, else `path` equals; undefined for an operator it drops. */
function conditionOf(key: string): { path: string; operator: string } | undefined {
  const colon = key.lastIndexOf(':')
  if (colon !== -1) {
    const operator = key.slice(colon + 1)
    if (operator === '') return { path: key, operator: 'eq' }
    return isOperator(operator) ? { path: key.slice(0, colon), operator } : undefined
  }
  const suffix = /^(.*)_([a-z]+)$/.exec(key)
  if (suffix && suffix[1] !== '' && isOperator(suffix[2])) return { path: suffix[1], operator: suffix[2] }
  return { path: key, operator: 'eq' }
}

function isOperator(text: string): boolean {
  return (OPERATORS as readonly string[]).includes(text)
}

/** Sets `where.a.b[operator]` for the dotted path `a.b`, as dot-prop's setProperty does; the last value wins. */
function setCondition(where: JsonObject, path: string, operator: string, value: string): void {
  const segments = `${path}.${operator}`.split('.')
  if (segments.some((segment) => UNSAFE_SEGMENTS.has(segment))) return
  let node = where
  for (const segment of segments.slice(0, -1)) {
    if (!isObject(node[segment])) node[segment] = Object.create(null) as JsonObject
    node = node[segment] as JsonObject
  }
  node[operator] = operator === 'in' ? value.split(',').map((part) => typedValue(part.trim())) : typedValue(value)
}

/** A filter's text as json-server 1.0 reads it (its parse-where.ts, coerceValue): `true`, `false`, `null`, a finite number, or the text. */
function typedValue(text: string): Json {
  if (text === 'true') return true
  if (text === 'false') return false
  if (text === 'null') return null
  if (text.trim() === '') return text
  const number = Number(text)
  return Number.isFinite(number) ? number : text
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * json-server 1.0 writes only what its file has (its service.ts): a POST
 * creates in a collection, a PUT or PATCH of a top-level name changes a
 * singular resource, and an item is changed or deleted at `/:name/:id`. Any
 * other write — a POST or DELETE of a singular resource, a PUT of a collection,
 * a write of a name the file does not have, a POST to an item — answers 404.
 * An emptied collection is still one (collections.ts).
 */
export async function checkWrite1(context: Context): Promise<void> {
  const { method, path } = context
  if (!WRITES.has(method) || path.length > 2) return
  if (path.length === 2) {
    if (method === 'POST') throw new NothingStored(path)
    return
  }
  const isSingular = (await context.documents.read(path)) !== undefined
  if (method === 'PUT' || method === 'PATCH' ? isSingular : method === 'POST' && !isSingular && (await isCollection(context, path[0]))) return
  throw new NothingStored(path)
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * A read's `_embed` names as json-server 1.0 joins them (its service.ts, embed): a name its
 * `inflection` leaves as it is stands for the collection of its plural (`post` → `posts`, the
 * parent), any other for the collection of that name, and where the store has no such collection
 * 1.0 leaves each item as it is, where 0.17 adds an empty array: such a name is dropped. An emptied
 * collection is still one (collections.ts). Past MAX_RELATIONS names the query goes on as it came,
 * to the listing's 400, so that the names looked up stay few.
 */
export async function embedded1(context: Context): Promise<Context> {
  const names = context.query.getAll('_embed')
  if (names.length === 0 || names.length > MAX_RELATIONS) return context
  const query = new URLSearchParams(context.query)
  query.delete('_embed')
  for (const name of names) {
    const collection = singular(name, 'inflection') === name ? plural(name, 'inflection') : name
    if (await isCollection(context, collection)) query.append('_embed', name)
  }
  return { ...context, query }
}

async function isCollection(context: Context, name: string): Promise<boolean> {
  return (await context.documents.exists([name])) || isKnownCollection(context.documents, name)
}

/**
 * POST on a collection, as json-server 1.0 creates: the body under a new id
 * of 1.0's form (11 base64url characters), an `id` in the body set aside, as 1.0 sets it aside.
 */
export async function createMember1(context: Context, collection: NodePath, requireOwners: RequireOwners): Promise<Answer> {
  const body = await context.body.json()
  const owner = await requireOwners(context, collection)
  checkNewChildPath(context.target, ID_LENGTH, context.settings.pathLimits)
  const { id: _id, ...rest } = body
  const created = await context.documents.create(collection, (id) => ({ ...rest, id }), { owner }, 'json-server 1')
  const path = [...collection, created.id]
  return jsonAnswer(context, 201, created.doc, { Location: urlOf(context, path), ETag: created.etag })
}

/**
 * DELETE of a member, as json-server 1.0 deletes: the item is answered; each
 * document of another top-level collection whose foreign key (`postId`) named
 * it has that key set to `null`; and the collections `_dependent` names lose
 * their documents whose foreign key is `null` (1.0's service.ts, destroyById).
 */
export async function removeMember1(context: Context): Promise<Answer> {
  const dependents = context.query.getAll('_dependent')
  const { doc } = await context.documents.remove(context.path, preconditionsOf(context))
  const [name, id] = context.path
  // 1.0 names the key by `inflection.singularize` (`people` → `personId`).
  const foreignKey = `${singular(name, 'inflection')}Id`
  const store = context.documents
  for (const collection of (await store.children([])) ?? []) {
    if (collection === name) continue
    const removing = dependents.includes(collection)
    // Each item by the name it is stored under: an item of a db.json without an id has one too (1.0 gives it an id).
    for (const member of (await store.children([collection])) ?? []) {
      const path = [collection, member]
      const key = (await store.read(path))?.doc[foreignKey]
      // 1.0 compares the key with the URL's id as it is: a number (`"postId": 1`) never names `/posts/1`.
      if (key === id || (removing && key === null)) await settle(context, path, removing ? undefined : foreignKey)
    }
  }
  return jsonAnswer(context, 200, doc ?? {})
}

/** Removes the document at `path`, or sets its `foreignKey` to null; one gone meanwhile is left gone. */
async function settle(context: Context, path: NodePath, foreignKey: string | undefined): Promise<void> {
  try {
    if (foreignKey === undefined) await context.documents.remove(path)
    else await context.documents.write(path, (current) => {
      if (!current) throw new NothingStored(path)
      return { ...current.doc, [foreignKey]: null } as Doc
    })
  } catch (error) {
    if (!(error instanceof NothingStored)) throw error
  }
}

/**
 * A problem answer with json-server 1.0's `"error"` member beside RFC 9457's
 * (RFC 9457 §3.2 allows extension members): 1.0's front ends read
 * `body.error`, restdir's read `detail`; both say the same.
 */
export function withErrorMember(error: HttpError): HttpError {
  return new HttpError(error.status, error.detail, error.headers, { ...error.extensions, error: error.detail })
}
