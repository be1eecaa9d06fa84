import { StoreError, type StoreErrorKind } from '../errors.ts'
import type { NodePath } from '../store.ts'
import { ensureIndexFunctions } from './listing-index-sql.ts'
import { ensureQuerySchema } from './listing-query.ts'
import { MissingPgError, type PgModule, type Pool, type QueryResult } from './pg.ts'
import { SchemaError, ensureSchema } from './schema.ts'
import { redactUrl } from './url.ts'

export interface DatabaseOptions {
  maxConnections?: number
  connectTimeout?: number
  log?: (line: string) => void
}

/**
 * The PostgreSQL store's way to its database: the pool, the schema check
 * every operation waits for (made again while the database is out of reach),
 * and what a failure means to the store (a StoreError of its kind, said in
 * the log at most once a minute).
 */
export class Database {
  /** The connection string with any password hidden, for the log. */
  readonly location: string
  readonly pool: Promise<Pool>
  /** The schema check under way or done; a check that failed for want of the database is made again by the next operation. */
  #checked: Promise<boolean>
  /** When the database was last said in the log to be out of reach. */
  #reported = -Infinity
  #closed: Promise<void> | undefined
  /** Says what the operator should know (DatabaseOptions.log, else standard error). */
  readonly log: (line: string) => void

  constructor(url: string, options: DatabaseOptions, pg: Promise<PgModule>) {
    this.location = redactUrl(url)
    this.log = options.log ?? ((line) => console.error(line))
    this.pool = pg.then(({ Pool }) => {
      const pool = new Pool({
        connectionString: url,
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: options.connectTimeout ?? 5000,
        idleTimeoutMillis: 60_000,
      })
      // An idle connection the server drops (a restart) must never crash the process; the pool opens a new one when needed.
      pool.on('error', (error) => this.report(error))
      return pool
    })
    this.#checked = this.#check()
  }

  /** Settles once the schema is checked (or made): true when this start made it. Rejects when the database cannot be used. */
  get ready(): Promise<boolean> {
    return this.#checked
  }

  #check(): Promise<boolean> {
    const checked = this.pool
      .then(async (pool) => {
        const client = await pool.connect()
        const lost = () => {} // the statement under way fails and says why
        client.on('error', lost)
        try {
          const { made } = await ensureSchema(client, this.location, this.log)
          await ensureQuerySchema(pool)
          await ensureIndexFunctions(pool)
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

  /** Runs `finish` (the store's own closing), then closes the pool's connections. Safe to call twice. */
  close(finish: () => Promise<void>): Promise<void> {
    this.#closed ??= finish().then(() => this.pool).then((pool) => pool.end(), () => {})
    return this.#closed
  }

  /**
   * One statement outside a transaction, its text and values or a statement
   * (named when each connection should plan it once); a failure is thrown as the StoreError of `path`.
   */
  async query(path: NodePath, statement: string | { name?: string; text: string; values: unknown[] }, values: unknown[] = []): Promise<QueryResult> {
    const pool = await this.usable(path)
    try {
      if (typeof statement === 'string') return await pool.query(statement, values)
      return await (statement.name === undefined ? pool.query(statement.text, statement.values) : pool.query({ name: statement.name, text: statement.text, values: statement.values }))
    } catch (error) {
      throw this.storeError(error, path)
    }
  }

  /** The pool, once the schema is checked; checks again when the database was out of reach. */
  async usable(path: NodePath): Promise<Pool> {
    if (this.#closed) throw new StoreError('unavailable', path, 'the store is closed')
    const checked = this.#checked
    try {
      await checked
      return await this.pool
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw this.storeError(error, path)
    }
    // The database was out of reach when last checked: check again (once for all requests now waiting).
    if (this.#checked === checked) this.#checked = this.#check()
    try {
      await this.#checked
      return await this.pool
    } catch (error) {
      throw this.storeError(error, path)
    }
  }

  storeError(error: unknown, path: NodePath): unknown {
    if (error instanceof StoreError || error instanceof MissingPgError || error instanceof SchemaError) return error
    const kind = kindOf(error)
    if (kind === 'unavailable') this.report(error)
    const reasons: Partial<Record<StoreErrorKind, string>> = {
      unavailable: 'the database cannot be reached',
      'path-too-long': 'database (a key holds at most some 2700 bytes)',
    }
    return new StoreError(kind, path, reasons[kind])
  }

  /** Says in the log, at most once a minute, that the database is out of reach; each request hears it as a 503. */
  report(error: unknown): void {
    const now = Date.now()
    if (now - this.#reported < 60_000) return
    this.#reported = now
    this.log(`restdir: the database ${this.location} cannot be reached (${describe(error)}); requests are answered 503 until it is back.`)
  }
}

/** The database could not be reached to check the schema; the cause is kept, the message holds no password. */
class UnreachableError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause })
    this.name = 'UnreachableError'
  }
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
