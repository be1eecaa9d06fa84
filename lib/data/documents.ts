import type { Doc, NodePath, Store, StoredDoc, StoredText } from '../store/store.ts'
import { isStoreError, type StoreError } from '../store/errors.ts'
import { KeyedLock, TreeLock } from './locks.ts'
import { newId } from './ids.ts'
import { pacer } from '../listing/pace.ts'

/**
 * Documents of a collection, and the store errors of the children whose
 * document file is broken (bad JSON, not an object, not a regular file),
 * which are left out so that one broken file never breaks its collection.
 */
export interface Listing {
  docs: Doc[]
  skipped: StoreError[]
}

/** A change, as the event streams (SSE) report it. */
export interface Change {
  /**
   * Orders every change of the store: one more than the change before. A run
   * starts from its start time in microseconds, so ids keep growing across
   * restarts and an id from an earlier run is older than any of this one.
   */
  id: number
  type: 'put' | 'patch' | 'delete'
  path: NodePath
  /** put: the stored document; patch: the merge patch applied; delete: the deleted document or null. */
  data: unknown
}

/**
 * A check of the version a write is about to replace (undefined when the node
 * holds no document), supplied by the caller: it throws to refuse the write.
 * The HTTP side builds it from the request's preconditions (lib/http/conditional.ts).
 */
export type Preconditions = (current: StoredDoc | undefined) => void

/** Thrown when a write or removal finds nothing stored at its node. */
export class NothingStored extends Error {
  readonly path: NodePath

  constructor(path: NodePath) {
    super(`nothing stored at /${path.join('/')}`)
    this.name = 'NothingStored'
    this.path = path
  }
}

/** A change before it gets its id. */
export type UnnumberedChange = Omit<Change, 'id'>

export interface WriteOutcome {
  doc: Doc
  etag: string
  created: boolean
}

/**
 * The data layer over a Store: it serializes writes to each node, runs subtree
 * removals alone, runs the caller's preconditions inside the lock, generates ids and
 * tells listeners about every change. Resources (generic, users, playlists)
 * speak to this, never to the store directly when they write.
 */
export class Documents {
  readonly store: Store
  private readonly nodeLocks = new KeyedLock()
  private readonly treeLock = new TreeLock()
  private readonly listeners = new Set<(change: Change) => void>()
  #lastChangeId = Date.now() * 1000
  #heard = false
  /** Settles once the id of the latest change is known (at once, unless the store keeps the feed). */
  readonly ready: Promise<void> = Promise.resolve()

  constructor(store: Store) {
    this.store = store
    // A store that keeps its own feed numbers the changes and reports them, whoever made them (README, "Live updates").
    if (store.subscribe && store.lastChangeId) {
      store.subscribe((change) => this.#tell(change))
      this.ready = store.lastChangeId().then((id) => {
        if (!this.#heard || id > this.#lastChangeId) this.#lastChangeId = id
      })
    }
  }

  read(path: NodePath): Promise<StoredDoc | undefined> {
    return this.store.read(path)
  }

  /** A node's document as compact JSON text, for an answer that sends it as it is. */
  readText(path: NodePath): Promise<StoredText | undefined> {
    if (this.store.readText) return this.store.readText(path)
    return this.store.read(path).then((stored) => stored && { json: JSON.stringify(stored.doc), etag: stored.etag })
  }

  /** The documents of a node's children in ascending id order, or undefined when the node does not exist. */
  async list(path: NodePath): Promise<Doc[] | undefined> {
    return (await this.listing(path))?.docs
  }

  /** As `list`, with the children whose document file is broken, which are left out (see `Listing`). */
  async listing(path: NodePath): Promise<Listing | undefined> {
    const names = this.store.documentChildren
      ? (await this.store.documentChildren(path, 0, undefined))?.names
      : await this.store.children(path)
    return names && this.#readAll(path, names)
  }

  /**
   * Documents [start, end) of a node's children in ascending id order, and how
   * many children hold a document, or undefined when the node does not exist.
   * With a store that can name the children holding a document, this reads
   * only the window's documents, however big the collection.
   */
  async window(path: NodePath, start: number, end: number | undefined): Promise<(Listing & { total: number }) | undefined> {
    if (!this.store.documentChildren) {
      const all = await this.listing(path)
      return all && { docs: all.docs.slice(start, end), skipped: all.skipped, total: all.docs.length }
    }
    const children = await this.store.documentChildren(path, start, end)
    if (!children) return undefined
    // A document removed meanwhile is left out of the window.
    return { ...(await this.#readAll(path, children.names)), total: children.total }
  }

  async #readAll(path: NodePath, names: readonly string[]): Promise<Listing> {
    const docs: Doc[] = []
    const skipped: StoreError[] = []
    const pace = pacer()
    // One broken file is that document's problem, not its collection's: it is left out and named.
    const readOne = (name: string) =>
      this.store.read([...path, name]).catch((error: unknown) => {
        if (!isStoreError(error, 'bad-document')) throw error
        return error
      })
    // Read in bounded batches: enough parallelism for the file system, no file-descriptor storm.
    for (let start = 0; start < names.length; start += 64) {
      const batch = await Promise.all(names.slice(start, start + 64).map(readOne))
      for (const stored of batch) {
        if (isStoreError(stored)) skipped.push(stored)
        else if (stored) docs.push(stored.doc)
      }
      // Cached reads settle at once: without this, a big collection would be read in one turn of the event loop.
      const turn = pace(true)
      if (turn) await turn
    }
    return { docs, skipped }
  }

  /** Runs `task` alone among tasks with the same key (for checks that span nodes, such as unique usernames). */
  serialize<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.nodeLocks.run(`key:${key}`, task)
  }

  /**
   * Read-modify-write of one node under its lock. `compute` gets the current
   * document (undefined when none) and returns the document to store; it may
   * throw to refuse, and must have no side effects: the preconditions run
   * after it, against the same current version, before anything is stored.
   */
  write(
    path: NodePath,
    compute: (current: StoredDoc | undefined) => Doc | Promise<Doc>,
    options: { preconditions?: Preconditions; change?: (doc: Doc) => UnnumberedChange } = {},
  ): Promise<WriteOutcome> {
    return this.treeLock.runShared(() =>
      this.nodeLocks.run(nodeKey(path), async () => {
        const { current, broken } = await this.#readForWrite(path)
        if (broken) {
          // A broken document file is repaired by a write that needs no current document
          // (a PUT); one that does (a PATCH) hears what is wrong with the file.
          const doc = await (async () => compute(undefined))().catch(() => {
            throw broken
          })
          options.preconditions?.(undefined)
          const change = options.change ? options.change(doc) : { type: 'put' as const, path, data: doc }
          const { etag } = await this.store.write(path, doc, change.type === 'patch' ? { patch: change.data } : undefined)
          this.emit(change)
          return { doc, etag, created: false }
        }
        // Compute first: a request that would fail anyway (nothing there, a taken name, a bad body) gets that answer,
        // since preconditions only count for one that would otherwise succeed (RFC 9110 §13.2.1).
        const doc = await compute(current)
        options.preconditions?.(current)
        const change = options.change ? options.change(doc) : { type: 'put' as const, path, data: doc }
        const { created, etag } = await this.store.write(path, doc, change.type === 'patch' ? { patch: change.data } : undefined)
        this.emit(change)
        return { doc, etag, created }
      }),
    )
  }

  /** The current document for a write; a broken document file is reported, not thrown. */
  async #readForWrite(path: NodePath): Promise<{ current?: StoredDoc; broken?: StoreError }> {
    try {
      return { current: await this.store.read(path) }
    } catch (error) {
      if (isStoreError(error, 'bad-document')) return { broken: error }
      throw error
    }
  }

  /**
   * Creates a child of `parent` with a new id. `makeDoc` builds the document
   * for an id; `check` runs first, inside the lock (e.g. that the parent user exists).
   */
  create(parent: NodePath, makeDoc: (id: string) => Doc, check?: () => Promise<void>): Promise<WriteOutcome & { id: string }> {
    return this.treeLock.runShared(async () => {
      if (check) await check()
      for (;;) {
        const id = newId()
        const path = [...parent, id]
        const doc = makeDoc(id)
        // An id can only be taken already if the clock went back since an earlier run: take the next one.
        const result = await this.nodeLocks.run(nodeKey(path), () => this.store.create(path, doc))
        if (result) {
          this.emit({ type: 'put', path, data: doc })
          return { id, doc, etag: result.etag, created: true }
        }
      }
    })
  }

  /** Removes a node and its subtree; runs alone. Throws NothingStored when there is nothing there. */
  remove(path: NodePath, preconditions?: Preconditions): Promise<{ doc?: Doc }> {
    return this.treeLock.runExclusive(async () => {
      if (preconditions) {
        const current = await this.store.read(path)
        // Nothing to delete is that answer whatever the preconditions say (RFC 9110 §13.2.1).
        if (!current && !(await this.store.exists(path))) throw new NothingStored(path)
        preconditions(current)
      }
      const { existed, doc } = await this.store.remove(path)
      if (!existed) throw new NothingStored(path)
      this.emit({ type: 'delete', path, data: doc ?? null })
      return { doc }
    })
  }

  /** Listens to every change; returns the function that stops listening. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** How many listeners are subscribed (the change log holds one, each event stream one). */
  get listenerCount(): number {
    return this.listeners.size
  }

  /** The id of the latest change (where this run's ids start, before the first). */
  get lastChangeId(): number {
    return this.#lastChangeId
  }

  /** Tells the listeners of a change made here, unless the store's own feed reports it. */
  private emit(change: UnnumberedChange): void {
    if (this.store.subscribe) return
    this.#tell({ id: this.#lastChangeId + 1, ...change })
  }

  #tell(change: Change): void {
    this.#heard = true
    this.#lastChangeId = change.id
    for (const listener of this.listeners) listener(change)
  }
}

function nodeKey(path: NodePath): string {
  return JSON.stringify(path)
}
