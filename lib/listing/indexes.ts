import type { Documents } from '../data/documents.ts'
import { Gate, type Pace } from '../data/pace.ts'
import type { StoreError } from '../store/errors.ts'
import type { NodePath, StoreChange } from '../store/store.ts'
import { CollectionIndex } from './collection-index.ts'
import type { Filter } from './filters.ts'
import { indexNeeds, queryIndex } from './index-query.ts'
import type { SortKey } from './sort.ts'

/**
 * The listing indexes of one data layer (docs/http-api.md, "Listing
 * queries"): one per collection that a filter, `q` or `_sort` was asked of,
 * built on that first query from every document, then kept current without
 * reading the collection again:
 *
 * - the change feed names each document the store wrote or removed; the
 *   index reads those again before its next answer, so a listing after a
 *   write always shows it;
 * - for a store whose documents a person may change behind its back (the
 *   file store, Store.documentVersions), a listing more than
 *   HAND_EDIT_TRUST_MS after the index last looked at the folder first looks
 *   again: the list of children (one stat while it is unchanged) and one
 *   stat of each document file, reading only those that changed. A hand edit
 *   shows within that second, at a cost of a stat a document once a second
 *   at most, and only while the collection is being listed.
 *
 * Memory is bounded: the indexes of a data layer hold at most
 * INDEX_MEMORY_LIMIT (estimated, columns and postings counted), the columns
 * a query does not need going first, least recently used first, then whole
 * indexes, least recently used first; a collection too big for it alone is
 * listed the plain way.
 */

/** How long a look at the store is trusted, for a store whose documents a person may edit (docs/http-api.md, "Listing queries"). */
export const HAND_EDIT_TRUST_MS = 1000

/** Most memory, estimated, that the listing indexes of one data layer hold. */
export const INDEX_MEMORY_LIMIT = 256 * 1024 * 1024

/** A collection too big for the limit is tried again after this long. */
const REFUSAL_MS = 60_000

/** Document versions asked for at once between two looks at the clock. */
const VERSION_BATCH = 512

/** What an index answers: the window's documents as text, how many matched, and the broken children left out. */
export interface IndexedListing {
  texts: string[]
  total: number
  skipped: StoreError[]
}

interface Entry {
  path: NodePath
  index: CollectionIndex | undefined
  /** Children the feed named since they were last read. */
  dirty: Set<string>
  /** The collection or one above it was removed: the children are listed again before the next answer. */
  recheck: boolean
  /** performance.now() when the store was last looked at in full. */
  checkedAt: number
  usedAt: number
  /** One build, check or query of an index at a time. */
  lock: Gate
  refusedAt?: number
}

const registries = new WeakMap<Documents, ListingIndexes>()

/** The listing indexes of a data layer, made on first use. */
export function listingIndexes(documents: Documents): ListingIndexes {
  let indexes = registries.get(documents)
  if (!indexes) registries.set(documents, (indexes = new ListingIndexes(documents)))
  return indexes
}

/** The answer for a query the indexes leave to the plain listing. */
export const NOT_INDEXED = Symbol('not indexed')

export class ListingIndexes {
  readonly #documents: Documents
  readonly #entries = new Map<string, Entry>()
  /** Most memory, estimated, these indexes hold (INDEX_MEMORY_LIMIT; smaller in tests). */
  readonly #limit: number
  /** How many times an index was built from every document (for tests). */
  builds = 0

  constructor(documents: Documents, limit = INDEX_MEMORY_LIMIT) {
    this.#documents = documents
    this.#limit = limit
    documents.subscribe((change) => this.#changed(change))
  }

  /** Estimated bytes held by every index. */
  get bytes(): number {
    let bytes = 0
    for (const entry of this.#entries.values()) bytes += entry.index?.bytes ?? 0
    return bytes
  }

  /**
   * The listing of `path`'s children that pass `filters` in `sort` order,
   * window given by `windowOf` once the total is known; undefined when the
   * collection does not exist, NOT_INDEXED for a query left to the plain listing.
   */
  async answer(
    path: NodePath,
    filters: readonly Filter[],
    sort: readonly SortKey[],
    windowOf: (total: number) => { start: number; end: number | undefined },
    pace: Pace,
  ): Promise<IndexedListing | undefined | typeof NOT_INDEXED> {
    const needs = indexNeeds(filters, sort)
    if (!needs) return NOT_INDEXED
    const key = JSON.stringify(path)
    let entry = this.#entries.get(key)
    if (entry?.refusedAt !== undefined) {
      if (performance.now() - entry.refusedAt < REFUSAL_MS) return NOT_INDEXED
      this.#entries.delete(key)
      entry = undefined
    }
    if (!entry) {
      entry = { path, index: undefined, dirty: new Set(), recheck: false, checkedAt: -Infinity, usedAt: 0, lock: new Gate(1) }
      this.#entries.set(key, entry)
    }
    const current = entry
    current.usedAt = performance.now()
    return current.lock.run(async () => {
      const index = await this.#bringUpToDate(current, pace)
      if (index === undefined) {
        if (this.#entries.get(key) === current) this.#entries.delete(key)
        return undefined
      }
      if (index === NOT_INDEXED) return NOT_INDEXED
      await index.prepare(needs, pace)
      if (!this.#withinLimit(current, [...needs.fields])) return NOT_INDEXED
      const { rows, total } = await queryIndex(index, filters, sort, windowOf, pace)
      return { texts: rows.map((row) => row.text), total, skipped: [...index.broken.values()].map((broken) => broken.error) }
    })
  }

  /** The entry's index as the store has it now; undefined when the collection is gone. */
  async #bringUpToDate(entry: Entry, pace: Pace): Promise<CollectionIndex | undefined | typeof NOT_INDEXED> {
    if (!entry.index) {
      const built = await this.#build(entry, pace)
      if (built === undefined || built === NOT_INDEXED) return built
    }
    const index = entry.index!
    const handEdits = this.#documents.handEdited
    if (entry.recheck || (handEdits && performance.now() - entry.checkedAt > HAND_EDIT_TRUST_MS)) {
      if (!(await this.#check(entry, index, pace))) return undefined
    }
    // Changes the feed reports while these are read are read in the next round.
    for (let round = 0; round < 4 && entry.dirty.size > 0; round++) await this.#refresh(entry, index, pace)
    // A collection whose last child went may be gone with it: an index answers as the plain listing does, never `[]` for a 404.
    if (index.rows.size === 0 && index.broken.size === 0 && !(await this.#names(entry.path))) return undefined
    return index
  }

  async #build(entry: Entry, pace: Pace): Promise<CollectionIndex | undefined | typeof NOT_INDEXED> {
    this.builds++
    entry.dirty.clear()
    entry.recheck = false
    const startedAt = performance.now()
    const names = await this.#names(entry.path)
    if (!names) return undefined
    const index = new CollectionIndex(this.#documents.fileOrder)
    for (let start = 0; start < names.length; start += VERSION_BATCH) {
      await this.#read(entry, index, names.slice(start, start + VERSION_BATCH), pace)
      if (index.bytes > this.#limit) {
        entry.refusedAt = performance.now()
        return NOT_INDEXED
      }
    }
    entry.index = index
    entry.checkedAt = startedAt
    return index
  }

  /** Looks at the store in full: children added or gone, and (hand edits) document files changed. False when the collection is gone. */
  async #check(entry: Entry, index: CollectionIndex, pace: Pace): Promise<boolean> {
    const startedAt = performance.now()
    entry.recheck = false
    const names = await this.#names(entry.path)
    if (!names) return false
    let added = 0
    for (const name of names) {
      if (!index.rows.has(name) && !index.broken.has(name)) {
        entry.dirty.add(name)
        added++
      }
    }
    if (names.length - added !== index.rows.size + index.broken.size) {
      const present = new Set(names)
      for (const name of [...index.rows.keys(), ...index.broken.keys()]) if (!present.has(name)) entry.dirty.add(name)
    }
    if (this.#documents.handEdited) {
      for (let start = 0; start < names.length; start += VERSION_BATCH) {
        const batch = names.slice(start, start + VERSION_BATCH)
        const versions = this.#documents.documentVersions(entry.path, batch)
        batch.forEach((name, at) => {
          const known = index.rows.get(name)?.version ?? index.broken.get(name)?.version
          if (versions[at] !== known) entry.dirty.add(name)
        })
        const turn = pace(batch.length * 64)
        if (turn) await turn
      }
    }
    entry.checkedAt = startedAt
    return true
  }

  /** Reads again the children the feed or a check named. */
  async #refresh(entry: Entry, index: CollectionIndex, pace: Pace): Promise<void> {
    const names = [...entry.dirty]
    entry.dirty.clear()
    for (let start = 0; start < names.length; start += VERSION_BATCH) await this.#read(entry, index, names.slice(start, start + VERSION_BATCH), pace)
  }

  /** Reads the named children into the index: versions first, so a change after them is seen by the next check. */
  async #read(entry: Entry, index: CollectionIndex, names: readonly string[], pace: Pace): Promise<void> {
    const versions = this.#documents.handEdited ? this.#documents.documentVersions(entry.path, names) : undefined
    const { docs, skipped } = await this.#documents.readChildren(entry.path, names)
    const broken = new Map(skipped.map((error) => [error.path[error.path.length - 1], error]))
    for (let at = 0; at < names.length; at++) {
      const name = names[at]
      const doc = docs.get(name)
      const error = broken.get(name)
      if (doc) {
        const text = JSON.stringify(doc)
        index.put(name, doc, text, versions?.[at])
        const turn = pace(text.length * 2)
        if (turn) await turn
      } else if (error) index.putBroken(name, error, versions?.[at])
      else index.remove(name)
    }
  }

  /** The children of `path` holding a document, in the store's order; undefined when there is no such node. */
  #names(path: NodePath): Promise<string[] | undefined> {
    return this.#documents.documentNames(path)
  }

  /**
   * Drops the columns this query does not need, least recently used first,
   * then the least recently used indexes, until all fit; false when this one
   * alone does not.
   */
  #withinLimit(current: Entry, needed: readonly string[]): boolean {
    let bytes = this.bytes
    if (bytes <= this.#limit) return true
    const index = current.index!
    index.dropColumns(needed, { bytes: index.bytes - (bytes - this.#limit) })
    bytes = this.bytes
    const others = [...this.#entries.values()].filter((entry) => entry !== current && entry.index).sort((a, b) => a.usedAt - b.usedAt)
    for (const entry of others) {
      if (bytes <= this.#limit) break
      bytes -= entry.index!.bytes
      this.#entries.delete(JSON.stringify(entry.path))
    }
    if (bytes <= this.#limit) return true
    current.index = undefined
    current.refusedAt = performance.now()
    return false
  }

  /** The feed's change: the changed child is read again; a removal above an index lists its children again. */
  #changed(change: StoreChange): void {
    const { path } = change
    if (path.length > 0) this.#entries.get(JSON.stringify(path.slice(0, -1)))?.dirty.add(path[path.length - 1])
    if (change.type !== 'delete') return
    for (const entry of this.#entries.values()) {
      if (path.length <= entry.path.length && path.every((segment, at) => entry.path[at] === segment)) entry.recheck = true
    }
  }
}
