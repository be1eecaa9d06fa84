import { statSync, type Stats } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { encodeSegment } from './encode.ts'
import { isMissing } from '../fs/fs-errors.ts'
import { childSegments, DOC_FILE } from './names.ts'
import { compareIds, idInsertionPoint } from '../store.ts'

/** What a listing needs to know of a directory's children without reading them. */
export interface ChildList {
  /** Segments of the child nodes, in id order (`compareIds`). */
  names: readonly string[]
  /** The children without a document of their own (nodes that only have children). */
  withoutDocument: ReadonlySet<string>
  /** Whether the directory's node holds a document itself: one stat, made when asked (a listing asks only of a folder with no children). */
  readonly hasDocument: boolean
}

interface DirectoryIndex {
  /** The directory's identity and mtime when `names` were last known to be complete. */
  ino: number
  mtimeMs: number
  names: string[]
  withoutDocument: Set<string>
}

/** Most child names kept over all indexes (about 60 bytes each). */
const MAX_NAMES = 500_000
/** Children whose document is checked between two yields to the event loop while an index is built. */
const CHECK_BATCH = 2000

/**
 * A per-directory index of child names, so that a page of a big collection
 * and its X-Total-Count need one stat of the collection's folder instead of
 * a directory listing and a read of every child (the file store gives `list`
 * the lstat that checked the way to the folder, so it is not looked at twice).
 *
 * The folder stays the truth. An index answers only while the folder's inode
 * and mtime are those it was made at: a person who adds, removes or renames a
 * child folder changes the mtime, and the index is brought up to date by one
 * directory listing that checks only the children it did not know. The
 * store's own writes update the index as they go (see `change`), so writing
 * does not cost the next listing a directory listing.
 *
 * Concurrent writes into one folder are taken as one batch: the folder's
 * mtime moves under each of them, so an index that was current when the
 * first began is trusted until the last ends, then takes the folder's new
 * mtime. An index built while writes run replays the changes they made
 * meanwhile, so it misses none of them.
 *
 * Known gaps: a child folder a person adds or removes while the store's own
 * writes into the same folder are in flight goes unseen until another change
 * by hand made while none is in flight. A document file deleted by hand from
 * a child folder that stays (because it has children) changes only that
 * child folder; the child goes on counting in X-Total-Count until the
 * collection folder changes, though it is never listed. The reverse, a
 * document added to such a folder, is seen at once.
 */
export class ChildIndexes {
  // Least recently used first, like the document cache.
  readonly #indexes = new Map<string, DirectoryIndex>()
  readonly #building = new Map<string, Promise<DirectoryIndex | undefined>>()
  /** Folders with store writes in flight. */
  readonly #batches = new Map<string, Batch>()
  /** The changes made to a folder while its index is being built, to replay on the new index. */
  readonly #journals = new Map<string, ChildChange[]>()
  #names = 0
  #builds = 0

  /** How many times an index was built from a directory listing (for tests and benchmarks). */
  get builds(): number {
    return this.#builds
  }

  /**
   * The directory's children, or undefined when there is no such directory. `known`: the
   * directory's stats, or 'missing', as the caller found them a moment ago (one look fewer).
   */
  async list(directory: string, known?: Stats | 'missing'): Promise<ChildList | undefined> {
    const stats = known === undefined ? statDirectory(directory) : known === 'missing' ? undefined : known
    if (stats === undefined) {
      this.#forget(directory)
      return undefined
    }
    let index = this.#indexes.get(directory)
    if (index !== undefined && (this.#batches.get(directory)?.trusted || sameDirectoryVersion(index, stats))) {
      this.#indexes.delete(directory)
      this.#indexes.set(directory, index)
    } else {
      index = await this.#update(directory, stats)
      if (index === undefined) return undefined
    }
    // Few children lack a document; a person may have given one of them a document since.
    for (const name of index.withoutDocument) {
      if (hasDocument(join(directory, encodeSegment(name)))) index.withoutDocument.delete(name)
    }
    return {
      names: index.names,
      withoutDocument: index.withoutDocument,
      get hasDocument() {
        return hasDocument(directory)
      },
    }
  }

  /**
   * Runs one of the store's own changes to `directories` (the folders on a
   * node's path) and keeps their indexes up to date: `apply` does the change
   * and returns how the children changed. An index that was current before
   * the change is current after it; one that was not is brought up to date by
   * its next listing.
   */
  async change<T>(directories: readonly string[], apply: () => Promise<T>, effects: (result: T) => ChildChange[]): Promise<T> {
    for (const directory of directories) this.#enter(directory)
    try {
      const result = await apply()
      for (const effect of effects(result)) {
        this.#journals.get(effect.directory)?.push(effect)
        const index = this.#indexes.get(effect.directory)
        if (index !== undefined) this.#apply(index, effect)
      }
      return result
    } finally {
      for (const directory of directories) this.#leave(directory)
    }
  }

  /** A write begins in `directory`: the first of a batch decides whether the index can be trusted through it. */
  #enter(directory: string): void {
    let batch = this.#batches.get(directory)
    if (batch === undefined) {
      const index = this.#indexes.get(directory)
      const stats = index && statDirectory(directory)
      batch = { writers: 0, trusted: index !== undefined && stats !== undefined && sameDirectoryVersion(index, stats) }
      this.#batches.set(directory, batch)
    }
    batch.writers++
  }

  /** A write ends: after the last of a batch, a trusted index takes the folder's mtime, which now holds only the store's changes. */
  #leave(directory: string): void {
    const batch = this.#batches.get(directory)!
    if (--batch.writers > 0) return
    this.#batches.delete(directory)
    const index = this.#indexes.get(directory)
    const stats = batch.trusted && index && statDirectory(directory)
    if (!index || !stats) return
    index.ino = stats.ino
    index.mtimeMs = stats.mtimeMs
  }

  #apply(index: DirectoryIndex, effect: ChildChange): void {
    if (effect.kind === 'removed') this.#removeName(index, effect.name)
    // A folder passed through on the way down may or may not hold a document: ask the disk.
    else this.#addName(index, effect.name, effect.kind === 'document' || hasDocument(join(effect.directory, encodeSegment(effect.name))))
  }

  /** Builds the index afresh (a stale one is not trusted); concurrent listings share the work. */
  #update(directory: string, stats: Stats): Promise<DirectoryIndex | undefined> {
    let building = this.#building.get(directory)
    if (building === undefined) {
      building = this.#read(directory, stats).finally(() => this.#building.delete(directory))
      this.#building.set(directory, building)
    }
    return building
  }

  async #read(directory: string, stats: Stats): Promise<DirectoryIndex | undefined> {
    const journal: ChildChange[] = []
    this.#journals.set(directory, journal)
    try {
      return await this.#build(directory, stats, journal)
    } finally {
      this.#journals.delete(directory)
    }
  }

  async #build(directory: string, stats: Stats, journal: ChildChange[]): Promise<DirectoryIndex | undefined> {
    this.#builds++
    // Stat first, list second: a change in between makes the next listing look again.
    let entries
    try {
      entries = await readdir(directory, { withFileTypes: true })
    } catch (error) {
      if (isMissing(error)) return undefined
      throw error
    }
    const names = (await childSegments(directory, entries)).sort(compareIds)
    const withoutDocument = new Set<string>()
    let checked = 0
    for (const name of names) {
      // A stale index is not trusted on which children hold a document: the folder changed behind it.
      if (!hasDocument(join(directory, encodeSegment(name)))) withoutDocument.add(name)
      // Checking 100 000 children takes a while: let other requests through now and then.
      if (++checked % CHECK_BATCH === 0) await new Promise((resolve) => setImmediate(resolve))
    }
    const index: DirectoryIndex = { ino: stats.ino, mtimeMs: stats.mtimeMs, names, withoutDocument }
    this.#forget(directory)
    this.#indexes.set(directory, index)
    this.#names += names.length
    // The store's own changes while the folder was read: some happened after readdir.
    for (const effect of journal) this.#apply(index, effect)
    // Whatever the store writes into the folder from now on reaches this index.
    const batch = this.#batches.get(directory)
    if (batch) batch.trusted = true
    while (this.#names > MAX_NAMES && this.#indexes.size > 1) this.#forget(this.#indexes.keys().next().value!)
    return index
  }

  #addName(index: DirectoryIndex, name: string, document: boolean): void {
    const at = idInsertionPoint(index.names, name)
    if (index.names[at] !== name) {
      index.names.splice(at, 0, name)
      this.#names++
    }
    if (document) index.withoutDocument.delete(name)
    else index.withoutDocument.add(name)
  }

  #removeName(index: DirectoryIndex, name: string): void {
    const at = idInsertionPoint(index.names, name)
    if (index.names[at] !== name) return
    index.names.splice(at, 1)
    index.withoutDocument.delete(name)
    this.#names--
  }

  #forget(directory: string): void {
    const index = this.#indexes.get(directory)
    if (index === undefined) return
    this.#indexes.delete(directory)
    this.#names -= index.names.length
  }
}

/** The store's writes in flight in one folder. */
interface Batch {
  writers: number
  /** The folder's index was current when the first began, or has been built since. */
  trusted: boolean
}

function sameDirectoryVersion(index: DirectoryIndex, stats: Stats): boolean {
  return index.ino === stats.ino && index.mtimeMs === stats.mtimeMs
}

/** How one of the store's own changes changed a directory's children. */
export interface ChildChange {
  directory: string
  name: string
  /** `document`: the child now holds a document; `node`: it exists (maybe without one); `removed`: it is gone. */
  kind: 'document' | 'node' | 'removed'
}

function statDirectory(directory: string): Stats | undefined {
  try {
    const stats = statSync(directory, { throwIfNoEntry: false })
    return stats?.isDirectory() ? stats : undefined
  } catch (error) {
    if (isMissing(error)) return undefined
    throw error
  }
}

function hasDocument(directory: string): boolean {
  try {
    return statSync(join(directory, DOC_FILE), { throwIfNoEntry: false }) !== undefined
  } catch (error) {
    if (isMissing(error)) return false
    throw error
  }
}
