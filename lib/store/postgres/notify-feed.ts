import type { NodePath, StoreChange } from '../store.ts'
import { CHANGES_CHANNEL } from './schema.ts'

/**
 * The change feed of a PostgreSQL store (docs/postgres.md, "Many instances on one database"). Each change is a row of `restdir_changes`, written in the
 * transaction of the change and numbered by one counter whose row lock is
 * held to the commit, so changes commit in id order. A commit NOTIFYs only
 * the id: readers fetch the rows, so a document of any size crosses. One
 * LISTEN connection per store hears the ids; when it drops, the feed
 * connects again by itself and catches up from the table, so no change is
 * missed while the rows are kept.
 */

/** A connection that listens (a `pg` Client). */
export interface ListeningClient {
  connect(): Promise<unknown>
  query(text: string): Promise<unknown>
  end(): Promise<void>
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown
}

export interface FeedSource {
  /** A new, unconnected client for the LISTEN connection. */
  listener(): Promise<ListeningClient>
  /** The kept changes after `id`, oldest first, at most `limit`. */
  after(id: number, limit: number): Promise<StoreChange[]>
  /** The id of the newest change committed. */
  last(): Promise<number>
  /** Says a lost connection in the log. */
  report(error: unknown): void
}

/** How many rows a catch-up reads at once. */
const BATCH = 500
/** How long the feed waits before connecting again, at first and at most. */
const RECONNECT_MS = [100, 5000]

/** A change row as the feed gives it. */
export function changeOfRow(row: Record<string, unknown>): StoreChange {
  return {
    id: Number(row.id),
    type: row.type as StoreChange['type'],
    path: JSON.parse(row.path as string) as NodePath,
    data: JSON.parse(row.data as string) as unknown,
  }
}

export class PostgresFeed {
  readonly #source: FeedSource
  readonly #listeners = new Set<(change: StoreChange) => void>()
  /** The id of the last change handed to the listeners. */
  #last = 0
  #started: Promise<void> | undefined
  /** Whether #last holds the newest id read at the start. */
  #initialized = false
  #client: ListeningClient | undefined
  #closed = false
  /** The catch-up under way, and whether another is wanted after it. */
  #catching: Promise<void> | undefined
  #again = false
  #delay = RECONNECT_MS[0]

  constructor(source: FeedSource) {
    this.#source = source
  }

  /** Starts listening with the first listener. */
  subscribe(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener)
    this.#started ??= this.#start()
    this.#started.catch(() => {}) // the next catch-up tries again
    return () => this.#listeners.delete(listener)
  }

  /** The id of the last change handed to the listeners (the newest committed, before the first). */
  async lastChangeId(): Promise<number> {
    if (!this.#started) return this.#source.last()
    await this.#started.catch(() => {})
    return this.#last
  }

  /** Settles once a feed that has listeners knows where it starts: a change begun after `subscribe` is then never missed. */
  async ready(): Promise<void> {
    await this.#started
  }

  /**
   * A change this process just committed: handed to the listeners before the
   * write answers (so a client that wrote reads its change at once), after
   * every change before it.
   */
  async committed(change: StoreChange): Promise<void> {
    if (!this.#started || this.#closed) return
    await this.#started
    if (!this.#initialized) return // the feed reads it from the table once it is connected
    if (change.id === this.#last + 1) return this.#deliver(change)
    while (this.#last < change.id && !this.#closed) {
      const before = this.#last
      await this.#catchUp()
      if (this.#last === before) break // the row is gone already (pruned): the listeners hear the next ones
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#listeners.clear()
    await this.#client?.end().catch(() => {})
  }

  async #start(): Promise<void> {
    try {
      await this.#listen()
      this.#last = await this.#source.last()
      this.#initialized = true
    } catch (error) {
      this.#source.report(error)
      this.#client?.end().catch(() => {})
      setTimeout(() => this.#reconnect(), this.#delay).unref()
    }
  }

  /** Opens the LISTEN connection; when it drops, opens it again and catches up. */
  async #listen(): Promise<void> {
    const client = await this.#source.listener()
    this.#client = client
    let lost = false
    const onLost = (error?: Error) => {
      if (lost) return
      lost = true
      if (error) this.#source.report(error)
      client.end().catch(() => {})
      if (!this.#closed) setTimeout(() => this.#reconnect(), this.#delay).unref()
    }
    client.on('error', onLost)
    client.on('end', () => onLost())
    client.on('notification', (message) => {
      if (message.channel !== CHANGES_CHANNEL) return
      if (this.#initialized && Number(message.payload) > this.#last) void this.#catchUp()
    })
    await client.connect()
    await client.query(`LISTEN ${CHANGES_CHANNEL}`)
  }

  async #reconnect(): Promise<void> {
    if (this.#closed) return
    try {
      await this.#listen()
      this.#delay = RECONNECT_MS[0]
      if (!this.#initialized) {
        this.#last = await this.#source.last()
        this.#initialized = true
      }
      // What was committed while no one listened is in the table.
      await this.#catchUp()
    } catch (error) {
      this.#source.report(error)
      this.#delay = Math.min(this.#delay * 2, RECONNECT_MS[1])
      if (!this.#closed) setTimeout(() => this.#reconnect(), this.#delay).unref()
    }
  }

  /** Reads what was committed after the last change handed on, in id order; one catch-up at a time. */
  #catchUp(): Promise<void> {
    if (this.#catching) {
      this.#again = true
      return this.#catching
    }
    this.#catching = (async () => {
      try {
        do {
          this.#again = false
          for (;;) {
            const changes = await this.#source.after(this.#last, BATCH)
            for (const change of changes) if (change.id > this.#last) this.#deliver(change)
            if (changes.length < BATCH || this.#closed) break
          }
        } while (this.#again && !this.#closed)
      } catch (error) {
        this.#source.report(error) // the next notification or write tries again
      } finally {
        this.#catching = undefined
      }
    })()
    return this.#catching
  }

  #deliver(change: StoreChange): void {
    this.#last = change.id
    for (const listener of this.#listeners) listener(change)
  }
}
