import type { Doc, NodePath, Store, StoredDoc, StoredText } from './store/store.ts'
import { HttpError } from './errors.ts'
import { KeyedLock, TreeLock } from './locks.ts'
import { newId } from './ids.ts'
import { joinPath } from './path.ts'

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

/** A change before it gets its id. */
export type UnnumberedChange = Omit<Change, 'id'>

/** Preconditions of a write (RFC 9110 §13.1.1–§13.1.2), as the client sent them. */
export interface Preconditions {
  ifMatch?: string
  ifNoneMatch?: string
}

export interface WriteOutcome {
  doc: Doc
  etag: string
  created: boolean
}

/**
 * The data layer over a Store: it serializes writes to each node, runs subtree
 * removals alone, checks preconditions inside the lock, generates ids and
 * tells listeners about every change. Resources (generic, users, playlists)
 * speak to this, never to the store directly when they write.
 */
export class Documents {
  readonly store: Store
  private readonly nodeLocks = new KeyedLock()
  private readonly treeLock = new TreeLock()
  private readonly listeners = new Set<(change: Change) => void>()
  #lastChangeId = Date.now() * 1000

  constructor(store: Store) {
    this.store = store
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
  async window(path: NodePath, start: number, end: number | undefined): Promise<{ docs: Doc[]; total: number } | undefined> {
    if (!this.store.documentChildren) {
      const all = await this.list(path)
      return all && { docs: all.slice(start, end), total: all.length }
    }
    const children = await this.store.documentChildren(path, start, end)
    if (!children) return undefined
    // A document removed meanwhile is left out of the window.
    return { docs: await this.#readAll(path, children.names), total: children.total }
  }

  async #readAll(path: NodePath, names: readonly string[]): Promise<Doc[]> {
    const docs: Doc[] = []
    // Read in bounded batches: enough parallelism for the file system, no file-descriptor storm.
    for (let start = 0; start < names.length; start += 64) {
      const batch = await Promise.all(names.slice(start, start + 64).map((name) => this.store.read([...path, name])))
      for (const stored of batch) if (stored) docs.push(stored.doc)
    }
    return docs
  }

  /** Runs `task` alone among tasks with the same key (for checks that span nodes, such as unique usernames). */
  serialize<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.nodeLocks.run(`key:${key}`, task)
  }

  /**
   * Read-modify-write of one node under its lock. `compute` gets the current
   * document (undefined when none) and returns the document to store; it may
   * throw an HttpError to refuse, and must have no side effects: preconditions
   * are checked after it, against the same current version, before anything is stored.
   */
  write(
    path: NodePath,
    compute: (current: StoredDoc | undefined) => Doc | Promise<Doc>,
    options: { preconditions?: Preconditions; change?: (doc: Doc) => UnnumberedChange } = {},
  ): Promise<WriteOutcome> {
    return this.treeLock.runShared(() =>
      this.nodeLocks.run(nodeKey(path), async () => {
        const current = await this.store.read(path)
        // Compute first: a request that would fail anyway (404, 409, 400) gets that answer,
        // since preconditions only count for one that would otherwise succeed (RFC 9110 §13.2.1).
        const doc = await compute(current)
        checkPreconditions(current, options.preconditions)
        const { created, etag } = await this.store.write(path, doc)
        this.emit(options.change ? options.change(doc) : { type: 'put', path, data: doc })
        return { doc, etag, created }
      }),
    )
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

  /** Removes a node and its subtree; runs alone. 404 when there is nothing there. */
  remove(path: NodePath, preconditions?: Preconditions): Promise<{ doc?: Doc }> {
    return this.treeLock.runExclusive(async () => {
      if (preconditions?.ifMatch !== undefined || preconditions?.ifNoneMatch !== undefined) {
        const current = await this.store.read(path)
        // Nothing to delete is a 404 whatever the preconditions say (RFC 9110 §13.2.1).
        if (!current && !(await this.store.exists(path))) throw new HttpError(404, `Nothing is stored at ${displayPath(path)}.`)
        checkPreconditions(current, preconditions)
      }
      const { existed, doc } = await this.store.remove(path)
      if (!existed) throw new HttpError(404, `Nothing is stored at ${displayPath(path)}.`)
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

  private emit(change: UnnumberedChange): void {
    const numbered: Change = { id: ++this.#lastChangeId, ...change }
    for (const listener of this.listeners) listener(numbered)
  }
}

function nodeKey(path: NodePath): string {
  return JSON.stringify(path)
}

export function displayPath(path: NodePath): string {
  return joinPath(path)
}

/** If-Match and If-None-Match for writes (RFC 9110 §13.1.1, §13.1.2); a failed one is a 412. */
export function checkPreconditions(current: StoredDoc | undefined, preconditions: Preconditions | undefined): void {
  if (!preconditions) return
  const { ifMatch, ifNoneMatch } = preconditions
  if (ifMatch !== undefined && !matchesAny(ifMatch, current, false)) {
    throw new HttpError(412, current
      ? `If-Match ${ifMatch} does not match the current version ${current.etag}; read the document again and retry.`
      : 'If-Match was sent but there is no document here.')
  }
  if (ifNoneMatch !== undefined && matchesAny(ifNoneMatch, current, true)) {
    throw new HttpError(412, ifNoneMatch.trim() === '*'
      ? 'If-None-Match: * asks to create only, but a document exists here already.'
      : 'If-None-Match matches the current version of the document.')
  }
}

/** Does an entity-tag list match the current version? Strong comparison for If-Match, weak for If-None-Match. */
export function matchesAny(header: string, current: { etag: string } | undefined, weak: boolean): boolean {
  if (!current) return false
  if (header.trim() === '*') return true
  const strip = (tag: string) => (weak && tag.startsWith('W/') ? tag.slice(2) : tag)
  return header.split(',').some((tag) => {
    const trimmed = tag.trim()
    if (!weak && trimmed.startsWith('W/')) return false
    return strip(trimmed) === current.etag
  })
}
