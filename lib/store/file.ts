import { randomBytes } from 'node:crypto'
import { statSync, type Stats } from 'node:fs'
import { access, mkdir, readFile, readdir, unlink } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import { fsyncDirectory, placeFile, writeTempFile } from './atomic.ts'
import { DocumentCache, defaultCacheLimits, versionOf, type CacheEntry, type CacheLimits } from './cache.ts'
import { DirectoryFlusher } from './flush.ts'
import { ChildIndexes, type ChildChange } from './child-index.ts'
import { encodeSegment } from './encode.ts'
import { errorCode, isMissing, toStoreError } from './fs-errors.ts'
import { openStoreFolder } from './folder.ts'
import { releaseLock, type StoreLock } from './lock.ts'
import { childSegment, DOC_FILE, ensureNameFiles, hasChildNode } from './names.ts'
import { inspectRemoved, removeSubtree } from './remove.ts'
import { etagOf, parseStoredDoc, serializeDoc } from './serialize.ts'
import type { Doc, NodePath, Store, StoredDoc, StoredText, WriteResult } from './store.ts'
import { sweepStore } from './sweep.ts'
import { KeyedLock } from '../locks.ts'

export interface FileStoreOptions {
  /** Flush every write (file and directories) to disk before acknowledging it, so it survives power loss. */
  sync?: boolean
  /** Bounds of the cache of parsed documents (default 10 000 documents, 16 MiB of files). */
  cache?: CacheLimits
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
  readonly #flusher = new DirectoryFlusher()
  readonly #indexes = new ChildIndexes()
  readonly #writing = new KeyedLock()
  #tempCount = 0
  #closed: Promise<void> | undefined

  /** Opens (creating if needed) a store folder and takes its lock; throws ESTORELOCKED when another restdir holds it, ESTOREFOLDER when the folder cannot be used. */
  static async open(dir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const root = resolve(dir)
    const runId = randomBytes(4).toString('hex')
    const lock = await openStoreFolder(root, runId)
    return new FileStore(root, options.sync ?? false, runId, lock, new DocumentCache(options.cache ?? defaultCacheLimits))
  }

  private constructor(root: string, sync: boolean, runId: string, lock: StoreLock, cache: DocumentCache) {
    this.dir = root
    this.#base = root.endsWith(sep) ? root : root + sep
    this.#sync = sync
    this.#runId = runId
    this.#lock = lock
    this.#cache = cache
    const tempPathIn = (directory: string) => this.#tempPath(directory)
    // Not awaited: the server may serve while it runs (it spares this run's files).
    this.recovery = lock.takenOver ? sweepStore(root, runId, tempPathIn).catch(() => {}) : Promise.resolve()
  }

  /**
   * The file is the truth, also right after a person edited it: every read
   * stats the file, and the cache answers only for the version it sees.
   */
  async read(path: NodePath): Promise<StoredDoc | undefined> {
    const found = await this.#load(path)
    if (found === undefined || 'doc' in found) return found
    return { doc: JSON.parse(found.text) as Doc, etag: found.etag }
  }

  /** A hot document's compact text is made once and kept in its cache entry: later reads send it as it is. */
  async readText(path: NodePath): Promise<StoredText | undefined> {
    const found = await this.#load(path)
    if (found === undefined) return undefined
    if ('doc' in found) return { json: JSON.stringify(found.doc), etag: found.etag }
    if (!found.compact) {
      found.text = JSON.stringify(JSON.parse(found.text))
      found.compact = true
    }
    return { json: found.text, etag: found.etag }
  }

  /** The cache entry of the version on disk, else the document read from its file (and cached); undefined when there is none. */
  async #load(path: NodePath): Promise<CacheEntry | StoredDoc | undefined> {
    const file = this.#below(this.#directoryOf(path), DOC_FILE)
    const stats = statDocument(file)
    if (stats === undefined) {
      this.#cache.delete(file)
      return undefined
    }
    const cached = this.#cache.entry(file, versionOf(stats))
    if (cached) return cached
    let bytes: Buffer
    try {
      bytes = await readFile(file)
    } catch (error) {
      if (isMissing(error)) return undefined
      throw toStoreError(error)
    }
    const text = bytes.toString('utf8')
    const stored = { doc: parseStoredDoc(text, path), etag: etagOf(bytes) }
    // Stat first, read second: the bytes are never older than the version they are kept under.
    // A file that changed size in between was being rewritten: serve it, keep nothing.
    // Kept as text that is known to parse, so each hit parses its own copy; a byte-order mark a Windows editor left goes.
    if (bytes.length === stats.size) this.#cache.set(file, text.replace(/^\uFEFF/, ''), stored.etag, versionOf(stats))
    return stored
  }

  /** From the folder's index of children: one stat while nothing changed (see child-index.ts). */
  async children(path: NodePath): Promise<string[] | undefined> {
    const list = await this.#childList(path)
    // slice, not spread: for 100 000 names it is a copy of memory, many times faster.
    return list?.names.slice()
  }

  async documentChildren(path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined> {
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
    try {
      const list = await this.#indexes.list(this.#directoryOf(path))
      if (!list || (list.names.length === 0 && !list.hasDocument)) return undefined
      return list
    } catch (error) {
      throw toStoreError(error)
    }
  }

  async exists(path: NodePath): Promise<boolean> {
    const directory = this.#directoryOf(path)
    try {
      await access(join(directory, DOC_FILE))
      return true
    } catch (error) {
      if (!isMissing(error)) throw toStoreError(error)
    }
    // No document: the node exists while it has a child.
    try {
      return await hasChildNode(directory)
    } catch (error) {
      if (isMissing(error)) return false
      throw toStoreError(error)
    }
  }

  write(path: NodePath, doc: Doc): Promise<WriteResult> {
    return this.#place(path, doc, 'replace') as Promise<WriteResult>
  }

  create(path: NodePath, doc: Doc): Promise<WriteResult | undefined> {
    return this.#place(path, doc, 'create')
  }

  async remove(path: NodePath): Promise<{ existed: boolean; doc?: Doc }> {
    if (path.length === 0) return this.#removeRoot()
    this.#cache.deleteInside(this.#directoryOf(path), sep)
    const directories = this.#directoriesTo(path)
    const removal = () =>
      removeSubtree({
        root: this.dir,
        directory: directories[path.length],
        trash: join(this.dir, `@trash-${this.#runId}-${++this.#tempCount}`),
        path,
        sync: this.#sync,
        tempPathIn: (parent) => this.#tempPath(parent),
      })
    // The node goes, and so may ancestors left empty: whichever folder is gone left its parent's children.
    const gone = (): ChildChange[] =>
      path.flatMap((name, depth) => (exists(directories[depth + 1]) ? [] : [{ directory: directories[depth], name, kind: 'removed' as const }]))
    return this.#indexes.change(directories.slice(0, -1), removal, gone)
  }

  /** Waits for the crash cleanup, if any, then releases the lock. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= this.recovery.then(() => releaseLock(this.#lock))
    return this.#closed
  }

  /**
   * Writes to one node also queue here, though the data layer never overlaps
   * them: a document placed into a folder its own write just made goes there
   * by one rename, which is exact only while no other write to the node runs
   * beside it. So the store keeps `create` exact whoever calls it.
   */
  #place(path: NodePath, doc: Doc, mode: 'create' | 'replace'): Promise<WriteResult | undefined> {
    const directories = this.#directoriesTo(path)
    return this.#writing.run(directories[path.length], () => this.#placeInIndex(path, directories, doc, mode))
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
    // The data layer reads a node before it replaces it, so the cache knows whether the
    // document is there: then the node's directory exists and a rename tells the outcome.
    const exists = mode === 'replace' && this.#cache.has(file)
    this.#cache.delete(file)
    try {
      const { tempPath, version, madeDirectory } = await this.#prepareTemp(path, directories, text, exists)
      const outcome = await placeFile(tempPath, file, madeDirectory ? 'into-new-folder' : exists ? 'overwrite' : mode)
      if (outcome === 'exists') return undefined
      // Every directory down to the node may hold a new entry, made by this write
      // or by a concurrent one that has not flushed it yet; the write needs them all.
      // Concurrent writes share the flushes of the directories they have in common.
      if (this.#sync) await Promise.all(directories.map((directory) => this.#flusher.flush(directory)))
      const etag = etagOf(text)
      // The renamed temp file keeps its inode, size and mtime: the next read finds this version.
      this.#cache.set(file, text, etag, version)
      return { created: outcome === 'created', etag }
    } catch (error) {
      throw toStoreError(error)
    }
  }

  /**
   * Makes the node's directories (unless it is known to exist) and writes the
   * temp file beside where the document goes; returns it with the version it
   * was written as, and whether this write made the node's directory: then
   * nothing can be there yet (writes to one node queue, see #place), and one
   * rename places the document.
   */
  async #prepareTemp(path: NodePath, directories: string[], text: string, exists: boolean) {
    const directory = directories[path.length]
    for (let attempt = 1; ; attempt++) {
      try {
        const madeDirectory = !exists || attempt > 1 ? await makeDirectory(directory) : false
        await ensureNameFiles(directories, path, (parent) => this.#tempPath(parent), this.#sync)
        const tempPath = this.#tempPath(directory)
        await writeTempFile(tempPath, text, this.#sync)
        // Nobody else writes a temp file: a stat of it now is this write's version, exactly.
        return { tempPath, version: versionOf(statSync(tempPath)), madeDirectory }
      } catch (error) {
        // Removing an empty directory (a pruned sibling, the crash sweep, a person) may race
        // this write between mkdir and the temp file: then make it again.
        if (errorCode(error) !== 'ENOENT' || attempt === 3) throw error
      }
    }
  }

  /** The root cannot be renamed away (it holds the lock), so its children go one by one. */
  async #removeRoot(): Promise<{ existed: boolean; doc?: Doc }> {
    const removed = await inspectRemoved(this.dir, [])
    const entries = await readdir(this.dir, { withFileTypes: true })
    for (const entry of entries) {
      const segment = await childSegment(this.dir, entry)
      if (segment !== undefined) await this.remove([segment])
    }
    await unlink(join(this.dir, DOC_FILE)).catch((error) => {
      if (!isMissing(error)) throw error
    })
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

  #below(directory: string, name: string): string {
    return (directory === this.dir ? this.#base : directory + sep) + name
  }

  /** A fresh temp name in `directory`; the run id lets the crash sweep spare this run's files. */
  #tempPath(directory: string): string {
    return join(directory, `@tmp-${this.#runId}-${++this.#tempCount}`)
  }
}

/**
 * Stats a document file, or undefined when it is not there. Synchronous on
 * purpose: this runs on every read, and for a file the kernel has cached it
 * costs about 3 µs, where an async stat costs some 20 µs of CPU across
 * threads and a round trip through the thread pool (measured in bench/).
 */
function statDocument(file: string): Stats | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false })
  } catch (error) {
    if (isMissing(error)) return undefined
    throw toStoreError(error)
  }
}

/** `mkdir -p` that tells whether it made `directory` itself; one call where the parent is there already. */
async function makeDirectory(directory: string): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await mkdir(directory)
      return true
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return false
      if (errorCode(error) !== 'ENOENT' || attempt === 3) throw error
    }
    await mkdir(dirname(directory), { recursive: true })
  }
}

function exists(directory: string): boolean {
  try {
    return statSync(directory, { throwIfNoEntry: false }) !== undefined
  } catch {
    return false
  }
}
