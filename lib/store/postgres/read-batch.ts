/**
 * Point reads that share statements under load (docs/postgres.md, "Running on PostgreSQL"). While fewer than `limit` statements are under way, a read is
 * sent at once, alone. Past that, reads wait for one of those statements to
 * finish and then go together, up to `most` in one statement. A database
 * spends most of a point read on the statement around it, not on the row,
 * so a busy server asks it far fewer times; an idle one waits for nothing.
 *
 * A read is always answered by a statement sent after the read was asked
 * for, so it sees every write acknowledged before it, as a read of its own
 * would. Reads of one key waiting together share one answer. A statement
 * still under way after `patience` ms (a lock held on the table, a
 * connection gone silent) stops holding the others back: the waiting reads
 * then go in a further statement, on another connection.
 */
export class ReadBatch<K, T> {
  #running = 0
  /** Waiting reads by id. */
  readonly #waiting = new Map<string, Waiting<K, T>>()
  readonly #options: ReadBatchOptions<K, T>

  constructor(options: ReadBatchOptions<K, T>) {
    this.#options = options
  }

  /** `id` tells keys apart: two reads with one id are one read. */
  read(id: string, key: K): Promise<T | undefined> {
    if (this.#running < this.#options.limit) return this.#run(() => this.#options.read([key])).then((found) => found.get(0))
    return new Promise((resolve, reject) => {
      const entry = this.#waiting.get(id)
      if (entry) entry.waiters.push({ resolve, reject })
      else this.#waiting.set(id, { key, waiters: [{ resolve, reject }] })
    })
  }

  async #run<R>(statement: () => Promise<R>): Promise<R> {
    this.#running++
    let counted = true
    const release = () => {
      if (!counted) return
      counted = false
      this.#running--
      this.#next()
    }
    const slow = setTimeout(release, this.#options.patience)
    try {
      return await statement()
    } finally {
      clearTimeout(slow)
      release()
    }
  }

  /** Sends the waiting reads, `most` at a time, while statements may start. */
  #next(): void {
    while (this.#running < this.#options.limit && this.#waiting.size > 0) {
      const entries: Array<Waiting<K, T>> = []
      for (const [id, entry] of this.#waiting) {
        this.#waiting.delete(id)
        entries.push(entry)
        if (entries.length === this.#options.most) break
      }
      this.#run(() => this.#options.read(entries.map((entry) => entry.key))).then(
        (found) => entries.forEach((entry, index) => entry.waiters.forEach((waiter) => waiter.resolve(found.get(index)))),
        (error: unknown) => entries.forEach((entry) => entry.waiters.forEach((waiter) => waiter.reject(error))),
      )
    }
  }
}

/** A key to read, and who waits for it. */
interface Waiting<K, T> {
  key: K
  waiters: Array<{ resolve(value: T | undefined): void; reject(error: unknown): void }>
}

export interface ReadBatchOptions<K, T> {
  /** Statements under way before reads wait to go together. */
  limit: number
  /** Most reads in one statement. */
  most: number
  /** Milliseconds after which a statement under way no longer counts towards the limit. */
  patience: number
  /** The values found for these keys, by their position; a key not found is left out. */
  read(keys: K[]): Promise<Map<number, T>>
}
