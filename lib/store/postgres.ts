import { StoreError, type StoreErrorKind } from './errors.ts'
import { etagOf, parseStoredDoc, serializeDoc } from './serialize.ts'
import type { Doc, ListingPage, ListingPlan, NodePath, Store, StoredDoc, StoredText, WriteResult } from './store.ts'
import { ensureQuerySchema, queryListing } from './postgres-query.ts'

/**
 * Children in id order, as the other stores list them (compareIds in
 * store.ts): whole numbers without leading zeros first, by value (a shorter
 * one is smaller), then every other name in code-unit order ("C" collation on
 * the mapped names). The index on the same expressions serves a page of it.
 */
const WHOLE_NUMBER = "name ~ '^(0|[1-9][0-9]*)$'"
/** The first part of a write: the rows of the node's ancestors ($3 parents, $4 names), made where missing. */
const MAKE_ANCESTORS = `WITH ancestors AS (
  INSERT INTO restdir_nodes (parent, name) SELECT * FROM unnest($3::text[], $4::text[]) ON CONFLICT DO NOTHING
)`
const ID_ORDER = `(NOT (${WHOLE_NUMBER})), (CASE WHEN ${WHOLE_NUMBER} THEN length(name) ELSE 0 END), name`

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
  release(error?: Error | boolean): void
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'error', listener: (error: Error) => void): unknown
}
interface Pool {
  query(text: string, values?: unknown[]): Promise<QueryResult>
  connect(): Promise<PoolClient>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}
interface PgModule {
  Pool: new (config: Record<string, unknown>) => Pool
}

/** The schema version this restdir writes and reads (README, "Running on PostgreSQL"). */
export const SCHEMA_VERSION = 1

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
    this.#pool = loadPg().then(({ Pool }) => {
      const pool = new Pool({
        connectionString: url,
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: options.connectTimeout ?? 5000,
        idleTimeoutMillis: 10_000,
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
      .then((pool) => ensureSchema(pool, this.location, this.#log).then(async (made) => (await ensureQuerySchema(pool), made)))
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
    return { json: JSON.stringify(parseStoredDoc(text, path)), etag: etagOf(text) }
  }

  async #text(path: NodePath): Promise<string | undefined> {
    const [parent, name] = keyOf(path)
    const { rows } = await this.#query(path, 'SELECT text FROM restdir_nodes WHERE parent = $1 AND name = $2 AND text IS NOT NULL', [parent, name])
    return rows.length === 0 ? undefined : (rows[0].text as string)
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
   * One statement: the ancestors' rows are made where missing, then the
   * node's row is inserted or updated. `created` is exact: the row was
   * inserted, or it was a node that only had children (its row is locked, and
   * read, before the update: `old` is read first through `locked_first`).
   */
  async write(path: NodePath, doc: Doc): Promise<WriteResult> {
    const text = serializeDoc(doc)
    const [parent, name] = keyOf(path)
    const [parents, names] = ancestorKeys(path)
    const { rows } = await this.#query(
      path,
      `${MAKE_ANCESTORS}, old AS (
         SELECT text IS NULL AS empty FROM restdir_nodes WHERE parent = $1 AND name = $2 FOR UPDATE
       )
       INSERT INTO restdir_nodes AS node (parent, name, text) SELECT $1, $2, $5 FROM (SELECT count(*) FROM old) AS locked_first
       ON CONFLICT (parent, name) DO UPDATE SET text = excluded.text
       RETURNING (node.xmax = 0) OR coalesce((SELECT empty FROM old), false) AS created`,
      [parent, name, parents, names, text],
    )
    return { created: rows[0].created === true, etag: etagOf(text) }
  }

  /** Exact under concurrency: the conflict clause fills a row only while it holds no document, and answers no row otherwise. */
  async create(path: NodePath, doc: Doc): Promise<WriteResult | undefined> {
    const text = serializeDoc(doc)
    const [parent, name] = keyOf(path)
    const [parents, names] = ancestorKeys(path)
    const { rows } = await this.#query(
      path,
      `${MAKE_ANCESTORS}
       INSERT INTO restdir_nodes AS node (parent, name, text) VALUES ($1, $2, $5)
       ON CONFLICT (parent, name) DO UPDATE SET text = excluded.text WHERE node.text IS NULL
       RETURNING 1`,
      [parent, name, parents, names, text],
    )
    return rows.length === 0 ? undefined : { created: true, etag: etagOf(text) }
  }

  /**
   * One transaction: one statement removes the node's row and every row
   * below it (a range of parent keys: every key below the node starts with
   * its own, see pathKey), then ancestors left with neither document nor
   * children go, nearest first.
   */
  async remove(path: NodePath): Promise<{ existed: boolean; doc?: Doc }> {
    const [parent, name] = keyOf(path)
    const own = pathKey(path)
    return this.#transaction(path, async (client) => {
      const { rows } = await client.query(
        `WITH gone AS (
           DELETE FROM restdir_nodes WHERE (parent = $1 AND name = $2) OR (parent >= $3 AND parent < $4) RETURNING parent, name, text
         )
         SELECT count(*)::int AS count, (SELECT text FROM gone WHERE parent = $1 AND name = $2) AS text FROM gone`,
        [parent, name, own, afterKeysBelow(own)],
      )
      const count = rows[0].count as number
      if (count === 0) return { existed: false }
      for (let depth = path.length - 1; depth > 0; depth--) {
        const [above, aboveName] = keyOf(path.slice(0, depth))
        const pruned = await client.query(
          `DELETE FROM restdir_nodes WHERE parent = $1 AND name = $2 AND text IS NULL
             AND NOT EXISTS (SELECT 1 FROM restdir_nodes WHERE parent = $3)`,
          [above, aboveName, pathKey(path.slice(0, depth))],
        )
        if (pruned.rowCount === 0) break
      }
      const text = rows[0].text as string | null
      if (text === null) return { existed: true }
      try {
        return { existed: true, doc: parseStoredDoc(text, path) }
      } catch {
        return { existed: true } // a document broken by hand goes all the same
      }
    })
  }

  /** Filters, sort and window in SQL (README, "Running on PostgreSQL"; postgres-query.ts). */
  query(path: NodePath, plan: ListingPlan): Promise<ListingPage | undefined> {
    return queryListing(pathKey(path), plan, ID_ORDER, (text, values) => this.#query(path, text, values), () => this.exists(path))
  }

  /** Closes the pool's connections. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= this.#pool.then((pool) => pool.end(), () => {})
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

  async #transaction<T>(path: NodePath, work: (client: PoolClient) => Promise<T>): Promise<T> {
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
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      client.off('error', lost)
      client.release()
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      client.off('error', lost)
      // A connection that failed is not given back to be used again.
      client.release(error instanceof Error ? error : true)
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

/** The database could not be reached to check the schema; the cause is kept, the message holds no password. */
class UnreachableError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause })
    this.name = 'UnreachableError'
  }
}

/** A database whose restdir schema this restdir cannot use. */
export class SchemaError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SchemaError'
  }
}

/**
 * Makes the schema on first start, under an advisory lock so that two
 * servers starting at once make it once; on later starts checks its version,
 * refusing one this restdir does not know. Resolves true when it made it.
 */
async function ensureSchema(pool: Pool, location: string, log: (line: string) => void): Promise<boolean> {
  const client = await pool.connect()
  const lost = () => {} // the statement under way fails and says why
  client.on('error', lost)
  try {
    const encoding = await client.query('SHOW server_encoding')
    if (encoding.rows[0].server_encoding !== 'UTF8') {
      throw new SchemaError(`the database ${location} is encoded ${String(encoding.rows[0].server_encoding)}; restdir needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8').`)
    }
    await client.query('BEGIN')
    await client.query("SELECT pg_advisory_xact_lock(hashtext('restdir schema'))")
    const { rows } = await client.query("SELECT to_regclass('restdir_meta') IS NOT NULL AS present")
    if (rows[0].present !== true) {
      await client.query(`CREATE TABLE restdir_meta (key text PRIMARY KEY, value text NOT NULL)`)
      await client.query(`INSERT INTO restdir_meta (key, value) VALUES ('schema_version', $1)`, [String(SCHEMA_VERSION)])
      await client.query(`CREATE TABLE restdir_nodes (
        parent text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        text text,
        PRIMARY KEY (parent, name))`)
      // The documents of one node in id order: pages and counts of a listing (documentChildren).
      await client.query(`CREATE INDEX restdir_documents ON restdir_nodes (parent, ${ID_ORDER}) WHERE text IS NOT NULL`)
      await client.query('COMMIT')
      log(`restdir: made the restdir schema (version ${SCHEMA_VERSION}) in the database ${location}.`)
      return true
    }
    const found = await client.query(`SELECT value FROM restdir_meta WHERE key = 'schema_version'`)
    await client.query('COMMIT')
    const version = found.rows[0]?.value
    if (version !== String(SCHEMA_VERSION)) {
      throw new SchemaError(
        `the database ${location} holds restdir schema version ${version === undefined ? '(none recorded)' : JSON.stringify(version)}, ` +
          `which this restdir (schema version ${SCHEMA_VERSION}) does not know; use the restdir that made it, or another database.`,
      )
    }
    return false
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.off('error', lost)
    client.release()
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
