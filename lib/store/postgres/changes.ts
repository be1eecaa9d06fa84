import type { StoreChange } from '../store.ts'
import type { Database } from './database.ts'
import { changeOfRow } from './notify-feed.ts'
import type { PoolClient } from './pg.ts'
import { CHANGES_CHANNEL } from './schema.ts'

/**
 * The changes the database keeps (docs/http-api.md, "Live updates"; "Many instances on
 * one database"): numbered by the counter in `restdir_meta`, kept in
 * `restdir_changes` up to the window, announced with a NOTIFY of their id.
 */

/** Every how many changes the kept ones are pruned to the window. */
export const PRUNE_EVERY = 64

/**
 * The statement that keeps `made` as the next change, written out to go with
 * the COMMIT in one message, so the counter's row is held only inside the
 * database, never across a round trip. It answers the change's id.
 */
export function keepChangeStatement(client: PoolClient, made: Omit<StoreChange, 'id'>): string {
  return `WITH next AS (
                UPDATE restdir_meta SET value = (value::bigint + 1)::text WHERE key = 'last_change_id' RETURNING value::bigint AS id
              ), kept AS (
                INSERT INTO restdir_changes (id, type, path, data)
                SELECT id, ${client.escapeLiteral(made.type)}, ${client.escapeLiteral(JSON.stringify(made.path))}, ${client.escapeLiteral(JSON.stringify(made.data))} FROM next
                RETURNING id
              )
              SELECT id::text, pg_notify('${CHANGES_CHANNEL}', id::text) FROM kept`
}

/** Drops the changes older than the window (docs/http-api.md, "Live updates"), now and then, after a commit. */
export async function pruneChanges(database: Database, last: number, window: { maxChanges: number; maxBytes: number }): Promise<void> {
  try {
    const pool = await database.pool
    await pool.query(
      `DELETE FROM restdir_changes WHERE id <= greatest($1::bigint - $2::bigint,
           coalesce((SELECT id FROM (SELECT id, sum(length(data)) OVER (ORDER BY id DESC) AS bytes FROM restdir_changes) AS newest
                      WHERE bytes > $3 AND id < $1 ORDER BY id DESC LIMIT 1), 0))`,
      [last, window.maxChanges, window.maxBytes],
    )
  } catch (error) {
    database.report(error) // the next prune tries again
  }
}

/**
 * The kept changes after `id`, oldest first, at most `limit`; undefined when
 * some change after `id` is no longer kept (the window moved past it).
 */
export async function keptChangesAfter(database: Database, id: number, limit: number): Promise<StoreChange[] | undefined> {
  const { rows } = await database.query([], `SELECT coalesce(min(id), 0)::text AS oldest FROM restdir_changes`, [])
  const oldest = Number(rows[0].oldest)
  if (oldest === 0 ? id !== (await lastCommitted(database)) : id < oldest - 1) return undefined
  return changesAfter(database, id, limit)
}

/** The kept changes after `id`, oldest first, at most `limit`. */
export async function changesAfter(database: Database, id: number, limit: number): Promise<StoreChange[]> {
  const { rows } = await database.query([], 'SELECT id, type, path, data FROM restdir_changes WHERE id > $1 ORDER BY id LIMIT $2', [id, limit])
  return rows.map(changeOfRow)
}

/** The id of the newest change committed. */
export async function lastCommitted(database: Database): Promise<number> {
  const { rows } = await database.query([], `SELECT value FROM restdir_meta WHERE key = 'last_change_id'`, [])
  return Number(rows[0].value)
}
