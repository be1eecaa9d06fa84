import type { Doc } from '../store/store.ts'
import { compareIds } from '../store/store.ts'
import type { StoreError } from '../store/errors.ts'
import { valueAt } from '../json/values.ts'
import { searchTextsOf } from './match.ts'
import type { Pace } from '../data/pace.ts'

/** What a query reads: the fields it filters or sorts on, those it compares for equality, and whether it searches (`q`). */
export interface IndexNeeds {
  fields: string[]
  postings: string[]
  search: boolean
}

/**
 * What a listing index keeps of one collection (docs/http-api.md, "Listing
 * queries"): each child's document as compact text, and, made on the first
 * query that needs them, the values of the fields that queries filter and
 * sort on (a column per field), the children holding each value of a field
 * compared for equality (its postings), and each document's texts for `q`.
 * A query then reads these compact values, never a file.
 *
 * Rows live in slots (reused once freed), so a column is a plain array.
 */
export interface IndexRow {
  name: string
  slot: number
  /** The document as `JSON.stringify` makes it: what a listing answers. */
  text: string
  /** The store's version token of the document when it was read (see Store.documentVersions). */
  version: string | undefined
  /** When the row came: in a store listed in its file's order, rows keep this order (new items last, as in the file). */
  arrival: number
}

/** A child whose document is broken: left out of listings and named, as a plain listing does. */
export interface BrokenChild {
  error: StoreError
  version: string | undefined
}

/** The separator of a document's `q` texts in its one search text: a query text holding it is left to the plain listing. */
export const SEARCH_SEPARATOR = '\u0000'

/** About what a row, a cell and a posting cost beyond their text, in bytes (for the memory bound). */
const ROW_BYTES = 160
const CELL_BYTES = 16
const POSTING_BYTES = 48
/** About what a column and a field's postings cost beyond their cells and entries: the map entry, the array or map, the field's name. */
const COLUMN_BYTES = 512
const POSTINGS_BYTES = 256

/**
 * Most columns an index keeps: queries of ever new fields drop the least
 * recently used (docs/http-api.md, "Listing queries"), which the next query
 * of them makes again.
 */
export const MOST_COLUMNS = 256

export class CollectionIndex {
  readonly rows = new Map<string, IndexRow>()
  readonly broken = new Map<string, BrokenChild>()
  /** Rows in id order (compareIds), or in a store's file order (Store.fileOrder) by arrival: a listing without a sort answers in this order. */
  readonly ordered: IndexRow[] = []
  readonly #fileOrder: boolean
  #arrivals = 0
  readonly #bySlot: (IndexRow | undefined)[] = []
  readonly #freeSlots: number[] = []
  /** Field → value of each slot (valueAt of the document; undefined when it has none). */
  readonly #columns = new Map<string, unknown[]>()
  /** Field → String(value) → slots holding it (present values only: what `eq` and `in` compare). */
  readonly #postings = new Map<string, Map<string, Set<number>>>()
  /** Each slot's lower-cased texts for `q`, joined by SEARCH_SEPARATOR. */
  #searchTexts: string[] | undefined
  /** When each field's column or postings were last asked for, counted in queries: the least recently used go first. */
  readonly #lastUse = new Map<string, number>()
  #uses = 0
  /** An estimate of the memory held, in bytes. */
  bytes = 0

  /** `fileOrder`: rows in the order they are first put, read from a store in its file's order (Store.fileOrder). */
  constructor(fileOrder = false) {
    this.#fileOrder = fileOrder
  }

  /** The order of two rows in a listing without a sort, and of ties in a sort. */
  compareRows(a: IndexRow, b: IndexRow): number {
    return this.#fileOrder ? a.arrival - b.arrival : compareIds(a.name, b.name)
  }

  /** The first position in `ordered` at which `row` could be inserted. */
  #insertionPoint(row: IndexRow): number {
    let low = 0
    let high = this.ordered.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.compareRows(this.ordered[middle], row) < 0) low = middle + 1
      else high = middle
    }
    return low
  }

  row(slot: number): IndexRow {
    return this.#bySlot[slot]!
  }

  /** Keeps a child's document (parsed as `doc`), replacing what was kept of it. */
  put(name: string, doc: Doc, text: string, version: string | undefined): void {
    this.broken.delete(name)
    let row = this.rows.get(name)
    if (row) {
      this.#unindex(row)
      this.bytes += text.length - row.text.length
      row.text = text
      row.version = version
    } else {
      const slot = this.#freeSlots.pop() ?? this.#bySlot.length
      row = { name, slot, text, version, arrival: this.#arrivals++ }
      this.#bySlot[slot] = row
      this.rows.set(name, row)
      this.ordered.splice(this.#insertionPoint(row), 0, row)
      this.bytes += ROW_BYTES + name.length + text.length
    }
    this.#index(row, doc)
  }

  /** Keeps a child as broken: it leaves the rows. */
  putBroken(name: string, error: StoreError, version: string | undefined): void {
    this.remove(name)
    this.broken.set(name, { error, version })
  }

  /** Forgets a child that holds no document any more. */
  remove(name: string): void {
    this.broken.delete(name)
    const row = this.rows.get(name)
    if (!row) return
    this.#unindex(row)
    this.rows.delete(name)
    this.#bySlot[row.slot] = undefined
    this.#freeSlots.push(row.slot)
    const at = this.#insertionPoint(row)
    if (this.ordered[at] === row) this.ordered.splice(at, 1)
    this.bytes -= ROW_BYTES + name.length + row.text.length
  }

  /**
   * Makes the columns, postings and search texts a query needs that are not
   * there yet, in one pass over the kept texts (each parsed once), spending
   * the work on `pace`.
   */
  async prepare(needs: IndexNeeds, pace: Pace): Promise<void> {
    this.#uses++
    for (const field of needs.fields) this.#lastUse.set(field, this.#uses)
    const columns = needs.fields.filter((field) => !this.#columns.has(field))
    const postings = needs.postings.filter((field) => !this.#postings.has(field))
    const search = needs.search && !this.#searchTexts
    if (columns.length === 0 && postings.length === 0 && !search) return
    // Room first: the columns this query does not need, least recently used first, past MOST_COLUMNS.
    const room = MOST_COLUMNS - columns.length
    if (this.#columns.size > room) this.dropColumns(needs.fields, { count: this.#columns.size - room })
    // Registered first: a row put meanwhile fills its own cells.
    for (const field of columns) {
      this.#columns.set(field, [])
      this.bytes += COLUMN_BYTES + field.length
    }
    const newPostings = postings.filter((field) => columns.includes(field))
    for (const field of postings) {
      this.#postings.set(field, new Map())
      this.bytes += POSTINGS_BYTES + field.length
    }
    if (search) this.#searchTexts = []
    // Postings on a field whose column is already there come from that column.
    for (const field of postings) {
      if (columns.includes(field)) continue
      const column = this.#columns.get(field)!
      const map = this.#postings.get(field)!
      for (const row of this.rows.values()) this.#post(map, row.slot, column[row.slot])
    }
    if (columns.length === 0 && !search) return
    for (const row of [...this.rows.values()]) {
      if (this.#bySlot[row.slot] !== row) continue
      const doc = JSON.parse(row.text) as Doc
      for (const field of columns) {
        const column = this.#columns.get(field)!
        this.#setCell(column, row.slot, valueAt(doc, field))
        const map = this.#postings.get(field)
        if (map && newPostings.includes(field)) this.#post(map, row.slot, column[row.slot])
      }
      if (search) this.#setSearchText(this.#searchTexts!, row.slot, doc)
      const turn = pace(row.text.length)
      if (turn) await turn
    }
  }

  /** How many columns the index keeps (for tests). */
  get columnCount(): number {
    return this.#columns.size
  }

  /**
   * Drops the columns (and their postings) of fields other than `keep`, least
   * recently used first, until the index holds at most `bytes` or `count` of
   * them are gone; a later query of a dropped field makes its column again.
   */
  dropColumns(keep: readonly string[], until: { bytes?: number; count?: number }): void {
    const { bytes = -Infinity, count = Infinity } = until
    const kept = new Set(keep)
    const order = [...this.#columns.keys()].filter((field) => !kept.has(field)).sort((a, b) => (this.#lastUse.get(a) ?? 0) - (this.#lastUse.get(b) ?? 0))
    let dropped = 0
    for (const field of order) {
      if (this.bytes <= bytes || dropped >= count) break
      this.#dropColumn(field)
      dropped++
    }
  }

  #dropColumn(field: string): void {
    const column = this.#columns.get(field)!
    for (const row of this.rows.values()) this.bytes -= cellBytes(column[row.slot])
    this.#columns.delete(field)
    this.bytes -= COLUMN_BYTES + field.length
    const postings = this.#postings.get(field)
    if (postings) {
      for (const [key, slots] of postings) this.bytes -= POSTING_BYTES + key.length + POSTING_BYTES * slots.size
      this.#postings.delete(field)
      this.bytes -= POSTINGS_BYTES + field.length
    }
    this.#lastUse.delete(field)
  }

  /** The column of a field (prepared first). */
  column(field: string): unknown[] {
    return this.#columns.get(field)!
  }

  /** The postings of a field (prepared first). */
  postings(field: string): Map<string, Set<number>> {
    return this.#postings.get(field)!
  }

  /** Each slot's search text for `q` (prepared first). */
  searchTexts(): string[] {
    return this.#searchTexts!
  }

  #index(row: IndexRow, doc: Doc): void {
    for (const [field, column] of this.#columns) {
      this.#setCell(column, row.slot, valueAt(doc, field))
      const postings = this.#postings.get(field)
      if (postings) this.#post(postings, row.slot, column[row.slot])
    }
    if (this.#searchTexts) this.#setSearchText(this.#searchTexts, row.slot, doc)
  }

  #unindex(row: IndexRow): void {
    for (const [field, column] of this.#columns) {
      const value = column[row.slot]
      const postings = this.#postings.get(field)
      if (postings && value !== undefined && value !== null) {
        const key = String(value)
        const slots = postings.get(key)
        if (slots?.delete(row.slot)) {
          this.bytes -= POSTING_BYTES
          if (slots.size === 0) {
            postings.delete(key)
            this.bytes -= POSTING_BYTES + key.length
          }
        }
      }
      this.bytes -= cellBytes(value)
      column[row.slot] = undefined
    }
    if (this.#searchTexts) {
      this.bytes -= (this.#searchTexts[row.slot]?.length ?? 0) + CELL_BYTES
      this.#searchTexts[row.slot] = ''
    }
  }

  #setCell(column: unknown[], slot: number, value: unknown): void {
    column[slot] = value
    this.bytes += cellBytes(value)
  }

  #post(postings: Map<string, Set<number>>, slot: number, value: unknown): void {
    if (value === undefined || value === null) return
    const key = String(value)
    let slots = postings.get(key)
    if (!slots) {
      postings.set(key, (slots = new Set()))
      this.bytes += POSTING_BYTES + key.length
    }
    slots.add(slot)
    this.bytes += POSTING_BYTES
  }

  /** Each text after a separator; '' when the document has no text at all (which not even an empty `q` matches). */
  #setSearchText(texts: string[], slot: number, doc: Doc): void {
    const text = searchTextsOf(doc).map((one) => SEARCH_SEPARATOR + one).join('')
    texts[slot] = text
    this.bytes += text.length + CELL_BYTES
  }
}

function cellBytes(value: unknown): number {
  if (typeof value === 'string') return CELL_BYTES + value.length
  if (typeof value === 'object' && value !== null) return CELL_BYTES + JSON.stringify(value).length
  return CELL_BYTES
}
