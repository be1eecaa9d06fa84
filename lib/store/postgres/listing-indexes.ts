import { describeShape, indexDefinition, indexName, type IndexShape } from './listing-index-sql.ts'
import type { QueryResult } from './pg.ts'

/**
 * Which listing indexes a store uses, and when it makes one (docs/postgres.md,
 * "Indexes for listings"): a shape of listing answered in SQL `after` times by
 * this process, on a collection of at least `minimum` documents, gets its index,
 * made concurrently (writes go on) on a connection of its own, while this
 * process holds the database's one advisory lock for making them, so that of
 * instances starting together one makes it and the others find it made. A
 * database holds at most `most` of them. An index is used once it is whole
 * (`indisvalid`); the ones other instances made are found every REFRESH_MS.
 */

/** Fewest documents a collection holds before a listing of it gets an index of its own. */
export const LISTING_INDEX_MINIMUM = 10_000

export interface ListingIndexOptions {
  /** Answers of one shape (in this process) before its index is made (default 20). */
  after?: number
  /** Documents the collection must hold for an index to be worth its writes (default 10 000). */
  minimum?: number
  /** Listing indexes a database holds at most (default 16). */
  most?: number
}

interface Queryable {
  query(text: string, values?: unknown[]): Promise<QueryResult>
}
/** A connection of its own for a build, which CREATE INDEX CONCURRENTLY needs outside any transaction. */
export interface BuildClient extends Queryable {
  connect(): Promise<unknown>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}

/** How often the indexes other instances made are looked for. */
const REFRESH_MS = 30_000
/** After a build that could not start (another instance was making one), how long before the next try. */
const RETRY_MS = 5_000
/** The shapes counted at once, so that queries of ever new fields cannot grow the process. */
const MOST_COUNTED = 1000
/** The key of the advisory lock held while an index is made, the same in every instance. */
const BUILD_LOCK = "hashtext('restdir listing indexes')"

export class SqlListingIndexes {
  readonly #pool: () => Promise<Queryable>
  readonly #client: () => Promise<BuildClient>
  readonly #log: (line: string) => void
  readonly #after: number
  readonly #minimum: number
  readonly #most: number
  /** The indexes known to be whole, by name. */
  #known = new Set<string>()
  #loaded: Promise<void> | undefined
  #loadedAt = -Infinity
  /** Answers of each shape without an index, by the index's name. */
  readonly #counts = new Map<string, number>()
  #building: Promise<void> | undefined
  /** The backend that runs the build under way, so that close() can cancel it. */
  #builder: number | undefined
  #retryAt = 0
  #full = false
  #closed = false
  /** Plans answered through an index, for tests and the curious. */
  used = 0

  constructor(pool: () => Promise<Queryable>, client: () => Promise<BuildClient>, options: ListingIndexOptions, log: (line: string) => void) {
    this.#pool = pool
    this.#client = client
    this.#log = log
    this.#after = options.after ?? 20
    this.#minimum = options.minimum ?? LISTING_INDEX_MINIMUM
    this.#most = options.most ?? 16
  }

  /** Whether the shape's index is made and whole; looks the indexes up on first use and every REFRESH_MS after. */
  async has(shape: IndexShape): Promise<boolean> {
    if (this.#loaded === undefined) await this.#load()
    else if (performance.now() - this.#loadedAt > REFRESH_MS) void this.#load()
    return this.#known.has(indexName(shape))
  }

  /** Counts an answer of a shape that has no index yet; the `after`th starts its build. */
  answered(shape: IndexShape): void {
    if (this.#closed || this.#full) return
    const name = indexName(shape)
    if (this.#known.has(name)) return
    if (!this.#counts.has(name) && this.#counts.size >= MOST_COUNTED) this.#counts.clear()
    const count = (this.#counts.get(name) ?? 0) + 1
    this.#counts.set(name, count)
    if (count < this.#after || this.#building || performance.now() < this.#retryAt) return
    this.#counts.delete(name)
    this.#building = this.make(shape)
      .then(
        () => {},
        (error: unknown) => this.#log(`restdir: could not make the index for listings of ${describeShape(shape)} (${(error as Error).message}); listings of it read their rows.`),
      )
      .finally(() => (this.#building = undefined))
  }

  /**
   * Makes the shape's index unless it is whole already: 'made', 'present',
   * 'busy' (another process is making one: try later), 'small' (the
   * collection holds fewer than `minimum` documents) or 'full' (`most` reached).
   */
  async make(shape: IndexShape): Promise<'made' | 'present' | 'busy' | 'small' | 'full'> {
    const name = indexName(shape)
    const client = await this.#client()
    client.on('error', () => {}) // the statement under way fails and says why
    await client.connect()
    let locked = false
    try {
      this.#builder = Number((await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid)
      // Never waiting for the lock: a CREATE INDEX CONCURRENTLY waits for the transactions older than it, and a wait for the lock is one.
      locked = (await client.query(`SELECT pg_try_advisory_lock(${BUILD_LOCK}) AS locked`)).rows[0].locked === true
      if (!locked) {
        this.#retryAt = performance.now() + RETRY_MS
        return 'busy'
      }
      const state = await indexState(client, name)
      if (state === 'valid') {
        this.#known.add(name)
        return 'present'
      }
      // A build that was cancelled or failed leaves an index that is not whole, which IF NOT EXISTS would take for made.
      if (state === 'invalid') await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`)
      const documents = await client.query(`SELECT count(*)::int AS count FROM (SELECT 1 FROM restdir_nodes WHERE parent = $1 AND text IS NOT NULL LIMIT $2) AS documents`, [
        shape.parentKey,
        this.#minimum,
      ])
      if ((documents.rows[0].count as number) < this.#minimum) return 'small'
      const made = await client.query(
        `SELECT count(*)::int AS count FROM pg_index JOIN pg_class ON pg_class.oid = pg_index.indexrelid
         WHERE pg_index.indrelid = to_regclass('restdir_nodes') AND pg_class.relname LIKE 'restdir\\_listing\\_%'`,
      )
      if ((made.rows[0].count as number) >= this.#most) {
        this.#full = true
        this.#log(`restdir: the database holds ${this.#most} listing indexes, the most restdir makes; listings of ${describeShape(shape)} read their rows.`)
        return 'full'
      }
      this.#log(`restdir: making an index for listings of ${describeShape(shape)} (${name}); writes go on meanwhile.`)
      const started = performance.now()
      await client.query(indexDefinition(shape))
      if ((await indexState(client, name)) !== 'valid') throw new Error(`${name} was left unfinished`)
      this.#known.add(name)
      this.#log(`restdir: made ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s.`)
      return 'made'
    } finally {
      this.#builder = undefined
      if (locked) await client.query(`SELECT pg_advisory_unlock(${BUILD_LOCK})`).catch(() => {})
      await client.end().catch(() => {})
    }
  }

  /** Settles once no build is under way. */
  async settled(): Promise<void> {
    while (this.#building) await this.#building
  }

  /** Stops a build under way (PostgreSQL drops what it made of it at the next build) and waits for it. */
  async close(): Promise<void> {
    this.#closed = true
    const builder = this.#builder
    if (builder !== undefined) await (await this.#pool()).query('SELECT pg_cancel_backend($1)', [builder]).catch(() => {})
    await this.settled()
  }

  async #load(): Promise<void> {
    this.#loadedAt = performance.now()
    const loading = (async () => {
      const { rows } = await (await this.#pool()).query(
        `SELECT pg_class.relname AS name FROM pg_index JOIN pg_class ON pg_class.oid = pg_index.indexrelid
         WHERE pg_index.indrelid = to_regclass('restdir_nodes') AND pg_index.indisvalid AND pg_class.relname LIKE 'restdir\\_listing\\_%'`,
      )
      this.#known = new Set(rows.map((row) => row.name as string))
    })()
    // A database out of reach: the listing's own statement says so; the indexes are looked up again on the next use.
    this.#loaded = loading.catch(() => {
      this.#loaded = undefined
    })
    await this.#loaded
  }
}

/** Whether the index `name` on restdir_nodes is missing, whole ('valid') or left unfinished by a build. */
async function indexState(client: Queryable, name: string): Promise<'missing' | 'valid' | 'invalid'> {
  const { rows } = await client.query(
    `SELECT pg_index.indisvalid AS valid FROM pg_index JOIN pg_class ON pg_class.oid = pg_index.indexrelid
     WHERE pg_index.indrelid = to_regclass('restdir_nodes') AND pg_class.relname = $1`,
    [name],
  )
  if (rows.length === 0) return 'missing'
  return rows[0].valid === true ? 'valid' : 'invalid'
}
