import { createRequire } from 'node:module'
import path from 'node:path'
import type { Change, Documents } from './data/documents.ts'
import type { BatchOp, Doc, NodePath } from './store/store.ts'
import { isObject, jsonKindOf, mergePatch } from './json/values.ts'
import { withoutOwnId } from './resources/json-server/singular.ts'
import { emptiedCollections } from './resources/json-server/collections.ts'
import { packageRoot } from './package.ts'

/*
 * `router.db` of restdir/json-server (docs/json-server.md, "The json-server module"): json-server 0.17's
 * lowdb 1 database, `db.get('posts').find({ id: 1 }).value()`, `….push(post).write()`, `getState()`,
 * `setState()`, `write()`, with lodash-id's and json-server's mixins (`getById`, `insert`, `updateById`,
 * `removeById`, …), over restdir's store. lowdb holds the whole database in memory and its reads are
 * synchronous; so does this: a copy of the data as `GET /db` shows it, kept current from the store's change
 * feed (what the router and any other writer stores reaches it). A `write()` stores what differs between that
 * copy and what the store holds, in one batch (one atomic step of the store, docs/http-api.md, "Batches"),
 * which event streams hear as any write; the router answers its next request once the batch is stored.
 * lowdb is lodash's chain with a `write()`: lodash is the app's own, as Express is (restdir depends on nothing).
 */

/** lowdb 1's database: lodash's chain over the state, with its own members. */
export interface LowDatabase {
  getState(): Record<string, unknown>
  setState(state: Record<string, unknown>): LowDatabase
  write<T>(returnValue?: T): T | undefined
  read(): LowDatabase
  get(path: string | string[], defaultValue?: unknown): any
  _: any
  // lodash's chain members (set, has, update, unset, …), as lodash's own types would give them.
  [member: string]: any
}

/** The data of a json-server router, mirrored from its store for `router.db`. */
export class Mirror {
  /** The state lowdb holds: each collection an array, each singular resource an object. */
  state: Record<string, unknown> = {}
  /** Each item's name in the store (its id, or the name the store gave an item without one). */
  readonly #names = new WeakMap<object, string>()
  /** What the store holds, as JSON text, by node (key()): what a write() compares the state with. */
  readonly #stored = new Map<string, string>()
  #writing: Promise<void> = Promise.resolve()
  #database: LowDatabase | undefined
  #documents: Documents | undefined
  readonly #idField: string

  constructor(idField: string) {
    this.#idField = idField
  }

  /**
   * The store's data, read once (as `GET /db` reads it) into the state lowdb already holds, then kept
   * current from the store's change feed.
   */
  async load(documents: Documents): Promise<void> {
    documents.subscribe((change) => this.#apply(change))
    await this.#read(documents)
    this.#documents = documents
  }

  async #read(documents: Documents): Promise<void> {
    for (const name of Object.keys(this.state)) delete this.state[name]
    this.#stored.clear()
    const held = await documents.resources()
    for (const name of held) {
      const stored = await documents.read([name])
      if (stored) {
        const shown = structuredClone(withoutOwnId(stored.doc, name))
        this.state[name] = shown
        this.#stored.set(key([name]), JSON.stringify(shown))
        continue
      }
      const items: Doc[] = []
      for (const segment of (await documents.documentNames([name])) ?? []) {
        const item = await documents.read([name, segment])
        if (!item) continue
        const copy = structuredClone(item.doc)
        this.#names.set(copy, segment)
        this.#stored.set(key([name, segment]), JSON.stringify(copy))
        items.push(copy)
      }
      this.state[name] = items
    }
    for (const name of emptiedCollections(documents, held)) this.state[name] = []
  }

  /** Resolves once every write() so far is stored (or failed, and was reported). */
  get settled(): Promise<void> {
    return this.#writing
  }

  /** lowdb's database over this data; made on first use, with the app's lodash. */
  database(): LowDatabase {
    this.#database ??= lowdb(this)
    return this.#database
  }

  /** A change of the store, from the router or any other writer, made in the state (a node deeper than json-server's is not in it). */
  #apply({ type, path: nodePath, data }: Change): void {
    const [name, segment] = nodePath
    if (nodePath.length === 1) {
      if (type === 'delete') {
        delete this.state[name]
        for (const stored of [...this.#stored.keys()]) if (JSON.parse(stored)[0] === name) this.#stored.delete(stored)
        return
      }
      const doc = type === 'put' ? data : mergePatch(this.state[name], data)
      if (!isObject(doc)) return
      const shown = structuredClone(withoutOwnId(doc as Doc, name))
      this.state[name] = shown
      this.#stored.set(key([name]), JSON.stringify(shown))
      return
    }
    if (nodePath.length !== 2) return
    const items = Array.isArray(this.state[name]) ? (this.state[name] as unknown[]) : (this.state[name] = [])
    const at = items.findIndex((item) => isObject(item) && this.#names.get(item) === segment)
    if (type === 'delete') {
      if (at >= 0) items.splice(at, 1)
      this.#stored.delete(key(nodePath))
      return
    }
    const before = this.#stored.get(key(nodePath))
    const doc = type === 'put' ? structuredClone(data) : mergePatch(before === undefined ? {} : JSON.parse(before), data)
    if (!isObject(doc)) return
    this.#stored.set(key(nodePath), JSON.stringify(doc))
    if (at < 0) {
      this.#names.set(doc, segment)
      items.push(doc)
      return
    }
    // In place, as lodash-id's replaceById changes an item: the app may hold it.
    const item = items[at] as Doc
    for (const field of Object.keys(item)) delete item[field]
    Object.assign(item, doc)
  }

  /**
   * lowdb's adapter.write: stores what differs between `state` and what the store holds, in one batch.
   * What the store cannot keep (a value that is neither an array nor an object, an item without an id
   * that the store did not name, two items with one id) is thrown here, and nothing is stored.
   */
  write(state: Record<string, unknown>): void {
    const documents = this.#documents
    if (!documents) throw new Error('router.db: the store is not open yet; write once router.ready has resolved.')
    if (state !== this.state) this.state = state
    const ops: BatchOp[] = []
    const changes: Omit<Change, 'id'>[] = []
    const seen = new Set<string>()
    const names: Array<[object, string]> = []
    for (const [name, value] of Object.entries(state)) {
      if (Array.isArray(value)) {
        for (const item of value) {
          if (!isObject(item)) throw new TypeError(`router.db: ${name} holds ${jsonKindOf(item)}; each item of a collection is an object.`)
          const id = item[this.#idField]
          const segment = id === undefined || id === null ? this.#names.get(item) : String(id)
          if (segment === undefined) throw new TypeError(`router.db: an item of ${name} has no "${this.#idField}"; insert() gives it one, push() does not.`)
          const node = key([name, segment])
          if (seen.has(node)) throw new TypeError(`router.db: two items of ${name} have the ${this.#idField} ${JSON.stringify(segment)}.`)
          seen.add(node)
          names.push([item, segment])
          this.#stage(ops, changes, [name, segment], item as Doc)
        }
      } else if (isObject(value)) {
        seen.add(key([name]))
        this.#stage(ops, changes, [name], value as Doc)
      } else {
        // json-server's own refusal of such a key (its router/index.js).
        throw new TypeError(`router.db: type of "${name}" (${jsonKindOf(value)}) is not supported. Use objects or arrays of objects.`)
      }
    }
    const gone = new Set<string>()
    for (const node of this.#stored.keys()) {
      if (seen.has(node)) continue
      const nodePath = JSON.parse(node) as string[]
      // A name the state no longer has goes whole, with whatever lies below it.
      const removed = Object.hasOwn(state, nodePath[0]) ? nodePath : nodePath.slice(0, 1)
      if (gone.has(key(removed))) continue
      gone.add(key(removed))
      ops.push({ kind: 'remove', path: removed })
      changes.push({ type: 'delete', path: removed, data: null })
    }
    for (const node of gone) for (const stored of [...this.#stored.keys()]) if (stored === node || stored.startsWith(node.slice(0, -1) + ',')) this.#stored.delete(stored)
    for (const [item, segment] of names) this.#names.set(item, segment)
    if (ops.length === 0) return
    this.#writing = this.#writing.then(() => documents.batch(ops, changes)).catch(async (error: unknown) => {
      // lowdb's FileSync would have thrown; this write() has returned already. Said, and the copy read
      // again from the store, so that what router.db shows is what is stored.
      console.error('router.db: a write() could not be stored, and the data is read again from the store:', error)
      await this.#read(documents).catch((again: unknown) => console.error('router.db: the store could not be read:', again))
    })
  }

  /** A write of the node when its JSON differs from what the store holds; noted as held from now on. */
  #stage(ops: BatchOp[], changes: Omit<Change, 'id'>[], nodePath: NodePath, doc: Doc): void {
    const text = JSON.stringify(doc)
    if (this.#stored.get(key(nodePath)) === text) return
    this.#stored.set(key(nodePath), text)
    const copy = JSON.parse(text) as Doc
    ops.push({ kind: 'write', path: nodePath, doc: copy })
    changes.push({ type: 'put', path: nodePath, data: copy })
  }
}

/** A node's key in Mirror's map of what the store holds. */
function key(nodePath: NodePath): string {
  return JSON.stringify(nodePath)
}

/**
 * lowdb 1's main module, over the mirror as its adapter: lodash's chain of the state, a
 * `write()` on every chain that stores the state and returns the chain's value (as lowdb's FileSync),
 * and lodash-id's and json-server 0.17's mixins, as json-server's router adds them.
 */
function lowdb(mirror: Mirror): LowDatabase {
  const _ = appsLodash().runInContext()
  const db = _.chain({})
  _.prototype.write = _.wrap(_.prototype.value, function (this: unknown, value: () => unknown) {
    return db.write(value.apply(this))
  })
  const plant = (state: Record<string, unknown>) => {
    db.__wrapped__ = state
    return db
  }
  db._ = _
  // The state is the mirror's own object: filled in place once the store is read, and kept current.
  db.read = () => plant(mirror.state)
  db.write = (returnValue: unknown) => {
    mirror.write(db.getState())
    return returnValue
  }
  db.getState = () => db.__wrapped__
  db.setState = (state: Record<string, unknown>) => plant((mirror.state = state))
  _.mixin(lodashId)
  db.read()
  return db
}

/** lodash, from the app's folder (or restdir's own, where it is installed beside it). */
function appsLodash(): any {
  for (const from of [path.join(process.cwd(), 'package.json'), path.join(packageRoot, 'package.json')]) {
    try {
      return createRequire(from)('lodash')
    } catch {
      // not installed there; try the next folder
    }
  }
  throw new Error('router.db is lowdb 1, lodash\'s chain, and lodash is not installed: npm install lodash (restdir itself depends on nothing).')
}

/**
 * lodash-id 0.14's mixins (json-server's router adds them), its `createId` json-server 0.17's: the
 * largest integer id plus one, else a random string (its server mixins).
 */
const lodashId = {
  __id(this: any): string {
    return this.id || 'id'
  },
  getById(this: any, collection: unknown[], id: unknown): unknown {
    const field = this.__id()
    return this.find(collection, (doc: any) => this.has(doc, field) && String(doc[field]) === String(id))
  },
  createId(this: any, collection: unknown[]): unknown {
    if (this.isEmpty(collection)) return 1
    const field = this.__id()
    const id = this.maxBy(collection, field)[field]
    return Number.isFinite(id) ? id + 1 : Math.random().toString(36).slice(2, 9)
  },
  insert(this: any, collection: unknown[], doc: any): unknown {
    const field = this.__id()
    doc[field] = doc[field] || this.createId(collection, doc)
    if (this.getById(collection, doc[field])) throw new Error('Insert failed, duplicate id')
    collection.push(doc)
    return doc
  },
  upsert(this: any, collection: unknown[], doc: any): unknown {
    const field = this.__id()
    const found = doc[field] ? this.getById(collection, doc[field]) : undefined
    if (found) {
      for (const name of Object.keys(found)) delete found[name]
      this.assign(found, doc)
      return doc
    }
    if (!doc[field]) doc[field] = this.createId(collection, doc)
    collection.push(doc)
    return doc
  },
  updateById(this: any, collection: unknown[], id: unknown, attrs: object): unknown {
    const doc = this.getById(collection, id)
    if (doc) this.assign(doc, attrs, { [this.__id()]: doc[this.__id()] })
    return doc
  },
  updateWhere(this: any, collection: unknown[], predicate: unknown, attrs: object): unknown[] {
    const field = this.__id()
    const docs = this.filter(collection, predicate)
    for (const doc of docs) this.assign(doc, attrs, { [field]: doc[field] })
    return docs
  },
  replaceById(this: any, collection: unknown[], id: unknown, attrs: object): unknown {
    const doc = this.getById(collection, id)
    if (doc) {
      const docId = doc[this.__id()]
      for (const name of Object.keys(doc)) delete doc[name]
      this.assign(doc, attrs, { [this.__id()]: docId })
    }
    return doc
  },
  removeById(this: any, collection: unknown[], id: unknown): unknown {
    const doc = this.getById(collection, id)
    const at = collection.indexOf(doc)
    if (at >= 0) collection.splice(at, 1)
    return doc
  },
  removeWhere(this: any, collection: unknown[], predicate: unknown): unknown[] {
    const docs = this.filter(collection, predicate)
    for (const doc of docs) {
      const at = collection.indexOf(doc)
      if (at >= 0) collection.splice(at, 1)
    }
    return docs
  },
}
