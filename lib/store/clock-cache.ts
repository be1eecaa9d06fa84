/**
 * Entries by key, bounded in count and in a size of their own, for the
 * stores' caches of recently used documents (lib/store/file/document-cache.ts,
 * lib/store/postgres/json-cache.ts). What goes first is the oldest entry not
 * used since eviction last passed it (the "clock" approximation of least
 * recently used): a hit only marks its entry, where moving it to the back of
 * the Map made every hit cost a delete and an insert, and a full cache that
 * had seen many of them slowed each GET by half (measured in bench/).
 */
export class ClockCache<Entry extends { recent: boolean }> {
  // In insertion order: new entries join the back, and the hand goes round from the front.
  readonly #entries = new Map<string, Entry>()
  readonly #limits: ClockCacheLimits<Entry>
  #size = 0
  /**
   * The clock's hand: an iterator kept from one eviction to the next. A Map's
   * iterator stays valid while entries are added and deleted (it visits those
   * added behind it, skips those deleted), so an eviction goes on where the
   * last stopped instead of walking again past every entry it already
   * cleared, which made each insert into a full cache cost 4.4 µs instead of 0.3.
   */
  #hand: Iterator<[string, Entry]> | undefined

  constructor(limits: ClockCacheLimits<Entry>) {
    this.#limits = limits
  }

  /** The entry at `key`, marked as used. */
  get(key: string): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry !== undefined) entry.recent = true
    return entry
  }

  has(key: string): boolean {
    return this.#entries.has(key)
  }

  /** Keeps `entry` at `key`, in place of what was kept there; one larger than an entry may be is not kept. */
  set(key: string, entry: Entry): void {
    this.delete(key)
    const size = this.#limits.sizeOf(entry)
    const { maxEntries, maxSize, maxEntrySize = maxSize } = this.#limits
    // What could never stay is not kept at all (and the sweep below always finds another entry to drop).
    if (size > Math.min(maxSize, maxEntrySize) || maxEntries < 1) return
    this.#entries.set(key, entry)
    this.#size += size
    while (this.#entries.size > maxEntries || this.#size > maxSize) this.#evictOne(key)
  }

  delete(key: string): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    this.#size -= this.#limits.sizeOf(entry)
  }

  keys(): IterableIterator<string> {
    return this.#entries.keys()
  }

  get size(): number {
    return this.#entries.size
  }

  /** True when an entry of `size` would be kept with none dropped for it. */
  hasRoomFor(size: number): boolean {
    return this.#entries.size < this.#limits.maxEntries && this.#size + size <= this.#limits.maxSize
  }

  /**
   * Drops the next entry under the hand not used since the hand last passed
   * it; those used lose their mark and get another round, and so does `kept`,
   * the entry just set: when every other one was used, the hand reaches it
   * first, and it must not be what goes. Having passed the back, the hand
   * starts again at the front.
   */
  #evictOne(kept: string): void {
    for (let laps = 0; laps < 3; ) {
      const next = (this.#hand ??= this.#entries.entries()).next()
      if (next.done) {
        this.#hand = undefined
        laps++
        continue
      }
      const [key, entry] = next.value
      if (entry.recent || key === kept) {
        entry.recent = false
        continue
      }
      this.#entries.delete(key)
      this.#size -= this.#limits.sizeOf(entry)
      return
    }
  }
}

export interface ClockCacheLimits<Entry> {
  /** Most entries kept. */
  maxEntries: number
  /** Most size kept, in all. */
  maxSize: number
  /** Largest entry kept (default: maxSize). */
  maxEntrySize?: number
  /** An entry's size: the same for as long as it is kept. */
  sizeOf: (entry: Entry) => number
}
