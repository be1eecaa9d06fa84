import type { BatchOp, ListingPage, ListingPlan, NodePath, StagedBatch, Store, StoreChange, StoredText } from './store.ts'
import { isStoreError } from './errors.ts'

/**
 * A Store with every optional ability of the interface (lib/store/store.ts)
 * filled in, once, when the data layer (lib/data/documents.ts) or a batch's
 * staged view (lib/store/staged.ts) takes it: a fallback built from the
 * required methods where there is one, else an answer that says "not here" in
 * the interface's own terms, so that no caller asks what a store can do.
 * Where an ability decides an algorithm, not just an answer, it is one named
 * property (`appliesBatches`, `listsItself`, `feedsChanges`, `handEdited`,
 * `fileOrder`), read in the one place that chooses.
 *
 * The store's own methods are bound here once: a GET of a hot document goes
 * from Documents.readTextNow to the store's readTextNow with no await and no
 * allocation added (docs/speed.md).
 */
export class FullStore implements Store {
  /** The store as it was opened. */
  readonly store: Store
  readonly read: Store['read']
  readonly children: Store['children']
  readonly exists: Store['exists']
  readonly write: Store['write']
  readonly create: Store['create']
  readonly remove: Store['remove']
  readonly close: Store['close']
  /** The document as compact JSON text; without the store's own, `read` and `JSON.stringify`. */
  readonly readText: (path: NodePath) => Promise<StoredText | undefined>
  /** As readText, at once where the store can tell without waiting; else readText's promise. */
  readonly readTextNow: (path: NodePath) => StoredText | undefined | Promise<StoredText | undefined>
  /** The named children's compact texts when the store has them all in memory (Store.textsFromMemory); without the store's own, never. */
  readonly textsFromMemory: (path: NodePath, names: readonly string[]) => Promise<string[] | undefined> | undefined
  /** The children holding a document, by position; without the store's own, `children` with each child read once to tell. */
  readonly documentChildren: (path: NodePath, start: number, end: number | undefined) => Promise<{ names: string[]; total: number } | undefined>
  /** Version tokens of the named children (see Store.documentVersions); without the store's own, none: its feed reports every change. */
  readonly documentVersions: (path: NodePath, names: readonly string[]) => (string | undefined)[]
  /** Applies ops as one step; a store without `batch` refuses (see `appliesBatches`). */
  readonly batch: (ops: readonly BatchOp[], staged?: StagedBatch) => Promise<void>
  /** The store's own change feed; a store without one reports nothing here, and Documents reports the changes made through it. */
  readonly subscribe: (listener: (change: StoreChange) => void) => () => void
  /** The newest change id the store reports; 0 for a store with no feed. */
  readonly lastChangeId: () => Promise<number>
  /** The changes kept after `id`; undefined (none kept) for a store that keeps none. */
  readonly changesAfter: (id: number, limit: number) => Promise<StoreChange[] | undefined>
  /** A listing query answered by the store; undefined, leaving it to the process, for a store that runs none. */
  readonly query: (path: NodePath, plan: ListingPlan) => Promise<ListingPage | undefined>
  /** The children keep the order of the store's file (a db.json), not id order. */
  readonly fileOrder: boolean
  /** The store applies a batch of writes as one atomic step (Store.batch); without it a batch is refused and a removal's dependents go one by one. */
  readonly appliesBatches: boolean
  /**
   * The store filters, sorts and pages listings itself (Store.query, as on
   * PostgreSQL): it is shared by processes, so a listing it leaves to the
   * process is read from every document rather than from a listing index.
   */
  readonly listsItself: boolean
  /** The store reports every change, whoever made it (Store.subscribe); else Documents numbers and reports those made through it. */
  readonly feedsChanges: boolean
  /** A person may change the store's documents behind its back (a store folder): a listing index looks again at versions (Store.documentVersions). */
  readonly handEdited: boolean

  constructor(store: Store) {
    this.store = store
    this.read = store.read.bind(store)
    this.children = store.children.bind(store)
    this.exists = store.exists.bind(store)
    this.write = store.write.bind(store)
    this.create = store.create.bind(store)
    this.remove = store.remove.bind(store)
    this.close = store.close.bind(store)
    this.readText = store.readText
      ? store.readText.bind(store)
      : (path) => store.read(path).then((stored) => stored && { json: JSON.stringify(stored.doc), etag: stored.etag })
    this.readTextNow = store.readTextNow ? store.readTextNow.bind(store) : this.readText
    this.textsFromMemory = store.textsFromMemory ? store.textsFromMemory.bind(store) : () => undefined
    this.documentChildren = store.documentChildren ? store.documentChildren.bind(store) : (path, start, end) => documentChildrenOf(store, path, start, end)
    this.documentVersions = store.documentVersions ? store.documentVersions.bind(store) : (_path, names) => names.map(() => undefined)
    this.batch = store.batch
      ? store.batch.bind(store)
      : () => Promise.reject(new Error('This store cannot apply a batch as one step: its Store has no batch method.'))
    this.subscribe = store.subscribe ? store.subscribe.bind(store) : () => () => {}
    this.lastChangeId = store.lastChangeId ? store.lastChangeId.bind(store) : () => Promise.resolve(0)
    this.changesAfter = store.changesAfter ? store.changesAfter.bind(store) : () => Promise.resolve(undefined)
    this.query = store.query ? store.query.bind(store) : () => Promise.resolve(undefined)
    this.fileOrder = store.fileOrder === true
    this.appliesBatches = store.batch !== undefined
    this.listsItself = store.query !== undefined
    this.feedsChanges = store.subscribe !== undefined
    this.handEdited = store.documentVersions !== undefined
  }
}

/**
 * documentChildren from `children`: each child is read to tell whether it
 * holds a document (a broken one counts, as it does for `exists`), so a store
 * without its own pays one read a child.
 */
async function documentChildrenOf(store: Store, path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined> {
  const children = await store.children(path)
  if (!children) return undefined
  const names: string[] = []
  // A bounded number at once, as Documents reads a listing: no file-descriptor storm.
  for (let at = 0; at < children.length; at += 64) {
    const chunk = children.slice(at, at + 64)
    const holding = await Promise.all(chunk.map((name) => store.read([...path, name]).then(
      (stored) => stored !== undefined,
      (error: unknown) => {
        if (isStoreError(error, 'bad-document')) return true
        throw error
      },
    )))
    chunk.forEach((name, index) => holding[index] && names.push(name))
  }
  return { names: names.slice(start, end), total: names.length }
}
