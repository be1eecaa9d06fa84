import type { Pool } from './pg.ts'
import { ReadBatch } from './read-batch.ts'

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
export function readStatement(count: number): { statement: { name: string; text: string }; size: number } {
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

/** Reads of one document's stored text each, by its row's (parent, name), sharing statements when many come at once. */
export function documentReads(pool: Promise<Pool>): ReadBatch<[string, string], string> {
  return new ReadBatch<[string, string], string>({
    limit: READS_AT_ONCE,
    most: READS_IN_ONE,
    patience: 1000,
    read: async (keys) => {
      const { statement, size } = readStatement(keys.length)
      const values: string[] = []
      for (let index = 0; index < size; index++) values.push(...keys[Math.min(index, keys.length - 1)])
      const { rows } = await (await pool).query({ ...statement, values })
      const texts = new Map(rows.map((row) => [`${row.parent as string}\u0000${row.name as string}`, row.text as string]))
      const found = new Map<number, string>()
      keys.forEach(([parent, name], index) => {
        const text = texts.get(`${parent}\u0000${name}`)
        if (text !== undefined) found.set(index, text)
      })
      return found
    },
  })
}
