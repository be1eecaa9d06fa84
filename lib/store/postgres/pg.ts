import type { ListeningClient } from './notify-feed.ts'

/**
 * The few parts of the `pg` client (node-postgres) this store uses, so that
 * restdir needs neither `pg` nor its types to build or to run on the other
 * stores: `pg` is loaded only when a PostgreSQL store is asked for.
 */
export interface QueryResult {
  rows: Record<string, unknown>[]
  rowCount: number | null
}
export interface PoolClient {
  query(text: string, values?: unknown[]): Promise<QueryResult>
  /** Quotes a string as an SQL literal, for statements sent without parameters. */
  escapeLiteral(text: string): string
  release(error?: Error | boolean): void
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'error', listener: (error: Error) => void): unknown
}
export interface Pool {
  query(text: string, values?: unknown[]): Promise<QueryResult>
  /** A named statement, prepared once on each connection. */
  query(statement: { name: string; text: string; values: unknown[] }): Promise<QueryResult>
  connect(): Promise<PoolClient>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}
export interface PgModule {
  Pool: new (config: Record<string, unknown>) => Pool
  Client: new (config: Record<string, unknown>) => ListeningClient
}

/** Sends one statement with its parameters: a pool's or a transaction's client's `query`. */
export type RunQuery = (text: string, values: unknown[]) => Promise<QueryResult>

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
