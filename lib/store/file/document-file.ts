import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync, statSync, type Stats } from 'node:fs'
import { open } from 'node:fs/promises'
import { StoreError } from '../errors.ts'
import type { NodePath } from '../store.ts'
import { errorCode, isMissing, toStoreError } from '../fs/fs-errors.ts'
import { notRegular } from '../fs/file-version.ts'
import { isAt } from '../fs/open-place.ts'

/*
 * O_NOFOLLOW: a link in a document's place is refused, never followed out of
 * the store. O_NONBLOCK: opening a FIFO does not wait for a writer (fifo(7)),
 * so a pipe where a document should be costs one quick open and fstat instead
 * of a thread of Node's pool held until someone writes to it; for a regular
 * file it changes nothing. Both are 0 where the platform lacks them (Windows).
 */
const SAFE_READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

/*
 * O_NOATIME (Linux): reading a document writes nothing to the disk. Without it, the first read of
 * a file since it was written (relatime, the default) dirties its inode for the disk to write out
 * later: 1.4 µs more for that read on the bench's ext4, and an inode written out for each document
 * read after a change. The kernel grants it only to the file's owner (or to root): an open refused
 * EPERM is made again without it, and no read in this process asks for it again, as git reads its
 * objects (a file a person saved as another user, which the server's user may read).
 */
let readFlags = SAFE_READ | (constants.O_NOATIME ?? 0)

/** Whether `error` refused an open made with `flags` for O_NOATIME: then reads stop asking for it, and the open is to be made again without. */
function noAtimeRefused(error: unknown, flags: number): boolean {
  if (errorCode(error) !== 'EPERM' || flags === SAFE_READ) return false
  readFlags = SAFE_READ
  return true
}

async function openToRead(file: string) {
  const flags = readFlags
  try {
    return await open(file, flags)
  } catch (error) {
    // Another read may have been refused and dropped the flag meanwhile: this one is made again all the same.
    if (noAtimeRefused(error, flags)) return open(file, SAFE_READ)
    throw error
  }
}

function openToReadSync(file: string): number {
  const flags = readFlags
  try {
    return openSync(file, flags)
  } catch (error) {
    if (noAtimeRefused(error, flags)) return openSync(file, SAFE_READ)
    throw error
  }
}

/** What a read answers when the file it opened is not at the place asked for: a link on the way led elsewhere. */
export const ELSEWHERE = Symbol('elsewhere')

/** A document file as read: its bytes and the stats of the very descriptor they came from. */
export interface DocumentBytes {
  bytes: Buffer
  stats: Stats
}

/** Why a document file could not be opened: missing (undefined), or not a file to read (a link, a directory); anything else is thrown. */
function openRefused(error: unknown): string | undefined {
  if (isMissing(error)) return undefined
  if (errorCode(error) === 'ELOOP') return 'is a link, which the store does not follow'
  if (errorCode(error) === 'EISDIR') return 'is a directory'
  throw error
}

/**
 * Reads a document file only if it is a regular file reached without a link:
 * the bytes, undefined when there is none, or a sentence saying what is in
 * its place instead (a link, a directory, a pipe or a device), which is then
 * left unread. With `place` (OPEN_PLACES), ELSEWHERE when the open landed
 * anywhere but there, read nothing.
 */
export async function readDocumentFile(file: string): Promise<DocumentBytes | string | undefined>
export async function readDocumentFile(file: string, place: string | undefined): Promise<DocumentBytes | string | typeof ELSEWHERE | undefined>
export async function readDocumentFile(file: string, place?: string): Promise<DocumentBytes | string | typeof ELSEWHERE | undefined> {
  let handle
  try {
    handle = await openToRead(file)
  } catch (error) {
    return openRefused(error)
  }
  try {
    if (place !== undefined && !isAt(handle.fd, place)) return ELSEWHERE
    const stats = await handle.stat()
    const problem = notRegular(stats)
    if (problem) return problem
    return { bytes: await handle.readFile(), stats }
  } finally {
    await handle.close()
  }
}

/**
 * As readDocumentFile, on the calling thread: open, fstat, one read, close,
 * with no trip through Node's thread pool. For a file in the page cache that
 * is some 11 µs in all, where the pool's round trips cost about 80 µs of
 * futexes and wake-ups; the caller goes back to the pool when a read is slow
 * (a cold cache: the disk would hold the event loop).
 */
export function readDocumentFileSync(file: string, place?: string): DocumentBytes | string | typeof ELSEWHERE | undefined {
  let fd: number
  try {
    fd = openToReadSync(file)
  } catch (error) {
    return openRefused(error)
  }
  try {
    if (place !== undefined && !isAt(fd, place)) return ELSEWHERE
    const stats = fstatSync(fd)
    const problem = notRegular(stats)
    if (problem) return problem
    // One byte more than its size: a file that grew since the fstat fills it, and is then read whole.
    const buffer = Buffer.allocUnsafe(stats.size + 1)
    const count = readSync(fd, buffer, 0, buffer.length, 0)
    return { bytes: count <= stats.size ? buffer.subarray(0, count) : readFileSync(fd), stats }
  } finally {
    closeSync(fd)
  }
}

/** Reads one of the store's own small files (a `@name`) the same safe way; undefined when it is missing or not a regular file. */
export async function readOwnFile(file: string): Promise<string | undefined> {
  const read = await readDocumentFile(file)
  return typeof read === 'object' ? read.bytes.toString('utf8') : undefined
}

/**
 * Refuses a node whose way down from the store folder passes through a
 * link or a file: lstat(2) of each folder that exists (cheap, synchronous),
 * the node's own folder included unless `ownFolder` is false, from depth
 * `from` (the folders above it known to be folders: WatchedHits.checkWayToWrite). Returns the
 * depth of the first folder that does not exist (the last depth checked + 1 when all do).
 */
export function checkWay(path: NodePath, directories: readonly string[], ownFolder = true, from = 1): number {
  const last = ownFolder ? directories.length : directories.length - 1
  for (let depth = from; depth < last; depth++) if (!isFolder(path, directories[depth], depth)) return depth
  return last
}

/** Whether the folder at `depth` of the way to `path` exists; throws when a link or a file is in its place. */
export function isFolder(path: NodePath, directory: string, depth: number): boolean {
  return folderStats(path, directory, depth) !== undefined
}

/**
 * checkWay down to the node's own folder, and that folder's lstat(2), or 'missing' when it or one
 * above does not exist. A folder's lstat is its stat: a listing's index takes it as the folder's
 * version (child-index.ts) instead of a stat of its own.
 */
export function ownFolderStats(path: NodePath, directories: readonly string[]): Stats | 'missing' {
  if (checkWay(path, directories, false) < path.length) return 'missing'
  return folderStats(path, directories[path.length], path.length) ?? 'missing'
}

/** The lstat(2) of the folder at `depth` of the way to `path`, undefined when it does not exist; throws when a link or a file is in its place. */
function folderStats(path: NodePath, directory: string, depth: number): Stats | undefined {
  let stats: Stats | undefined
  try {
    stats = lstatSync(directory, { throwIfNoEntry: false })
  } catch (error) {
    if (isMissing(error)) return undefined
    throw toStoreError(error, path)
  }
  if (stats === undefined) return undefined
  if (stats.isSymbolicLink()) throw new StoreError('blocked-path', path, `${depth === path.length ? 'is' : 'has above it'} a link, which the store does not follow`)
  if (!stats.isDirectory()) throw new StoreError('blocked-path', path, `${depth === path.length ? 'is' : 'has above it'} a file where a folder should be`)
  return stats
}

/**
 * One stat of each document file, as the document cache checks a file (inode, size, mtime): a
 * token per file, undefined where there is none (what a listing index compares to see hand edits
 * without reading the files, docs/http-api.md, "Listing queries").
 */
export function versionTokens(files: readonly string[]): (string | undefined)[] {
  return files.map((file) => {
    try {
      const stats = statSync(file, { throwIfNoEntry: false })
      return stats && `${stats.ino}:${stats.size}:${stats.mtimeMs}`
    } catch (error) {
      // Whatever stops the stat: a token that never matches, so the read says what is wrong.
      return `unreadable:${errorCode(error) ?? ''}:${performance.now()}`
    }
  })
}

/** Whether a regular file is at `file` (no link followed). */
export function isRegularFile(file: string): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false })?.isFile() ?? false
  } catch {
    return false
  }
}

/** Whether anything is at `path` now (a link followed); false when that cannot be told. */
export function isThere(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined
  } catch {
    return false
  }
}


/**
 * Stats a document file, or undefined when it is not there. Synchronous on
 * purpose: this runs on every read, and for a file the kernel has cached it
 * costs about 3 µs, where an async stat costs some 20 µs of CPU across
 * threads and a round trip through the thread pool (measured in bench/).
 */
export function statDocument(file: string, path: NodePath): Stats | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false })
  } catch (error) {
    if (isMissing(error)) return undefined
    throw toStoreError(error, path)
  }
}
