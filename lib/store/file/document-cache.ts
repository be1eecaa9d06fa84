import type { Stats } from 'node:fs'
import type { Doc, StoredDoc } from '../store.ts'

/**
 * One version of a document file. A person who edits the file changes its
 * mtime (and mostly its size); an editor that saves by renaming a new file
 * over it changes the inode. The ctime is left out: the store's own rename of
 * a finished temp file changes it without changing the document.
 */
export interface FileVersion {
  ino: number
  size: number
  mtimeMs: number
}

export function versionOf(stats: Stats): FileVersion {
  return { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs }
}

function sameFileVersion(a: FileVersion, b: FileVersion): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino
}

export interface CacheEntry {
  /** The document's text: the file's as read or written, or its compact form once a reader asked for that. */
  text: string
  /** True once `text` is the compact form (`JSON.stringify` of the document). */
  compact: boolean
  /** Used since eviction last passed it (see DocumentCache). */
  recent: boolean
  etag: string
  version: FileVersion
}

export interface CacheLimits {
  /** Most documents kept. */
  maxEntries: number
  /** Most bytes of document files kept. */
  maxBytes: number
}

export const defaultCacheLimits: CacheLimits = { maxEntries: 10_000, maxBytes: 16 * 1024 * 1024 }

/**
 * The text and ETag of recently used document files, so a read of a hot
 * document costs one stat and a JSON.parse instead of open, read, close,
 * JSON.parse and a hash. The file stays the truth: an entry only answers for
 * the exact file version it was read from, which the caller checks with a
 * fresh stat on every read. Bounded by entries and bytes; what goes first is
 * the oldest entry not used since eviction last passed it (the "clock"
 * approximation of least recently used): a hit only marks its entry, where
 * moving it to the back of the Map made every hit cost a delete and an
 * insert, and a full cache that had seen many of them slowed each GET by
 * half (measured in bench/).
 *
 * Entries hold text, not parsed documents: each read gets its own copy to
 * change as it likes (the Store contract), and text is the smallest form.
 * A GET asks for the compact text it answers with; once made, it replaces
 * the file's pretty text, so a hot document is sent without a parse or a
 * stringify. Sizes are counted as the file's, which the compact form never exceeds.
 */
export class DocumentCache {
  readonly #limits: CacheLimits
  // In insertion order; eviction moves a recently used entry to the back instead of dropping it.
  readonly #entries = new Map<string, CacheEntry>()
  #bytes = 0

  constructor(limits: CacheLimits = defaultCacheLimits) {
    this.#limits = limits
  }

  /** The cached document of `file` (a fresh copy) when it was read from exactly this version. */
  get(file: string, version: FileVersion): StoredDoc | undefined {
    const entry = this.entry(file, version)
    return entry && { doc: JSON.parse(entry.text) as Doc, etag: entry.etag }
  }

  /** The entry of `file` when it was read from exactly this version; whoever holds it may make its text compact. */
  entry(file: string, version: FileVersion): CacheEntry | undefined {
    const entry = this.#entries.get(file)
    if (entry === undefined) return undefined
    if (!sameFileVersion(entry.version, version)) {
      this.delete(file)
      return undefined
    }
    entry.recent = true
    return entry
  }

  /** True when `file` was cached: the store saw it exist at its last read or write. */
  has(file: string): boolean {
    return this.#entries.has(file)
  }

  /** Keeps the text of one version of `file` (as read from it or written to it). */
  set(file: string, text: string, etag: string, version: FileVersion): void {
    this.delete(file)
    // What could never stay is not kept at all (and the sweep below always finds another entry to drop).
    if (version.size > this.#limits.maxBytes || this.#limits.maxEntries < 1) return
    this.#entries.set(file, { text, compact: false, recent: false, etag, version })
    this.#bytes += version.size
    while (this.#entries.size > this.#limits.maxEntries || this.#bytes > this.#limits.maxBytes) this.#evictOne(file)
  }

  /**
   * Drops the oldest entry not used since it was last passed; those used get
   * another round, and so does `kept`, the entry just set: when every older
   * one was used, the sweep reaches it first, and it must not be what goes.
   */
  #evictOne(kept: string): void {
    for (const [file, entry] of this.#entries) {
      this.#entries.delete(file)
      if (entry.recent || file === kept) {
        entry.recent = false
        this.#entries.set(file, entry)
      } else {
        this.#bytes -= entry.version.size
        return
      }
    }
  }

  delete(file: string): void {
    const entry = this.#entries.get(file)
    if (entry === undefined) return
    this.#entries.delete(file)
    this.#bytes -= entry.version.size
  }

  /** Forgets every file inside `directory` (a removed subtree). */
  deleteInside(directory: string, separator: string): void {
    const prefix = directory.endsWith(separator) ? directory : directory + separator
    for (const file of this.#entries.keys()) if (file.startsWith(prefix)) this.delete(file)
  }

  get size(): number {
    return this.#entries.size
  }
}
