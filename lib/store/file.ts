import { randomBytes } from 'node:crypto'
import { access, mkdir, readFile, readdir, unlink } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fsyncDirectory, placeFile, writeTempFile } from './atomic.ts'
import { encodeSegment } from './encode.ts'
import { errorCode, isMissing, toStoreError } from './fs-errors.ts'
import { takeLock, releaseLock, type StoreLock } from './lock.ts'
import { childSegment, childSegments, DOC_FILE, ensureNameFiles, hasChildNode } from './names.ts'
import { inspectRemoved, removeSubtree } from './remove.ts'
import { etagOf, parseStoredDoc, serializeDoc } from './serialize.ts'
import type { Doc, NodePath, Store, StoredDoc, WriteResult } from './store.ts'
import { sweepStore } from './sweep.ts'

export interface FileStoreOptions {
  /** Flush every write (file and directories) to disk before acknowledging it, so it survives power loss. */
  sync?: boolean
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
  readonly #runId: string
  readonly #lock: StoreLock
  #tempCount = 0
  #closed: Promise<void> | undefined

  /** Opens (creating if needed) a store folder and takes its lock; throws ESTORELOCKED when another restdir holds it. */
  static async open(dir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const root = resolve(dir)
    await mkdir(root, { recursive: true })
    const runId = randomBytes(4).toString('hex')
    const lock = await takeLock(root, join(root, `@tmp-${runId}-lock`), runId)
    return new FileStore(root, options.sync ?? false, runId, lock)
  }

  private constructor(root: string, sync: boolean, runId: string, lock: StoreLock) {
    this.dir = root
    this.#sync = sync
    this.#runId = runId
    this.#lock = lock
    const tempPathIn = (directory: string) => this.#tempPath(directory)
    // Not awaited: the server may serve while it runs (it spares this run's files).
    this.recovery = lock.takenOver ? sweepStore(root, runId, tempPathIn).catch(() => {}) : Promise.resolve()
  }

  async read(path: NodePath): Promise<StoredDoc | undefined> {
    let bytes: Buffer
    try {
      bytes = await readFile(join(this.#directoryOf(path), DOC_FILE))
    } catch (error) {
      if (isMissing(error)) return undefined
      throw toStoreError(error)
    }
    // No cache: the file is the truth, also right after a person edited it.
    return { doc: parseStoredDoc(bytes.toString('utf8'), path), etag: etagOf(bytes) }
  }

  async children(path: NodePath): Promise<string[] | undefined> {
    const directory = this.#directoryOf(path)
    let entries
    try {
      entries = await readdir(directory, { withFileTypes: true })
    } catch (error) {
      if (isMissing(error)) return undefined
      throw toStoreError(error)
    }
    const segments = await childSegments(directory, entries)
    if (segments.length === 0 && !entries.some((entry) => entry.name === DOC_FILE)) return undefined
    // The default sort compares UTF-16 code units, the order the interface promises.
    return segments.sort()
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
    return removeSubtree({
      root: this.dir,
      directory: this.#directoryOf(path),
      trash: join(this.dir, `@trash-${this.#runId}-${++this.#tempCount}`),
      path,
      sync: this.#sync,
      tempPathIn: (parent) => this.#tempPath(parent),
    })
  }

  /** Waits for the crash cleanup, if any, then releases the lock. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= this.recovery.then(() => releaseLock(this.#lock))
    return this.#closed
  }

  async #place(path: NodePath, doc: Doc, mode: 'create' | 'replace'): Promise<WriteResult | undefined> {
    const text = serializeDoc(doc)
    const directories = this.#directoriesTo(path)
    const directory = directories[path.length]
    try {
      const tempPath = await this.#prepareTemp(path, directories, text)
      const outcome = await placeFile(tempPath, join(directory, DOC_FILE), mode)
      if (outcome === 'exists') return undefined
      // Every directory down to the node may hold a new entry, made by this write
      // or by a concurrent one that has not flushed it yet; the write needs them all.
      if (this.#sync) await Promise.all(directories.map(fsyncDirectory))
      return { created: outcome === 'created', etag: etagOf(text) }
    } catch (error) {
      throw toStoreError(error)
    }
  }

  /** Makes the node's directories and writes the temp file beside where the document goes. */
  async #prepareTemp(path: NodePath, directories: string[], text: string): Promise<string> {
    const directory = directories[path.length]
    for (let attempt = 1; ; attempt++) {
      try {
        await mkdir(directory, { recursive: true })
        await ensureNameFiles(directories, path, (parent) => this.#tempPath(parent), this.#sync)
        const tempPath = this.#tempPath(directory)
        await writeTempFile(tempPath, text, this.#sync)
        return tempPath
      } catch (error) {
        // Removing an empty directory (a pruned sibling, the crash sweep) may race
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

  #directoryOf(path: NodePath): string {
    return join(this.dir, ...path.map(encodeSegment))
  }

  /** The store folder, then each directory down to the node's. */
  #directoriesTo(path: NodePath): string[] {
    const directories = [this.dir]
    for (const segment of path) directories.push(join(directories[directories.length - 1], encodeSegment(segment)))
    return directories
  }

  /** A fresh temp name in `directory`; the run id lets the crash sweep spare this run's files. */
  #tempPath(directory: string): string {
    return join(directory, `@tmp-${this.#runId}-${++this.#tempCount}`)
  }
}
