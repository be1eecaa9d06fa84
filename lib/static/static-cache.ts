import type { FolderWatch } from '../store/fs/folder-watch.ts'

/*
 * What the www folder's files were found to be, kept so that a file served
 * before is answered again without the path checks of lib/static/static.ts
 * (docs/speed.md, "Speed": "Static files from memory").
 *
 * Why a kept answer is never wrong for long — the argument in full:
 *
 * 1. Every folder under the real root (hidden ones aside: nothing under them
 *    is ever served) is watched before anything is looked up, and any event
 *    in any of them — a file written, added, removed, renamed over, a link
 *    made or changed, a folder's permissions — forgets every kept answer and
 *    every watch. The next lookup walks and watches the folders again first.
 * 2. A lookup notes the watch's generation before it touches the disk, and
 *    keeps what it found only when no event came in the meantime and the
 *    real root is still the watched one. So an answer is never kept from a
 *    read that raced a change: either the change's event came before the
 *    lookup began (and the lookup saw the change), or it bumps the generation
 *    later and forgets the kept answer.
 * 3. Events reach the server through its event loop, so a request read in the
 *    same turn as an event may still get the kept answer: in practice a
 *    request sent after a change is answered from the changed file, but the
 *    watch alone cannot promise the very next request. Some changes send
 *    no event to a folder watch at all (a file written through a hard link
 *    from outside www, a link on the way to www switched, an event queue that
 *    overflowed). So, whatever the watch says, a kept answer is trusted for
 *    `trustMs` (1 s) at most: then the next request checks the path again
 *    (realpath, stat) and keeps the bytes only if the file is the very same
 *    version (device, inode, size, nanosecond mtime).
 * 4. A large file is not kept, only where it is: each GET opens its real path
 *    and compares the open file's version with the kept one before sending a
 *    byte, so a late event can never send other bytes, or a file a link now
 *    leads to outside www, under the kept headers.
 *
 * Where no folder watch can be had (a watch limit reached, a folder that
 * cannot be read, more than MAX_WATCHED_FOLDERS folders: lib/store/fs/folder-watch.ts), nothing is kept and
 * every request is checked against the disk as before.
 */

/** The bounds of what is kept, and how long a kept answer is trusted without a look at the disk. */
export interface StaticCacheOptions {
  /** Bytes of file content kept in memory in all (default 16 MiB). */
  maxBytes?: number
  /** Larger files are not kept in memory, only their place and version (default 1 MiB). */
  maxFileBytes?: number
  /** Milliseconds a kept answer is used without looking at the disk, events or not (default 1000). */
  trustMs?: number
}

export const defaultStaticCache = { maxBytes: 16 * 1024 * 1024, maxFileBytes: 1024 * 1024, trustMs: 1000 }

/** Most files whose place and version are kept, content or not. */
const MAX_ENTRIES = 10_000
/** One file as a lookup found it: its real path, its version and validators, and its bytes when small. */
export interface StaticFileVersion {
  path: string
  size: number
  /** Device, inode, size and nanosecond mtime: the same file, unchanged. */
  version: string
  etag: string
  lastModified: string
  body?: Buffer
}

interface Entry {
  file: StaticFileVersion
  /** performance.now() when the lookup that found it began. */
  checkedAt: number
}

/** Counts for tests and the curious: what is kept, and how often the disk was asked. */
export interface StaticCacheStats {
  entries: number
  bytes: number
  /** Lookups through the path checks (realpath, stat). */
  lookups: number
  /** Files opened to read their bytes. */
  opens: number
}

export class StaticCache {
  readonly limits: Required<StaticCacheOptions>
  readonly #entries = new Map<string, Entry>()
  readonly #watch: FolderWatch
  #bytes = 0
  lookups = 0
  opens = 0

  constructor(watch: FolderWatch, options: StaticCacheOptions = {}) {
    this.limits = { ...defaultStaticCache, ...options }
    this.#watch = watch
    watch.onChange(() => this.#clear())
  }

  /** The kept answer for a URL's segments while it may be trusted without a look at the disk. */
  fresh(key: string): StaticFileVersion | undefined {
    const entry = this.#entries.get(key)
    return entry && performance.now() - entry.checkedAt <= this.limits.trustMs ? entry.file : undefined
  }

  /** The kept answer even when it is no longer trusted: a lookup that finds the same version reuses its bytes. */
  kept(key: string): StaticFileVersion | undefined {
    return this.#entries.get(key)?.file
  }

  has(key: string): boolean {
    return this.#entries.has(key)
  }

  /**
   * Called before a lookup touches the disk: arms the watch, and returns what
   * `keep` needs to tell whether an event came in between, or undefined when
   * nothing may be kept.
   */
  beginLookup(): Lookup | undefined {
    this.lookups++
    if (!this.#watch.arm()) return undefined
    return { generation: this.#watch.generation, realRoot: this.#watch.realRoot!, startedAt: performance.now() }
  }

  /** Whether a file of this size would be kept in memory. */
  holdsBytesOf(size: number): boolean {
    return size <= this.limits.maxFileBytes && size <= this.limits.maxBytes
  }

  /** Keeps what a lookup found, unless the watch saw a change since it began (see 2. above). */
  keep(key: string, lookup: Lookup | undefined, realRoot: string, file: StaticFileVersion): void {
    if (lookup === undefined || lookup.generation !== this.#watch.generation || realRoot !== this.#watch.realRoot) return
    this.forget(key)
    const bytes = file.body?.length ?? 0
    for (const [oldest] of this.#entries) {
      if (this.#entries.size < MAX_ENTRIES && this.#bytes + bytes <= this.limits.maxBytes) break
      this.forget(oldest)
    }
    this.#entries.set(key, { file, checkedAt: lookup.startedAt })
    this.#bytes += bytes
  }

  forget(key: string): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#bytes -= entry.file.body?.length ?? 0
    this.#entries.delete(key)
  }

  stats(): StaticCacheStats {
    return { entries: this.#entries.size, bytes: this.#bytes, lookups: this.lookups, opens: this.opens }
  }

  close(): void {
    this.#clear()
  }

  #clear(): void {
    this.#entries.clear()
    this.#bytes = 0
  }
}

export interface Lookup {
  generation: number
  realRoot: string
  startedAt: number
}
