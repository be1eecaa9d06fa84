import type { BatchOp, Doc, ListingPage, ListingPlan, NodePath, StagedBatch, Store, StoreChange, StoredDoc, StoredText, WriteConditions } from '../store/store.ts'
import { isStoreError, type StoreError } from '../store/errors.ts'
import { changeOfWrite } from '../store/feed.ts'
import { ownerOrUniqueRefusal } from '../store/conditions.ts'
import { createWithNewId } from './ids.ts'
import { newId, newShortId, randomShortId } from '../store/new-id.ts'
import { HEAVY_STEP, pacer, SLICE_MS } from './pace.ts'
import { FullStore } from '../store/full-store.ts'
import { holdIntegerId } from './ids.ts'
import { StagedStore } from '../store/staged.ts'
import { FileStore } from '../store/file/file-store.ts'

/** Most documents read at once. */
const READ_BATCH = 64
/**
 * Documents read in the first batch: a page of 20 in at most two, so a plain
 * page costs no more turns than it must; documents that prove big make the
 * next batches smaller.
 */
const FIRST_READ_BATCH = 16
/** Fewest read at once when reads wait on the disk: as many as libuv has threads for it (UV_THREADPOOL_SIZE, 4). */
const READS_AT_ONCE_ON_DISK = 4

/**
 * Documents of a collection, and the store errors of the children whose
 * document file is broken (bad JSON, not an object, not a regular file),
 * which are left out so that one broken file never breaks its collection.
 */
export interface ChildDocuments {
  docs: Doc[]
  skipped: StoreError[]
}

/**
 * A change, as the event streams (SSE) report it: the store's own (see
 * StoreChange). Ids are one more per change; a run starts from its start
 * time in microseconds, so ids keep growing across restarts and an id from an
 * earlier run is older than any of this one.
 */
export type Change = StoreChange

/**
 * A check of the version a write is about to replace (undefined when the node
 * holds no document), supplied by the caller: it throws to refuse the write.
 * The HTTP side builds it from the request's preconditions (lib/http/conditional.ts);
 * a write that has them is answered 'version-changed' when another write
 * lands between its read and its own.
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

/** What a write requires besides its preconditions (see WriteConditions), and the merge patch it applies. */
export type WriteOptions = Pick<WriteConditions, 'owner' | 'unique' | 'patch'> & {
  preconditions?: Preconditions
  /**
   * The document written does not depend on the one it replaces (a PUT): without
   * preconditions there is then no version to keep, and the store writes
   * whatever is there by then, as the later of two writes.
   */
  replaces?: boolean
}

export interface WriteOutcome {
  doc: Doc
  etag: string
  created: boolean
}

/**
 * The data layer over a Store: reads, listings, writes that check the
 * caller's preconditions against what they read and then let the store
 * compare-and-set on it (docs/http-api.md, "Versions and conditional requests"), new
 * ids, and the changes for the event streams. It holds no lock: every
 * guarantee is the store's. Resources (generic, users, playlists) speak to
 * this, never to the store directly when they write.
 */
export class Documents {
  /** The store, its every ability filled in (lib/store/full-store.ts): reached through the methods here alone. */
  readonly #store: FullStore
  private readonly listeners = new Set<(change: Change) => void>()
  /** Whether the store reports its changes itself; if not, the changes made here are numbered and reported here. */
  readonly #storeFeeds: boolean
  #lastChangeId: number

  constructor(store: Store) {
    this.#store = new FullStore(store)
    this.#storeFeeds = this.#store.feedsChanges
    this.#lastChangeId = this.#storeFeeds ? 0 : Date.now() * 1000
    if (this.#storeFeeds) this.#store.subscribe((change) => this.#tell(change))
  }

  /** The data layer over `store`, once it knows the store's newest change id. */
  static async open(store: Store): Promise<Documents> {
    const documents = new Documents(store)
    const last = documents.#storeFeeds ? await documents.#store.lastChangeId() : undefined
    // A change reported meanwhile is newer.
    if (last !== undefined && last > documents.#lastChangeId) documents.#lastChangeId = last
    return documents
  }

  read(path: NodePath): Promise<StoredDoc | undefined> {
    return this.#store.read(path)
  }

  /** A node's document as compact JSON text, for an answer that sends it as it is. */
  readText(path: NodePath): Promise<StoredText | undefined> {
    return this.#store.readText(path)
  }

  /**
   * As `readText`, at once (not a promise) where the store can tell without
   * waiting (Store.readTextNow): a hot document's GET then waits for nothing.
   * May throw what `readText` would reject with.
   */
  readTextNow(path: NodePath): StoredText | undefined | Promise<StoredText | undefined> {
    return this.#store.readTextNow(path)
  }

  /** Names of a node's children (see Store.children), or undefined when the node does not exist. */
  children(path: NodePath): Promise<string[] | undefined> {
    return this.#store.children(path)
  }

  /** True when the node has a document or children. */
  exists(path: NodePath): Promise<boolean> {
    return this.#store.exists(path)
  }

  /**
   * The top-level resources: a db.json's in the file's order, as json-server
   * lists them (its banner, `GET /db`); the root's children elsewhere.
   */
  async resources(): Promise<string[]> {
    const { store } = this.#store
    return store.resources ? store.resources() : ((await this.#store.children([])) ?? [])
  }

  /**
   * A db.json's top-level names, the routes json-server 0.17 builds from its file (docs/json-server.md,
   * "The json-server mode"); undefined for any other store, where a write makes the names it needs.
   */
  async fileResources(): Promise<string[] | undefined> {
    const { store } = this.#store
    return store.resources ? store.resources() : undefined
  }

  /** The next integer id of `parent` as json-server gives it, held for this process until released (lib/data/ids.ts, holdIntegerId). */
  holdIntegerId(parent: NodePath, idField?: string): Promise<{ id: number; release(): void } | undefined> {
    return holdIntegerId(this.#store, parent, idField)
  }

  /** A staged view of the store for a batch (lib/store/staged.ts): its writes are held, `maxText` characters of documents at most, until `batch` applies them. */
  staged(maxText: number): StagedStore {
    return new StagedStore(this.#store.store, maxText)
  }

  /** The store folder, for the watch on its hand edits; undefined for any other store. */
  get storeFolder(): FileStore | undefined {
    return this.#store.store instanceof FileStore ? this.#store.store : undefined
  }

  /** The store applies a batch as one atomic step (Store.batch); without it a batch is refused, and dependents are removed one by one. */
  get appliesBatches(): boolean {
    return this.#store.appliesBatches
  }

  /** The store filters, sorts and pages listings itself (Store.query): a listing it leaves to the process is read from every document (lib/store/full-store.ts). */
  get listsItself(): boolean {
    return this.#store.listsItself
  }

  /** A listing query the store answers itself (Store.query); undefined leaves it to the process. */
  query(path: NodePath, plan: ListingPlan): Promise<ListingPage | undefined> {
    return this.#store.query(path, plan)
  }

  /** The children keep the order of the store's file (a db.json), not id order. */
  get fileOrder(): boolean {
    return this.#store.fileOrder
  }

  /** A person may change documents behind the store's back (a store folder): see documentVersions. */
  get handEdited(): boolean {
    return this.#store.handEdited
  }

  /** For each named child, a token that changes with its document (Store.documentVersions); all undefined on a store without hand edits. */
  documentVersions(path: NodePath, names: readonly string[]): (string | undefined)[] {
    return this.#store.documentVersions(path, names)
  }

  /** The changes the store still keeps after `id` (Store.changesAfter); undefined when it keeps none of them. */
  changesAfter(id: number, limit: number): Promise<StoreChange[] | undefined> {
    return this.#store.changesAfter(id, limit)
  }

  /** Releases what the store holds (for a store folder, its lock). */
  close(): Promise<void> {
    return this.#store.close()
  }

  /** The names of a node's children that hold a document, in the store's order; undefined when the node does not exist. */
  async documentNames(path: NodePath): Promise<string[] | undefined> {
    return (await this.#store.documentChildren(path, 0, undefined))?.names
  }

  /** How many of a node's children hold a document, without reading them where the store can tell. */
  async countDocuments(path: NodePath): Promise<number | undefined> {
    return (await this.#store.documentChildren(path, 0, 0))?.total
  }

  /** The documents of a node's children in ascending id order, or undefined when the node does not exist. */
  async list(path: NodePath): Promise<Doc[] | undefined> {
    return (await this.listing(path))?.docs
  }

  /** As `list`, with the children whose document file is broken, which are left out (see `ChildDocuments`). */
  async listing(path: NodePath): Promise<ChildDocuments | undefined> {
    const names = await this.documentNames(path)
    if (!names) return undefined
    const { found, skipped } = await this.#readAll(path, names, (child) => this.#store.read(child))
    return { docs: found.map((stored) => stored.doc), skipped }
  }

  /**
   * Documents [start, end) of a node's children in ascending id order, each
   * as compact JSON text (see `readText`), and how many children hold a
   * document, or undefined when the node does not exist. Only the window's
   * documents are read, however big the collection, on a store that names
   * the children holding a document without reading them. A page sent as it
   * is joins these, with no parse and no serialisation of its documents.
   */
  async windowText(path: NodePath, start: number, end: number | undefined): Promise<{ texts: string[]; skipped: StoreError[]; total: number } | undefined> {
    const children = await this.#store.documentChildren(path, start, end)
    if (!children) return undefined
    // A page read again and again: every document from memory at once.
    const fromMemory = await this.#store.textsFromMemory(path, children.names)
    if (fromMemory) return { texts: fromMemory, skipped: [], total: children.total }
    // The store's own readText, bound once (lib/store/full-store.ts): no frame of ours around each of the page's reads.
    const { found, skipped } = await this.#readAll(path, children.names, this.#store.readText)
    return { texts: found.map((stored) => stored.json), skipped, total: children.total }
  }

  /**
   * The documents of the named children of `path`, by name, and the errors of
   * those whose document is broken; a child without a document is in neither.
   */
  async readChildren(path: NodePath, names: readonly string[]): Promise<{ docs: Map<string, Doc>; skipped: StoreError[] }> {
    const { found, skipped } = await this.#readAll(path, names, async (child) => {
      const stored = await this.#store.read(child)
      return stored && { name: child[child.length - 1], doc: stored.doc }
    })
    return { docs: new Map(found.map(({ name, doc }) => [name, doc])), skipped }
  }

  /** Reads each child with `read`, leaving out (and naming) those whose document is broken. */
  async #readAll<T>(path: NodePath, names: readonly string[], read: (child: NodePath) => Promise<T | undefined>): Promise<{ found: T[]; skipped: StoreError[] }> {
    const found: T[] = []
    const skipped: StoreError[] = []
    const pace = pacer()
    // One broken file is that document's problem, not its collection's: it is left out and named.
    const readOne = (name: string) =>
      read([...path, name]).catch((error: unknown) => {
        if (!isStoreError(error, 'bad-document')) throw error
        return error
      })
    // Read in bounded batches: enough parallelism for the file system, no file-descriptor storm.
    // Reads from a cache parse their documents all in one turn of the event loop: a batch of them
    // that took longer than a slice makes the next one smaller, down to one document at a time.
    let size = FIRST_READ_BATCH
    for (let start = 0; start < names.length; ) {
      const chunk = names.slice(start, start + size)
      start += chunk.length
      let waitedOnIo = false
      const started = performance.now()
      const immediate = setImmediate(() => (waitedOnIo = true))
      const batch = await Promise.all(chunk.map(readOne))
      clearImmediate(immediate)
      for (const stored of batch) {
        if (isStoreError(stored)) skipped.push(stored)
        else if (stored !== undefined) found.push(stored)
      }
      const took = performance.now() - started
      // Reads that waited on the disk finish a few at a time (as many as it has threads), each parsed as it arrives.
      const least = waitedOnIo ? READS_AT_ONCE_ON_DISK : 1
      size = took < SLICE_MS ? Math.min(READ_BATCH, size * 2) : Math.max(least, Math.floor((size * SLICE_MS) / took))
      const turn = pace(HEAVY_STEP)
      if (turn) await turn
    }
    return { found, skipped }
  }

  /**
   * Read-modify-write of one node. `compute` gets the current document
   * (undefined when none) and returns the document to store; it may throw to
   * refuse, and must have no side effects. The preconditions run after it,
   * against the same version, and the store writes only while the node is
   * still at that version. When another write landed in between, a write
   * without preconditions starts again from the read; one with them is
   * refused ('version-changed'), as the version its client named is gone.
   */
  async write(path: NodePath, compute: (current: StoredDoc | undefined) => Doc | Promise<Doc>, options: WriteOptions = {}): Promise<WriteOutcome> {
    for (;;) {
      // A replacement with no preconditions uses nothing of the current document: it is not
      // read (the store's answer says whether the write created the node).
      const { current, broken } = options.replaces === true && !options.preconditions ? {} : await this.#readForWrite(path)
      // A broken document file is repaired by a write that needs no current document
      // (a PUT); one that does (a PATCH) hears what is wrong with the file.
      const doc = broken
        ? await (async () => compute(undefined))().catch(() => {
          throw broken
        })
        : await compute(current)
      // A broken file has no version to compare: the write replaces it as it is.
      const versionless = broken !== undefined || (options.replaces === true && !options.preconditions)
      const conditions: WriteConditions = { owner: options.owner, unique: options.unique, patch: options.patch, expect: versionless ? undefined : current?.etag ?? null }
      if (options.preconditions) await this.#checkPreconditions(options.preconditions, current, path, doc, conditions)
      try {
        const { created, etag } = await this.#store.write(path, doc, conditions)
        if (!this.#storeFeeds) this.#emit(changeOfWrite(path, doc, conditions))
        return { doc, etag, created: created && !broken }
      } catch (error) {
        if (isStoreError(error, 'version-changed') && !options.preconditions) continue
        throw error
      }
    }
  }

  /**
   * Preconditions count only for a request that would otherwise succeed (RFC
   * 9110 §13.2.1): a write whose owner is gone or whose unique value is taken
   * hears that, whatever its preconditions.
   */
  async #checkPreconditions(preconditions: Preconditions, current: StoredDoc | undefined, path: NodePath, doc: Doc, conditions: WriteConditions): Promise<void> {
    try {
      preconditions(current)
    } catch (failed) {
      throw (await ownerOrUniqueRefusal(this.#store, path, doc, conditions)) ?? failed
    }
  }

  /** The current document for a write; a broken document file is reported, not thrown. */
  async #readForWrite(path: NodePath): Promise<{ current?: StoredDoc; broken?: StoreError }> {
    try {
      return { current: await this.#store.read(path) }
    } catch (error) {
      if (isStoreError(error, 'bad-document')) return { broken: error }
      throw error
    }
  }

  /**
   * Creates a child of `parent` with a new id. `makeDoc` builds the document
   * for an id; the store keeps `owner` and `unique` as it writes. `idForm` 'json-server 1':
   * an id of 1.0's form, random where the store lists in its file's order, else in creation order.
   */
  async create(parent: NodePath, makeDoc: (id: string) => Doc, conditions: Pick<WriteConditions, 'owner' | 'unique'> = {}, idForm?: 'json-server 1'): Promise<WriteOutcome & { id: string }> {
    const makeId = idForm === undefined ? newId : this.#store.fileOrder ? randomShortId : newShortId
    const { id, path, doc, etag } = await createWithNewId(this.#store, parent, makeDoc, conditions, makeId)
    if (!this.#storeFeeds) this.#emit({ type: 'put', path, data: doc })
    return { id, doc, etag, created: true }
  }

  /**
   * Removes a node and its subtree. With preconditions, they are checked
   * against what is read, and the store removes only while the node is still
   * at that version. Throws NothingStored when there is nothing there.
   */
  async remove(path: NodePath, preconditions?: Preconditions): Promise<{ doc?: Doc }> {
    let expect: string | null | undefined
    if (preconditions) {
      const current = await this.#store.read(path)
      // Nothing to delete is that answer whatever the preconditions say (RFC 9110 §13.2.1).
      if (!current && !(await this.#store.exists(path))) throw new NothingStored(path)
      preconditions(current)
      expect = current?.etag ?? null
    }
    const { existed, doc } = await this.#store.remove(path, expect === undefined ? undefined : { expect })
    if (!existed) throw new NothingStored(path)
    if (!this.#storeFeeds) this.#emit({ type: 'delete', path, data: doc ?? null })
    return { doc }
  }

  /**
   * Applies a batch's ops in one atomic step (Store.batch; docs/http-api.md,
   * "Batches"), and, for a store without a feed of its own, reports `changes`
   * (what the ops make, as lib/store/staged.ts worked them out) once all of them are stored.
   * `staged`: the staged view that made the ops, which the store confirms rather than checking each op again.
   */
  async batch(ops: readonly BatchOp[], changes: readonly Omit<Change, 'id'>[], staged?: StagedBatch): Promise<void> {
    if (ops.length === 0) return
    await this.#store.batch(ops, staged)
    if (!this.#storeFeeds) for (const change of changes) this.#emit(change)
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

  /** Numbers and reports a change made here, for a store without a change feed of its own. */
  #emit(change: Omit<Change, 'id'>): void {
    this.#tell({ id: this.#lastChangeId + 1, ...change })
  }

  #tell(change: Change): void {
    this.#lastChangeId = change.id
    for (const listener of this.listeners) listener(change)
  }
}
