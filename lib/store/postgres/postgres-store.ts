import { StoreError } from '../errors.ts'
import { changeOfWrite } from '../feed.ts'
import { etagOf, parseStoredDoc, serializeDoc } from '../serialize.ts'
import type { BatchOp, Doc, ListingPage, ListingPlan, NodePath, StagedBatch, Store, StoreChange, StoredDoc, StoredText, WriteConditions, WriteResult } from '../store.ts'
import { PRUNE_EVERY, changesAfter, keepChangeStatement, keptChangesAfter, lastCommitted, pruneChanges } from './changes.ts'
import { Database } from './database.ts'
import { JsonCache } from './json-cache.ts'
import { keyOf, pathKey, segmentOf, treeLockKey } from './keys.ts'
import { indexShape, indexedListingSql } from './listing-index-sql.ts'
import { SqlListingIndexes, type BuildClient, type ListingIndexOptions } from './listing-indexes.ts'
import { listingSql, queryListing } from './listing-query.ts'
import { PostgresFeed } from './notify-feed.ts'
import { loadPg, type PoolClient, type QueryResult } from './pg.ts'
import { documentReads } from './reads.ts'
import { ID_ORDER, SCHEMA_VERSION, SchemaError } from './schema.ts'
import { inTransaction } from './transactions.ts'
import { checkWriteConditions, holdsDocument, insertIfEmpty, lockedText, removeTree, upsertDocument, writeLocks } from './writes.ts'
import { batchLocks, transactionReader } from './batch.ts'
import { batchPlan } from '../staged.ts'

export { SCHEMA_VERSION, SchemaError }

export interface PostgresStoreOptions {
  /** Most connections the store's pool opens (default 10). */
  maxConnections?: number
  /**
   * How many recent changes the database keeps for clients that come back,
   * up to both bounds (docs/http-api.md, "Live updates"; default 1000 changes, 16 MiB).
   */
  changeWindow?: { maxChanges: number; maxBytes: number }
  /** How long a request waits for a connection before the store answers 'unavailable' (default 5000 ms). */
  connectTimeout?: number
  /**
   * Listing indexes (docs/postgres.md, "Indexes for listings"): when restdir
   * makes one, and how many at most; false makes none and uses none.
   */
  listingIndexes?: ListingIndexOptions | false
  /** Where the store says what the operator should know: the schema made, the database out of reach (default: standard error). */
  log?: (line: string) => void
}

/**
 * The store in a PostgreSQL database (docs/postgres.md, "Running on PostgreSQL"): one
 * row per node in the table `restdir_nodes`, keyed by the path of its parent
 * and its name (keys.ts). A node's document is kept as the very text the file
 * store writes to `@.json` (serializeDoc), so answers and ETags are the same;
 * a row without text is a node that only has children, and goes with its last child.
 */
export class PostgresStore implements Store {
  /** The connection string with any password hidden, for the log. */
  readonly location: string
  readonly #database: Database
  readonly #feed: PostgresFeed
  readonly #window: { maxChanges: number; maxBytes: number }
  /** The compact JSON and ETag of recently read documents, checked against the text each read fetches. */
  readonly #compact = new JsonCache()
  /** Reads of one document each, sharing statements when many come at once. */
  readonly #reads: ReturnType<typeof documentReads>
  /** The listing indexes it uses and makes; undefined when they are turned off. */
  readonly #indexes: SqlListingIndexes | undefined

  /** Connects, checks the schema (making it on first start) and resolves once the store can serve. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const store = new PostgresStore(url, options)
    try {
      await store.ready
    } catch (error) {
      await store.close().catch(() => {})
      throw error
    }
    return store
  }

  /** Connects lazily: every operation waits for `ready`, which rejects when the database cannot be used. */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.#window = options.changeWindow ?? { maxChanges: 1000, maxBytes: 16 * 1024 * 1024 }
    const pg = loadPg()
    const database = new Database(url, options, pg)
    this.#database = database
    this.location = database.location
    this.#feed = new PostgresFeed({
      listener: async () => new (await pg).Client({ connectionString: url, connectionTimeoutMillis: options.connectTimeout ?? 5000 }),
      after: (id, limit) => changesAfter(database, id, limit),
      last: () => lastCommitted(database),
      report: (error) => database.report(error),
    })
    this.#reads = documentReads(database.pool)
    this.#indexes =
      options.listingIndexes === false
        ? undefined
        : new SqlListingIndexes(
            () => database.pool,
            async () => new (await pg).Client({ connectionString: url, connectionTimeoutMillis: options.connectTimeout ?? 5000 }) as unknown as BuildClient,
            options.listingIndexes ?? {},
            database.log,
          )
  }

  /** The listing indexes this store uses and makes, or undefined when they are turned off (for tests, and to wait for a build). */
  get listingIndexes(): SqlListingIndexes | undefined {
    return this.#indexes
  }

  /** Settles once the schema is checked (or made): true when this start made it. Rejects when the database cannot be used. */
  get ready(): Promise<boolean> {
    return this.#database.ready
  }

  async read(path: NodePath): Promise<StoredDoc | undefined> {
    const text = await this.#text(path)
    if (text === undefined) return undefined
    return { doc: parseStoredDoc(text, path), etag: etagOf(text) }
  }

  async readText(path: NodePath): Promise<StoredText | undefined> {
    const text = await this.#text(path)
    if (text === undefined) return undefined
    const key = pathKey(path)
    const known = this.#compact.get(key, text)
    if (known !== undefined) return known
    const made = { json: JSON.stringify(parseStoredDoc(text, path)), etag: etagOf(text) }
    this.#compact.set(key, text, made.json, made.etag)
    return made
  }

  async #text(path: NodePath): Promise<string | undefined> {
    await this.#database.usable(path)
    try {
      return await this.#reads.read(pathKey(path), keyOf(path))
    } catch (error) {
      throw this.#database.storeError(error, path)
    }
  }

  async children(path: NodePath): Promise<string[] | undefined> {
    const own = pathKey(path)
    const { rows } = await this.#query(path, `SELECT name FROM restdir_nodes WHERE parent = $1 ORDER BY ${ID_ORDER}`, [own])
    if (rows.length === 0) return (await holdsDocument((text, values) => this.#query(path, text, values), path)) ? [] : undefined
    return rows.map((row) => segmentOf(row.name as string))
  }

  /**
   * One round trip: the window by the index on (parent, name), and the count
   * of the node's documents, which PostgreSQL makes by reading every one of
   * them in the index (docs/postgres.md, "Running on PostgreSQL": a page costs its size,
   * X-Total-Count costs the collection's).
   */
  async documentChildren(path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined> {
    const own = pathKey(path)
    const limit = end === undefined ? null : Math.max(0, end - start)
    const { rows } = await this.#query(
      path,
      `SELECT (SELECT count(*) FROM restdir_nodes WHERE parent = $1 AND text IS NOT NULL)::bigint AS total,
              ARRAY(SELECT name FROM restdir_nodes WHERE parent = $1 AND text IS NOT NULL ORDER BY ${ID_ORDER} OFFSET $2 LIMIT $3) AS names`,
      [own, start, limit],
    )
    const total = Number(rows[0].total)
    if (total === 0 && !(await this.exists(path))) return undefined
    return { names: (rows[0].names as string[]).map(segmentOf), total }
  }

  async exists(path: NodePath): Promise<boolean> {
    const [parent, name] = keyOf(path)
    const { rows } = await this.#query(
      path,
      `SELECT EXISTS (SELECT 1 FROM restdir_nodes WHERE parent = $1 AND name = $2 AND text IS NOT NULL)
           OR EXISTS (SELECT 1 FROM restdir_nodes WHERE parent = $3) AS found`,
      [parent, name, pathKey(path)],
    )
    return rows[0].found === true
  }

  /**
   * One transaction (docs/postgres.md, "Many instances on one database"): shared locks
   * on the node's subtree and its owner's (a subtree removal takes its own
   * exclusively, so the two are ordered), the unique field's lock, then the
   * checks, then one statement that makes the ancestors' rows where missing
   * and inserts or updates the node's row, and the change's row.
   */
  async write(path: NodePath, doc: Doc, conditions: WriteConditions = {}): Promise<WriteResult> {
    const text = serializeDoc(doc)
    const locks = (client: PoolClient) => writeLocks(client, path, conditions)
    return this.#change(path, changeOfWrite(path, doc, conditions), locks, async (client) => {
      await checkWriteConditions(client, path, doc, conditions)
      if (conditions.expect !== undefined && conditions.expect !== null) {
        const current = await lockedText(client, path)
        if (current === undefined || etagOf(current) !== conditions.expect) throw new StoreError('version-changed', path)
      }
      if (conditions.expect === null) {
        if (!(await insertIfEmpty(client, path, text))) throw new StoreError('version-changed', path)
        return { created: true, etag: etagOf(text) }
      }
      return { created: await upsertDocument(client, path, text), etag: etagOf(text) }
    })
  }

  /** Exact under concurrency: the conflict clause fills a row only while it holds no document. */
  async create(path: NodePath, doc: Doc, conditions: Omit<WriteConditions, 'expect' | 'patch'> = {}): Promise<WriteResult | undefined> {
    const text = serializeDoc(doc)
    try {
      const locks = (client: PoolClient) => writeLocks(client, path, conditions)
      return await this.#change(path, { type: 'put', path, data: doc }, locks, async (client) => {
        await checkWriteConditions(client, path, doc, conditions)
        if (!(await insertIfEmpty(client, path, text))) throw new StoreError('version-changed', path)
        return { created: true, etag: etagOf(text) }
      })
    } catch (error) {
      if (error instanceof StoreError && error.kind === 'version-changed') return undefined
      throw error
    }
  }

  /**
   * One transaction: the exclusive lock of the subtree (writes below it hold
   * it shared, so each lands before or after), then one statement removes the
   * node's row and every row below it (a range of parent keys: every key
   * below the node starts with its own, see pathKey), then ancestors left with
   * neither document nor children go, nearest first, and the change is kept.
   */
  async remove(path: NodePath, conditions: { expect?: string | null } = {}): Promise<{ existed: boolean; doc?: Doc }> {
    let removed: { existed: boolean; doc?: Doc } = { existed: false }
    const lock = (client: PoolClient) => `SELECT pg_advisory_xact_lock(hashtextextended(${client.escapeLiteral(treeLockKey(path))}, 0))`
    await this.#change(path, () => ({ type: 'delete', path, data: removed.doc ?? null }), lock, async (client) => {
      if (conditions.expect !== undefined) {
        const current = await lockedText(client, path)
        const matches = conditions.expect === null ? current === undefined : current !== undefined && etagOf(current) === conditions.expect
        if (!matches) throw new StoreError('version-changed', path)
      }
      const gone = await removeTree(client, path)
      if (!gone) return undefined // nothing changed: no change is kept
      const text = gone.text
      removed = { existed: true }
      if (text !== null) {
        try {
          removed = { existed: true, doc: parseStoredDoc(text, path) }
        } catch {
          // a document broken by hand goes all the same
        }
      }
      return removed
    })
    return removed
  }

  /**
   * One transaction (docs/postgres.md, "Batches"): the exclusive locks of
   * every node the batch touches and of their ancestors, so that no write or
   * removal of any instance lands among its checks and changes; the checks,
   * against what the transaction sees (of each op, or that what the staged
   * view read is still so: batchPlan); every op; and every change's row,
   * numbered in order. Other instances hear the changes once all commit.
   */
  async batch(ops: readonly BatchOp[], staged?: StagedBatch): Promise<void> {
    if (ops.length === 0) return
    await this.#feed.ready()
    let kept: StoreChange[] = []
    await inTransaction(this.#database, ops[0].path, async (client) => {
      kept = []
      const plan = await batchPlan(transactionReader(client), ops, staged)
      for (const op of plan.ops) {
        if (op.kind === 'write') await upsertDocument(client, op.path, serializeDoc(op.doc))
        else await removeTree(client, op.path)
      }
      for (const made of plan.changes) {
        const { rows } = await client.query(keepChangeStatement(client, made))
        kept.push({ id: Number(rows[0].id), ...made })
      }
    }, (client) => batchLocks(client, ops))
    for (const change of kept) {
      await this.#feed.committed(change)
      if (change.id % PRUNE_EVERY === 0) void pruneChanges(this.#database, change.id, this.#window)
    }
  }

  /** Listens to every change committed to the database, by any process (docs/postgres.md, "Many instances on one database"). */
  subscribe(listener: (change: StoreChange) => void): () => void {
    return this.#feed.subscribe(listener)
  }

  /**
   * The secret that signs this database's tokens (docs/accounts.md, "The declared families"), shared by
   * every instance on it: kept in a table of its own, made at the first start with `candidate`. The
   * table is made and filled in one transaction under an advisory lock, so instances starting together
   * agree on one secret, each reading the one that was stored first.
   */
  async sharedSecret(candidate: string): Promise<string> {
    const pool = await this.#database.usable([])
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      try {
        await client.query("SELECT pg_advisory_xact_lock(hashtext('restdir secret'))")
        await client.query('CREATE TABLE IF NOT EXISTS restdir_secret (one boolean PRIMARY KEY DEFAULT true CHECK (one), secret text NOT NULL)')
        await client.query('INSERT INTO restdir_secret (secret) VALUES ($1) ON CONFLICT (one) DO NOTHING', [candidate])
        const { rows } = await client.query('SELECT secret FROM restdir_secret')
        await client.query('COMMIT')
        return String(rows[0].secret)
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw this.#database.storeError(error, [])
      }
    } finally {
      client.release()
    }
  }

  lastChangeId(): Promise<number> {
    return this.#feed.lastChangeId()
  }

  /**
   * The kept changes after `id`, oldest first, at most `limit`; undefined when
   * some change after `id` is no longer kept (the window moved past it).
   */
  changesAfter(id: number, limit: number): Promise<StoreChange[] | undefined> {
    return keptChangesAfter(this.#database, id, limit)
  }

  /**
   * Runs `work` in a transaction and, when it changed something (a result
   * other than undefined), keeps the change in the same transaction: the
   * counter's row is locked to the commit, so changes commit in id order. A
   * NOTIFY tells the other processes the id; this one hands the change to
   * its listeners before answering.
   */
  async #change<T>(
    path: NodePath,
    change: Omit<StoreChange, 'id'> | (() => Omit<StoreChange, 'id'>),
    locks: (client: PoolClient) => string,
    work: (client: PoolClient) => Promise<T>,
  ): Promise<T> {
    let kept: StoreChange | undefined
    await this.#feed.ready()
    const result = await inTransaction(this.#database, path, work, locks, (client, result) => {
      if (result === undefined) return undefined
      const made = typeof change === 'function' ? change() : change
      return {
        sql: keepChangeStatement(client, made),
        done: (row: Record<string, unknown>) => (kept = { id: Number(row.id), ...made }),
      }
    })
    if (kept) {
      await this.#feed.committed(kept)
      if (kept.id % PRUNE_EVERY === 0) void pruneChanges(this.#database, kept.id, this.#window)
    }
    return result
  }

  /**
   * Filters, sort and window in SQL (docs/postgres.md, "Running on PostgreSQL"; listing-query.ts), through the
   * shape's index where one is made (listing-index-sql.ts); a shape answered often without one gets one.
   */
  async query(path: NodePath, plan: ListingPlan): Promise<ListingPage | undefined> {
    const parentKey = pathKey(path)
    const shape = this.#indexes && indexShape(parentKey, plan)
    const indexed = shape !== undefined && (await this.#indexes!.has(shape))
    const sql = indexed ? indexedListingSql(shape, plan, ID_ORDER) : listingSql(parentKey, plan, ID_ORDER)
    const page = await queryListing(sql, (statement) => this.#database.query(path, statement), () => this.exists(path))
    if (page && shape) {
      if (indexed) this.#indexes!.used++
      else this.#indexes!.answered(shape)
    }
    return page
  }

  /** Stops an index build under way, then closes the pool's connections. Safe to call twice. */
  close(): Promise<void> {
    return this.#database.close(async () => {
      await this.#indexes?.close()
      await this.#feed.close()
    })
  }

  #query(path: NodePath, text: string, values: unknown[]): Promise<QueryResult> {
    return this.#database.query(path, text, values)
  }
}
