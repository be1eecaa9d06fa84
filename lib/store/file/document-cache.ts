import type { Doc, StoredDoc, StoredText } from '../store.ts'
import { ClockCache } from '../clock-cache.ts'
import { sameFileVersion, type FileVersion } from '../fs/file-version.ts'

export interface CacheEntry {
  /** The document's text: the file's as read or written, or its compact form once a reader asked for that. */
  text: string
  /** True once `text` is the compact form (`JSON.stringify` of the document). */
  compact: boolean
  /** Used since eviction last passed it (see DocumentCache). */
  recent: boolean
  etag: string
  version: FileVersion
  /** When (performance.now()) a read's stat last found this version: a second within TRUST_MS makes the document hot (watched-hits.ts). */
  checkedAt: number
  /**
   * Once `text` is compact, what a read of it answers: one object while the
   * entry lasts, so the bytes an answer made of it are kept with it (StoredText.sent).
   */
  answered?: StoredText
}

export interface CacheLimits {
  /** Most documents kept. */
  maxEntries: number
  /** Most bytes of document files kept. */
  maxBytes: number
}

export const defaultCacheLimits: CacheLimits = { maxEntries: 10_000, maxBytes: 16 * 1024 * 1024 }

/** Most missing files remembered (DocumentCache.statFirst). */
const MAX_MISSING = 1024

/**
 * The text and ETag of recently used document files, so a read of a hot
 * document costs one stat and a JSON.parse instead of open, read, close,
 * JSON.parse and a hash. The file stays the truth: an entry only answers for
 * the exact file version it was read from, which the caller checks with a
 * fresh stat on every read. Bounded by entries and bytes, evicted as
 * lib/store/clock-cache.ts says.
 *
 * Entries hold text, not parsed documents: each read gets its own copy to
 * change as it likes (the Store contract), and text is the smallest form.
 * A GET asks for the compact text it answers with; once made, it replaces
 * the file's pretty text, so a hot document is sent without a parse or a
 * stringify, and the bytes of its answer are kept with it. Sizes are counted as the file's, which the compact form never exceeds.
 */
export class DocumentCache {
  readonly #entries: ClockCache<CacheEntry>
  /** Files a read lately found missing, at most MAX_MISSING (then all forgotten at once): see statFirst. */
  readonly #missing = new Set<string>()
  /** Files read once while the cache was full and not kept, at most as many as the cache holds (then all forgotten at once): see admits. */
  readonly #readOnce = new Set<string>()
  readonly #maxReadOnce: number

  constructor(limits: CacheLimits = defaultCacheLimits) {
    this.#entries = new ClockCache({ maxEntries: limits.maxEntries, maxSize: limits.maxBytes, sizeOf: (entry) => entry.version.size })
    this.#maxReadOnce = limits.maxEntries
  }

  /**
   * True when a file just read should be kept: while the cache has room, always; once it is full, only a
   * file read lately before, whose entry is then worth the one it pushes out. A file read once, as each
   * of a random walk over more documents than the cache holds, costs no entry, no eviction and no text
   * kept for the collector to move and drop; a file read twice is kept at its second read.
   */
  admits(file: string, size: number): boolean {
    if (this.#entries.hasRoomFor(size) || this.#readOnce.delete(file)) return true
    if (this.#readOnce.size >= this.#maxReadOnce) this.#readOnce.clear()
    this.#readOnce.add(file)
    return false
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
    return entry
  }

  /** The entry of `file`, whichever version it was read from: for a hit whose version is known otherwise (watched-hits.ts). */
  current(file: string): CacheEntry | undefined {
    return this.#entries.get(file)
  }

  /** True when `file` was cached: the store saw it exist at its last read or write. */
  has(file: string): boolean {
    return this.#entries.has(file)
  }

  /**
   * True when a read of `file` should start with a stat: it is cached (the stat tells whether the entry
   * still answers), or a read lately found no file there, which a stat tells at a fraction of the cost of an
   * open's error (a collection's own URL, a document asked for before it is made).
   */
  statFirst(file: string): boolean {
    return this.#entries.has(file) || this.#missing.has(file)
  }

  /** A read found no file at `file`. */
  missing(file: string): void {
    if (this.#missing.size >= MAX_MISSING) this.#missing.clear()
    this.#missing.add(file)
  }

  /** Keeps the text of one version of `file` (as read from it or written to it; `compact` when it is already the compact form). */
  set(file: string, text: string, etag: string, version: FileVersion, compact = false): void {
    this.#missing.delete(file)
    this.#entries.set(file, { text, compact, recent: false, etag, version, checkedAt: -Infinity })
  }

  delete(file: string): void {
    this.#entries.delete(file)
  }

  /** Forgets every file inside `directory` (a removed subtree). */
  deleteInside(directory: string, separator: string): void {
    const prefix = directory.endsWith(separator) ? directory : directory + separator
    for (const file of [...this.#entries.keys()]) if (file.startsWith(prefix)) this.delete(file)
  }

  get size(): number {
    return this.#entries.size
  }
}

/** A cache entry's text as answered: made compact once, then one object while the entry lasts (CacheEntry.answered). */
export function answerOf(entry: CacheEntry): StoredText {
  if (entry.answered !== undefined) return entry.answered
  if (!entry.compact) {
    entry.text = JSON.stringify(JSON.parse(entry.text))
    entry.compact = true
  }
  return (entry.answered = { json: entry.text, etag: entry.etag, sent: null })
}
