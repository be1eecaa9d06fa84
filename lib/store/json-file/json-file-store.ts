import { randomBytes } from 'node:crypto'
import { constants, lstatSync, realpathSync, statSync, watch, type FSWatcher } from 'node:fs'
import { open, readdir, unlink } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { createFileAtomically, fsyncDirectory } from '../fs/atomic.ts'
import { notRegular, sameFileVersion, versionOf, type FileVersion } from '../fs/file-version.ts'
import { isMissing, toStoreError } from '../fs/fs-errors.ts'
import { CheckPhase, EventBurst, watchHearsAll } from '../fs/trusted-watch.ts'
import { StoreError } from '../errors.ts'
import { MemoryStore } from '../memory.ts'
import { serializeDoc } from '../serialize.ts'
import type { BaseReader, BatchOp, Doc, NodePath, StagedBatch, Store, StoreChange, StoredDoc, WriteConditions, WriteResult } from '../store.ts'
import { lockFile, unlockFile, type FileLock } from '../fs/file-lock.ts'
import { ExclusiveGate } from './gate.ts'
import { GroupWriter } from './group-writer.ts'
import { Layout } from './layout.ts'
import type { NestedFamily } from '../families.ts'
import { DatabaseProblem, isJson5File, readDatabase, type DatabaseFile, type DatabaseFormat } from './read-database.ts'
import { json5FromJson } from '../../json/json5.ts'

export interface JsonFileStoreOptions {
  /** Flush every write to disk (the file and its folder) before acknowledging it (`--sync`); off by default, as for a store folder. */
  sync?: boolean
  /** At most how often (ms) a read stats the file for a hand edit the watch missed; 1000 by default. */
  statInterval?: number
  /** Watch the file's folder for hand edits (default true); without, the stat of every `statInterval` sees them. */
  watch?: boolean
  /** Where the store says that the file broke or was mended (default standard error). */
  log?: (line: string) => void
  /** The declared families whose members nest their children's arrays (default none: a db.json is its own declaration). */
  families?: readonly NestedFamily[]
  /** The field naming the items of a plain collection: `id` unless json-server's `--id` says otherwise. */
  idField?: string
  /** Read the file as json-server 1.0 does, `--json-server 1` (read-database.ts): numeric ids as strings, written so at the next write with its `$schema`. */
  asJsonServer1?: boolean
}

/**
 * The store as one json-server db.json (docs/json-server.md, "Serving a
 * db.json"): the file is read once into a MemoryStore, which answers and
 * keeps the Store guarantees, and every change is written back into the file
 * (layout.ts) before it is acknowledged, many changes sharing one file write
 * (group-writer.ts). A hand edit of the file is what the next requests see; a
 * hand edit that breaks it is never overwritten: writes are refused
 * ('file-edited') and reads keep the last good state until it is mended.
 * A file named `.json5` is read as JSON5 and written back as JSON5
 * (docs/json-server.md, "Serving a db.json5").
 */
export class JsonFileStore implements Store {
  readonly file: string
  /** The file's name as problems show it: never the folders above it. */
  readonly #label: string
  readonly #tree: MemoryStore
  #layout: Layout
  readonly #families: readonly NestedFamily[]
  readonly #format: DatabaseFormat
  readonly #idField: string
  readonly #asJsonServer1: boolean
  readonly #gate = new ExclusiveGate()
  readonly #writer: GroupWriter
  readonly #lock: FileLock
  readonly #runId: string
  readonly #statInterval: number
  readonly #watch: boolean
  readonly #log: (line: string) => void
  #tempCount = 0
  /** The version of the file the store holds: the one it last wrote or read. */
  #known: FileVersion | undefined
  /**
   * The version of the file write being renamed into place: a look at the file
   * between the rename and `written` finds it there, and must not take the
   * store's own write for a hand edit (nor reload the whole file for it).
   */
  #placing: FileVersion | undefined
  /** A file the store cannot hold, by the version found so (undefined: the file is gone). */
  #broken: { version: FileVersion | undefined; reason: string } | undefined
  /** A file write failed: the store must be made what the file says before it writes again. */
  #restoring = false
  /** The watch saw the file's folder change. */
  #stale = false
  #checkedAt = 0
  /**
   * Whether a write may take the watch's word that the file is as the last look found it (trusted-watch.ts):
   * the watch is on, hears every change (Linux, a local file system) and has not failed. Not while the
   * file is a link (#linked): an edit of what it leads to, in another folder, raises no event here.
   */
  #watchTrusted = false
  /** The last look at the file found a link in its place. */
  #linked = false
  /** Events the watch heard this turn: a burst may mean the kernel dropped some. */
  readonly #burst = new EventBurst()
  readonly #checkPhase = new CheckPhase()
  #reloading: Promise<void> | undefined
  #reloads = 0
  #watcher: FSWatcher | undefined
  /** The one pending look at the file after the watch saw it change, or the once-a-second look (see #pushHandEdits). */
  #lookTimer: NodeJS.Timeout | undefined
  #pollTimer: NodeJS.Timeout | undefined
  #closed: Promise<void> | undefined

  /** Opens (creating it as `{}` if missing) a db.json and takes its lock; refuses a file it cannot hold, saying where it is wrong. */
  static async open(file: string, options: JsonFileStoreOptions = {}): Promise<JsonFileStore> {
    const path = realFile(resolve(file))
    const folder = dirname(path)
    if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`Cannot serve ${path}: the folder ${folder} does not exist.`)
    const runId = randomBytes(4).toString('hex')
    const lock = await lockFile(path, runId)
    const store = new JsonFileStore(path, runId, lock, options)
    try {
      await store.#start()
      return store
    } catch (error) {
      await store.close()
      throw error instanceof DatabaseProblem ? new Error(`${error.message}.`) : error
    }
  }

  private constructor(file: string, runId: string, lock: FileLock, options: JsonFileStoreOptions) {
    this.file = file
    this.#label = basename(file)
    this.#runId = runId
    this.#lock = lock
    this.#statInterval = options.statInterval ?? 1000
    this.#watch = options.watch ?? true
    this.#log = options.log ?? ((line) => console.error(line))
    this.#families = options.families ?? []
    this.#format = isJson5File(file) ? 'json5' : 'json'
    this.#idField = options.idField ?? 'id'
    this.#asJsonServer1 = options.asJsonServer1 ?? false
    this.#layout = new Layout(this.#families, this.#idField)
    // Each change lands in the layout the moment it lands in the tree, so the next file write holds it.
    this.#tree = new MemoryStore({ onChange: (path, stored) => (stored ? this.#layout.set(path, stored.text, stored.doc) : this.#layout.remove(path)) })
    this.#writer = new GroupWriter({
      file,
      // A db.json swapped for a link while served is written through it (docs/json-server.md, "Serving a db.json").
      target: () => realFile(file),
      sync: options.sync ?? false,
      tempPath: (folder) => this.#tempPath(folder),
      serialize: () => this.#serialize(),
      beforeReplace: (version) => {
        if (!sameVersion(fileVersion(file), this.#known)) throw new StoreError('file-edited', [], `${this.#label} was changed by hand while this write was being saved, so it was left as it is`)
        this.#placing = version
      },
      written: (version) => {
        this.#known = version
        this.#placing = undefined
      },
      failed: () => {
        this.#placing = undefined
        this.#restoring = true
        void this.#fresh().catch(() => {})
      },
    })
  }

  async #start(): Promise<void> {
    await this.#removeDeadTempFiles()
    // A missing file is made, as `{}`; one made meanwhile by someone else is kept.
    if (fileVersion(this.file) === undefined && (await createFileAtomically(this.#tempPath(), this.file, '{}\n', true))) await fsyncDirectory(dirname(this.file))
    const { text, version } = await readFileVersion(this.file).catch((error: unknown) => {
      throw error instanceof NotRegular ? new DatabaseProblem(`${this.#label} ${error.what}; a db.json is a file`) : error
    })
    await this.#adopt(readDatabase(text, this.#label, this.#families, this.#format, this.#idField, this.#asJsonServer1), version)
    this.#pushHandEdits()
    if (!this.#watch) return
    try {
      this.#watcher = watch(dirname(this.file), { persistent: false }, (_event, name) => {
        if (this.#burst.heard()) this.#stale = true
        if (name !== null && name !== this.#label) return
        this.#stale = true
        this.#lookSoon()
      })
      this.#watcher.on('error', () => {
        this.#watchTrusted = false
        this.#stale = true
        this.#watcher?.close()
      })
      this.#watchTrusted = watchHearsAll(dirname(this.file))
    } catch {
      // No watch to be had (too many watches): the stat of every second still sees hand edits.
    }
  }

  /** The file's new text: the db.json layout, its keys and strings then quoted as JSON5 writes them for a db.json5 (a whole copy of the file, as json-server 1.0 writes it whole). */
  #serialize(): Buffer[] {
    const parts = this.#layout.serializeParts()
    return this.#format === 'json' ? parts : [Buffer.from(json5FromJson(Buffer.concat(parts).toString('utf8')))]
  }

  /**
   * A hand edit reaches the change feed, and so every event stream, without waiting for a request
   * (docs/json-server.md, "Editing by hand while it runs"): the watch's event is looked at
   * HAND_EDIT_SETTLE_MS later (one look pending at most, however many events an editor's save
   * makes), and the file is stat'ed every `statInterval` in case the watch missed it.
   */
  #pushHandEdits(): void {
    this.#pollTimer = setInterval(() => this.#look(), this.#statInterval)
    this.#pollTimer.unref()
  }

  #lookSoon(): void {
    if (this.#lookTimer !== undefined || this.#closed) return
    this.#lookTimer = setTimeout(() => {
      this.#lookTimer = undefined
      this.#look()
    }, HAND_EDIT_SETTLE_MS)
    this.#lookTimer.unref()
  }

  #look(): void {
    if (this.#closed) return
    void this.#fresh().catch((error: unknown) => this.#log(`restdir: ${this.#label} could not be read again: ${(error as Error).message}`))
  }

  /** A fresh temp file beside the file, or in `folder` (a rename is atomic only within one file system); the run id tells a dead run's apart. */
  #tempPath(folder = dirname(this.file)): string {
    return join(folder, `.${this.#label}.${this.#runId}-${++this.#tempCount}.tmp`)
  }

  async read(path: NodePath): Promise<StoredDoc | undefined> {
    await this.#fresh()
    return this.#tree.read(path)
  }

  /** Children are listed in the order of the file, as json-server lists its arrays (docs/json-server.md, "Serving a db.json"). */
  readonly fileOrder = true

  // A top-level collection is there while the file has its array, an empty one included (`"comments": []`),
  // as json-server keeps it (docs/json-server.md, "Serving a db.json"): the tree holds no node for it.
  async children(path: NodePath): Promise<string[] | undefined> {
    await this.#fresh()
    return this.#childrenNow(path)
  }

  async #childrenNow(path: NodePath): Promise<string[] | undefined> {
    const names = await this.#tree.children(path)
    const empty = path.length === 0 ? this.#layout.emptyCollections() : []
    if (!names) {
      if (empty.length > 0) return this.#inFileOrder(path, empty)
      return this.#isEmptyCollection(path) ? [] : undefined
    }
    return this.#inFileOrder(path, [...names, ...empty])
  }

  /** `names` in the file's order (each change lands in the tree and the layout alike). */
  #inFileOrder(path: NodePath, names: string[]): string[] {
    const present = new Set(names)
    const ordered = (this.#layout.childNames(path) ?? []).filter((name) => present.delete(name))
    return present.size === 0 ? ordered : [...ordered, ...present]
  }

  async documentChildren(path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined> {
    await this.#fresh()
    return this.#documentChildrenNow(path, start, end)
  }

  async #documentChildrenNow(path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined> {
    const inTree = await this.#tree.documentChildren(path, 0, 0)
    if (!inTree) return this.#isEmptyCollection(path) ? { names: [], total: 0 } : undefined
    const names = this.#layout.documentNames(path)
    // The layout holds every document the tree does (each change lands in both): a difference would be a fault, answered in id order.
    if (names?.length !== inTree.total) return this.#tree.documentChildren(path, start, end)
    return { names: names.slice(start, end), total: names.length }
  }

  async exists(path: NodePath): Promise<boolean> {
    await this.#fresh()
    return this.#existsNow(path)
  }

  async #existsNow(path: NodePath): Promise<boolean> {
    return (await this.#tree.exists(path)) || this.#isEmptyCollection(path)
  }

  /** The store's reads as they answer once the file is read: what a staged batch is confirmed against, inside the tree's batch. */
  readonly #asRead: BaseReader = {
    read: (path) => this.#tree.read(path),
    children: (path) => this.#childrenNow(path),
    exists: (path) => this.#existsNow(path),
    documentChildren: (path, start, end) => this.#documentChildrenNow(path, start, end),
  }

  /** The file's top-level resources, collections and documents, in the file's order (what json-server's banner lists). */
  async resources(): Promise<string[]> {
    await this.#fresh()
    return this.#layout.resources()
  }

  #isEmptyCollection(path: NodePath): boolean {
    return path.length === 1 && this.#layout.emptyCollections().includes(path[0])
  }

  write(path: NodePath, doc: Doc, conditions?: WriteConditions): Promise<WriteResult> {
    return this.#change(path, () => this.#tree.write(path, doc, conditions), () => true)
  }

  create(path: NodePath, doc: Doc, conditions?: Omit<WriteConditions, 'expect' | 'patch'>): Promise<WriteResult | undefined> {
    return this.#change(path, () => this.#tree.create(path, doc, conditions), (result) => result !== undefined)
  }

  remove(path: NodePath, conditions?: { expect?: string | null }): Promise<{ existed: boolean; doc?: Doc }> {
    return this.#change(path, () => this.#tree.remove(path, conditions), (result) => result.existed)
  }

  /**
   * The tree applies the batch in one step; one file write then holds all of
   * it (docs/http-api.md, "Batches"). A staged batch is confirmed against
   * this store's answers (file order, empty collections), not the tree's.
   */
  batch(ops: readonly BatchOp[], staged?: StagedBatch): Promise<void> {
    const confirmed = staged && { ops: staged.ops, changes: staged.changes, confirm: () => staged.confirm(this.#asRead) }
    return this.#change(ops[0]?.path ?? [], () => this.#tree.batch(ops, confirmed), () => ops.length > 0)
  }

  subscribe(listener: (change: StoreChange) => void): () => void {
    return this.#tree.subscribe(listener)
  }

  lastChangeId(): Promise<number> {
    return this.#tree.lastChangeId()
  }

  /** How many times the file was written (for tests and the bench: group commit writes it far less often than once per write). */
  get fileWrites(): number {
    return this.#writer.fileWrites
  }

  /** How many times the store went to read the file again, having found it changed (for tests: its own writes never count). */
  get reloads(): number {
    return this.#reloads
  }

  /** Waits for writes under way, then releases the lock. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#watcher?.close()
      clearTimeout(this.#lookTimer)
      clearInterval(this.#pollTimer)
      await this.#gate.exclusive(() => this.#writer.idle()).catch(() => {})
      await unlockFile(this.#lock)
    })()
    return this.#closed
  }

  /**
   * A change: made in the tree while the file is one the store holds, then
   * acknowledged once a file write that holds it is in place. The file write
   * is asked for inside the gate, so a restore (after a failed file write)
   * never undoes a change whose write it did not refuse.
   */
  async #change<T>(path: NodePath, operation: () => Promise<T>, changed: (result: T) => boolean): Promise<T> {
    // A write must never land on top of a hand edit it has not seen: it looks at the file first, unless
    // the watch, heard out by this turn's check phase, says the file is as a look less than a second ago found it.
    const trusted = () => this.#watchTrusted && !this.#linked
    await (trusted() ? this.#checkPhase.run(() => this.#fresh(!trusted())) : this.#fresh(true))
    const { result, saved } = await this.#gate.shared(async () => {
      if (this.#broken) throw new StoreError('file-edited', path, this.#broken.reason)
      const result = await operation()
      const saved = changed(result) ? this.#writer.commit() : undefined
      saved?.catch(() => {}) // awaited below
      return { result, saved }
    })
    if (saved) {
      await saved.catch((error: unknown) => {
        throw error instanceof StoreError ? new StoreError(error.kind, path, error.reason) : toStoreError(error, path)
      })
    }
    return result
  }

  /**
   * Makes the store what the file says when the file changed since the store
   * last wrote or read it (a hand edit), or after a failed file write. Reads
   * stat the file when the watch saw its folder change, and at least once a
   * second (`statInterval`) in case it did not; writes the same where the watch
   * is trusted (#change), else (`always`) every time.
   */
  #fresh(always = false): Promise<void> {
    if (this.#reloading) return this.#reloading
    if (!this.#restoring && !this.#stale && !always && Date.now() - this.#checkedAt < this.#statInterval) return Promise.resolve()
    this.#stale = false
    this.#checkedAt = Date.now()
    const seen = this.#broken ? this.#broken.version : this.#known
    const { version: found, linked } = lookAt(this.file)
    this.#linked = linked
    if (!this.#restoring && (sameVersion(found, seen) || (this.#placing && sameVersion(found, this.#placing)))) return Promise.resolve()
    this.#reloading = this.#gate.exclusive(() => this.#reload()).finally(() => (this.#reloading = undefined))
    return this.#reloading
  }

  async #reload(): Promise<void> {
    this.#reloads++
    // Writes acknowledged before are in the file first: the file is then all the store holds.
    await this.#writer.idle()
    let read: { text: string; version: FileVersion }
    try {
      read = await readFileVersion(this.file)
    } catch (error) {
      if (error instanceof NotRegular) return this.#breaks(error.version, `${this.#label} ${error.what}; put the file back`)
      if (!isMissing(error)) throw error
      return this.#breaks(undefined, `${this.#label} was deleted or moved away; put it back`)
    }
    if (!this.#restoring && sameVersion(read.version, this.#known)) return
    let database: DatabaseFile
    try {
      database = readDatabase(read.text, this.#label, this.#families, this.#format, this.#idField, this.#asJsonServer1)
    } catch (error) {
      if (!(error instanceof DatabaseProblem)) throw error
      return this.#breaks(read.version, error.message)
    }
    const wasBroken = this.#broken !== undefined
    await this.#adopt(database, read.version)
    this.#broken = undefined
    if (wasBroken) this.#log(`restdir: ${this.#label} can be served again; writes are taken again.`)
    if (this.#restoring) {
      this.#restoring = false
      this.#writer.recover()
    }
  }

  #breaks(version: FileVersion | undefined, reason: string): void {
    this.#broken = { version, reason }
    this.#log(`restdir: ${reason}. Reads serve its last good state and writes are refused (503) until it is fixed; it is not overwritten.`)
  }

  /**
   * Makes the tree hold exactly the documents of `database`, changing only
   * what differs (so event streams hear a hand edit as the changes it made),
   * and takes its layout: its order, its kept values, its final newline.
   */
  async #adopt(database: DatabaseFile, version: FileVersion): Promise<void> {
    const wanted = new Map<string, { path: NodePath; doc: Doc }>()
    for (const placement of database.placements) {
      if (placement.kind === 'document') wanted.set(JSON.stringify(placement.path), placement)
    }
    // A document that went takes what is below it along (a removal is of a subtree): what the file still holds there comes back.
    const removed: NodePath[] = []
    const gone = [...this.#layout.documents()].filter(([path]) => !wanted.has(JSON.stringify(path))).map(([path]) => path)
    for (const path of gone.sort((a, b) => a.length - b.length)) {
      if (removed.some((above) => isWithin(path, above))) continue
      removed.push(path)
      await this.#tree.remove(path)
    }
    for (const { path, doc } of wanted.values()) {
      if (removed.some((above) => isWithin(path, above)) || this.#layout.textAt(path) !== serializeDoc(doc)) await this.#tree.write(path, doc)
    }
    // The file's layout, holding the very texts the tree keeps.
    const layout = new Layout(this.#families, this.#idField)
    layout.trailingNewline = database.trailingNewline
    for (const placement of database.placements) {
      if (placement.kind === 'top-level') layout.setTopLevel(placement.name, placement.kept)
      else layout.set(placement.path, this.#layout.textAt(placement.path)!, placement.doc)
    }
    this.#layout = layout
    this.#known = version
    // Ids given to items that had none are written at once, so they stay what they are.
    if (database.idsGiven) void this.#writer.commit().catch(() => {})
  }

  /** Temp files of runs that died mid-write (the lock says none is running): they are no one's. */
  async #removeDeadTempFiles(): Promise<void> {
    const prefix = `.${this.#label}.`
    for (const name of await readdir(dirname(this.file))) {
      if (name.startsWith(prefix) && /^[0-9a-f]{8}-\d+\.tmp$/.test(name.slice(prefix.length))) await unlink(join(dirname(this.file), name)).catch(() => {})
    }
  }
}

/** How long after the watch sees the file change it is read: an editor's save is often a write and a rename, or several writes. */
const HAND_EDIT_SETTLE_MS = 50

/** The file a link leads to, so that the file is replaced where it is and the link stays; the path itself when it does not exist yet. */
function realFile(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}


/** The file's version (one lstat, and a stat where it is a link), and whether it is a link. */
function lookAt(file: string): { version: FileVersion | undefined; linked: boolean } {
  const own = lstatSync(file, { throwIfNoEntry: false })
  if (own === undefined || !own.isSymbolicLink()) return { version: own && versionOf(own), linked: false }
  return { version: fileVersion(file), linked: true }
}

function fileVersion(file: string): FileVersion | undefined {
  const stats = statSync(file, { throwIfNoEntry: false })
  return stats ? versionOf(stats) : undefined
}

function sameVersion(a: FileVersion | undefined, b: FileVersion | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  return sameFileVersion(a, b)
}

/** Something other than a regular file where the db.json should be (a directory, a pipe, a device): what it is, in words, and its version. */
class NotRegular extends Error {
  constructor(readonly what: string, readonly version: FileVersion) {
    super(what)
  }
}

/** The file's text and the version it was read at (through the one descriptor, so the two agree); NotRegular for anything but a regular file. */
async function readFileVersion(file: string): Promise<{ text: string; version: FileVersion }> {
  // Opening a FIFO would wait for a writer: only a regular file is opened, and never waited on (O_NONBLOCK) should one be swapped in meanwhile.
  const seen = statSync(file)
  const problem = notRegular(seen)
  if (problem) throw new NotRegular(problem, versionOf(seen))
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stats = await handle.stat()
    const swapped = notRegular(stats)
    if (swapped) throw new NotRegular(swapped, versionOf(stats))
    return { text: await handle.readFile('utf8'), version: versionOf(stats) }
  } finally {
    await handle.close()
  }
}

function isWithin(path: NodePath, above: NodePath): boolean {
  return above.length <= path.length && above.every((segment, index) => path[index] === segment)
}
