import { readFile } from 'node:fs/promises'
import type { Doc, NodePath, Store } from './store/store.ts'
import { Documents, displayPath } from './documents.ts'
import { isObject } from './json.ts'
import { defaultPathLimits } from './path.ts'

/**
 * Loading a json-server database (`db.json`) into a store: each top-level
 * array becomes a collection whose items keep their ids (`posts[id=1]` →
 * `/posts/1`; an item without an id gets a new one), each top-level object a
 * document (`profile` → `/profile`). A generic document's `id` is its URL's
 * last segment (SPEC §3), so ids become strings (`1` → `"1"`).
 */
export interface ImportOptions {
  /** Replace documents that exist already; without it, any clash refuses the whole import. */
  force?: boolean
}

export interface ImportSummary {
  /** Top-level arrays imported. */
  collections: number
  /** Documents written, collection items and top-level objects together. */
  documents: number
}

/** A document to write: at `path`, or (no id given) a new child of `parent`. */
type Planned = { path: NodePath; doc: Doc } | { parent: NodePath; doc: Doc }

/**
 * Imports a parsed database into a store, through the data layer (locks,
 * atomic writes). Checks everything before it writes anything: a malformed
 * database or, without `force`, a document that exists already, throws and
 * leaves the store as it was.
 */
export async function importDatabase(store: Store, database: unknown, options: ImportOptions = {}): Promise<ImportSummary> {
  const plan = planImport(database)
  const documents = new Documents(store)
  if (!options.force) await refuseOverwrites(documents, plan)
  for (const item of plan.items) {
    if ('path' in item) await documents.write(item.path, () => item.doc)
    else await documents.create(item.parent, (id) => ({ id, ...item.doc }))
  }
  return { collections: plan.collections, documents: plan.items.length }
}

/** Reads and parses a db.json file; the error says which file and what is wrong with it. */
export async function readDatabaseFile(file: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new Error(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`)
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''))
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${(error as Error).message}.`)
  }
}

function planImport(database: unknown): { items: Planned[]; collections: number } {
  if (!isObject(database)) {
    throw new Error('A json-server database is a JSON object whose keys name collections (arrays) and documents (objects).')
  }
  const items: Planned[] = []
  let collections = 0
  for (const name of Object.keys(database)) {
    checkSegment(name, `The key ${JSON.stringify(name)}`)
    const value = database[name]
    if (Array.isArray(value)) {
      collections++
      items.push(...planCollection(name, value))
    } else if (isObject(value)) {
      items.push({ path: [name], doc: { id: name, ...withoutId(value) } })
    } else {
      throw new Error(`${JSON.stringify(name)} holds ${describe(value)}; only arrays (collections) and objects (documents) can be imported.`)
    }
  }
  return { items, collections }
}

function planCollection(name: string, entries: unknown[]): Planned[] {
  const seen = new Set<string>()
  return entries.map((entry, index) => {
    const where = `${name}[${index}]`
    if (!isObject(entry)) throw new Error(`${where} is ${describe(entry)}; each item of a collection must be an object.`)
    if (!Object.hasOwn(entry, 'id') || entry.id === null) return { parent: [name], doc: withoutId(entry) }
    const id = idOf(entry.id, where)
    if (seen.has(id)) throw new Error(`${where} repeats the id ${JSON.stringify(id)}; ids in a collection must differ.`)
    seen.add(id)
    return { path: [name, id], doc: { id, ...withoutId(entry) } }
  })
}

function idOf(id: unknown, where: string): string {
  if (typeof id === 'number' && Number.isFinite(id)) return String(id)
  if (typeof id === 'string') {
    checkSegment(id, `The id of ${where}`)
    return id
  }
  throw new Error(`The id of ${where} is ${describe(id)}; an id must be a string or a number.`)
}

/** Every key and id becomes a URL segment: it must be one a request can reach. */
function checkSegment(segment: string, what: string): void {
  if (segment === '') throw new Error(`${what} is empty; it would name no URL.`)
  if (encodeURIComponent(segment).length > defaultPathLimits.maxSegmentLength) {
    throw new Error(`${what} is longer than a URL segment may be (${defaultPathLimits.maxSegmentLength} characters, encoded).`)
  }
}

async function refuseOverwrites(documents: Documents, plan: { items: Planned[] }): Promise<void> {
  const clashes: string[] = []
  for (const item of plan.items) {
    if ('path' in item && (await documents.read(item.path))) clashes.push(displayPath(item.path))
  }
  if (clashes.length === 0) return
  const shown = clashes.slice(0, 5).join(', ') + (clashes.length > 5 ? ` and ${clashes.length - 5} more` : '')
  throw new Error(`${clashes.length} document${clashes.length === 1 ? ' exists' : 's exist'} already (${shown}); nothing was imported. Use --force to replace them.`)
}

function withoutId(doc: Doc): Doc {
  const { id: _id, ...rest } = doc
  return rest
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}
