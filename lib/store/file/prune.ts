import { readdir, rmdir, unlink } from 'node:fs/promises'
import { dirname, join, sep } from 'node:path'
import { readOwnFile } from './document-file.ts'
import { errorCode } from '../fs/fs-errors.ts'
import { NAME_FILE } from './names.ts'
import { writeNameFile, type TempPaths } from './temp-file.ts'

/**
 * Removes `directory` and then each ancestor in turn while they are empty,
 * stopping at the first that is not, and never removing `root` itself: a
 * node left with neither document nor children stops existing.
 */
export async function pruneEmptyDirectories(root: string, directory: string, temps: TempPaths): Promise<void> {
  let current = directory
  while (current.startsWith(root + sep) && (await removeIfEmpty(current, temps))) {
    current = dirname(current)
  }
}

/**
 * rmdir(2), which refuses a directory that is not empty; a hashed directory
 * holding only its `@name` counts as empty. True when the directory is gone.
 */
export async function removeIfEmpty(directory: string, temps: TempPaths): Promise<boolean> {
  const code = await tryRmdir(directory)
  if (code !== 'ENOTEMPTY' && code !== 'EEXIST') return code === undefined || code === 'ENOENT'
  const entries = await readdir(directory).catch(() => [])
  if (entries.length !== 1 || entries[0] !== NAME_FILE) return false

  const nameFile = join(directory, NAME_FILE)
  const segment = await readOwnFile(nameFile).catch(() => undefined)
  if (segment === undefined) return false
  await unlink(nameFile).catch(() => {})
  if ((await tryRmdir(directory)) === undefined) return true
  // A write made a child in between: the directory lives on, and needs its name back.
  await writeNameFile(directory, segment, temps, false).catch(() => {})
  return false
}

/** rmdir that answers with the error code instead of throwing (undefined when removed). */
async function tryRmdir(directory: string): Promise<string | undefined> {
  try {
    await rmdir(directory)
    return undefined
  } catch (error) {
    return errorCode(error) ?? 'EUNKNOWN'
  }
}
