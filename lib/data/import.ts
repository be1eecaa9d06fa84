import { readFile } from 'node:fs/promises'
import type { Doc, NodePath, Store } from '../store/store.ts'
import { createWithNewId } from './ids.ts'
import { alreadyImported } from './import-repeats.ts'
import { isStoreError } from '../store/errors.ts'
import { defineValue, isObject, jsonKindOf } from '../json/values.ts'
import { pathOf } from '../json/syntax.ts'
import { DatabaseProblem, isJson5File, parseDatabase } from '../store/json-file/read-database.ts'
import { defaultPathLimits, joinPath } from '../path.ts'
import { arrayFieldProblem, childrenOf, familyAt, lineageOf, loadDeclarations, uniqueFieldProblem, type Family } from './declarations.ts'

/**
 * Loading a json-server database (`db.json`) into a store: each top-level
 * array becomes a collection whose items keep their ids (`posts[id=1]` →
 * `/posts/1`; an item without an id gets a new one), each top-level object a
 * document (`profile` → `/profile`). A generic document's `id` is its URL's
 * last segment (docs/json-server.md, "Coming from json-server"); a numeric id stays a
 * number (`/posts/7` holds `"id": 7`), the number 7 being the segment `7`.
 *
 * A declared family's array follows the rules of its collection (docs/json-server.md, "Coming
 * from json-server"): with the seed's declarations, `user_id` (or json-server's `id`) names each
 * user, usernames are unique non-empty strings, and a user's `playlist` array becomes its
 * playlists, each with an array of `songs`. Every problem of a database is
 * found before anything is written, and all of them are reported together.
 */
export interface ImportOptions {
  /** Replace documents that exist already; without it, any clash refuses the whole import. */
  force?: boolean
  /** The declared families whose arrays follow their rules (lib/data/declarations.ts); default: the seed's. */
  families?: readonly Family[]
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
  | { path: NodePath; doc: Doc; children?: PlannedChildren[]; where?: string }
  | { parent: NodePath; doc: Doc; children?: PlannedChildren[]; idKey: string; where?: string }

/** A member's children of one declared family (a user's playlists), written below the member once it exists. */
interface PlannedChildren {
  family: Family
  items: Planned[]
}

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
  const families = options.families ?? loadDeclarations(undefined)
  const plan = planImport(database, families)
  if (plan.problems.length === 0) {
    if (!options.force) plan.problems.push(...(await overwrites(store, plan.items)))
    plan.problems.push(...(await uniqueValuesTakenInStore(store, plan.items, families)))
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
      // A child names its owners (a playlist its user): an owner whose id was just made gives it to its children.
      for (const { family, items } of item.children ?? []) {
        const ownerIds: Doc = {}
        lineageOf(family.parent!).forEach((owner, depth) => (ownerIds[owner.idField] = path[2 * depth + 1]))
        await writeAll(items.map((child) => ({ ...child, doc: { ...child.doc, ...ownerIds } })), () => [...path, family.collection])
      }
    }
  }
  await writeAll(plan.items, (item) => ('path' in item ? item.path.slice(0, -1) : item.parent))
  return { collections: plan.collections, documents: written, empty: plan.empty }
}

/** Reads a db.json, then imports it: every problem of the file, its numbers and keys included, is reported in one ImportError. */
export async function importDatabaseFile(store: Store, file: string, options: ImportOptions = {}): Promise<ImportSummary> {
  const { value, problems } = await readDatabaseForImport(file)
  if (problems.length === 0) return importDatabase(store, value, options)
  // The values JSON.parse would change are reported with the rest of what is wrong.
  const others = planImport(value, options.families ?? loadDeclarations(undefined)).problems
  throw new ImportError([...problems, ...others], file)
}

/** Reads and parses a db.json file; the error says which file and what is wrong with it (every value JSON.parse would change). */
export async function readDatabaseFile(file: string): Promise<unknown> {
  const { value, problems } = await readDatabaseForImport(file)
  if (problems.length > 0) throw new ImportError(problems, file)
  return value
}

/** The file's text, read by the store's own reader of a db.json (lib/store/json-file/read-database.ts), so that both take a file by one rule. */
async function readDatabaseForImport(file: string): Promise<{ value: unknown; problems: string[] }> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new Error(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`)
  }
  try {
    const { value, inexact } = parseDatabase(text, file, isJson5File(file) ? 'json5' : 'json')
    return { value, problems: inexact.map((problem) => `${problem.path}: ${problem.message}.`) }
  } catch (error) {
    throw error instanceof DatabaseProblem ? new Error(`${error.message}.`) : error
  }
}

function planImport(database: unknown, families: readonly Family[]): Plan {
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
    const family = familyAt(families, [name])
    if (Array.isArray(value)) {
      if (value.length === 0) plan.empty.push(name)
      else plan.collections++
      plan.items.push(...(family ? planMembers(families, family, value, name, [], plan.problems) ?? [] : planCollection(name, value, plan.problems)))
    } else if (family) {
      plan.problems.push(`${name}: holds ${jsonKindOf(value)}; ${name} is the collection of ${name}s (/${name}), so it must be an array.`)
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
 * A declared family's array follows the rules of its collection (docs/http-api.md, "Declaring
 * resources"; the seed's `user` those of `/user`): its id field names each member (json-server's
 * `id` is taken as it, and must agree when both are given), a unique field is a non-empty string
 * no other member has, an array field is an array, the owners' ids, when given, are the owners',
 * and each child family's array (a user's `playlist`) holds that member's children. A member's
 * `path` and `parent` are below its owner's member (`[id]`, `[]`) except at the top.
 * Returns null, below an owner, when any is wrong.
 */
function planMembers(families: readonly Family[], family: Family, entries: unknown, where: string, ownerIds: Array<string | undefined>, problems: string[]): Planned[] | null {
  const owners = family.parent ? lineageOf(family.parent) : []
  const owner = owners.at(-1)
  if (!Array.isArray(entries)) {
    problems.push(`${where}: holds ${jsonKindOf(entries)}; a ${owner?.collection}'s ${family.collection} must be an array of ${family.collection}s.`)
    return null
  }
  const before = problems.length
  const ids = new Map<string, string>()
  const uniques = new Map<string, Map<string, string>>(family.unique.map((field) => [field, new Map()]))
  const items: Planned[] = []
  const { idField } = family
  entries.forEach((entry, index) => {
    const at = `${where}[${index}]`
    if (!isObject(entry)) {
      problems.push(`${at}: is ${jsonKindOf(entry)}; each ${family.collection} must be an object.`)
      return
    }
    const given = (key: string) => Object.hasOwn(entry, key) && entry[key] !== null
    const failedBefore = problems.length
    owners.forEach((ownerFamily, depth) => {
      const field = ownerFamily.idField
      if (!given(field)) return
      const ownerId = ownerIds[depth]
      if (ownerId !== undefined && String(entry[field]) !== ownerId) {
        problems.push(`${at}.${field}: ${JSON.stringify(entry[field])} is not its owner's id (${JSON.stringify(ownerId)}).`)
      } else if (ownerId === undefined) {
        problems.push(`${at}.${field}: its owner has no id in the file, so it gets a new one; leave ${field} out.`)
      }
    })
    let id: string | undefined
    if (given(idField)) {
      id = idOf(entry[idField], `${at}.${idField}`, ids, problems)
      if (id !== undefined && given('id') && String(entry.id) !== id) {
        problems.push(`${at}.id: ${JSON.stringify(entry.id)} disagrees with ${idField} ${JSON.stringify(entry[idField])}; give one id, or the same in both.`)
      }
    } else if (given('id')) {
      id = idOf(entry.id, `${at}.id`, ids, problems)
    }
    for (const field of family.unique) {
      if (!Object.hasOwn(entry, field)) continue
      const invalid = uniqueFieldProblem(field, entry[field])
      if (invalid) {
        problems.push(`${at}.${field}: ${invalid} (got ${JSON.stringify(entry[field])}).`)
        continue
      }
      const seen = uniques.get(field)!
      const holder = seen.get(entry[field] as string)
      if (holder !== undefined) problems.push(`${at}.${field}: ${JSON.stringify(entry[field])} is also the ${field} of ${holder}; ${field}s must differ.`)
      else seen.set(entry[field] as string, at)
    }
    for (const field of family.arrays) {
      if (!Object.hasOwn(entry, field)) continue
      const invalid = arrayFieldProblem(field, entry[field])
      if (invalid) problems.push(`${at}.${field}: ${invalid}.`)
    }
    const childIds = [...ownerIds, id]
    const children: PlannedChildren[] = []
    let childFailed = false
    for (const child of childrenOf(families, family)) {
      if (!Object.hasOwn(entry, child.collection)) continue
      const planned = planMembers(families, child, entry[child.collection], `${at}.${child.collection}`, childIds, problems)
      if (planned === null) childFailed = true
      else children.push({ family: child, items: planned })
    }
    if (problems.length > failedBefore || childFailed) return
    const arrays: Doc = {}
    for (const field of family.arrays) defineValue(arrays, field, Array.isArray(entry[field]) ? entry[field] : [])
    const doc = { ...withoutKeys(entry, 'id', idField, ...owners.map((one) => one.idField), ...childrenOf(families, family).map((child) => child.collection)), ...arrays }
    const base = family.parent ? [] : [family.collection]
    items.push(id === undefined
      ? { parent: base, doc, children, idKey: idField, where: at }
      : { path: [...base, id], doc: { [idField]: id, ...doc }, children, where: at })
  })
  return problems.length > before && family.parent ? null : items
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
  seen.set(segment, where.replace(/\.[^.\]]+$/, ''))
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
      for (const { family, items } of item.children ?? []) await visit(items, [...path, family.collection])
    }
  }
  await visit(items, undefined)
  if (clashes.length === 0) return []
  const shown = clashes.slice(0, 5).join(', ') + (clashes.length > 5 ? ` and ${clashes.length - 5} more` : '')
  return [`${clashes.length} document${clashes.length === 1 ? ' exists' : 's exist'} already (${shown}). Use --force to replace them.`]
}

/**
 * A unique value the file gives a top-level member (a username) that a member already in the
 * store holds, one the import does not replace. (A child's collection is new with its owner's.)
 */
async function uniqueValuesTakenInStore(store: Store, items: Planned[], families: readonly Family[]): Promise<string[]> {
  const problems: string[] = []
  for (const family of childrenOf(families, undefined)) {
    if (family.unique.length === 0) continue
    const name = family.collection
    const members = items.filter((item) => ('path' in item ? item.path[0] === name && item.path.length === 2 : item.parent[0] === name))
    if (members.length === 0) continue
    const replaced = new Set(members.flatMap((item) => ('path' in item ? [item.path[1]] : [])))
    const existing: Doc[] = []
    for (const child of (await store.children([name])) ?? []) {
      const stored = await store.read([name, child]).catch((error: unknown) => {
        if (!isStoreError(error, 'bad-document')) throw error
      })
      if (stored) existing.push(stored.doc)
    }
    for (const member of members) {
      for (const field of family.unique) {
        const value = member.doc[field]
        if (value === undefined) continue
        const holder = existing.find((other) => other[field] === value && !replaced.has(String(other[family.idField])))
        if (holder) problems.push(`${member.where}.${field}: ${JSON.stringify(value)} is taken by ${name} ${JSON.stringify(holder[family.idField])} in the store.`)
      }
    }
  }
  return problems
}

function withoutKeys(doc: Doc, ...keys: string[]): Doc {
  const rest: Doc = {}
  for (const key of Object.keys(doc)) if (!keys.includes(key)) defineValue(rest, key, doc[key])
  return rest
}

