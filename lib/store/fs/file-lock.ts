import { mkdir, rmdir } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { errorCode } from './fs-errors.ts'
import { releaseLock, takeLock, type StoreLock } from './folder-lock.ts'

/**
 * One server per db.json (docs/json-server.md, "Serving a db.json"): the
 * folder store's lock (lib/store/fs/folder-lock.ts), taken in a folder
 * beside the file, `.db.json.lock/`, which a clean stop removes. A crashed
 * holder's lock is taken over as the folder store's is.
 */
export interface FileLock {
  lock: StoreLock
  folder: string
}

export function lockFolderOf(file: string): string {
  return join(dirname(file), `.${basename(file)}.lock`)
}

/** Takes the lock of `file`; another restdir serving it refuses with code ESTORELOCKED, naming the file. */
export async function lockFile(file: string, runId: string): Promise<FileLock> {
  const folder = lockFolderOf(file)
  try {
    await mkdir(folder)
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error
  }
  try {
    return { lock: await takeLock(folder, join(folder, `@tmp-${runId}-lock`), runId), folder }
  } catch (error) {
    if (errorCode(error) !== 'ESTORELOCKED') throw error
    const pid = /\(pid (\d+)\)/.exec((error as Error).message)?.[1]
    const refused: NodeJS.ErrnoException = new Error(`${file} is served by another restdir${pid ? ` (pid ${pid})` : ''}; stop that one first.`)
    refused.code = 'ESTORELOCKED'
    throw refused
  }
}

/** Releases the lock and removes its folder (left when someone else's files are in it). */
export async function unlockFile(held: FileLock): Promise<void> {
  await releaseLock(held.lock)
  await rmdir(held.folder).catch(() => {})
}
