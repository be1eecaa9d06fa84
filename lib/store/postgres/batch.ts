import { etagOf, parseStoredDoc } from '../serialize.ts'
import type { BatchOp, NodePath } from '../store.ts'
import type { BaseReader } from '../store.ts'
import { ID_ORDER } from './schema.ts'
import { keyOf, pathKey, segmentOf, treeLockKey } from './keys.ts'
import type { PoolClient } from './pg.ts'

/*
 * A batch's transaction on PostgreSQL (docs/postgres.md, "Batches"): its locks
 * and the reads its checks make inside it.
 */

/**
 * The statement that takes a batch's locks, sent with its BEGIN: the
 * exclusive advisory lock of every node the batch writes or removes, of each
 * write's owner, and of every ancestor of either, the root's included, deepest
 * first; and the lock of each unique field among its collection. A write holds
 * its node's and its ancestors' shared and a removal its subtree's
 * exclusively (writes.ts), so none of any instance lands while the batch is checked and applied.
 */
export function batchLocks(client: PoolClient, ops: readonly BatchOp[]): string {
  const trees = new Map<string, number>()
  for (const op of ops) {
    const branches = op.kind === 'write' && op.conditions?.owner ? [op.path, op.conditions.owner] : [op.path]
    for (const branch of branches) for (let depth = 0; depth <= branch.length; depth++) trees.set(treeLockKey(branch.slice(0, depth)), depth)
  }
  const deepestFirst = [...trees].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([key]) => client.escapeLiteral(key))
  const uniques = new Set<string>()
  for (const op of ops) {
    const unique = op.kind === 'write' ? op.conditions?.unique : undefined
    if (unique) uniques.add(`unique ${pathKey(unique.among)} ${unique.field}`)
  }
  const keys = [...deepestFirst.map((key) => `(${key}, false)`), ...[...uniques].sort().map((key) => `(${client.escapeLiteral(key)}, true)`)]
  return `SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) FROM (VALUES ${keys.join(', ')}) AS locks (key, is_unique)`
}

/** The store's reads as the transaction sees them, for the batch's checks (lib/store/staged.ts). */
export function transactionReader(client: PoolClient): BaseReader {
  const textOf = async (path: NodePath): Promise<string | undefined> => {
    const [parent, name] = keyOf(path)
    const { rows } = await client.query('SELECT text FROM restdir_nodes WHERE parent = $1 AND name = $2', [parent, name])
    return (rows[0]?.text as string | null | undefined) ?? undefined
  }
  return {
    async read(path) {
      const text = await textOf(path)
      return text === undefined ? undefined : { doc: parseStoredDoc(text, path), etag: etagOf(text) }
    },
    async children(path) {
      const { rows } = await client.query(`SELECT name FROM restdir_nodes WHERE parent = $1 ORDER BY ${ID_ORDER}`, [pathKey(path)])
      if (rows.length === 0) return (await textOf(path)) === undefined ? undefined : []
      return rows.map((row) => segmentOf(row.name as string))
    },
    async exists(path) {
      if ((await textOf(path)) !== undefined) return true
      const { rows } = await client.query('SELECT 1 FROM restdir_nodes WHERE parent = $1 LIMIT 1', [pathKey(path)])
      return rows.length > 0
    },
  }
}
