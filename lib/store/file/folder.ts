import { existsSync, statSync } from 'node:fs'
import { mkdir, rmdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { errorCode } from '../fs/fs-errors.ts'
import { takeLock, type StoreLock } from '../fs/folder-lock.ts'

/**
 * Makes the store folder if needed and takes its lock. A start that fails
 * leaves nothing behind: the folders it made are removed again while empty.
 * Every system error becomes one sentence about the folder (code ESTOREFOLDER).
 */
export async function openStoreFolder(root: string, runId: string): Promise<StoreLock> {
  let made: string | undefined
  try {
    made = await makeFolders(root)
    return await takeLock(root, join(root, `@tmp-${runId}-lock`), runId)
  } catch (error) {
    if (made !== undefined) await removeEmptyFolders(root, made)
    throw storeFolderError(root, error)
  }
}

/**
 * `mkdir -p`, one level at a time; returns the topmost folder it made. (Node's
 * own recursive mkdir never settles where the file system refuses with
 * ENOENT, as under /proc.)
 */
async function makeFolders(root: string): Promise<string | undefined> {
  const top = firstMissingFolder(root) ?? root
  const folders = [root]
  while (folders[0] !== top) folders.unshift(dirname(folders[0]))
  let made: string | undefined
  for (const folder of folders) {
    try {
      await mkdir(folder)
      made ??= folder
    } catch (error) {
      // Made meanwhile by another start, or there already: fine when it is a folder.
      if (errorCode(error) !== 'EEXIST' || !isFolder(folder)) throw error
    }
  }
  return made
}

/** The topmost folder of `path` that does not exist yet: the first one `mkdir -p` would make. */
export function firstMissingFolder(path: string): string | undefined {
  let missing: string | undefined
  for (let folder = path; !existsSync(folder); folder = dirname(folder)) {
    missing = folder
    if (dirname(folder) === folder) break
  }
  return missing
}

/** Removes `folder`, then its parents up to and including `top`, as long as each is empty. */
export async function removeEmptyFolders(folder: string, top: string): Promise<void> {
  for (let current = folder; ; current = dirname(current)) {
    try {
      await rmdir(current)
    } catch {
      return
    }
    if (current === top || dirname(current) === current) return
  }
}

/** A system error (it names a syscall) as one sentence a person can act on; restdir's own errors pass through. */
function storeFolderError(root: string, error: unknown): unknown {
  const system = error as NodeJS.ErrnoException
  if (system?.syscall === undefined) return error
  const reasons: Record<string, string> = {
    EEXIST: `${fileInTheWay(root)} is a file, not a folder`,
    ENOTDIR: `${fileInTheWay(root)} is a file, not a folder`,
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'it is on a read-only file system',
    ENAMETOOLONG: 'its path is too long for the file system',
    ELOOP: 'its path goes through too many symbolic links',
    ENOSPC: 'the disk is full',
    ENOENT: 'the file system does not let a folder be made there',
  }
  const reason = reasons[system.code ?? ''] ?? `the system answered ${system.code ?? 'an unknown error'}`
  const wrapped: NodeJS.ErrnoException = new Error(`The store folder ${root} cannot be used: ${reason}.`)
  wrapped.code = 'ESTOREFOLDER'
  return wrapped
}

/** The nearest of `root` and its parents that exists but is not a folder. */
function fileInTheWay(root: string): string {
  for (let path = root; dirname(path) !== path; path = dirname(path)) {
    if (existsSync(path) && !isFolder(path)) return path
  }
  return root
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}
