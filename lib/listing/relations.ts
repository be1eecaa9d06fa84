import { NothingStored, type Change, type Documents, type Preconditions } from '../data/documents.ts'
import type { BatchOp, Doc, NodePath } from '../store/store.ts'
import { isStoreError } from '../store/errors.ts'
import { HttpError } from '../http-error.ts'
import { defineValue, isObject } from '../json/values.ts'
import { FilterBudget, KNOWN_PARAMETERS, MAX_FILTER_TEXT } from './filters.ts'
import { HEAVY_STEP, pacer, type Pace } from '../data/pace.ts'
import { pluralOf, pluralOfInflection, singularOf, singularOfInflection } from './plurals.ts'

/**
 * Related documents joined into an answer (docs/http-api.md, "Listing queries"), over
 * both kinds of relation restdir has: children at nested URLs
 * (`/user/:id/playlist`) and json-server's foreign keys (`postId`).
 *
 * - `_embed=comments` on `/posts` adds to each post its `comments`: the
 *   documents below it (`/posts/1/comments/…`) and those of the sibling
 *   collection `/comments` whose `postId` is the post's id.
 * - `_expand=post` on `/comments` (json-server 0.17), or `_embed=post`
 *   (json-server 1.0: a singular name whose plural is a collection), adds to
 *   each comment its `post`: `/posts/:postId`, or for a nested collection
 *   (`/user/:id/playlist?_expand=user`) the document it sits under.
 */
export interface Relation {
  kind: 'children' | 'parent'
  name: string
  /** As asked, to name it in an answer. */
  parameter: '_embed' | '_expand'
  /** What follows a singular name in a foreign key: `Id` (`postId`), or json-server's `--foreignKeySuffix` (`_id`: `post_id`). */
  foreignKeySuffix: string
  /** The field naming a collection's items: `id`, or json-server's `--id`. */
  idField: string
  /** json-server 1.0's mode: a foreign key names an item only when it is its id, `===` (`"postId": 1` never names `"id": "1"`). */
  strict?: boolean
  /** The plurals names go by: 0.17's `pluralize` or 1.0's `inflection` in their modes (`people` → `personId`), else the English rule. */
  words?: Words
}

/** Whose plurals: json-server 0.17's (`pluralize`), 1.0's (`inflection`), both in lib/listing/plurals.ts, or the English rule. */
export type Words = 'pluralize' | 'inflection' | 'english'

/** json-server's foreign keys: a collection's singular name, then this (`postId`). */
export const DEFAULT_FOREIGN_KEY_SUFFIX = 'Id'

/** How relations are keyed: `--foreignKeySuffix` and `--id` (json-server's), `Id` and `id` unless given. */
export interface RelationKeys {
  foreignKeySuffix?: string
  idField?: string
  /** The json-server mode and its version (lib/http/settings.ts): its names go by its json-server's plurals. */
  jsonServer?: boolean
  jsonServerVersion?: '0.17' | '1'
}

/** The plurals names go by (lib/listing/plurals.ts): each json-server's own in its mode, else the English rule. */
export function wordsOf(keys: RelationKeys): Words {
  if (keys.jsonServer !== true) return 'english'
  return keys.jsonServerVersion === '1' ? 'inflection' : 'pluralize'
}

/** Most relations one request may join (fixed); they also count against `--max-filters`. */
export const MAX_RELATIONS = 4

/**
 * Most JSON text (in characters: 4 MiB of ASCII) the documents joined into
 * one answer may add up to (fixed). A join repeats documents (one parent in
 * each of its 700 children), so without it an answer of a few small documents
 * could grow to hundreds of megabytes, past what a string can hold.
 */
export const MAX_JOINED_TEXT = 4 * 1024 * 1024

/** `strict`: json-server 1.0's mode, whose joins compare keys typed (Relation.strict). */
export function parseRelations(query: URLSearchParams, budget?: FilterBudget, keys: RelationKeys = {}, strict = false): Relation[] {
  const { foreignKeySuffix = DEFAULT_FOREIGN_KEY_SUFFIX, idField = 'id' } = keys
  const asked = [
    ...query.getAll('_embed').map((name) => ({ name, parameter: '_embed' as const })),
    ...query.getAll('_expand').map((name) => ({ name, parameter: '_expand' as const })),
  ]
  if (asked.length === 0) return []
  if (asked.length > MAX_RELATIONS) throw new HttpError(400, `The query joins more than ${MAX_RELATIONS} relations (_embed and _expand together); that is the limit.`)
  budget?.spend(asked.length)
  return asked.map(({ name, parameter }) => {
    if (name === '' || name.length > MAX_FILTER_TEXT) throw new HttpError(400, `${parameter} names ${name === '' ? 'no collection' : `a collection longer than ${MAX_FILTER_TEXT} characters`}.`)
    // One level: the joined documents are not joined in turn.
    if (name.includes('.')) throw new HttpError(400, `${parameter}=${name} reaches past one level; restdir joins one level of relations.`)
    return { kind: parameter === '_expand' ? 'parent' : 'children', name, parameter, foreignKeySuffix, idField, ...(strict && { strict }), words: wordsOf(keys) }
  })
}

/**
 * Each document of a collection (or the one document at `collection/:id`)
 * with its relations joined in, as new objects. A `_embed` of a singular name
 * whose plural is a sibling collection is taken as json-server 1.0 takes it, a parent
 * (not in the 0.17 mode, where 0.17 embeds that very name).
 * The work is spent on `pace`; past MAX_JOINED_TEXT of joined documents, a 400.
 */
export async function joinRelations(documents: Documents, collection: NodePath, docs: Doc[], relations: readonly Relation[], pace: Pace): Promise<Doc[]> {
  if (relations.length === 0) return docs
  const joined = docs.map((doc) => ({ ...doc }))
  const siblings = collection.slice(0, -1)
  const size = new JoinedSize(pace)
  for (const relation of relations) {
    const { name } = relation
    const { words } = relation
    // 1.0 takes a name its `inflection` leaves as it is for a singular one, an uncountable (`sheep`) too.
    const singularName = relation.kind === 'children' && singular(name, words) === name && (words === 'inflection' || plural(name, words) !== name)
    // 0.17 (`pluralize`) embeds the sibling of that very name whatever the name, `"post": []` in every
    // item where there is none (docs/json-server.md, "What still differs"): in its mode only the
    // declared families' nested nodes (`/user/:id/playlist?_embed=user`), which keep their rules, join a parent.
    const sibling = singularName && words !== 'pluralize' && (await documents.exists([...siblings, plural(name, words)]))
    const kind = singularName && (ownerOf(collection, name, words) || sibling) ? 'parent' : relation.kind
    if (kind === 'children') await joinChildren(documents, collection, joined, relation, size)
    else await joinParents(documents, collection, joined, relation, size)
  }
  return joined
}

/**
 * The JSON text the documents joined into one answer add up to, each counted
 * as often as it is joined: one parent in 700 children is 700 of it.
 */
class JoinedSize {
  #total = 0
  /** Each document's text length, measured once however often it is joined. */
  readonly #measured = new WeakMap<Doc, number>()
  constructor(readonly pace: Pace) {}

  /** Counts `doc` joined once more, into the answer, for `relation`; a 400 once past MAX_JOINED_TEXT. */
  async add(doc: Doc, relation: Relation): Promise<void> {
    let length = this.#measured.get(doc)
    if (length === undefined) {
      length = JSON.stringify(doc).length
      this.#measured.set(doc, length)
    }
    this.#total += length + 1
    if (this.#total > MAX_JOINED_TEXT) throw tooMuchJoined(relation)
    const turn = this.pace(length)
    if (turn) await turn
  }
}

function tooMuchJoined(relation: Relation): HttpError {
  return new HttpError(
    400,
    `${relation.parameter}=${relation.name} would join more than ${MAX_JOINED_TEXT} characters of related documents (4 MiB) into one answer, the limit for relations. ` +
      'Ask for fewer documents (_page=1&_per_page=10, _limit=10, or a filter), or read the related documents at their own URLs.',
  )
}

async function joinChildren(documents: Documents, collection: NodePath, docs: Doc[], relation: Relation, size: JoinedSize): Promise<void> {
  const { name } = relation
  const { pace } = size
  const foreignKey = `${singular(collection[collection.length - 1] ?? '', relation.words)}${relation.foreignKeySuffix}`
  const byKey = new Map<string, Doc[]>()
  for (const doc of (await documents.list([...collection.slice(0, -1), name])) ?? []) {
    const key = doc[foreignKey]
    if (key === undefined || key === null || isObject(key) || Array.isArray(key)) continue
    const list = byKey.get(String(key)) ?? []
    list.push(doc)
    byKey.set(String(key), list)
    const turn = pace()
    if (turn) await turn
  }
  for (const doc of docs) {
    const id = idOf(doc, collection, relation.idField)
    const nested = id === undefined ? undefined : await documents.list([...collection, id, name])
    const keyed = (id !== undefined && byKey.get(id)) || []
    const children = [...(nested ?? []), ...(relation.strict ? keyed.filter((child) => child[foreignKey] === doc[relation.idField]) : keyed)]
    for (const child of children) await size.add(child, relation)
    defineValue(doc, name, children)
    const turn = pace(HEAVY_STEP)
    if (turn) await turn
  }
}

async function joinParents(documents: Documents, collection: NodePath, docs: Doc[], relation: Relation, size: JoinedSize): Promise<void> {
  const { name } = relation
  const owner = ownerOf(collection, name, relation.words)
  const foreignKey = `${name}${relation.foreignKeySuffix}`
  const parents = new Map<string, Doc | undefined>()
  for (const doc of docs) {
    let path = owner
    const key = doc[foreignKey]
    if (!path && (typeof key === 'string' || typeof key === 'number') && String(key) !== '') path = [...collection.slice(0, -1), plural(name, relation.words), String(key)]
    if (!path) continue
    const at = JSON.stringify(path)
    const read = !parents.has(at)
    if (read) parents.set(at, (await documents.read(path))?.doc)
    const parent = parents.get(at)
    // A missing parent leaves the key out, as json-server does.
    if (parent && (!relation.strict || path === owner || parent[relation.idField] === key)) {
      await size.add(parent, relation)
      defineValue(doc, name, parent)
    }
    // A read costs what parsing its document did, unknown here: the clock says.
    const turn = size.pace(read ? HEAVY_STEP : 0)
    if (turn) await turn
  }
}

/** A nested collection's documents belong to the document they sit under: `/user/:id/playlist` and `user` → `/user/:id`. */
function ownerOf(collection: NodePath, name: string, words?: Words): NodePath | undefined {
  return collection.length >= 3 && [name, plural(name, words)].includes(collection[collection.length - 3]) ? collection.slice(0, -1) : undefined
}

/** A document's id: its `id` (or `idField`), or for the declared resources `user_id` / `playlist_id`. */
function idOf(doc: Doc, collection: NodePath, idField = 'id'): string | undefined {
  const id = doc[idField] ?? doc[`${singular(collection[collection.length - 1] ?? '')}_id`]
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined
}

/**
 * A collection's singular name: json-server 0.17's `pluralize.singular` or 1.0's
 * `inflection.singularize` (`people` → `person`), else English plurals the simple way:
 * `comments` → `comment`, `categories` → `category`.
 */
export function singular(name: string, words: Words = 'english'): string {
  if (words === 'pluralize') return singularOf(name)
  if (words === 'inflection') return singularOfInflection(name)
  if (/[^aeiou]ies$/.test(name)) return name.slice(0, -3) + 'y'
  if (/(s|x|z|ch|sh)es$/.test(name)) return name.slice(0, -2)
  if (name.endsWith('s') && !name.endsWith('ss')) return name.slice(0, -1)
  return name
}

/** A singular name's collection: json-server 0.17's `pluralize` or 1.0's `inflection.pluralize` (`child` → `children`), else the English rule. */
export function plural(name: string, words: Words = 'english'): string {
  if (words === 'pluralize') return pluralOf(name)
  if (words === 'inflection') return pluralOfInflection(name)
  if (singular(name) !== name) return name
  if (/[^aeiou]y$/.test(name)) return name.slice(0, -1) + 'ies'
  if (/(s|x|z|ch|sh)$/.test(name)) return name + 'es'
  return name + 's'
}

/** `DELETE /posts/1?_dependent=comments` (json-server 1.0): the collections whose documents go with the deleted one. */
export function parseDependents(query: URLSearchParams): string[] {
  // The listing's own parameters mean nothing to a DELETE, but are no typo either.
  const unknown = [...query.keys()].find((key) => key.startsWith('_') && key !== '_dependent' && !KNOWN_PARAMETERS.includes(key))
  if (unknown !== undefined) throw new HttpError(400, `Unknown query parameter ${JSON.stringify(unknown.slice(0, 40))} for DELETE; the one it takes is _dependent.`)
  const names = query.getAll('_dependent')
  if (names.length > MAX_RELATIONS) throw new HttpError(400, `_dependent names more than ${MAX_RELATIONS} collections; that is the limit.`)
  for (const name of names) {
    if (name === '' || name.length > MAX_FILTER_TEXT || name.includes('/')) throw new HttpError(400, `_dependent must name a sibling collection (got ${JSON.stringify(name.slice(0, 80))}).`)
  }
  return names
}

/**
 * What goes with a removed document: the documents of the sibling collections named
 * (`_dependent=comments`) whose foreign key names it, or EVERY_ORPHAN.
 */
export type Dependents = readonly string[] | typeof EVERY_ORPHAN

/**
 * json-server 0.17's cascade (its getRemovable, docs/json-server.md "The json-server mode"): once a
 * document is removed, every item of every top-level collection with a foreign key (`postId`, a
 * singular name then the suffix) that names no item of the top-level resource of that name's plural
 * (`posts`), whether it named the removed one or was an orphan before.
 */
export const EVERY_ORPHAN = 'every orphan'

/**
 * Removes `path` (`/posts/1`) and, of each sibling collection named (or EVERY_ORPHAN)
 * (`/comments`), the documents whose foreign key (`postId`) is its id, as one
 * batch of the store (docs/http-api.md, "Batches"): one step, all or none, on
 * every store, and on a db.json one write of the file however many go with it.
 * The removed document is answered (undefined when the node held none).
 * Without preconditions, a document changed between the read and the batch
 * is read again; with them, the change is the store's `version-changed`.
 */
export async function removeWithDependents(documents: Documents, path: NodePath, names: Dependents, preconditions?: Preconditions, keys: RelationKeys = {}): Promise<{ doc?: Doc }> {
  if (path.length < 2 || (names !== EVERY_ORPHAN && names.length === 0) || !documents.appliesBatches) {
    const removed = await documents.remove(path, preconditions)
    await removeDependentsOneByOne(documents, path, names, keys)
    return removed
  }
  for (;;) {
    const current = await documents.read(path).catch((error: unknown) => {
      // A broken document goes all the same, as a removal alone takes it.
      if (isStoreError(error, 'bad-document') && !preconditions) return 'broken' as const
      throw error
    })
    const stored = current === 'broken' ? undefined : current
    // Nothing to delete is that answer whatever the preconditions say (RFC 9110 §13.2.1).
    if (current === undefined && !(await documents.exists(path))) throw new NothingStored(path)
    preconditions?.(stored)
    const ops: BatchOp[] = [current === 'broken' ? { kind: 'remove', path } : { kind: 'remove', path, expect: stored?.etag ?? null }]
    const changes: Omit<Change, 'id'>[] = [{ type: 'delete', path, data: stored?.doc ?? null }]
    for (const dependent of await dependentsOf(documents, path, names, keys)) {
      ops.push({ kind: 'remove', path: dependent.path })
      changes.push({ type: 'delete', path: dependent.path, data: dependent.doc })
    }
    try {
      await documents.batch(ops, changes)
      return stored ? { doc: stored.doc } : {}
    } catch (error) {
      if (isStoreError(error, 'version-changed') && !preconditions) continue
      throw error
    }
  }
}

/** The documents of each sibling collection named whose foreign key names `path`'s id, with their paths. */
async function dependentsOf(documents: Documents, path: NodePath, names: Dependents, keys: RelationKeys): Promise<Array<{ path: NodePath; doc: Doc }>> {
  if (names === EVERY_ORPHAN) return orphansOf(documents, path, keys)
  const { foreignKeySuffix = DEFAULT_FOREIGN_KEY_SUFFIX, idField = 'id' } = keys
  const collection = path.slice(0, -1)
  const id = path[path.length - 1]
  const foreignKey = `${singular(collection[collection.length - 1], wordsOf(keys))}${foreignKeySuffix}`
  const found: Array<{ path: NodePath; doc: Doc }> = []
  const pace = pacer()
  for (const name of names) {
    const dependents = collection.slice(0, -1).concat(name)
    for (const doc of (await documents.list(dependents)) ?? []) {
      const key = doc[foreignKey]
      const childId = idOf(doc, dependents, idField)
      if ((typeof key === 'string' || typeof key === 'number') && String(key) === id && childId !== undefined) found.push({ path: [...dependents, childId], doc })
      const turn = pace()
      if (turn) await turn
    }
  }
  return found
}

/** For a store that cannot apply a batch: the dependents one removal after another. */
async function removeDependentsOneByOne(documents: Documents, path: NodePath, names: Dependents, keys: RelationKeys): Promise<void> {
  if (path.length < 2) return
  for (const dependent of await dependentsOf(documents, path, names, keys)) {
    // One removed meanwhile by another request is gone already.
    await documents.remove(dependent.path).catch((error: unknown) => {
      if (!(error instanceof NothingStored)) throw error
    })
  }
}

/**
 * EVERY_ORPHAN's documents once `removed` (a member of a top-level collection) is gone, by
 * getRemovable's rules: each item of a top-level collection, each of its own keys ending in the
 * suffix (`postId`) whose singular name's plural (`posts`) is a top-level resource, that names no
 * item there (ids compared as text, `1` names `"1"`; a singular resource's items are its values
 * that have an id). Singular resources lose nothing, as json-server's removal by id finds nothing in
 * them. Where 0.17 fails with a `500` — a key that is `null`, an orphan without an id — restdir keeps
 * the item: `null` names nothing, and an item without an id is at no URL to remove.
 * One pass, as 0.17's: an item that named a removed orphan goes at the next DELETE.
 * Every document of the collections is read once, on the listing's budget (lib/data/pace.ts);
 * what is held is each resource's ids and the items that have a foreign key.
 */
async function orphansOf(documents: Documents, removed: NodePath, keys: RelationKeys): Promise<Array<{ path: NodePath; doc: Doc }>> {
  const { foreignKeySuffix = DEFAULT_FOREIGN_KEY_SUFFIX, idField = 'id' } = keys
  if (removed.length !== 2 || foreignKeySuffix === '') return []
  const pace = pacer()
  const idsOf = new Map<string, Set<string>>()
  const keyed: Array<{ path: NodePath; doc: Doc; references: Array<[string, string]> }> = []
  const names = new Set([...((await documents.children([])) ?? []), removed[0]])
  for (const name of names) {
    const ids = new Set<string>()
    idsOf.set(name, ids)
    const items = (await documents.list([name])) ?? []
    const listed = pace(HEAVY_STEP)
    if (listed) await listed
    // A broken document there holds no items to name, as an absent one.
    const stored = items.length === 0 ? await documents.read([name]).catch(() => undefined) : undefined
    // A singular resource: json-server looks for the id among its values.
    for (const value of stored ? Object.values(stored.doc) : []) {
      const id = isObject(value) ? textOf(value[idField]) : undefined
      if (id !== undefined) ids.add(id)
    }
    for (const doc of items) {
      const id = idOf(doc, [name], idField)
      const turn = pace()
      if (turn) await turn
      if (name === removed[0] && id === removed[1]) continue
      const own = textOf(doc[idField])
      if (own !== undefined) ids.add(own)
      const references: Array<[string, string]> = []
      for (const key of Object.keys(doc)) {
        if (key.length <= foreignKeySuffix.length || !key.endsWith(foreignKeySuffix)) continue
        const text = textOf(doc[key])
        if (text !== undefined) references.push([plural(key.slice(0, -foreignKeySuffix.length), wordsOf(keys)), text])
      }
      if (references.length > 0 && id !== undefined) keyed.push({ path: [name, id], doc, references })
    }
  }
  return keyed.filter(({ references }) => references.some(([name, id]) => idsOf.get(name)?.has(id) === false))
}

/** A value as json-server's `toString()` compares it (`[1, 2]` is `"1,2"`, an object `"[object Object]"`); undefined for `null` and absent. */
function textOf(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value)
}
