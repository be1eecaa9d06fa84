import type { Change, Documents } from './documents.ts'
import { joinPath as displayPath } from '../path.ts'

/** How many changes are kept for clients that come back (docs/http-api.md, "Live updates"): the newest, up to both bounds. */
export interface ChangeWindow {
  maxChanges: number
  /** Bytes of the changes' JSON. */
  maxBytes: number
}

export const defaultChangeWindow: ChangeWindow = { maxChanges: 1000, maxBytes: 16 * 1024 * 1024 }

/**
 * A change as it was when it happened: its `{"path", "data"}` JSON is made
 * once, at once, and shared by every reader. Only the text is kept, so the
 * window's memory is what it counts.
 */
export interface LoggedChange {
  id: number
  type: Change['type']
  path: Change['path']
  json: string
}

/**
 * The recent changes of a store, in id order, for event streams that resume
 * and for `?_changes` polling. Ids grow by one per change, so every id in
 * (floor, last] is kept and an id outside it may have missed changes that are
 * gone. It keeps what `Documents` emits. With a store that keeps the
 * changes itself (PostgreSQL), every process hears every change, and one
 * that started after a change reads it back from the store (`recall`), so a
 * client resumes on any of them.
 */
export class ChangeLog {
  /** Kept changes from #start on; the slots before it are emptied as changes are dropped. */
  #entries: Array<LoggedChange | undefined> = []
  /** Index of the oldest kept entry in #entries (dropping from the front without shifting every time). */
  #start = 0
  #bytes = 0
  #floor: number
  readonly #window: ChangeWindow
  readonly #documents: Documents

  constructor(documents: Documents, window: ChangeWindow = defaultChangeWindow) {
    this.#window = window
    this.#documents = documents
    this.#floor = documents.lastChangeId
    documents.subscribe((change) => this.#append(change))
  }

  /** Every change with an id above this one is kept. */
  get floor(): number {
    return this.#floor
  }

  /** The id of the newest change (the floor when none happened since the start). */
  get last(): number {
    return this.#floor + this.#entries.length - this.#start
  }

  /** Whether a client that has seen every change up to `id` can be told exactly what it missed. */
  covers(id: number): boolean {
    return id >= this.#floor && id <= this.last
  }

  /** The change with this id, or undefined when it is not kept (dropped, or not made yet). */
  at(id: number): LoggedChange | undefined {
    if (id <= this.#floor || id > this.last) return undefined
    return this.#entries[this.#start + id - this.#floor - 1]
  }

  /** The kept changes after `id`, oldest first; undefined when some may be gone (see `covers`). */
  after(id: number): LoggedChange[] | undefined {
    if (!this.covers(id)) return undefined
    return this.#entries.slice(this.#start + id - this.#floor) as LoggedChange[]
  }

  /**
   * Makes the log cover `id` when the store still keeps the changes after it
   * and they fit in the window: what a client missed while this process was
   * not running, or before it started, is read back from the store.
   */
  async recall(id: number): Promise<void> {
    const missing = this.#floor - id
    if (missing <= 0 || this.last - id > this.#window.maxChanges) return
    const floor = this.#floor
    const changes = await this.#documents.changesAfter(id, missing)
    // Only a whole run that ends where the log starts (and fits in the window) is taken.
    if (!changes || changes.length !== missing || changes[0].id !== id + 1 || this.#floor !== floor) return
    const entries = changes.map((change) => logged(change))
    const bytes = entries.reduce((sum, entry) => sum + entry.json.length, 0)
    if (this.#bytes + bytes > this.#window.maxBytes) return
    this.#entries = [...entries, ...this.#entries.slice(this.#start)]
    this.#start = 0
    this.#bytes += bytes
    this.#floor = id
  }

  #append(change: Change): void {
    if (change.id !== this.last + 1) {
      // Changes arrive in id order, one by one: anything else means ids were lost, so no one may resume across them.
      this.#entries = []
      this.#start = 0
      this.#bytes = 0
      this.#floor = change.id - 1
    }
    const entry = logged(change)
    this.#entries.push(entry)
    this.#bytes += entry.json.length
    // The newest change always stays, however big: live streams read it from here.
    while (this.#entries.length - this.#start > 1
      && (this.#entries.length - this.#start > this.#window.maxChanges || this.#bytes > this.#window.maxBytes)) {
      this.#bytes -= this.#entries[this.#start]!.json.length
      this.#entries[this.#start] = undefined
      this.#start++
      this.#floor++
    }
    if (this.#start > 1024 && this.#start * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#start)
      this.#start = 0
    }
  }
}

/**
 * The change's `{"path", "data"}` JSON, the text of `data` made once and
 * remembered by its object (compactJsonOf): a write's answer sends the same
 * document, so it reuses the text instead of serialising it again. It is the
 * very text `JSON.stringify({ path, data })` makes.
 */
function logged(change: Change): LoggedChange {
  const path = displayPath(change.path)
  const data = change.data
  if (data === null || typeof data !== 'object') return { id: change.id, type: change.type, path: change.path, json: JSON.stringify({ path, data }) }
  const text = JSON.stringify(data)
  compactTexts.set(data, text)
  return { id: change.id, type: change.type, path: change.path, json: `{"path":${JSON.stringify(path)},"data":${text}}` }
}

/** The compact JSON of documents the log has just written out (weakly held: it goes with the document). */
const compactTexts = new WeakMap<object, string>()

/**
 * `JSON.stringify(doc)`, from the change log when it has just made it for the
 * write that stored `doc`. A written document is never changed afterwards
 * (every read gets its own copy: the Store contract), so the text stays true.
 */
export function compactJsonOf(doc: object): string {
  return compactTexts.get(doc) ?? JSON.stringify(doc)
}

const logs = new WeakMap<Documents, ChangeLog>()

/** Starts keeping the changes of `documents` (once, when the store opens, so no change goes unrecorded). */
export function keepChanges(documents: Documents, window?: ChangeWindow): ChangeLog {
  let log = logs.get(documents)
  if (!log) logs.set(documents, (log = new ChangeLog(documents, window)))
  return log
}

/** The change log of `documents`. */
export function changeLogOf(documents: Documents): ChangeLog {
  return keepChanges(documents)
}
