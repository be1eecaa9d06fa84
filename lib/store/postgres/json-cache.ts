/** Most documents kept. */
const MAX_ENTRIES = 10_000
/** Most characters of stored and compact text kept, in all. */
const MAX_CHARS = 16 * 1024 * 1024
/** A document whose stored and compact text are longer than this is not kept. */
const MAX_ENTRY_CHARS = 64 * 1024

interface JsonEntry {
  /** The stored text the entry was made from: it answers only for that very text. */
  text: string
  json: string
  etag: string
  /** Used since eviction last passed it. */
  recent: boolean
}

/**
 * The compact JSON and ETag of recently read documents, by node key, each
 * with the stored text it was made from. A read still fetches the text every
 * time and uses the entry only when that text is the very same, so a write
 * on another instance or an edit by hand is served at once; a hit saves
 * parsing, checking and hashing the document again.
 *
 * Evicted as the file store's cache is (lib/store/file/document-cache.ts):
 * what goes first is the oldest entry not used since eviction last passed it
 * (the "clock" approximation of least recently used). A hit only marks its
 * entry; moving it to the back of the Map made every hit cost a delete and
 * an insert, which in the file store's cache halved GET speed.
 */
export class JsonCache {
  // In insertion order; eviction moves a recently used entry to the back instead of dropping it.
  readonly #entries = new Map<string, JsonEntry>()
  #chars = 0

  /** The compact JSON and ETag of the node at `key` when they were made from exactly `text`. */
  get(key: string, text: string): { json: string; etag: string } | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined || entry.text !== text) return undefined
    entry.recent = true
    return { json: entry.json, etag: entry.etag }
  }

  /** Keeps what was made from `text` at `key`, in place of what was kept there. */
  set(key: string, text: string, json: string, etag: string): void {
    this.#delete(key)
    const size = text.length + json.length
    // Never more than the bounds, so the sweep below always finds another entry to drop.
    if (size > MAX_ENTRY_CHARS) return
    this.#entries.set(key, { text, json, etag, recent: false })
    this.#chars += size
    while (this.#entries.size > MAX_ENTRIES || this.#chars > MAX_CHARS) this.#evictOne(key)
  }

  /** Drops the oldest entry not used since it was last passed; those used, and `kept`, the entry just set, get another round. */
  #evictOne(kept: string): void {
    for (const [key, entry] of this.#entries) {
      this.#entries.delete(key)
      if (entry.recent || key === kept) {
        entry.recent = false
        this.#entries.set(key, entry)
      } else {
        this.#chars -= entry.text.length + entry.json.length
        return
      }
    }
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    this.#chars -= entry.text.length + entry.json.length
  }
}
