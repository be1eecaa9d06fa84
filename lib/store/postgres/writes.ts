import { StoreError } from '../errors.ts'
import type { Doc, NodePath, WriteConditions } from '../store.ts'
import { afterKeysBelow, ancestorKeys, keyOf, pathKey, segmentOf, treeLockKey } from './keys.ts'
import type { PoolClient, RunQuery } from './pg.ts'

/** The first part of a write: the rows of the node's ancestors ($3 parents, $4 names), made where missing. */
const MAKE_ANCESTORS = `WITH ancestors AS (
  INSERT INTO restdir_nodes (parent, name) SELECT * FROM unnest($3::text[], $4::text[]) ON CONFLICT DO NOTHING
)`

/** True when the node's row holds a document: asked alone, or inside a write's transaction. */
export async function holdsDocument(query: RunQuery, path: NodePath): Promise<boolean> {
  const [parent, name] = keyOf(path)
  const { rows } = await query('SELECT 1 FROM restdir_nodes WHERE parent = $1 AND name = $2 AND text IS NOT NULL', [parent, name])
  return rows.length > 0
}

/**
 * Makes the ancestors' rows where missing and inserts or updates the node's
 * row, in one statement; true when the node was created: the row was
 * inserted, or it was a node that only had children (its row is locked, and
 * read, before the update).
 */
export async function upsertDocument(client: PoolClient, path: NodePath, text: string): Promise<boolean> {
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
  return rows[0].created === true
}

/** Inserts the node's row, or fills it when it holds no document; false when it holds one. */
export async function insertIfEmpty(client: PoolClient, path: NodePath, text: string): Promise<boolean> {
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
export async function lockedText(client: PoolClient, path: NodePath): Promise<string | undefined> {
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
export function writeLocks(client: PoolClient, path: NodePath, conditions: Omit<WriteConditions, 'expect' | 'patch'>): string {
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
export async function checkWriteConditions(client: PoolClient, path: NodePath, doc: Doc, conditions: Omit<WriteConditions, 'expect' | 'patch'>): Promise<void> {
  if (conditions.owner && !(await holdsDocument((text, values) => client.query(text, values), conditions.owner))) {
    throw new StoreError('owner-missing', conditions.owner)
  }
  const unique = conditions.unique
  if (unique && doc[unique.field] !== undefined) {
    const holder = await holderOf(client, path, unique.among, unique.field, JSON.stringify(doc[unique.field]))
    if (holder !== undefined) throw new StoreError('taken', path, holder)
  }
}

/**
 * The name of another child of `among` whose document holds `value` (JSON
 * text) in `field`. A string, number, boolean or null is written in the
 * stored text exactly as its JSON, so only the documents holding that text
 * are read; any other value needs every document read.
 */
async function holderOf(client: PoolClient, path: NodePath, among: NodePath, field: string, value: string): Promise<string | undefined> {
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
 * Deletes the node's row and every row below it (a range of parent keys:
 * every key below the node starts with its own, see pathKey), then ancestors
 * left with neither document nor children, nearest first; the subtree's
 * exclusive lock is held already. Undefined when there was nothing to delete;
 * else the node's text, if it held a document.
 */
export async function removeTree(client: PoolClient, path: NodePath): Promise<{ text: string | null } | undefined> {
  const [parent, name] = keyOf(path)
  const own = pathKey(path)
  const { rows } = await client.query(
    `WITH gone AS (
       DELETE FROM restdir_nodes WHERE (parent = $1 AND name = $2) OR (parent >= $3 AND parent < $4) RETURNING parent, name, text
     )
     SELECT count(*)::int AS count, (SELECT text FROM gone WHERE parent = $1 AND name = $2) AS text FROM gone`,
    [parent, name, own, afterKeysBelow(own)],
  )
  const count = rows[0].count as number
  if (count === 0) return undefined
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
  return { text: rows[0].text as string | null }
}
