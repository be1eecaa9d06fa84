import { readdir, readFile, rename, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { fsyncDirectory, writeTempFile } from '../fs/atomic.ts'
import type { BatchOp } from '../store.ts'

/*
 * The folder store's journal of intent for a batch (docs/storage.md, "Batches"):
 * before the first of a batch's files is placed, the whole batch is written
 * to `@batch-<run>-<n>.json` in the store folder and flushed to disk, file and
 * folder. It is deleted once every file is in place. A run that died between
 * left it behind: the next start applies it again from its first op, before it
 * serves anything (every op is a write of a whole document or the removal of a
 * subtree, so applying one twice, in order, ends as applying it once), so each
 * batch is there whole or, when the journal never landed, not at all.
 */

const PREFIX = '@batch-'

/** Writes the journal of `ops` durably (temp file, fsync, rename, fsync of the folder) and answers its path. */
export async function writeJournal(root: string, name: string, tempPath: string, ops: readonly BatchOp[]): Promise<string> {
  const journal = join(root, `${PREFIX}${name}.json`)
  await writeTempFile(tempPath, JSON.stringify({ ops }), true)
  await rename(tempPath, journal)
  await fsyncDirectory(root)
  return journal
}

/** Deletes a journal once its batch is wholly in place. */
export async function dropJournal(root: string, journal: string, sync: boolean): Promise<void> {
  await unlink(journal)
  if (sync) await fsyncDirectory(root)
}

/** The journals a run that died left in `root`, oldest first, each with its ops (undefined for one that cannot be read). */
export async function leftJournals(root: string): Promise<{ path: string; ops: BatchOp[] | undefined }[]> {
  const names = (await readdir(root)).filter((name) => name.startsWith(PREFIX) && name.endsWith('.json'))
  // `<run>-<n>`: one run's batches in the order they were journaled.
  const order = (name: string) => Number(name.slice(name.lastIndexOf('-') + 1, -'.json'.length))
  names.sort((a, b) => order(a) - order(b))
  const found = []
  for (const name of names) {
    const path = join(root, name)
    let ops: BatchOp[] | undefined
    try {
      ops = (JSON.parse(await readFile(path, 'utf8')) as { ops: BatchOp[] }).ops
    } catch {
      ops = undefined
    }
    found.push({ path, ops })
  }
  return found
}
