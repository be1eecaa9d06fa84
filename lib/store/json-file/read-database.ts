import { newId, randomShortId } from '../new-id.ts'
import { inexactJson, jsonErrorOffset, lineAndColumn, pathOf, type JsonProblem } from '../../json/syntax.ts'
import { Json5SyntaxError, parseJson5 } from '../../json/json5.ts'
import { defineValue, isObject, jsonKindOf } from '../../json/values.ts'
import type { Doc, NodePath } from '../store.ts'
import { idFieldsOf, idlessName, NODES_KEY, segmentOfItem } from './layout.ts'
import { familyAt, type NestedFamily } from '../families.ts'

/**
 * Reading a db.json as the store it is (docs/json-server.md, "Serving a
 * db.json"): the inverse of layout.ts. What is read is a list of placements in
 * the file's order, so the layout keeps it; every problem found is reported
 * at once, naming the file and where: a line and column for broken JSON, the
 * value's path (`posts[3].id`) for a value the store cannot hold.
 */
export type Placement =
  | { kind: 'document'; path: NodePath; doc: Doc }
  /** A top-level array (its items follow) or a value kept as it is. */
  | { kind: 'top-level'; name: string; kept?: { value: unknown } }

export interface DatabaseFile {
  placements: Placement[]
  trailingNewline: boolean
  /** Declared members without an id got one: the file should be written so it keeps them. */
  idsGiven: boolean
}

/** A db.json the store cannot hold: `message` names the file and says what is wrong, and where. */
export class DatabaseProblem extends Error {}

/** How the file is written: JSON (a db.json), or JSON5 (a db.json5, docs/json-server.md, "Serving a db.json5"). */
export type DatabaseFormat = 'json' | 'json5'

/** A db.json5: JSON5 read and written (docs/json-server.md, "Serving a db.json5"). */
export function isJson5File(file: string): boolean {
  return file.toLowerCase().endsWith('.json5')
}

/** How many values JSON.parse would change the reader names before it stops looking. */
const MAX_INEXACT = 1000

/** A db.json's text read as a value, before either reader of it interprets it. */
export interface DatabaseText {
  value: unknown
  /** The values JSON.parse (or JSON5) would change, each with its path: the file cannot be held as written. */
  inexact: JsonProblem[]
  trailingNewline: boolean
}

/**
 * The one reading of a db.json's text, for the store that serves it and for
 * `--import` alike (docs/json-server.md, "Importing db.json"): a byte-order
 * mark is skipped; a file of nothing but white space is an empty database, as
 * json-server takes it; broken JSON (or JSON5, for a db.json5) is refused
 * naming its line and column; the values JSON.parse would change, a number
 * a double cannot carry or a repeated key, are each named by their path, as
 * in a request body (docs/http-api.md, "Requests and errors").
 */
export function parseDatabase(text: string, label: string, format: DatabaseFormat = 'json'): DatabaseText {
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (json.trim() === '') return { value: {}, inexact: [], trailingNewline: true }
  let value: unknown
  let inexact: JsonProblem[]
  if (format === 'json5') {
    try {
      ;({ value, problems: inexact } = parseJson5(json, MAX_INEXACT))
    } catch (error) {
      if (!(error instanceof Json5SyntaxError)) throw error
      throw new DatabaseProblem(`${label} is not valid JSON5: ${error.message}`)
    }
  } else {
    try {
      value = JSON.parse(json)
    } catch (error) {
      throw new DatabaseProblem(`${label} is not valid JSON: ${syntaxPlace(json, error)}`)
    }
    inexact = inexactJson(json, value, MAX_INEXACT)
  }
  return { value, inexact, trailingNewline: /\n\s*$/.test(json) }
}

/**
 * A db.json as the store it is: `idField` names a plain collection's items (`id`, or json-server's
 * `--id`); `asVersion1` reads the file as json-server 1.0 does (see Reader.#asVersion1).
 */
export function readDatabase(text: string, label: string, families: readonly NestedFamily[] = [], format: DatabaseFormat = 'json', idField = 'id', asVersion1 = false): DatabaseFile {
  const { value, inexact, trailingNewline } = parseDatabase(text, label, format)
  if (inexact.length > 0) throw inexactProblem(label, inexact)
  if (!isObject(value)) {
    throw new DatabaseProblem(`${label} holds ${jsonKindOf(value)}; a db.json is an object whose keys name collections (arrays) and documents (objects)`)
  }
  const reader = new Reader(families, idField, asVersion1)
  for (const name of Object.keys(value)) reader.topLevel(name, value[name])
  if (asVersion1) reader.placements.push(VERSION_1_SCHEMA)
  if (reader.problems.length > 0) {
    const shown = reader.problems.slice(0, 5).join('; ') + (reader.problems.length > 5 ? `; and ${reader.problems.length - 5} more` : '')
    throw new DatabaseProblem(`${label} cannot be served: ${shown}`)
  }
  return { placements: reader.placements, trailingNewline, idsGiven: reader.idsGiven }
}

/** What a db.json holds that JSON.parse would change: the first five places, and how many more. */
export function inexactProblem(label: string, inexact: readonly JsonProblem[]): DatabaseProblem {
  const more = inexact.length > 5 ? `; and ${inexact.length - 5} more` : ''
  return new DatabaseProblem(`${label} holds ${inexact.slice(0, 5).map((problem) => `at ${problem.path} ${problem.message}`).join('; ')}${more}`)
}

/** Where JSON.parse stopped, as a line and a column (1-based), and what was expected there. */
function syntaxPlace(json: string, error: unknown): string {
  let found: { offset: number; expected: string }
  try {
    found = jsonErrorOffset(json)
  } catch {
    // A file nested deeper than the finder's recursion can go: V8's own message says where.
    return (error as Error).message
  }
  if (found.offset < 0) return (error as Error).message
  const { line, column } = lineAndColumn(json, found.offset)
  return `line ${line}, column ${column}: expected ${found.expected}`
}

/**
 * The `$schema` json-server 1.0 writes last in the file at each write (its
 * NormalizedAdapter), whatever the file held there before.
 */
const VERSION_1_SCHEMA: Placement = { kind: 'top-level', name: '$schema', kept: { value: './node_modules/json-server/schema.json' } }

class Reader {
  readonly placements: Placement[] = []
  readonly problems: string[] = []
  idsGiven = false
  readonly #seen = new Set<string>()
  readonly #families: readonly NestedFamily[]
  readonly #idField: string
  /**
   * json-server 1.0's reading (docs/json-server.md, "json-server 1.0's mode"; its
   * NormalizedAdapter.read): a numeric `id` of an item of a top-level array is its
   * String() from then on, an item without one gets a new one (at each reading, as 1.0
   * gives it a random one), and `$schema` is its own, written last. Nothing is written
   * until the next write, which writes them so, as 1.0 does.
   */
  readonly #asVersion1: boolean

  constructor(families: readonly NestedFamily[], idField: string, asVersion1: boolean) {
    this.#families = families
    this.#idField = idField
    this.#asVersion1 = asVersion1
  }

  topLevel(name: string, value: unknown): void {
    if (name === NODES_KEY) return this.#nodes(value)
    if (this.#asVersion1 && name === '$schema') return
    if (isObject(value)) return this.#document([name], value, pathOf([{ at: name }]))
    const isCollection = Array.isArray(value) && (value.length === 0 || value.some(isObject))
    if (!isCollection) {
      // A string, a number, an array of strings: json-server would serve it; the store keeps it as it is.
      this.placements.push({ kind: 'top-level', name, kept: { value } })
      return
    }
    this.placements.push({ kind: 'top-level', name })
    this.#items([name], value as unknown[], [{ at: name }])
  }

  /** A collection's items: each an object whose id field names it (one without gets a new id). */
  #items(collection: NodePath, items: unknown[], where: Array<{ at: string | number }>): void {
    const fields = idFieldsOf([...collection, ''], this.#families, this.#idField)
    const owner = familyAt(this.#families, collection)
    const children = owner ? this.#families.filter((family) => family.parent === owner) : []
    // An item of a plain top-level collection without an id is kept as it is, under a name the file never holds.
    const keepsIdless = !owner && collection.length === 1
    const taken = keepsIdless ? new Set(items.map((item) => (isObject(item) ? segmentOfItem(item, fields) : undefined))) : undefined
    items.forEach((given, index) => {
      const at = [...where, { at: index }]
      if (!isObject(given)) return void this.problems.push(`${pathOf(at)} is ${jsonKindOf(given)}; every item of a collection is an object`)
      const item = keepsIdless && this.#asVersion1 && typeof given.id === 'number' ? withValue(given, 'id', String(given.id)) : given
      let segment = segmentOfItem(item, fields)
      if (segment === null) return void this.problems.push(`${pathOf(at)}.${fields[0]} is not a string or a number`)
      let doc: Doc = item
      if (segment === undefined && taken && this.#asVersion1 && fields[0] === 'id') {
        // 1.0 gives it a new id (its randomId), last in it, each time it reads the file: kept from the next write on.
        segment = randomShortId()
        doc = withValue(item, 'id', segment)
      } else if (segment === undefined && taken) {
        segment = idlessName(index)
        while (taken.has(segment)) segment += "'"
      } else if (segment === undefined) {
        // A declared family's member without an id gets one, as the family's rules give it; the file is written so it keeps it.
        segment = newId()
        doc = { [fields[0]]: segment }
        for (const key of Object.keys(item)) if (key !== fields[0]) defineValue(doc, key, item[key])
        this.idsGiven = true
      }
      const path = [...collection, segment]
      // A declared member's children arrays (a user's `playlist`) hold its children.
      const nested = children.filter((child) => Array.isArray(doc[child.collection]))
      for (const child of nested) doc = withoutKey(doc, child.collection)
      this.#document(path, doc, pathOf(at))
      for (const child of nested) this.#items([...path, child.collection], item[child.collection] as unknown[], [...at, { at: child.collection }])
    })
  }

  /** `@nodes`: documents by their path. */
  #nodes(value: unknown): void {
    if (!Array.isArray(value)) return void this.problems.push(`${NODES_KEY} is ${jsonKindOf(value)}; it is an array of { "path": [...], "document": {...} }`)
    value.forEach((entry, index) => {
      const at = `${NODES_KEY}[${index}]`
      const path = isObject(entry) ? entry.path : undefined
      if (!isObject(entry) || !Array.isArray(path) || !path.every((segment) => typeof segment === 'string') || !isObject(entry.document)) {
        return void this.problems.push(`${at} is not { "path": [...strings], "document": {...} }`)
      }
      this.#document(path as string[], entry.document, at)
    })
  }

  #document(path: NodePath, doc: Doc, where: string): void {
    const key = JSON.stringify(path)
    if (this.#seen.has(key)) return void this.problems.push(`${where} is a second document at ${key}; ids in a collection must differ`)
    this.#seen.add(key)
    this.placements.push({ kind: 'document', path, doc })
  }
}

/** `doc` with `key` holding `value`, in its place (last when it had none). */
function withValue(doc: Doc, key: string, value: unknown): Doc {
  const changed: Doc = {}
  for (const name of Object.keys(doc)) defineValue(changed, name, name === key ? value : doc[name])
  if (!Object.hasOwn(doc, key)) defineValue(changed, key, value)
  return changed
}

function withoutKey(doc: Doc, omitted: string): Doc {
  const rest: Doc = {}
  for (const key of Object.keys(doc)) if (key !== omitted) defineValue(rest, key, doc[key])
  return rest
}
