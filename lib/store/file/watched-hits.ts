import { watch, type FSWatcher } from 'node:fs'
import { basename, sep } from 'node:path'
import type { CacheEntry, DocumentCache } from './document-cache.ts'
import { errorCode } from '../fs/fs-errors.ts'
import { CheckPhase, EventBurst, isLocal, watchHearsAll } from '../fs/trusted-watch.ts'
import { sameFileVersion, type FileVersion } from '../fs/file-version.ts'
import { DOC_FILE } from './names.ts'
import { checkWay } from './document-file.ts'
import type { NodePath } from '../store.ts'

/*
 * Which cache hits may be answered with no stat of their file (docs/storage.md, "Editing by hand").
 *
 * A hot document's folder, and each folder above it up to the store folder, is watched (inotify(7),
 * through fs.watch). Every change of a folder's entries, and every write to a file in it, queues an
 * event inside the very system call that makes it, so by the time a client that edited a file sends
 * its next request, the event is waiting in the kernel. Node reads the events and the request in the
 * poll phase of its loop; a hit decided in the check phase after it (setImmediate) has had every event
 * delivered with its request applied (lib/store/fs/trusted-watch.ts). So a hit waits for that check phase, and is then answered from
 * memory if nothing was heard about its file, or a folder on its way, since a stat last found the
 * cache's version on disk, less than TRUST_MS ago. A watched folder a stat found to hold no document
 * file (a collection's, looked for before each page of it) is told so the same way (trustedMissing).
 *
 * Where that argument does not hold, a hit stats its file as every read did before: not on Linux
 * (macOS's and Windows's watches are not read in the same turn), a file system of another machine
 * or a user-space one (its changes made elsewhere raise no event here), a watch refused (the
 * per-user inotify limit, descriptors), a watcher's error, a burst of events that may have
 * overflowed the kernel's queue (libuv drops the overflow event itself), and a folder no longer
 * watched (at most `maxWatches` watches; one no GET used for WATCH_IDLE_MS makes room for another).
 *
 * A write goes without the lstat of its collection's folder the same way (checkWayToWrite): the store
 * folder is watched once a folder right below it is written through twice within TRUST_MS, and from
 * the next lstat that finds it a folder on, writes through it take it for one, decided in the check
 * phase, until TRUST_MS has passed or an event names it (a link or a file put in its place).
 */

/** A stat found the cache's version this recently (ms), or the hit stats again: what no event tells (a write through a hard link from another folder, an mmap) is seen within this. */
export const TRUST_MS = 1000
/** Watches a store keeps by default, the folders above its hot documents included. */
export const DEFAULT_MAX_WATCHES = 1000
/**
 * How long (ms) a watch must have gone unused before it is closed to make room for another. More
 * documents hot at once than a store watches keep the watches they have, and the others stat: a
 * watch made and closed costs the event loop some 90 µs (inotify_add_watch, statfs, the watcher,
 * inotify_rm_watch), tens of the stats it saves, so trading watches between documents hot together
 * cost a GET among 5,000 of them about twice what stats alone did (docs/speed.md). Short enough
 * that documents hot from now on are watched soon after those hot before go quiet.
 */
export const WATCH_IDLE_MS = 2 * TRUST_MS
/** Folders right below the store folder whose lstat found them folders, kept for writes through them (checkWayToWrite), at most. */
const MOST_WAYS = 1000
/** How many watches one attempt to make room looks at, at most (the clock's hand goes on from there next time). */
const LOOK_AT = 8
/** After a watch is refused or fails, how long (ms) hits stat their files before watches are tried again. */
const RETRY_MS = 60_000

/** One watched folder: a hot document's, or one above such a folder. */
interface Watched {
  readonly directory: string
  /** `directory` ending in a separator: its entries' paths start with it. */
  readonly prefix: string
  /** Its document file. */
  readonly file: string
  readonly name: string
  readonly watcher: FSWatcher
  readonly parent: Watched | undefined
  readonly children: Set<Watched>
  /** True when its own document was hit (else it is watched only for the folders below). */
  document: boolean
  /** When (performance.now()) a stat last found the cache's version of its document, with the watches already in place; -Infinity since an event about it. */
  checkedAt: number
  /**
   * The version that stat found. A hit answers the cache's entry only while it is still of this version: a read that
   * began before an edit, through the pool, may put the older version back in the cache after a stat found the newer.
   */
  version: FileVersion | undefined
  /** When (performance.now()) a stat, with the watches already in place, last found no document file in it; -Infinity since an event about it. */
  missingAt: number
  /** When (performance.now()) a GET last used it: see WATCH_IDLE_MS. */
  usedAt: number
  /** Kept open for the writes through the folders right below it, though no hot document is there (the store folder's: checkWayToWrite). */
  way: boolean
  closed: boolean
}

/** The watches of one store folder, and the hits waiting for the check phase. */
export class WatchedHits {
  readonly #cache: DocumentCache
  readonly #maxWatches: number
  readonly #watched = new Map<string, Watched>()
  /** Until when (performance.now()) no watch is made: one was refused or failed. */
  #refusedUntil = 0
  #closed = false
  /** Hits waiting for this turn's check phase. */
  readonly #checkPhase = new CheckPhase()
  /**
   * Folders right below the store folder an lstat found to be folders (checkWayToWrite): when
   * (performance.now()), and the store folder's watch open before that lstat, if one was.
   */
  readonly #ways = new Map<string, { at: number; root: Watched | undefined }>()
  /** Events heard this turn: a burst may mean the kernel's queue overflowed. */
  readonly #burst = new EventBurst()

  /** `maxWatches`: most folders watched at once; 0 watches none, so every hit stats its file. */
  constructor(root: string, cache: DocumentCache, maxWatches = DEFAULT_MAX_WATCHES) {
    this.#cache = cache
    this.#maxWatches = watchHearsAll(root) ? maxWatches : 0
  }

  /** True when the document of `directory` may be answered from memory in this turn's check phase (see afterEvents). */
  trusted(directory: string): boolean {
    return this.#fresh(directory, 'checkedAt')
  }

  /** True when `directory` may be told to hold no document from memory in this turn's check phase (see missingAfterEvents). */
  trustedMissing(directory: string): boolean {
    return this.#fresh(directory, 'missingAt')
  }

  /** Whether `directory` is watched and what a stat found there (`since`) is less than TRUST_MS old: then the folder counts as used. */
  #fresh(directory: string, since: 'checkedAt' | 'missingAt'): boolean {
    const watched = this.#watched.get(directory)
    if (watched === undefined) return false
    const now = performance.now()
    if (now - watched[since] >= TRUST_MS) return false
    watched.usedAt = now
    return true
  }

  /**
   * A stat just found no document file in `directory` (a collection's folder, most often): when it is
   * watched, with the folders above it, the next reads are told so from memory for TRUST_MS, until an
   * event about its document file or a folder on its way.
   */
  missing(directory: string): void {
    const watched = this.#watched.get(directory)
    if (watched !== undefined) watched.missingAt = performance.now()
  }

  /**
   * checkWay (document-file.ts) for a write to `path`, whose folders from the store folder down
   * are `directories`. The folder right below the store folder (a collection's) is taken for a
   * folder without its lstat when one found it so less than TRUST_MS ago, with the store folder
   * watched from before that lstat, and no event has named it since: decided in this turn's check
   * phase, as a trusted hit is, so a link or a file put in its place before the request was sent
   * has been heard of. Else it is looked at, and one written through twice within TRUST_MS has the
   * store folder watched, so that the writes after its next lstat need none.
   */
  async checkWayToWrite(path: NodePath, directories: readonly string[], ownFolder: boolean): Promise<number> {
    const folder = directories[1]
    // Nothing below the store folder to look at, or nothing watched that could tell of a change.
    if ((ownFolder ? directories.length : directories.length - 1) < 2 || this.#maxWatches === 0) return checkWay(path, directories, ownFolder)
    if (this.#wayTrusted(folder) && (await this.#inCheckPhase(() => this.#wayTrusted(folder)))) return checkWay(path, directories, ownFolder, 2)
    const root = this.#watched.get(directories[0])
    const depth = checkWay(path, directories, ownFolder)
    if (depth > 1) this.#wayFound(directories[0], folder, root)
    return depth
  }

  #wayTrusted(folder: string): boolean {
    const way = this.#ways.get(folder)
    const now = performance.now()
    if (way?.root === undefined || way.root.closed || now - way.at >= TRUST_MS) return false
    way.root.usedAt = now
    return true
  }

  /** An lstat just found `folder`, right below `store`, to be a folder, with `root` the store folder's watch open before it, if one was. */
  #wayFound(store: string, folder: string, root: Watched | undefined): void {
    const now = performance.now()
    const before = this.#ways.get(folder)
    if (root !== undefined) root.way = true
    else if (before !== undefined && now - before.at < TRUST_MS && this.#maxWatches > 0 && !this.#closed && now >= this.#refusedUntil) {
      const made = this.#watchChain([store])
      if (made !== undefined) made.way = true
    }
    if (this.#ways.size >= MOST_WAYS && before === undefined) this.#ways.clear()
    this.#ways.set(folder, { at: now, root })
  }

  /** Calls `answer` in this turn's check phase (as afterEvents) with whether `directory` is still trusted to hold no document. */
  missingAfterEvents<T>(directory: string, answer: (missing: boolean) => T | Promise<T>): Promise<T> {
    return this.#inCheckPhase(() => answer(this.#fresh(directory, 'missingAt')))
  }

  /**
   * A stat just found `entry`, the cache's version of `directory`'s document: trusted from now if
   * the folder and those above it were watched before that stat. Else, when a stat found it less
   * than TRUST_MS ago too (a hot document), they are watched now, and it is trusted after the next
   * stat; a document read less often gains nothing from a watch, as each of its reads would stat
   * again anyway. `chain` gives the folders from the store folder down to `directory`.
   */
  checked(directory: string, entry: CacheEntry, chain: () => string[]): void {
    const now = performance.now()
    const watched = this.#watched.get(directory)
    if (watched !== undefined) {
      watched.document = true
      watched.checkedAt = now
      watched.version = entry.version
      watched.usedAt = now
      return
    }
    const hot = now - entry.checkedAt < TRUST_MS
    entry.checkedAt = now
    if (!hot || this.#maxWatches === 0 || this.#closed || now < this.#refusedUntil) return
    const made = this.#watchChain(chain())
    if (made !== undefined) made.document = true
  }

  /**
   * Calls `answer` in this turn's check phase, once every event read with the request in the
   * poll phase before it has been applied (one setImmediate for all the hits of a turn), with
   * the cache's entry of `directory`'s document if it is still trusted; else with undefined, and
   * it is trusted no more until a stat finds the cache's version again.
   */
  afterEvents<T>(directory: string, answer: (entry: CacheEntry | undefined) => T | Promise<T>): Promise<T> {
    return this.#inCheckPhase(() => answer(this.#trustedEntry(directory)))
  }

  /**
   * As afterEvents for many documents at once (a page's), those of the folders `folderOf` gives for
   * `names`: undefined at once unless every one is trusted now; else `answer` gets their cache
   * entries in this turn's check phase if every one still is, or undefined.
   */
  allAfterEvents<T>(names: readonly string[], folderOf: (name: string) => string, answer: (entries: CacheEntry[] | undefined) => T): Promise<T> | undefined {
    const directories: string[] = []
    for (const name of names) {
      const directory = folderOf(name)
      // Stops at the first one not trusted: a window of a big collection mostly is not.
      if (!this.trusted(directory)) return undefined
      directories.push(directory)
    }
    return this.#inCheckPhase(() => {
      const entries: CacheEntry[] = []
      for (const directory of directories) {
        const entry = this.#trustedEntry(directory)
        if (entry === undefined) return answer(undefined)
        entries.push(entry)
      }
      return answer(entries)
    })
  }

  /** Runs `run` in this turn's check phase (one setImmediate for all that wait), with its outcome as the promise's. */
  #inCheckPhase<T>(run: () => T | Promise<T>): Promise<T> {
    return this.#checkPhase.run(run)
  }

  #trustedEntry(directory: string): CacheEntry | undefined {
    const watched = this.#watched.get(directory)
    if (watched === undefined || performance.now() - watched.checkedAt >= TRUST_MS) return undefined
    const entry = this.#cache.current(watched.file)
    if (entry !== undefined && watched.version !== undefined && sameFileVersion(entry.version, watched.version)) return entry
    watched.checkedAt = -Infinity
    return undefined
  }

  /** Closes every watch: the store's hits stat their files from now on. */
  close(): void {
    this.#closed = true
    for (const watched of [...this.#watched.values()]) this.#forget(watched)
  }

  /** How many folders are watched now. */
  get size(): number {
    return this.#watched.size
  }

  /** Watches each folder of `chain` not yet watched (after making room); returns the last one's, or undefined when a watch could not be made, or there was no room. */
  #watchChain(chain: string[]): Watched | undefined {
    let missing = 0
    while (missing < chain.length && !this.#watched.has(chain[chain.length - 1 - missing])) missing++
    if (missing > this.#maxWatches) return undefined
    let parent = this.#watched.get(chain[chain.length - 1 - missing])
    if (!this.#makeRoom(missing, parent)) return undefined
    for (let index = chain.length - missing; index < chain.length; index++) {
      const made = this.#watch(chain[index], parent)
      if (made === undefined) {
        if (parent !== undefined) this.#release(parent)
        return undefined
      }
      parent = made
    }
    return parent
  }

  /** One folder's watch, or undefined when it cannot be watched (then none is made for a while, unless the folder just went). */
  #watch(directory: string, parent: Watched | undefined): Watched | undefined {
    let watcher: FSWatcher
    try {
      if (!isLocal(directory)) throw Object.assign(new Error('not a local file system'), { code: 'EREMOTE' })
      watcher = watch(directory, { persistent: false })
    } catch (error) {
      const code = errorCode(error)
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.#refusedUntil = performance.now() + RETRY_MS
      return undefined
    }
    const watched: Watched = {
      directory,
      prefix: directory.endsWith(sep) ? directory : directory + sep,
      file: (directory.endsWith(sep) ? directory : directory + sep) + DOC_FILE,
      name: basename(directory),
      watcher,
      parent,
      children: new Set(),
      document: false,
      checkedAt: -Infinity,
      version: undefined,
      missingAt: -Infinity,
      usedAt: performance.now(),
      way: false,
      closed: false,
    }
    watcher.on('change', (_kind, name) => this.#heard(watched, typeof name === 'string' ? name : name?.toString()))
    watcher.on('error', () => this.#failed())
    parent?.children.add(watched)
    this.#watched.set(directory, watched)
    return watched
  }

  /** An event in a watched folder: what it may have changed is no longer trusted. */
  #heard(watched: Watched, name: string | undefined): void {
    if (this.#burst.heard()) this.#distrustAll()
    if (watched.closed) return
    // A folder right below the store folder that an event names may now be a link, a file or none.
    if (watched.way && name !== undefined) this.#ways.delete(watched.prefix + name)
    if (name === DOC_FILE) {
      watched.checkedAt = -Infinity
      watched.missingAt = -Infinity
      return
    }
    // The store's own files (temp files, long names' @name, the lock, the trash) are no document.
    if (name !== undefined && name.startsWith('@')) return
    // The folder itself went or moved, or the kernel did not say which entry: none of it is known.
    if (name === undefined || name === watched.name) return this.#drop(watched)
    // An entry that is a watched folder: it may now be another folder, or none.
    const child = this.#watched.get(watched.prefix + name)
    if (child !== undefined) this.#drop(child)
  }

  /** A watcher failed: every hit stats its file, and no watch is made for a while. */
  #failed(): void {
    this.#refusedUntil = performance.now() + RETRY_MS
    for (const watched of [...this.#watched.values()]) this.#forget(watched)
  }

  /** So many events in one turn that some may have been lost: every hit stats its file once more. */
  #distrustAll(): void {
    this.#ways.clear()
    for (const watched of this.#watched.values()) {
      watched.checkedAt = -Infinity
      watched.missingAt = -Infinity
    }
  }

  /** Stops watching a folder and every folder below it, then those above that nothing needs any more. */
  #drop(watched: Watched): void {
    this.#forget(watched)
    if (watched.parent !== undefined) this.#release(watched.parent)
  }

  /** Closes `watched` and every watched folder below it. */
  #forget(watched: Watched): void {
    if (watched.closed) return
    watched.closed = true
    for (const child of watched.children) this.#forget(child)
    watched.watcher.close()
    this.#watched.delete(watched.directory)
    watched.parent?.children.delete(watched)
  }

  /** Closes `watched` if it is neither a hit document's folder nor above one, nor kept for writes, and so on upwards, up to `keep` (left open). */
  #release(watched: Watched, keep?: Watched): void {
    for (let at: Watched | undefined = watched; at !== undefined && at !== keep && !at.closed && !at.document && !at.way && at.children.size === 0; at = at.parent) {
      this.#forget(at)
    }
  }

  /**
   * Makes room for `count` more watches by closing documents' folders that no GET used for
   * WATCH_IDLE_MS, each with the folders above it that nothing else needs; false when there is not
   * enough room now. A clock: each attempt looks at LOOK_AT folders at most, from where the last one
   * stopped. A folder with watched folders below stays, as does `keep`, the folder the new watches go
   * below, and every folder above it.
   */
  #makeRoom(count: number, keep: Watched | undefined): boolean {
    const now = performance.now()
    for (let looked = 0; this.#watched.size + count > this.#maxWatches; looked++) {
      if (looked === LOOK_AT) return false
      const hand = this.#watched.values().next().value as Watched
      this.#watched.delete(hand.directory)
      if (now - hand.usedAt < WATCH_IDLE_MS || hand.children.size > 0 || hand === keep) {
        this.#watched.set(hand.directory, hand)
      } else {
        this.#forget(hand)
        if (hand.parent !== undefined) this.#release(hand.parent, keep)
      }
    }
    return true
  }
}

