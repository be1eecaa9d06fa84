import { randomBytes } from 'node:crypto'
import { realpathSync, statSync, type Stats } from 'node:fs'
import { access, readdir, realpath, unlink } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import { FLUSHING_CALLS, fsyncDirectory, placeFile, POOL_CALLS, THREAD_CALLS, timedCalls } from '../fs/atomic.ts'
import { OPEN_PLACES } from '../fs/open-place.ts'
import { answerOf, DocumentCache, defaultCacheLimits, type CacheEntry, type CacheLimits } from './document-cache.ts'
import { versionOf } from '../fs/file-version.ts'
import { DirectoryFlusher } from '../fs/flush.ts'
import { ChildIndexes, type ChildChange } from './child-index.ts'
import { encodeSegment } from './encode.ts'
import { checkWay, ELSEWHERE, isRegularFile, ownFolderStats, isThere, readDocumentFile, readDocumentFileSync, statDocument, versionTokens } from './document-file.ts'
import { CallBudget, SLOW_CALLS, type SlowCalls } from './call-budget.ts'
import { StoreError } from '../errors.ts'
import { isMissing, storeTrouble, toStoreError } from '../fs/fs-errors.ts'
import { openStoreFolder } from './folder.ts'
import { releaseLock, type StoreLock } from '../fs/folder-lock.ts'
import { childSegment, DOC_FILE, hasChildNode, linkedNodes } from './names.ts'
import { removeIfEmpty } from './prune.ts'
import { inspectRemoved, removeSubtree } from './remove.ts'
import { etagOf, parseStoredDoc, serializeDoc } from '../serialize.ts'
import type { BatchOp, Doc, NodePath, StagedBatch, Store, StoreChange, StoredDoc, StoredText, WriteConditions, WriteResult } from '../store.ts'
import { checkConditions, checkVersion, writeClaims } from '../conditions.ts'
import { ChangeFeed, changeOfWrite } from '../feed.ts'
import { NodeLocks } from '../node-locks.ts'
import { sweepStore } from './sweep.ts'
import { WatchedHits } from './watched-hits.ts'
import { writeTempBeside, type TempFiles } from './temp-file.ts'
import { dropJournal, leftJournals, writeJournal } from './journal.ts'
import { ApplyingBatches } from './applying-batches.ts'
import { batchClaims, batchPlan } from '../staged.ts'

export interface FileStoreOptions {
  /** Flush every write (file and directories) to disk before acknowledging it, so it survives power loss. */
  sync?: boolean
  /** Bounds of the cache of parsed documents (default 10 000 documents, 16 MiB of files). */
  cache?: CacheLimits
  /** When a cache miss's read and a write's calls leave the calling thread for the pool (call-budget.ts; default SLOW_CALLS). */
  slowCalls?: SlowCalls
  /** Most folders watched so that a hot document's GET needs no stat (default 1000, watched-hits.ts); 0: every GET stats its file. */
  watches?: number
}

/**
 * The store as a folder tree a person can read: the node `/user/abc` is the
 * directory `user/abc/` (names made by encodeSegment) and its document is
 * `user/abc/@.json`. Names starting with `@` are the store's own files.
 */
export class FileStore implements Store {
  readonly dir: string
  /** Settles when the cleanup after a crashed run is done (at once when the last run ended well). */
  readonly recovery: Promise<void>
  readonly #sync: boolean
  /** `dir` ending in a separator. */
  readonly #base: string
  readonly #runId: string
  readonly #lock: StoreLock
  readonly #cache: DocumentCache
  readonly #hits: WatchedHits
  /** What a write's temporary files need (temp-file.ts). */
  readonly #temps: TempFiles
  readonly #flusher = new DirectoryFlusher()
  readonly #indexes = new ChildIndexes()
  readonly #locks = new NodeLocks()
  readonly #feed = new ChangeFeed()
  #tempCount = 0
  /** The batches whose files are being placed (a read of a node one changes waits for it), or could not all be placed (refused until they are). */
  readonly #applying = new ApplyingBatches({ locks: this.#locks, place: (ops, journal) => this.#placeBatch(ops, journal), emit: (change) => this.#feed.emit(change) })
  /** The store folder's inode when opened: a folder put in its place later is not this store. */
  readonly #rootIno: number
  /** `dir` with every link resolved, ending in a separator; made at the first cache miss or write. */
  #realBase: string | undefined
  /** When cache misses and writes go through the thread pool; a write's calls on the calling thread are each timed for it. */
  readonly #budget: CallBudget
  readonly #threadCalls = timedCalls(THREAD_CALLS, (ms) => this.#budget.took(ms))
  /** With `--sync`: the temporary file's calls on the calling thread, timed likewise, the rest through the pool. */
  readonly #flushingCalls = timedCalls(FLUSHING_CALLS, (ms) => this.#budget.took(ms))
  /** When each fault of the whole store was last written to the log. */
  readonly #reported = new Map<string, number>()
  #closed: Promise<void> | undefined

  /** Opens (creating if needed) a store folder and takes its lock; throws ESTORELOCKED when another restdir holds it, ESTOREFOLDER when the folder cannot be used. */
  static async open(dir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const root = resolve(dir)
    const runId = randomBytes(4).toString('hex')
    const lock = await openStoreFolder(root, runId)
    const store = new FileStore(root, options.sync ?? false, runId, lock, new DocumentCache(options.cache ?? defaultCacheLimits), options.slowCalls ?? SLOW_CALLS, options.watches)
    try {
      await store.#finishBatches()
    } catch (error) {
      await store.close().catch(() => {})
      throw error
    }
    return store
  }

  /** Applies again the batches a run that died was placing (see journal.ts), before the store serves. */
  async #finishBatches(): Promise<void> {
    for (const { path, ops } of await leftJournals(this.dir)) {
      if (ops) await this.#apply(ops)
      await dropJournal(this.dir, path, true)
    }
  }

  private constructor(root: string, sync: boolean, runId: string, lock: StoreLock, cache: DocumentCache, slowCalls: SlowCalls, watches?: number) {
    this.dir = root
    this.#base = root.endsWith(sep) ? root : root + sep
    this.#sync = sync
    this.#runId = runId
    this.#lock = lock
    this.#cache = cache
    this.#budget = new CallBudget(slowCalls)
    this.#rootIno = statSync(root).ino
    this.#hits = new WatchedHits(root, cache, watches)
    this.#temps = {
      hits: this.#hits,
      sync,
      tempName: () => this.#tempName(),
      placeOf: (inStore) => (OPEN_PLACES ? this.#realPathOf(inStore) : undefined),
    }
    // Not awaited: the server may serve while it runs (it spares this run's files).
    this.recovery = lock.takenOver ? sweepStore(root, runId, this.#temps).catch(() => {}) : Promise.resolve()
  }

  /** The file is the truth, also right after a person edited it: every read looks at it or has heard of its changes (watched-hits.ts). */
  async read(path: NodePath): Promise<StoredDoc | undefined> {
    const settling = this.#applying.settled(path)
    if (settling) await settling
    const found = await this.#load(path)
    if (found === undefined || 'doc' in found) return found
    return { doc: JSON.parse(found.text) as Doc, etag: found.etag }
  }

  /** The ETag of the node's document as on disk now (the same stat as a read), without parsing it: what a version check needs. */
  async etagOf(path: NodePath): Promise<string | undefined> {
    const settling = this.#applying.settled(path)
    if (settling) await settling
    return (await this.#load(path))?.etag
  }

  /** As readTextNow, once no batch is being placed at the node: a page of a listing read again and again is answered from memory too. */
  async readText(path: NodePath): Promise<StoredText | undefined> {
    const settling = this.#applying.settled(path)
    if (settling) await settling
    return this.readTextNow(path)
  }

  /** A hit, or no document file, told at once after the same stat as every read; a miss, or a node a batch is being placed at, waits as readText does. */
  readTextNow(path: NodePath): StoredText | undefined | Promise<StoredText | undefined> {
    if (this.#applying.settled(path)) return this.readText(path)
    const directory = this.#directoryOf(path)
    // A trusted hit, or a watched folder found to hold no document (a collection's), needs no stat: answered in the check phase (watched-hits.ts).
    if (this.#hits.trusted(directory)) return this.#hits.afterEvents(directory, (entry) => (entry && !this.#applying.settled(path) ? answerOf(entry) : this.readTextNow(path)))
    if (this.#hits.trustedMissing(directory)) return this.#hits.missingAfterEvents(directory, (missing) => (missing && !this.#applying.settled(path) ? undefined : this.readTextNow(path)))
    const found = this.#lookUp(path, directory)
    if (found === undefined) return undefined
    if ('file' in found) return this.#readMissed(path, found, true).then((read) => read && { json: read.json!, etag: read.etag })
    this.#hits.checked(directory, found, () => this.#directoriesTo(path))
    return answerOf(found)
  }

  /** Store.textsFromMemory: a whole page waits once, for the check phase, when every document is a trusted hit (watched-hits.ts) and no batch is under way. */
  textsFromMemory(path: NodePath, names: readonly string[]): Promise<string[] | undefined> | undefined {
    if (!this.#applying.idle) return undefined
    const prefix = this.#childPrefix(path)
    return this.#hits.allAfterEvents(names, (name) => prefix + encodeSegment(name), (entries) => (entries && this.#applying.idle ? entries.map((entry) => answerOf(entry).json) : undefined))
  }

  /**
   * The cache entry of the version on disk, else the document read from its
   * file (and cached); undefined when there is none.
   *
   * A miss reads the file the safe way (#readFile): no link followed, no
   * FIFO or device opened. A hit needs no such check: its entry was made
   * from a file read that way (or written by the store), and is only answered
   * while a stat of the path sees that very inode, size and mtime. A link
   * swapped in since, for the file or a folder on its way, leads the stat to
   * another inode: a miss, and the safe read refuses it. A FIFO or a
   * directory put in its place is another inode too.
   */
  async #load(path: NodePath): Promise<CacheEntry | MissedRead | undefined> {
    const found = this.#lookUp(path)
    return found !== undefined && 'file' in found ? this.#readMissed(path, found) : found
  }

  /** The stat a read starts with: the cache entry of the version on disk, undefined when there is no document file, else where to read it. A
   * file the cache does not hold is read at once on the calling thread, whose open tells if it is there (#readFile), unless it was missing
   * lately (DocumentCache.statFirst); a path of 1024 characters or more (up to 3 bytes each) takes the stat, whose error tells one too long. */
  #lookUp(path: NodePath, directory = this.#directoryOf(path)): CacheEntry | MissedFile | undefined {
    const file = this.#below(directory, DOC_FILE)
    if (!this.#budget.pooled && file.length < 1024 && !this.#cache.statFirst(file)) return { directory, file }
    const stats = statDocument(file, path)
    if (stats === undefined) {
      this.#cache.delete(file)
      this.#checkStoreFolder(path)
      this.#hits.missing(directory)
      return undefined
    }
    return this.#cache.entry(file, versionOf(stats)) ?? { directory, file }
  }

  /** A document file the cache did not hold, read, parsed and cached (see #load); `compact`: as the compact text an answer sends, made once. */
  async #readMissed(path: NodePath, { directory, file }: MissedFile, compact = false): Promise<MissedRead | undefined> {
    const read = await this.#readFile(path, directory, file)
    if (read === undefined) {
      this.#cache.missing(file)
      return this.#checkStoreFolder(path)
    }
    const { bytes, stats: readStats } = read
    const text = bytes.toString('utf8')
    let doc: Doc
    try {
      doc = parseStoredDoc(text, path)
    } catch (error) {
      // Whatever the parser refuses is this one file's fault, never the server's.
      throw error instanceof StoreError ? error : new StoreError('bad-document', path, 'holds JSON the store cannot keep exactly')
    }
    const json = compact ? JSON.stringify(doc) : undefined
    const stored: MissedRead = json === undefined ? { doc, etag: etagOf(bytes) } : { doc, etag: etagOf(bytes), json }
    // The stats are the descriptor's the bytes came through: a file that changed size meanwhile was being rewritten: serve it, keep
    // nothing; nor is a file a full cache has not seen read before (DocumentCache.admits). Kept as text that is known to parse, so
    // each hit parses its own copy; a byte-order mark a Windows editor left goes.
    if (bytes.length === readStats.size && this.#cache.admits(file, readStats.size)) this.#cache.set(file, json ?? text.replace(/^\uFEFF/, ''), stored.etag, versionOf(readStats), json !== undefined)
    return stored
  }

  /**
   * Reads a node's document file only when it is a regular file inside the store: opened without
   * following a link, and no folder on the way from the store folder a link or a file. Where the
   * kernel names an open file's place (OPEN_PLACES), the open must have landed at the file's own,
   * which no link swapped in on the way passes, even during the open (checkWay then names what is
   * wrong); elsewhere, checkWay first, or a realpath(3) after it in the pool (call-budget.ts: when).
   */
  async #readFile(path: NodePath, directory: string, file: string) {
    let read
    try {
      const place = OPEN_PLACES && path.length > 0 ? this.#realPathOf(file) : undefined
      if (!this.#budget.pooled) {
        const started = performance.now()
        if (place === undefined && path.length > 0 && checkWay(path, this.#directoriesTo(path)) <= path.length) return undefined
        read = readDocumentFileSync(file, place)
        this.#budget.took(performance.now() - started)
      } else {
        read = await readDocumentFile(file, place)
        if (place === undefined && read !== undefined && path.length > 0 && (await realpath(directory)) !== this.#realPathOf(directory)) read = ELSEWHERE
      }
      if (place !== undefined && (read === ELSEWHERE || typeof read === 'string') && checkWay(path, this.#directoriesTo(path)) <= path.length) return undefined
      if (read === ELSEWHERE) throw new StoreError('blocked-path', path, 'or one above it is a link, which the store does not follow')
    } catch (error) {
      // A link or a file on the way to no document at all is no document, as a stat through it tells (#lookUp).
      if (isMissing(error) || (error instanceof StoreError && error.kind === 'blocked-path' && statDocument(file, path) === undefined)) return undefined
      throw this.#report(toStoreError(error, path))
    }
    if (typeof read === 'string') throw new StoreError('bad-document', path, read)
    return read
  }

  /** Where a path in the store folder is once every link above the store folder is resolved. */
  #realPathOf(inStore: string): string {
    this.#realBase ??= realpathSync(this.dir) + sep
    return this.#realBase + inStore.slice(this.#base.length)
  }

  /**
   * A store folder deleted, moved away or replaced under a running server is
   * a 'store-gone' error, never an empty store: the folder is checked to be
   * the very one opened (same inode) whenever a path in it is missing.
   */
  #checkStoreFolder(path: NodePath): undefined {
    let stats: Stats | undefined
    try {
      stats = statSync(this.dir, { throwIfNoEntry: false })
    } catch {
      stats = undefined
    }
    if (stats !== undefined && stats.isDirectory() && stats.ino === this.#rootIno) return undefined
    throw this.#report(new StoreError('store-gone', path))
  }

  /**
   * Says in the server log that the store as a whole is in trouble (gone,
   * read-only, full, out of descriptors), at most once a minute per kind:
   * the answers tell each client, the log tells whoever runs the server.
   */
  #report(error: unknown): unknown {
    if (!(error instanceof StoreError) || !(error.kind in storeTrouble)) return error
    const now = Date.now()
    if (now - (this.#reported.get(error.kind) ?? -Infinity) < 60_000) return error
    this.#reported.set(error.kind, now)
    console.error(`restdir: ${storeTrouble[error.kind]} (store folder ${this.dir}).`)
    return error
  }

  /** From the folder's index of children: while nothing changed, the lstat that checks the way to the folder is all it costs (see child-index.ts). */
  async children(path: NodePath): Promise<string[] | undefined> {
    const settling = this.#applying.settled(path)
    if (settling) await settling
    const list = await this.#childList(path)
    // slice, not spread: for 100 000 names it is a copy of memory, many times faster.
    return list?.names.slice()
  }

  async documentChildren(path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined> {
    const settling = this.#applying.settled(path)
    if (settling) await settling
    const list = await this.#childList(path)
    if (!list) return undefined
    const { names, withoutDocument } = list
    // Only the window is copied: a copy of 100 000 names per page would cost more than the page.
    if (withoutDocument.size === 0) return { names: names.slice(start, end), total: names.length }
    const holding = names.filter((name) => !withoutDocument.has(name))
    return { names: holding.slice(start, end), total: holding.length }
  }

  /** The node's child list, or undefined when the node does not exist (no document, no children). */
  async #childList(path: NodePath) {
    // The way checked down to the node's folder, whose lstat the index takes as the folder's version: no second look at it.
    const known = path.length > 0 ? ownFolderStats(path, this.#directoriesTo(path)) : undefined
    try {
      const list = await this.#indexes.list(this.#directoryOf(path), known)
      if (!list || (list.names.length === 0 && !list.hasDocument)) {
        this.#checkStoreFolder(path)
        return undefined
      }
      return list
    } catch (error) {
      throw this.#report(toStoreError(error, path))
    }
  }

  /** One stat of each named child's document file (versionTokens): what a listing index compares to see hand edits. */
  documentVersions(path: NodePath, names: readonly string[]): (string | undefined)[] {
    const prefix = this.#childPrefix(path)
    return versionTokens(names.map((name) => prefix + encodeSegment(name) + sep + DOC_FILE))
  }

  /** Links in the folder where a node's folder would be: no listing shows them, so a copy of the store names them (docs/postgres.md, "Moving a store"). */
  linkedNodes(): Promise<NodePath[]> {
    return linkedNodes(this.dir)
  }

  async exists(path: NodePath): Promise<boolean> {
    const settling = this.#applying.settled(path)
    if (settling) await settling
    const directory = this.#directoryOf(path)
    try {
      await access(join(directory, DOC_FILE))
      return true
    } catch (error) {
      if (!isMissing(error)) throw toStoreError(error, path)
    }
    // No document: the node exists while it has a child.
    let found: boolean
    try {
      found = await hasChildNode(directory)
    } catch (error) {
      if (!isMissing(error)) throw toStoreError(error, path)
      found = false
    }
    if (!found) this.#checkStoreFolder(path)
    return found
  }

  /**
   * The guarantees of the Store interface hold within this process (docs/http-api.md,
   * "Versions and conditional requests"): the folder's lock keeps any other
   * restdir out, and here each write holds its node (and its owner, its
   * unique field's collection) while it checks its conditions and lands.
   */
  write(path: NodePath, doc: Doc, conditions?: WriteConditions): Promise<WriteResult> {
    return this.#locks.run(writeClaims(path, conditions), async () => {
      this.#applying.refuseUnfinished(path)
      await checkConditions(this, path, doc, conditions)
      const result = (await this.#place(path, doc, 'replace')) as WriteResult
      this.#feed.emit(changeOfWrite(path, doc, conditions))
      return result
    })
  }

  create(path: NodePath, doc: Doc, conditions?: Omit<WriteConditions, 'expect' | 'patch'>): Promise<WriteResult | undefined> {
    return this.#locks.run(writeClaims(path, conditions), async () => {
      this.#applying.refuseUnfinished(path)
      // The conditions are checked only for a write that can happen; the rename then decides, exactly.
      if ((conditions?.owner || conditions?.unique) && (await this.read(path).catch(() => undefined))) return undefined
      await checkConditions(this, path, doc, conditions)
      const result = await this.#place(path, doc, 'create')
      if (result) this.#feed.emit(changeOfWrite(path, doc, undefined))
      return result
    })
  }

  /** Holds the subtree alone while it goes: writes to other nodes go on. */
  remove(path: NodePath, conditions: { expect?: string | null } = {}): Promise<{ existed: boolean; doc?: Doc }> {
    return this.#locks.run([{ kind: 'remove', path }], async () => {
      this.#applying.refuseUnfinished(path)
      if (conditions.expect !== undefined) await checkVersion(this, path, conditions.expect)
      const removed = path.length === 0 ? await this.#removeRoot() : await this.#removeNode(path)
      if (removed.existed) this.#feed.emit({ type: 'delete', path, data: removed.doc ?? null })
      return removed
    })
  }

  /**
   * Holds every node the batch claims and checks all its ops (or that what
   * the staged view read is still so: batchPlan); then the
   * journal of the batch goes to disk first (journal.ts), its files are
   * placed, and the journal is deleted. A crash in between is finished at the
   * next start, a disk fault by retries (applying-batches.ts); the changes are reported once every file is in place.
   */
  batch(ops: readonly BatchOp[], staged?: StagedBatch): Promise<void> {
    return this.#locks.run(batchClaims(ops), async () => {
      for (const op of ops) this.#applying.refuseUnfinished(op.path)
      const plan = await batchPlan(this, ops, staged)
      if (plan.ops.length === 0) return
      const count = ++this.#tempCount
      const journal = await writeJournal(this.dir, `${this.#runId}-${count}`, join(this.dir, this.#tempName()), plan.ops).catch((error: unknown) => Promise.reject(this.#report(toStoreError(error, plan.ops[0].path))))
      await this.#applying.run({ ops: plan.ops, journal, changes: plan.changes })
    })
  }

  /** Places a journaled batch's files, then deletes its journal. */
  async #placeBatch(ops: readonly BatchOp[], journal: string): Promise<void> {
    await this.#apply(ops)
    await dropJournal(this.dir, journal, this.#sync).catch((error: unknown) => Promise.reject(this.#report(toStoreError(error, ops[0].path))))
  }

  /** Places a batch's ops in order, as writes and removals do. */
  async #apply(ops: readonly BatchOp[]): Promise<void> {
    for (const op of ops) {
      if (op.kind === 'write') await this.#place(op.path, op.doc, 'replace')
      else if (op.path.length === 0) await this.#removeRoot()
      else await this.#removeNode(op.path)
    }
  }

  subscribe(listener: (change: StoreChange) => void): () => void {
    return this.#feed.subscribe(listener)
  }
  /** A person's edit of a node's document file (lib/data/hand-edits.ts): `told`, run once a change of the server's under way there has told its own, says the change, if any. */
  reportHandEdit(path: NodePath, told: () => Promise<Omit<StoreChange, 'id'> | undefined>): Promise<void> { return this.#locks.run([{ kind: 'remove', path }], async () => { const change = await told(); if (change) this.#feed.emit(change) }) }

  async lastChangeId(): Promise<number> {
    return this.#feed.last
  }

  async #removeNode(path: NodePath): Promise<{ existed: boolean; doc?: Doc }> {
    this.#cache.deleteInside(this.#directoryOf(path), sep)
    const directories = this.#directoriesTo(path)
    // A link above the node would move what it points to into the store's trash, and delete it.
    // The node's own folder may be a link: the rename then moves (and removes) the link alone.
    checkWay(path, directories, false)
    const removal = () =>
      removeSubtree({
        root: this.dir,
        directory: directories[path.length],
        trash: join(this.dir, `@trash-${this.#runId}-${++this.#tempCount}`),
        path,
        sync: this.#sync,
        temps: this.#temps,
      })
    // The node goes, and so may ancestors left empty: whichever folder is gone left its parent's children.
    const gone = (): ChildChange[] =>
      path.flatMap((name, depth) => (isThere(directories[depth + 1]) ? [] : [{ directory: directories[depth], name, kind: 'removed' as const }]))
    const removed = await this.#indexes.change(directories.slice(0, -1), removal, gone).catch((error: unknown) => {
      throw this.#report(error)
    })
    if (!removed.existed) this.#checkStoreFolder(path)
    return removed
  }

  /** Stops retrying unfinished batches (the next start completes them), waits for the crash cleanup, if any, then releases the lock. Safe to call twice. */
  close(): Promise<void> {
    this.#hits.close()
    this.#closed ??= this.#applying.stop().then(() => this.recovery).then(() => releaseLock(this.#lock))
    return this.#closed
  }

  #place(path: NodePath, doc: Doc, mode: 'create' | 'replace'): Promise<WriteResult | undefined> {
    return this.#placeInIndex(path, this.#directoriesTo(path), doc, mode)
  }

  #placeInIndex(path: NodePath, directories: string[], doc: Doc, mode: 'create' | 'replace'): Promise<WriteResult | undefined> {
    // Each folder on the way now has the next as a child; the node's holds its document.
    const made: ChildChange[] = path.map((name, depth) => ({
      directory: directories[depth],
      name,
      kind: depth === path.length - 1 ? 'document' : 'node',
    }))
    return this.#indexes.change(directories, () => this.#placeFile(path, directories, doc, mode), () => made)
  }

  async #placeFile(path: NodePath, directories: string[], doc: Doc, mode: 'create' | 'replace'): Promise<WriteResult | undefined> {
    const text = serializeDoc(doc)
    const file = this.#below(directories[path.length], DOC_FILE)
    // A regular file in the document's place (one synchronous lstat): the node's directory exists and a rename tells the outcome, without a link that fails first.
    const exists = mode === 'replace' && isRegularFile(file)
    // Only a document someone has read is kept after its write: a new one takes no room from those read.
    const keep = this.#cache.has(file)
    this.#cache.delete(file)
    // The folders this write makes: a write that fails takes them away again, so a full
    // disk never leaves an empty folder that would list as a node.
    const made: string[] = []
    // On the calling thread, cheaper than the pool's hand-offs for a file written to memory; through the pool after
    // calls that waited (call-budget.ts), and with --sync but for the temporary file's own calls (flushes wait on
    // the disk, and hold what they write out). A rename that replaces a file goes through the pool whatever the rest
    // does: ext4 writes the new file out then, and the event loop would sit through it (docs/speed.md); the
    // temporary file before it is new, and only fills the page cache.
    const calls = this.#budget.pooled ? POOL_CALLS : this.#sync ? this.#flushingCalls : this.#threadCalls
    try {
      const { tempPath, stats } = await writeTempBeside(this.#temps, { path, directories, text, made, mode, calls, keep })
      const madeDirectory = made[made.length - 1] === directories[path.length]
      const outcome = await placeFile(tempPath, file, madeDirectory ? 'into-new-folder' : exists ? 'overwrite' : mode, exists ? POOL_CALLS : calls)
      if (outcome === 'exists') return undefined
      // Every directory down to the node may hold a new entry, made by this write
      // or by a concurrent one that has not flushed it yet; the write needs them all.
      // Concurrent writes share the flushes of the directories they have in common.
      if (this.#sync) await Promise.all(directories.map((directory) => this.#flusher.flush(directory)))
      const etag = etagOf(text)
      // The renamed temp file keeps its inode, size and mtime: the next read finds this version.
      if (keep && stats) this.#cache.set(file, text, etag, versionOf(stats))
      return { created: outcome === 'created', etag }
    } catch (error) {
      for (const directory of made.reverse()) await removeIfEmpty(directory, this.#temps).catch(() => false)
      if (isMissing(error)) this.#checkStoreFolder(path)
      throw this.#report(toStoreError(error, path))
    }
  }

  /** The root cannot be renamed away (it holds the lock), so its children go one by one. */
  async #removeRoot(): Promise<{ existed: boolean; doc?: Doc }> {
    const removed = await inspectRemoved(this.dir, [])
    const entries = await readdir(this.dir, { withFileTypes: true })
    for (const entry of entries) {
      const segment = await childSegment(this.dir, entry)
      if (segment !== undefined) await this.#removeNode([segment])
    }
    await unlink(join(this.dir, DOC_FILE)).catch((error) => (isMissing(error) ? undefined : Promise.reject(error)))
    if (this.#sync) await fsyncDirectory(this.dir)
    return removed
  }

  /*
   * Paths are joined by hand, not by path.join: an encoded segment is never
   * empty, `.`, `..` or holds a separator, so there is nothing to normalise,
   * and every read builds one.
   */
  #directoryOf(path: NodePath): string {
    return path.length === 0 ? this.dir : this.#base + path.map(encodeSegment).join(sep)
  }

  /** The store folder, then each directory down to the node's. */
  #directoriesTo(path: NodePath): string[] {
    const directories = [this.dir]
    for (const segment of path) directories.push(this.#below(directories[directories.length - 1], encodeSegment(segment)))
    return directories
  }

  /** What the folders of a node's children start with. */
  #childPrefix(path: NodePath): string {
    return path.length === 0 ? this.#base : this.#directoryOf(path) + sep
  }

  #below(directory: string, name: string): string {
    return (directory === this.dir ? this.#base : directory + sep) + name
  }

  /** A fresh temp file's name; the run id lets the crash sweep spare this run's files. */
  #tempName(): string {
    return `@tmp-${this.#runId}-${++this.#tempCount}`
  }
}

/** A document file whose version the cache does not hold, and its folder. */
type MissedFile = { directory: string; file: string }
/** A missed file's document as read, and its compact text when asked for. */
type MissedRead = StoredDoc & { json?: string }
