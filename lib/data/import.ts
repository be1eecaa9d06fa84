import { readFile } from 'node:fs/promises'
import type { Doc, NodePath, Store } from '../store/store.ts'
import { createWithNewId } from './ids.ts'
import { alreadyImported } from './import-repeats.ts'
import { isStoreError } from '../store/errors.ts'
import { defineValue, isObject, jsonKindOf } from '../json/values.ts'
import { inexactJson, pathOf } from '../json/syntax.ts'
import { defaultPathLimits, joinPath } from '../path.ts'
import { arrayFieldProblem, playlistFamily, uniqueFieldProblem, userFamily } from './declarations.ts'

/** A database's `user` array and each user's `playlist` array are named as their collections are. */
const USER = userFamily.collection
const PLAYLIST = playlistFamily.collection

/**
 * Loading a json-server database (`db.json`) into a store: each top-level
 * array becomes a collection whose items keep their ids (`posts[id=1]` →
 * `/posts/1`; an item without an id gets a new one), each top-level object a
 * document (`profile` → `/profile`). A generic document's `id` is its URL's
 * last segment (docs/json-server.md, "Coming from json-server"); a numeric id stays a
 * number (`/posts/7` holds `"id": 7`), the number 7 being the segment `7`.
 *
 * The `user` array follows the rules of `/user` (docs/json-server.md, "Coming from json-server"): `user_id` (or json-server's `id`) names each user, usernames
 * are unique non-empty strings, and a user's `playlist` array becomes its
 * playlists, each with an array of `songs`. Every problem of a database is
 * found before anything is written, and all of them are reported together.
 */
export interface ImportOptions {
  /** Replace documents that exist already; without it, any clash refuses the whole import. */
  force?: boolean
}

export interface ImportSummary {
  /** Top-level arrays imported (each holds at least one item). */
  collections: number
  /** Documents written, collection items, users, playlists and top-level objects together. */
  documents: number
  /** Top-level arrays that were empty: nothing is created for them. */
  empty: string[]
}

/** A database refused: every problem found, each starting with where it is (`user[3].username`). */
export class ImportError extends Error {
  readonly problems: string[]
  constructor(problems: string[], what = 'The database') {
    const shown = problems.slice(0, 50)
    const more = problems.length > shown.length ? `\n  … and ${problems.length - shown.length} more` : ''
    super(`${what} cannot be imported (${problems.length} problem${problems.length === 1 ? '' : 's'}); nothing was written:\n  ${shown.join('\n  ')}${more}`)
    this.name = 'ImportError'
    this.problems = problems
  }
}

/** A document to write: at `path`, or (no id given) a new child of `parent`; `children` go under it once it exists. */
type Planned =
  | { path: NodePath; doc: Doc; children?: Planned[]; where?: string }
  | { parent: NodePath; doc: Doc; children?: Planned[]; idKey: string; where?: string }

interface Plan {
  items: Planned[]
  collections: number
  empty: string[]
  problems: string[]
}

/**
 * Imports a parsed database into a store, straight through its atomic
 * writes. Checks everything before it writes anything: a malformed
 * database or, without `force`, a document that exists already, throws an
 * ImportError that lists every problem, and leaves the store as it was.
 */
export async function importDatabase(store: Store, database: unknown, options: ImportOptions = {}): Promise<ImportSummary> {
  const plan = planImport(database)
  if (plan.problems.length === 0) {
    if (!options.force) plan.problems.push(...(await overwrites(store, plan.items)))
    plan.problems.push(...(await usernamesTakenInStore(store, plan.items)))
  }
  if (plan.problems.length > 0) throw new ImportError(plan.problems)
  // Id-less items a previous import of this file wrote already are not added again under new ids.
  const repeated = await alreadyImported(store, plan.items.filter((item) => !('path' in item)) as Array<Extract<Planned, { parent: NodePath }>>)
  let written = 0
  const writeAll = async (items: Planned[], parentOf: (item: Planned) => NodePath): Promise<void> => {
    for (const item of items) {
      if (repeated.has(item as Extract<Planned, { parent: NodePath }>)) continue
      let path: NodePath
      if ('path' in item) {
        path = [...parentOf(item), item.path[item.path.length - 1]]
        await store.write(path, item.doc)
      } else {
        path = (await createWithNewId(store, parentOf(item), (id) => ({ [item.idKey]: id, ...item.doc }))).path
      }
      written++
      // A playlist names its owner: a user whose id was just made gives it to its playlists.
      if (item.children) await writeAll(item.children.map((child) => ({ ...child, doc: { ...child.doc, user_id: path[1] } })), () => [...path, PLAYLIST])
    }
  }
  await writeAll(plan.items, (item) => ('path' in item ? item.path.slice(0, -1) : item.parent))
  return { collections: plan.collections, documents: written, empty: plan.empty }
}

/** Reads a db.json, then imports it: every problem of the file, its numbers and keys included, is reported in one ImportError. */
export async function importDatabaseFile(store: Store, file: string, options: ImportOptions = {}): Promise<ImportSummary> {
  const { value, problems } = await readDatabase(file)
  if (problems.length === 0) return importDatabase(store, value, options)
  // The values JSON.parse would change are reported with the rest of what is wrong.
  const others = planImport(value).problems
  throw new ImportError([...problems, ...others], file)
}

/** Reads and parses a db.json file; the error says which file and what is wrong with it (every value JSON.parse would change). */
export async function readDatabaseFile(file: string): Promise<unknown> {
  const { value, problems } = await readDatabase(file)
  if (problems.length > 0) throw new ImportError(problems, file)
  return value
}

async function readDatabase(file: string): Promise<{ value: unknown; problems: string[] }> {
  let text: string
  try {
    text = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '')
  } catch (error) {
    throw new Error(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${(error as Error).message}.`)
  }
  // The same rule as a request body (docs/http-api.md, "Requests and errors"): stored exactly as written, or refused.
  const problems = inexactJson(text, value, 1000).map((problem) => `${problem.path}: ${problem.message}.`)
  return { value, problems }
}

function planImport(database: unknown): Plan {
  const plan: Plan = { items: [], collections: 0, empty: [], problems: [] }
  if (!isObject(database)) {
    plan.problems.push('A json-server database is a JSON object whose keys name collections (arrays) and documents (objects).')
    return plan
  }
  for (const name of Object.keys(database)) {
    // json-server ignores `$schema`, an editor's pointer to the file's JSON Schema, not data.
    if (name === '$schema') continue
    const where = pathOf([{ at: name }])
    const keyProblem = segmentProblem(name)
    if (keyProblem) {
      plan.problems.push(`${where}: the key ${JSON.stringify(name)} ${keyProblem}.`)
      continue
    }
    const value = database[name]
    if (Array.isArray(value)) {
      if (value.length === 0) plan.empty.push(name)
      else plan.collections++
      plan.items.push(...(name === USER ? planUsers(value, plan.problems) : planCollection(name, value, plan.problems)))
    } else if (name === USER) {
      plan.problems.push(`user: holds ${jsonKindOf(value)}; user is the collection of users (/user), so it must be an array.`)
    } else if (isObject(value)) {
      plan.items.push({ path: [name], doc: { id: name, ...withoutKeys(value, 'id') } })
    } else {
      plan.problems.push(`${where}: holds ${jsonKindOf(value)}; only arrays (collections) and objects (documents) can be imported.`)
    }
  }
  return plan
}

function planCollection(name: string, entries: unknown[], problems: string[]): Planned[] {
  const seen = new Map<string, string>()
  const items: Planned[] = []
  entries.forEach((entry, index) => {
    const where = pathOf([{ at: name }, { at: index }])
    if (!isObject(entry)) {
      problems.push(`${where}: is ${jsonKindOf(entry)}; each item of a collection must be an object.`)
      return
    }
    if (!Object.hasOwn(entry, 'id') || entry.id === null) {
      items.push({ parent: [name], doc: withoutKeys(entry, 'id'), idKey: 'id' })
      return
    }
    const id = idOf(entry.id, `${where}.id`, seen, problems)
    // A numeric id stays a number: the number 7 and the segment `7` are the same id.
    if (id !== undefined) items.push({ path: [name, id], doc: { id: typeof entry.id === 'number' ? entry.id : id, ...withoutKeys(entry, 'id') } })
  })
  return items
}

/**
 * Users follow the rules of `/user` (lib/resources/users.ts): `user_id` is
 * each user's id (json-server's `id` is taken as it, and must agree when
 * both are given), a `username` is a non-empty string no other user has.
 */
function planUsers(entries: unknown[], problems: string[]): Planned[] {
  const ids = new Map<string, string>()
  const usernames = new Map<string, string>()
  const items: Planned[] = []
  entries.forEach((entry, index) => {
    const where = `user[${index}]`
    if (!isObject(entry)) {
      problems.push(`${where}: is ${jsonKindOf(entry)}; each user must be an object.`)
      return
    }
    const given = (key: string) => Object.hasOwn(entry, key) && entry[key] !== null
    let id: string | undefined
    let failed = false
    if (given('user_id')) {
      id = idOf(entry.user_id, `${where}.user_id`, ids, problems)
      failed = id === undefined
      if (id !== undefined && given('id') && String(entry.id) !== id) {
        problems.push(`${where}.id: ${JSON.stringify(entry.id)} disagrees with user_id ${JSON.stringify(entry.user_id)}; give one id, or the same in both.`)
        failed = true
      }
    } else if (given('id')) {
      id = idOf(entry.id, `${where}.id`, ids, problems)
      failed = id === undefined
    }
    if (Object.hasOwn(entry, 'username')) {
      const invalid = uniqueFieldProblem('username', entry.username)
      if (invalid) {
        problems.push(`${where}.username: ${invalid} (got ${JSON.stringify(entry.username)}).`)
        failed = true
      } else {
        const username = entry.username as string
        const holder = usernames.get(username)
        if (holder !== undefined) {
          problems.push(`${where}.username: ${JSON.stringify(username)} is also the username of ${holder}; usernames must differ.`)
          failed = true
        } else usernames.set(username, where)
      }
    }
    const children = Object.hasOwn(entry, PLAYLIST) ? planPlaylists(entry[PLAYLIST], `${where}.playlist`, id, problems) : undefined
    if (failed || children === null) return
    const doc = withoutKeys(entry, 'id', 'user_id', PLAYLIST)
    items.push(id === undefined ? { parent: [USER], doc, children, idKey: 'user_id', where } : { path: [USER, id], doc: { user_id: id, ...doc }, children, where })
  })
  return items
}

/**
 * A user's `playlist` array: its playlists, as `/user/:user_id/playlist` holds
 * them (lib/resources/playlists.ts): `playlist_id` (or `id`) names each,
 * `user_id`, when given, is the owner's, and `songs` is an array.
 * Returns null when any is wrong.
 */
function planPlaylists(entries: unknown, where: string, ownerId: string | undefined, problems: string[]): Planned[] | null {
  if (!Array.isArray(entries)) {
    problems.push(`${where}: holds ${jsonKindOf(entries)}; a user's playlist must be an array of playlists.`)
    return null
  }
  const before = problems.length
  const ids = new Map<string, string>()
  const items: Planned[] = []
  entries.forEach((entry, index) => {
    const at = `${where}[${index}]`
    if (!isObject(entry)) {
      problems.push(`${at}: is ${jsonKindOf(entry)}; each playlist must be an object.`)
      return
    }
    const given = (key: string) => Object.hasOwn(entry, key) && entry[key] !== null
    if (given('user_id') && ownerId !== undefined && String(entry.user_id) !== ownerId) {
      problems.push(`${at}.user_id: ${JSON.stringify(entry.user_id)} is not its owner's id (${JSON.stringify(ownerId)}).`)
    } else if (given('user_id') && ownerId === undefined) {
      problems.push(`${at}.user_id: its owner has no id in the file, so it gets a new one; leave user_id out.`)
    }
    if (Object.hasOwn(entry, 'songs')) {
      const invalid = arrayFieldProblem('songs', entry.songs)
      if (invalid) problems.push(`${at}.songs: ${invalid}.`)
    }
    const key = given('playlist_id') ? 'playlist_id' : given('id') ? 'id' : undefined
    if (given('playlist_id') && given('id') && String(entry.id) !== String(entry.playlist_id)) {
      problems.push(`${at}.id: ${JSON.stringify(entry.id)} disagrees with playlist_id ${JSON.stringify(entry.playlist_id)}.`)
    }
    const id = key === undefined ? undefined : idOf(entry[key], `${at}.${key}`, ids, problems)
    const doc = { ...withoutKeys(entry, 'id', 'playlist_id', 'user_id'), songs: Array.isArray(entry.songs) ? entry.songs : [] }
    items.push(id === undefined ? { parent: [], doc, idKey: 'playlist_id' } : { path: [id], doc: { playlist_id: id, ...doc } })
  })
  return problems.length > before ? null : items
}

/** An id as its URL segment; a problem (and undefined) when it cannot be one or repeats one seen in the same collection. */
function idOf(id: unknown, where: string, seen: Map<string, string>, problems: string[]): string | undefined {
  let segment: string
  if (typeof id === 'number' && Number.isFinite(id)) segment = String(id)
  else if (typeof id === 'string') segment = id
  else {
    problems.push(`${where}: is ${jsonKindOf(id)}; an id must be a string or a number.`)
    return undefined
  }
  const invalid = segmentProblem(segment)
  if (invalid) {
    problems.push(`${where}: the id ${JSON.stringify(segment)} ${invalid}.`)
    return undefined
  }
  const first = seen.get(segment)
  if (first !== undefined) {
    problems.push(`${where}: repeats the id ${JSON.stringify(segment)} of ${first}; ids in a collection must differ.`)
    return undefined
  }
  seen.set(segment, where.replace(/\.(id|user_id|playlist_id)$/, ''))
  return segment
}

/** Every key and id becomes a URL segment: it must be one a request can reach. */
function segmentProblem(segment: string): string | undefined {
  if (segment === '') return 'is empty; it would name no URL'
  if (encodeURIComponent(segment).length > defaultPathLimits.maxSegmentLength) {
    return `is longer than a URL segment may be (${defaultPathLimits.maxSegmentLength} characters, encoded)`
  }
  return undefined
}

/** Documents the import would replace (refused without `force`), playlists of a replaced user included. */
async function overwrites(store: Store, items: Planned[]): Promise<string[]> {
  const clashes: string[] = []
  const visit = async (list: Planned[], parent: NodePath | undefined) => {
    for (const item of list) {
      if (!('path' in item)) continue
      const path = parent ? [...parent, ...item.path] : item.path
      if (await store.read(path)) clashes.push(joinPath(path))
      if (item.children) await visit(item.children, [...path, PLAYLIST])
    }
  }
  await visit(items, undefined)
  if (clashes.length === 0) return []
  const shown = clashes.slice(0, 5).join(', ') + (clashes.length > 5 ? ` and ${clashes.length - 5} more` : '')
  return [`${clashes.length} document${clashes.length === 1 ? ' exists' : 's exist'} already (${shown}). Use --force to replace them.`]
}

/** A username the file gives that a user already in the store holds (one the import does not replace). */
async function usernamesTakenInStore(store: Store, items: Planned[]): Promise<string[]> {
  const users = items.filter((item) => ('path' in item ? item.path[0] === USER && item.path.length === 2 : item.parent[0] === USER))
  if (users.length === 0) return []
  const replaced = new Set(users.flatMap((item) => ('path' in item ? [item.path[1]] : [])))
  const existing: Doc[] = []
  for (const name of (await store.children([USER])) ?? []) {
    const stored = await store.read([USER, name]).catch((error: unknown) => {
      if (!isStoreError(error, 'bad-document')) throw error
    })
    if (stored) existing.push(stored.doc)
  }
  const problems: string[] = []
  for (const user of users) {
    const username = user.doc.username
    if (username === undefined) continue
    const holder = existing.find((other) => other.username === username && !replaced.has(String(other.user_id)))
    if (holder) problems.push(`${user.where}.username: ${JSON.stringify(username)} is taken by user ${JSON.stringify(holder.user_id)} in the store.`)
  }
  return problems
}

function withoutKeys(doc: Doc, ...keys: string[]): Doc {
  const rest: Doc = {}
  for (const key of Object.keys(doc)) if (!keys.includes(key)) defineValue(rest, key, doc[key])
  return rest
}

