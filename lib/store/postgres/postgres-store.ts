import { StoreError, type StoreErrorKind } from '../errors.ts'
import { changeOfWrite } from '../feed.ts'
import { PostgresFeed, changeOfRow, type ListeningClient } from './notify-feed.ts'
import { CHANGES_CHANNEL, ID_ORDER, SCHEMA_VERSION, SchemaError, ensureSchema } from './schema.ts'
import { etagOf, parseStoredDoc, serializeDoc } from '../serialize.ts'
import type { Doc, ListingPage, ListingPlan, NodePath, Store, StoreChange, StoredDoc, StoredText, WriteConditions, WriteResult } from '../store.ts'
import { ensureQuerySchema, queryListing } from './listing-query.ts'
import { ReadBatch } from './read-batch.ts'

export { SCHEMA_VERSION, SchemaError }

/** Read statements under way at once before further reads wait to share one (ReadBatch). */
const READS_AT_ONCE = 1
/** Most documents one read statement asks for. */
const READS_IN_ONE = 64

/**
 * The statement that reads `count` documents, named so that each connection
 * plans it once: its keys ($1, $2 the first's parent and name, …) in a
 * VALUES list, with `count` raised to a power of two (the last key repeated),
 * so a connection prepares seven statements at most. A VALUES list rather than
 * arrays of keys: PostgreSQL plans a statement over arrays anew for each batch
 * (an array's length changes its estimates), which costs more than the reads.
 */
function readStatement(count: number): { statement: { name: string; text: string }; size: number } {
  const size = 2 ** Math.ceil(Math.log2(count))
  readStatements[size] ??= {
    name: `restdir_read_${size}`,
    text: `SELECT node.parent, node.name, node.text
      FROM (VALUES ${Array.from({ length: size }, (_, index) => `($${2 * index + 1}, $${2 * index + 2})`).join(', ')}) AS wanted (parent, name)
      JOIN restdir_nodes AS node ON node.parent = wanted.parent AND node.name = wanted.name AND node.text IS NOT NULL`,
  }
  return { statement: readStatements[size], size }
}
const readStatements: Array<{ name: string; text: string }> = []

/** The first part of a write: the rows of the node's ancestors ($3 parents, $4 names), made where missing. */
const MAKE_ANCESTORS = `WITH ancestors AS (
  INSERT INTO restdir_nodes (parent, name) SELECT * FROM unnest($3::text[], $4::text[]) ON CONFLICT DO NOTHING
)`

/**
 * The few parts of the `pg` client (node-postgres) this store uses, so that
 * restdir needs neither `pg` nor its types to build or to run on the other
 * stores: `pg` is loaded only when a PostgreSQL store is asked for.
 */
interface QueryResult {
  rows: Record<string, unknown>[]
  rowCount: number | null
}
interface PoolClient {
  query(text: string, values?: unknown[]): Promise<QueryResult>
  /** Quotes a string as an SQL literal, for statements sent without parameters. */
  escapeLiteral(text: string): string
  release(error?: Error | boolean): void
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'error', listener: (error: Error) => void): unknown
}
interface Pool {
  query(text: string, values?: unknown[]): Promise<QueryResult>
  /** A named statement, prepared once on each connection. */
  query(statement: { name: string; text: string; values: unknown[] }): Promise<QueryResult>
  connect(): Promise<PoolClient>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}
interface PgModule {
  Pool: new (config: Record<string, unknown>) => Pool
  Client: new (config: Record<string, unknown>) => ListeningClient
}

/** Thrown by `loadPg` when the optional `pg` package is not installed. */
export class MissingPgError extends Error {
  readonly code = 'ERESTDIRNOPG'
  constructor() {
    super('a PostgreSQL store needs the "pg" package, which is not installed: run `npm install pg` where restdir is installed.')
    this.name = 'MissingPgError'
  }
}

/** Loads `pg`; throws MissingPgError when it is not installed. */
export async function loadPg(): Promise<PgModule> {
  try {
    // Named through a variable so that building restdir needs no types of `pg` either.
    const specifier = 'pg'
    const loaded = (await import(specifier)) as { default?: PgModule } & PgModule
    return loaded.default ?? loaded
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new MissingPgError()
    throw error
  }
}

/** True for a store location that names a PostgreSQL database rather than a folder. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(location)
}

/** The connection string with its password, if any, replaced by `***`: what the log may show. */
export function redactUrl(url: string): string {
  // Up to the last `@` of the authority: a password may hold an `@` of its own.
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*):[^/?#]*@/i, '$1:***@').replace(/([?&]password=)[^&#]*/gi, '$1***')
}

export interface PostgresStoreOptions {
  /** Most connections the store's pool opens (default 10). */
  maxConnections?: number
  /**
   * How many recent changes the database keeps for clients that come back,
   * up to both bounds (README, "Live updates"; default 1000 changes, 16 MiB).
   */
  changeWindow?: { maxChanges: number; maxBytes: number }
  /** How long a request waits for a connection before the store answers 'unavailable' (default 5000 ms). */
  connectTimeout?: number
  /** Where the store says what the operator should know: the schema made, the database out of reach (default: standard error). */
  log?: (line: string) => void
}

/**
 * The store in a PostgreSQL database (README, "Running on PostgreSQL"): one
 * row per node in the table `restdir_nodes`, keyed by the path of its parent
 * and its name. A node's document is kept as the very text the file store
 * writes to `@.json` (serializeDoc), so answers and ETags are the same; a row
 * without text is a node that only has children, and goes with its last child.
 *
 * Segments are kept so that the database's "C" collation (byte order of
 * UTF-8) sorts them in UTF-16 code-unit order, the order the Store interface
 * promises, and so that every JavaScript string can be kept (see nameOf).
 */
export class PostgresStore implements Store {
  /** The connection string with any password hidden, for the log. */
  readonly location: string
  /** The schema check under way or done; a check that failed for want of the database is made again by the next operation. */
  #checked: Promise<boolean>
  readonly #pool: Promise<Pool>
  /** When the database was last said in the log to be out of reach. */
  #reported = -Infinity
  #closed: Promise<void> | undefined
  readonly #log: (line: string) => void
  readonly #feed: PostgresFeed
  readonly #window: { maxChanges: number; maxBytes: number }
  /**
   * The compact JSON and ETag of recently read documents, by node, each with
   * the stored text it was made from. A read still fetches the text every
   * time and uses the entry only when that text is the very same, so a write
   * on another instance or an edit by hand is served at once; a hit saves
   * parsing, checking and hashing the document again.
   */
  readonly #compact = new Map<string, { text: string; json: string; etag: string }>()
  #compactBytes = 0
  /** Reads of one document each, sharing statements when many come at once. */
  readonly #reads = new ReadBatch<[string, string], string>({
    limit: READS_AT_ONCE,
    most: READS_IN_ONE,
    patience: 1000,
    read: async (keys) => {
      const { statement, size } = readStatement(keys.length)
      const values: string[] = []
      for (let index = 0; index < size; index++) values.push(...keys[Math.min(index, keys.length - 1)])
      const { rows } = await (await this.#pool).query({ ...statement, values })
      const texts = new Map(rows.map((row) => [`${row.parent as string}\u0000${row.name as string}`, row.text as string]))
      const found = new Map<number, string>()
      keys.forEach(([parent, name], index) => {
        const text = texts.get(`${parent}\u0000${name}`)
        if (text !== undefined) found.set(index, text)
      })
      return found
    },
  })

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
    this.location = redactUrl(url)
    this.#log = options.log ?? ((line) => console.error(line))
    this.#window = options.changeWindow ?? { maxChanges: 1000, maxBytes: 16 * 1024 * 1024 }
    const pg = loadPg()
    this.#feed = new PostgresFeed({
      listener: async () => new (await pg).Client({ connectionString: url, connectionTimeoutMillis: options.connectTimeout ?? 5000 }),
      after: (id, limit) => this.#changesAfter(id, limit),
      last: () => this.#lastCommitted(),
      report: (error) => this.#report(error),
    })
    this.#pool = pg.then(({ Pool }) => {
      const pool = new Pool({
        connectionString: url,
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: options.connectTimeout ?? 5000,
        idleTimeoutMillis: 60_000,
      })
      // An idle connection the server drops (a restart) must never crash the process; the pool opens a new one when needed.
      pool.on('error', (error) => this.#report(error))
      return pool
    })
    this.#checked = this.#check()
  }

  /** Settles once the schema is checked (or made): true when this start made it. Rejects when the database cannot be used. */
  get ready(): Promise<boolean> {
    return this.#checked
  }

  #check(): Promise<boolean> {
    const checked = this.#pool
      .then(async (pool) => {
        const client = await pool.connect()
        const lost = () => {} // the statement under way fails and says why
        client.on('error', lost)
        try {
          const { made } = await ensureSchema(client, this.location, this.#log)
          await ensureQuerySchema(pool)
          return made
        } finally {
          client.off('error', lost)
          client.release()
        }
      })
      .catch((error: unknown) => {
        if (error instanceof SchemaError || error instanceof MissingPgError) throw error
        throw new UnreachableError(`the database ${this.location} cannot be used (${describe(error)})`, error)
      })
    checked.catch(() => {}) // reported to whoever awaits it, or to each operation
    return checked
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
    const known = this.#compact.get(key)
    if (known !== undefined && known.text === text) {
      // The newest read goes last, so the oldest is the first to go.
      this.#compact.delete(key)
      this.#compact.set(key, known)
      return { json: known.json, etag: known.etag }
    }
    const made = { text, json: JSON.stringify(parseStoredDoc(text, path)), etag: etagOf(text) }
    this.#remember(key, known, made)
    return { json: made.json, etag: made.etag }
  }

  /** Keeps at most 10 000 documents' compact texts, 16 MiB of stored and compact text in all; a bigger document is not kept. */
  #remember(key: string, old: { text: string; json: string } | undefined, made: { text: string; json: string; etag: string }): void {
    if (old !== undefined) {
      this.#compact.delete(key)
      this.#compactBytes -= old.text.length + old.json.length
    }
    const size = made.text.length + made.json.length
    if (size > 64 * 1024) return
    this.#compact.set(key, made)
    this.#compactBytes += size
    for (const [oldest, entry] of this.#compact) {
      if (this.#compact.size <= 10_000 && this.#compactBytes <= 16 * 1024 * 1024) break
      this.#compact.delete(oldest)
      this.#compactBytes -= entry.text.length + entry.json.length
    }
  }

  async #text(path: NodePath): Promise<string | undefined> {
    await this.#usable(path)
    try {
      return await this.#reads.read(pathKey(path), keyOf(path))
    } catch (error) {
      throw this.#storeError(error, path)
    }
  }

  async children(path: NodePath): Promise<string[] | undefined> {
    const own = pathKey(path)
    const { rows } = await this.#query(path, `SELECT name FROM restdir_nodes WHERE parent = $1 ORDER BY ${ID_ORDER}`, [own])
    if (rows.length === 0) return (await this.#holdsDocument(path)) ? [] : undefined
    return rows.map((row) => segmentOf(row.name as string))
  }

  /**
   * One round trip: the window by the index on (parent, name), and the count
   * of the node's documents, which PostgreSQL makes by reading every one of
   * them in the index (README, "Running on PostgreSQL": a page costs its size,
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

  async #holdsDocument(path: NodePath): Promise<boolean> {
    const [parent, name] = keyOf(path)
    const { rows } = await this.#query(path, 'SELECT 1 FROM restdir_nodes WHERE parent = $1 AND name = $2 AND text IS NOT NULL', [parent, name])
    return rows.length > 0
  }

  /**
   * One transaction (README, "Many instances on one database"): shared locks
   * on the node's subtree and its owner's (a subtree removal takes its own
   * exclusively, so the two are ordered), the unique field's lock, then the
   * checks, then one statement that makes the ancestors' rows where missing
   * and inserts or updates the node's row, and the change's row. `created`
   * is exact: the row was inserted, or it was a node that only had children
   * (its row is locked, and read, before the update).
   */
  async write(path: NodePath, doc: Doc, conditions: WriteConditions = {}): Promise<WriteResult> {
    const text = serializeDoc(doc)
    const locks = (client: PoolClient) => this.#writeLocks(client, path, conditions)
    return this.#change(path, changeOfWrite(path, doc, conditions), locks, async (client) => {
      await this.#checkConditions(client, path, doc, conditions)
      if (conditions.expect !== undefined && conditions.expect !== null) {
        const current = await this.#lockedText(client, path)
        if (current === undefined || etagOf(current) !== conditions.expect) throw new StoreError('version-changed', path)
      }
      if (conditions.expect === null) {
        if (!(await this.#insertIfEmpty(client, path, text))) throw new StoreError('version-changed', path)
        return { created: true, etag: etagOf(text) }
      }
      const [parent, name] = keyOf(path)
      const [parents, names] = ancestorKeys(path)
      const { rows } = await client.query(
        `${MAKE_ANCESTORS}, old AS (
           SELECT text IS NULL AS empty FROM restdir_nodes WHERE parent = $1 AND name = $2 FOR UPDATE
         )
         INSERT INTO restdir_nodes AS node (parent, name, text) SELECT $1, $2, $5 FROM (SELECT count(*) FROM old) AS locked_first
         ON CONFLICT (parent, name) DO UPDATE SET text = excluded.text
         RETURNING (node.xmax = 0) OR coalesce((SELECT empty FROM old), false) AS created`,
        [parent, name, parents, names, text],
      )
      return { created: rows[0].created === true, etag: etagOf(text) }
    })
  }

  /** Exact under concurrency: the conflict clause fills a row only while it holds no document. */
  async create(path: NodePath, doc: Doc, conditions: Omit<WriteConditions, 'expect' | 'patch'> = {}): Promise<WriteResult | undefined> {
    const text = serializeDoc(doc)
    try {
      const locks = (client: PoolClient) => this.#writeLocks(client, path, conditions)
      return await this.#change(path, { type: 'put', path, data: doc }, locks, async (client) => {
        await this.#checkConditions(client, path, doc, conditions)
        if (!(await this.#insertIfEmpty(client, path, text))) throw new StoreError('version-changed', path)
        return { created: true, etag: etagOf(text) }
      })
    } catch (error) {
      if (error instanceof StoreError && error.kind === 'version-changed') return undefined
      throw error
    }
  }

  /** Inserts the node's row, or fills it when it holds no document; false when it holds one. */
  async #insertIfEmpty(client: PoolClient, path: NodePath, text: string): Promise<boolean> {
    const [parent, name] = keyOf(path)
    const [parents, names] = ancestorKeys(path)
    const { rows } = await client.query(
      `${MAKE_ANCESTORS}
       INSERT INTO restdir_nodes AS node (parent, name, text) VALUES ($1, $2, $5)
       ON CONFLICT (parent, name) DO UPDATE SET text = excluded.text WHERE node.text IS NULL
       RETURNING 1`,
      [parent, name, parents, names, text],
    )
    return rows.length > 0
  }

  /** The node's document text, its row locked to the end of the transaction; undefined when it holds none. */
  async #lockedText(client: PoolClient, path: NodePath): Promise<string | undefined> {
    const [parent, name] = keyOf(path)
    const { rows } = await client.query('SELECT text FROM restdir_nodes WHERE parent = $1 AND name = $2 FOR UPDATE', [parent, name])
    return (rows[0]?.text as string | null | undefined) ?? undefined
  }

  /**
   * The statement that takes a write's locks, sent with its BEGIN: shared
   * advisory locks on the node and its owner and every ancestor of either,
   * deepest first (a subtree removal holds its root's exclusively, then its
   * ancestors' as it prunes them, going up, so the two never wait on each
   * other in a circle), and the exclusive lock of the unique field among its
   * collection. What the write requires is checked after, in statements that
   * start once the locks are held, so they see every commit made before.
   */
  #writeLocks(client: PoolClient, path: NodePath, conditions: Omit<WriteConditions, 'expect' | 'patch'>): string {
    const trees = new Map<string, number>()
    for (const branch of conditions.owner ? [path, conditions.owner] : [path]) {
      for (let depth = 0; depth <= branch.length; depth++) trees.set(treeLockKey(branch.slice(0, depth)), depth)
    }
    const deepestFirst = [...trees].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([key]) => client.escapeLiteral(key))
    const unique = conditions.unique
    return `SELECT pg_advisory_xact_lock_shared(hashtextextended(key, 0)) FROM unnest(ARRAY[${deepestFirst.join(', ')}]::text[]) AS key` +
      (unique ? ` UNION ALL SELECT pg_advisory_xact_lock(hashtextextended(${client.escapeLiteral(`unique ${pathKey(unique.among)} ${unique.field}`)}, 0))` : '')
  }

  /** Checks a write's owner and unique field, once its locks are held. */
  async #checkConditions(client: PoolClient, path: NodePath, doc: Doc, conditions: Omit<WriteConditions, 'expect' | 'patch'>): Promise<void> {
    if (conditions.owner && !(await this.#holdsDocumentIn(client, conditions.owner))) {
      throw new StoreError('owner-missing', conditions.owner)
    }
    const unique = conditions.unique
    if (unique && doc[unique.field] !== undefined) {
      const holder = await this.#holderOf(client, path, unique.among, unique.field, JSON.stringify(doc[unique.field]))
      if (holder !== undefined) throw new StoreError('taken', path, holder)
    }
  }

  async #holdsDocumentIn(client: PoolClient, path: NodePath): Promise<boolean> {
    const [parent, name] = keyOf(path)
    const { rows } = await client.query('SELECT 1 FROM restdir_nodes WHERE parent = $1 AND name = $2 AND text IS NOT NULL', [parent, name])
    return rows.length > 0
  }

  /**
   * The name of another child of `among` whose document holds `value` (JSON
   * text) in `field`. A string, number, boolean or null is written in the
   * stored text exactly as its JSON, so only the documents holding that text
   * are read; any other value needs every document read.
   */
  async #holderOf(client: PoolClient, path: NodePath, among: NodePath, field: string, value: string): Promise<string | undefined> {
    const [ownParent, ownName] = keyOf(path)
    const plain = !value.startsWith('{') && !value.startsWith('[')
    const { rows } = await client.query(
      `SELECT name, text FROM restdir_nodes
        WHERE parent = $1 AND text IS NOT NULL AND NOT (parent = $2 AND name = $3) AND ($4::text IS NULL OR strpos(text, $4) > 0)`,
      [pathKey(among), ownParent, ownName, plain ? value : null],
    )
    for (const row of rows) {
      let held: unknown
      try {
        held = (JSON.parse(row.text as string) as Doc)[field]
      } catch {
        continue // a document broken by hand holds no value
      }
      if (held !== undefined && JSON.stringify(held) === value) return segmentOf(row.name as string)
    }
    return undefined
  }

  /**
   * One transaction: the exclusive lock of the subtree (writes below it hold
   * it shared, so each lands before or after), then one statement removes the
   * node's row and every row below it (a range of parent keys: every key
   * below the node starts with its own, see pathKey), then ancestors left with
   * neither document nor children go, nearest first, and the change is kept.
   */
  async remove(path: NodePath, conditions: { expect?: string | null } = {}): Promise<{ existed: boolean; doc?: Doc }> {
    const [parent, name] = keyOf(path)
    const own = pathKey(path)
    let removed: { existed: boolean; doc?: Doc } = { existed: false }
    const lock = (client: PoolClient) => `SELECT pg_advisory_xact_lock(hashtextextended(${client.escapeLiteral(treeLockKey(path))}, 0))`
    await this.#change(path, () => ({ type: 'delete', path, data: removed.doc ?? null }), lock, async (client) => {
      if (conditions.expect !== undefined) {
        const current = await this.#lockedText(client, path)
        const matches = conditions.expect === null ? current === undefined : current !== undefined && etagOf(current) === conditions.expect
        if (!matches) throw new StoreError('version-changed', path)
      }
      const { rows } = await client.query(
        `WITH gone AS (
           DELETE FROM restdir_nodes WHERE (parent = $1 AND name = $2) OR (parent >= $3 AND parent < $4) RETURNING parent, name, text
         )
         SELECT count(*)::int AS count, (SELECT text FROM gone WHERE parent = $1 AND name = $2) AS text FROM gone`,
        [parent, name, own, afterKeysBelow(own)],
      )
      const count = rows[0].count as number
      if (count === 0) return undefined // nothing changed: no change is kept
      for (let depth = path.length - 1; depth > 0; depth--) {
        const [above, aboveName] = keyOf(path.slice(0, depth))
        const values = [above, aboveName, pathKey(path.slice(0, depth))]
        const prunable = `parent = $1 AND name = $2 AND text IS NULL AND NOT EXISTS (SELECT 1 FROM restdir_nodes WHERE parent = $3)`
        // Most ancestors keep other children: only one that looks empty waits for the writes below it, then is checked again.
        const looksEmpty = await client.query(`SELECT 1 FROM restdir_nodes WHERE ${prunable}`, values)
        if (looksEmpty.rows.length === 0) break
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [treeLockKey(path.slice(0, depth))])
        const pruned = await client.query(`DELETE FROM restdir_nodes WHERE ${prunable}`, values)
        if (pruned.rowCount === 0) break
      }
      const text = rows[0].text as string | null
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

  /** Listens to every change committed to the database, by any process (README, "Many instances on one database"). */
  subscribe(listener: (change: StoreChange) => void): () => void {
    return this.#feed.subscribe(listener)
  }

  lastChangeId(): Promise<number> {
    return this.#feed.lastChangeId()
  }

  /**
   * The kept changes after `id`, oldest first, at most `limit`; undefined when
   * some change after `id` is no longer kept (the window moved past it).
   */
  async changesAfter(id: number, limit: number): Promise<StoreChange[] | undefined> {
    const { rows } = await this.#query([], `SELECT coalesce(min(id), 0)::text AS oldest FROM restdir_changes`, [])
    const oldest = Number(rows[0].oldest)
    if (oldest === 0 ? id !== (await this.#lastCommitted()) : id < oldest - 1) return undefined
    return this.#changesAfter(id, limit)
  }

  async #changesAfter(id: number, limit: number): Promise<StoreChange[]> {
    const { rows } = await this.#query([], 'SELECT id, type, path, data FROM restdir_changes WHERE id > $1 ORDER BY id LIMIT $2', [id, limit])
    return rows.map(changeOfRow)
  }

  async #lastCommitted(): Promise<number> {
    const { rows } = await this.#query([], `SELECT value FROM restdir_meta WHERE key = 'last_change_id'`, [])
    return Number(rows[0].value)
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
    const result = await this.#transaction(path, work, locks, (client, result) => {
      if (result === undefined) return undefined
      const made = typeof change === 'function' ? change() : change
      // Sent with the COMMIT in one message, so the counter's row is held only inside the database, never across a round trip.
      return {
        sql: `WITH next AS (
                UPDATE restdir_meta SET value = (value::bigint + 1)::text WHERE key = 'last_change_id' RETURNING value::bigint AS id
              ), kept AS (
                INSERT INTO restdir_changes (id, type, path, data)
                SELECT id, ${client.escapeLiteral(made.type)}, ${client.escapeLiteral(JSON.stringify(made.path))}, ${client.escapeLiteral(JSON.stringify(made.data))} FROM next
                RETURNING id
              )
              SELECT id::text, pg_notify('${CHANGES_CHANNEL}', id::text) FROM kept`,
        done: (row: Record<string, unknown>) => (kept = { id: Number(row.id), ...made }),
      }
    })
    if (kept) {
      await this.#feed.committed(kept)
      if (kept.id % PRUNE_EVERY === 0) void this.#prune(kept.id)
    }
    return result
  }

  /** Drops the changes older than the window (README, "Live updates"), now and then, after a commit. */
  async #prune(last: number): Promise<void> {
    try {
      const pool = await this.#pool
      await pool.query(
        `DELETE FROM restdir_changes WHERE id <= greatest($1::bigint - $2::bigint,
           coalesce((SELECT id FROM (SELECT id, sum(length(data)) OVER (ORDER BY id DESC) AS bytes FROM restdir_changes) AS newest
                      WHERE bytes > $3 AND id < $1 ORDER BY id DESC LIMIT 1), 0))`,
        [last, this.#window.maxChanges, this.#window.maxBytes],
      )
    } catch (error) {
      this.#report(error) // the next prune tries again
    }
  }

  /** Filters, sort and window in SQL (README, "Running on PostgreSQL"; listing-query.ts). */
  query(path: NodePath, plan: ListingPlan): Promise<ListingPage | undefined> {
    return queryListing(pathKey(path), plan, ID_ORDER, (text, values) => this.#query(path, text, values), () => this.exists(path))
  }

  /** Closes the pool's connections. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= this.#feed.close().then(() => this.#pool).then((pool) => pool.end(), () => {})
    return this.#closed
  }

  async #query(path: NodePath, text: string, values: unknown[]): Promise<QueryResult> {
    const pool = await this.#usable(path)
    try {
      return await pool.query(text, values)
    } catch (error) {
      throw this.#storeError(error, path)
    }
  }

  /** A transaction that PostgreSQL chose to end to break a deadlock (SQLSTATE 40P01) rolled back whole: it runs again. */
  async #transaction<T>(path: NodePath, work: (client: PoolClient) => Promise<T>, opening?: Opening, closing?: Closing<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#transactionOnce(path, work, opening, closing)
      } catch (error) {
        if (!(error instanceof Deadlock)) throw error
        if (attempt === 5) throw this.#storeError(error.cause, path)
      }
    }
  }

  async #transactionOnce<T>(path: NodePath, work: (client: PoolClient) => Promise<T>, opening?: Opening, closing?: Closing<T>): Promise<T> {
    const pool = await this.#usable(path)
    let client: PoolClient
    try {
      client = await pool.connect()
    } catch (error) {
      throw this.#storeError(error, path)
    }
    // A connection lost between two statements is an 'error' event on the client: the next statement fails, the process does not.
    const lost = (error: Error) => this.#report(error)
    client.on('error', lost)
    try {
      // The first statement, when there is one, goes with the BEGIN in one message.
      await client.query(opening ? `BEGIN; ${opening(client)}` : 'BEGIN')
      const result = await work(client)
      const last = closing?.(client, result)
      if (last) {
        // Two statements in one message: pg answers each one's result.
        const [answer] = (await client.query(`${last.sql}; COMMIT`)) as unknown as QueryResult[]
        last.done(answer.rows[0])
      } else {
        await client.query('COMMIT')
      }
      client.off('error', lost)
      client.release()
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      client.off('error', lost)
      const deadlock = (error as { code?: unknown }).code === '40P01'
      // A connection that failed is not given back to be used again; one whose transaction was refused is.
      client.release(error instanceof StoreError || deadlock ? undefined : error instanceof Error ? error : true)
      if (deadlock) throw new Deadlock(error)
      throw this.#storeError(error, path)
    }
  }

  async #usable(path: NodePath): Promise<Pool> {
    if (this.#closed) throw new StoreError('unavailable', path, 'the store is closed')
    const checked = this.#checked
    try {
      await checked
      return await this.#pool
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw this.#storeError(error, path)
    }
    // The database was out of reach when last checked: check again (once for all requests now waiting).
    if (this.#checked === checked) this.#checked = this.#check()
    try {
      await this.#checked
      return await this.#pool
    } catch (error) {
      throw this.#storeError(error, path)
    }
  }

  #storeError(error: unknown, path: NodePath): unknown {
    if (error instanceof StoreError || error instanceof MissingPgError || error instanceof SchemaError) return error
    const kind = kindOf(error)
    if (kind === 'unavailable') this.#report(error)
    const reasons: Partial<Record<StoreErrorKind, string>> = {
      unavailable: 'the database cannot be reached',
      'path-too-long': 'database (a key holds at most some 2700 bytes)',
    }
    return new StoreError(kind, path, reasons[kind])
  }

  /** Says in the log, at most once a minute, that the database is out of reach; each request hears it as a 503. */
  #report(error: unknown): void {
    const now = Date.now()
    if (now - this.#reported < 60_000) return
    this.#reported = now
    this.#log(`restdir: the database ${this.location} cannot be reached (${describe(error)}); requests are answered 503 until it is back.`)
  }
}

/** A first statement a transaction sends with its BEGIN, written out (no parameters). */
type Opening = (client: PoolClient) => string

/** A last statement a transaction sends with its COMMIT, when its result asks for one, and what to do with the row it answers. */
type Closing<T> = (client: PoolClient, result: T) => { sql: string; done(row: Record<string, unknown>): void } | undefined

/** A transaction PostgreSQL rolled back to break a deadlock. */
class Deadlock extends Error {
  constructor(cause: unknown) {
    super('deadlock', { cause })
  }
}

/** The database could not be reached to check the schema; the cause is kept, the message holds no password. */
class UnreachableError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause })
    this.name = 'UnreachableError'
  }
}

/**
 * A segment as the `name` column keeps it: as it is, except three kinds of
 * UTF-16 code unit, so that the "C" collation (UTF-8 byte order) gives
 * code-unit order and every string can be stored:
 *
 * - U+0000, which PostgreSQL text cannot hold, becomes U+0001 U+0001, and
 *   U+0001 becomes U+0001 U+0002 (both still sort below U+0002);
 * - every unit from U+D800 up (surrogates, so also characters beyond U+FFFF,
 *   and U+E000 to U+FFFF) becomes the code point 0x800 above it (U+E000 to
 *   U+107FF). UTF-8 order puts characters beyond U+FFFF after U+FFFF, while
 *   code-unit order puts them (as surrogates) before U+E000: shifting the
 *   units keeps code-unit order, and a lone surrogate becomes a character too.
 */
export function nameOf(segment: string): string {
  let name = ''
  let plainFrom = 0
  for (let index = 0; index < segment.length; index++) {
    const unit = segment.charCodeAt(index)
    if (unit > 0x0001 && unit < 0xd800) continue
    name += segment.slice(plainFrom, index)
    plainFrom = index + 1
    if (unit === 0x0000) name += '\u0001\u0001'
    else if (unit === 0x0001) name += '\u0001\u0002'
    else name += String.fromCodePoint(unit + 0x800)
  }
  return plainFrom === 0 ? segment : name + segment.slice(plainFrom)
}

/** The inverse of nameOf. */
export function segmentOf(name: string): string {
  if (!/[\u0001\ue000-\uffff\ud800-\udfff]/.test(name)) return name
  let segment = ''
  for (let index = 0; index < name.length; index++) {
    const codePoint = name.codePointAt(index) as number
    if (codePoint === 0x0001) {
      segment += name.charCodeAt(++index) === 0x0001 ? '\u0000' : '\u0001'
    } else if (codePoint >= 0xe000) {
      segment += String.fromCharCode(codePoint - 0x800)
      if (codePoint > 0xffff) index++
    } else {
      segment += name[index]
    }
  }
  return segment
}

/**
 * The key of the node at `path` as a parent: `/` for the root, else `/`, each
 * segment's name with `/` spelled U+0001 U+0003, and `/` after each, e.g.
 * `/users/42/`. Keys of nodes below it start with it, and no other key does.
 */
export function pathKey(path: NodePath): string {
  let key = '/'
  for (const segment of path) key += nameOf(segment).replaceAll('/', '\u0001\u0003') + '/'
  return key
}

/** The (parent, name) of the node's row; the root's is ('', ''), which no other node has. */
function keyOf(path: NodePath): [string, string] {
  if (path.length === 0) return ['', '']
  return [pathKey(path.slice(0, -1)), nameOf(path[path.length - 1])]
}

/** The rows of the node's ancestors below the root, as the two arrays unnest takes. */
function ancestorKeys(path: NodePath): [string[], string[]] {
  const parents: string[] = []
  const names: string[] = []
  for (let depth = 1; depth < path.length; depth++) {
    const [parent, name] = keyOf(path.slice(0, depth))
    parents.push(parent)
    names.push(name)
  }
  return [parents, names]
}

/** The name of the advisory lock of the subtree at `path`: writes in it take it shared, its removal exclusively. */
function treeLockKey(path: NodePath): string {
  return `tree ${pathKey(path)}`
}

/** Every how many changes the kept ones are pruned to the window. */
const PRUNE_EVERY = 64

/** The first key after every key that starts with `key` (which ends in `/`): the same with `0`, the next byte, last. */
function afterKeysBelow(key: string): string {
  return key.slice(0, -1) + '0'
}

/** SQLSTATE classes and codes (PostgreSQL manual, appendix A) that mean the database is out of reach for now. */
function kindOf(error: unknown): StoreErrorKind {
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') {
    if (code === '53100') return 'disk-full'
    if (code === '25006') return 'read-only'
    if (code === '54000') return 'path-too-long' // an index row too big: a path too long to be a key
  }
  return 'unavailable'
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown }
  const text = typeof message === 'string' && message !== '' ? message : String(error)
  return typeof code === 'string' ? `${code}: ${redactUrl(text)}` : redactUrl(text)
}
