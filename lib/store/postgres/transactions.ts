import { StoreError } from '../errors.ts'
import type { NodePath } from '../store.ts'
import type { Database } from './database.ts'
import type { PoolClient, QueryResult } from './pg.ts'

/** A first statement a transaction sends with its BEGIN, written out (no parameters). */
export type Opening = (client: PoolClient) => string

/** A last statement a transaction sends with its COMMIT, when its result asks for one, and what to do with the row it answers. */
export type Closing<T> = (client: PoolClient, result: T) => { sql: string; done(row: Record<string, unknown>): void } | undefined

/** Most times a transaction runs when PostgreSQL keeps ending it to break deadlocks. */
const ATTEMPTS = 5

/**
 * Runs `work` in a transaction on one connection of `database`. A
 * transaction that PostgreSQL chose to end to break a deadlock (SQLSTATE
 * 40P01) rolled back whole: it runs again.
 */
export async function inTransaction<T>(database: Database, path: NodePath, work: (client: PoolClient) => Promise<T>, opening?: Opening, closing?: Closing<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactionOnce(database, path, work, opening, closing)
    } catch (error) {
      if (!(error instanceof Deadlock)) throw error
      if (attempt === ATTEMPTS) throw database.storeError(error.cause, path)
    }
  }
}

async function transactionOnce<T>(database: Database, path: NodePath, work: (client: PoolClient) => Promise<T>, opening?: Opening, closing?: Closing<T>): Promise<T> {
  const pool = await database.usable(path)
  let client: PoolClient
  try {
    client = await pool.connect()
  } catch (error) {
    throw database.storeError(error, path)
  }
  // A connection lost between two statements is an 'error' event on the client: the next statement fails, the process does not.
  const lost = (error: Error) => database.report(error)
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
    throw database.storeError(error, path)
  }
}

/** A transaction PostgreSQL rolled back to break a deadlock. */
class Deadlock extends Error {
  constructor(cause: unknown) {
    super('deadlock', { cause })
  }
}
