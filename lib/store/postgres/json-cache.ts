import { ClockCache } from '../clock-cache.ts'

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
 * Evicted as the file store's cache is (lib/store/clock-cache.ts).
 */
export class JsonCache {
  readonly #entries = new ClockCache<JsonEntry>({
    maxEntries: MAX_ENTRIES,
    maxSize: MAX_CHARS,
    maxEntrySize: MAX_ENTRY_CHARS,
    sizeOf: (entry) => entry.text.length + entry.json.length,
  })

  /** The compact JSON and ETag of the node at `key` when they were made from exactly `text`. */
  get(key: string, text: string): { json: string; etag: string } | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined || entry.text !== text) return undefined
    return { json: entry.json, etag: entry.etag }
  }

  /** Keeps what was made from `text` at `key`, in place of what was kept there. */
  set(key: string, text: string, json: string, etag: string): void {
    this.#entries.set(key, { text, json, etag, recent: false })
  }
}
