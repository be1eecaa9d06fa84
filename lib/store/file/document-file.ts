import { constants, type Stats } from 'node:fs'
import { open } from 'node:fs/promises'
import { errorCode, isMissing } from './fs-errors.ts'

/*
 * O_NOFOLLOW: a link in a document's place is refused, never followed out of
 * the store. O_NONBLOCK: opening a FIFO does not wait for a writer (fifo(7)),
 * so a pipe where a document should be costs one quick open and fstat instead
 * of a thread of Node's pool held until someone writes to it; for a regular
 * file it changes nothing. Both are 0 where the platform lacks them (Windows).
 */
const SAFE_READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

/** A document file as read: its bytes and the stats of the very descriptor they came from. */
export interface DocumentBytes {
  bytes: Buffer
  stats: Stats
}

/**
 * Reads a document file only if it is a regular file reached without a link:
 * the bytes, undefined when there is none, or a sentence saying what is in
 * its place instead (a link, a directory, a pipe or a device), which is then
 * left unread.
 */
export async function readDocumentFile(file: string): Promise<DocumentBytes | string | undefined> {
  let handle
  try {
    handle = await open(file, SAFE_READ)
  } catch (error) {
    if (isMissing(error)) return undefined
    if (errorCode(error) === 'ELOOP') return 'is a link, which the store does not follow'
    if (errorCode(error) === 'EISDIR') return 'is a directory'
    throw error
  }
  try {
    const stats = await handle.stat()
    const problem = notRegular(stats)
    if (problem) return problem
    return { bytes: await handle.readFile(), stats }
  } finally {
    await handle.close()
  }
}

/** What a document file is when it is not a regular file, in words; undefined when it is one. */
export function notRegular(stats: Stats): string | undefined {
  if (stats.isFile()) return undefined
  if (stats.isDirectory()) return 'is a directory'
  if (stats.isSymbolicLink()) return 'is a link, which the store does not follow'
  if (stats.isFIFO()) return 'is a named pipe, not a regular file'
  return 'is not a regular file (a socket or a device)'
}

/** Reads one of the store's own small files (a `@name`) the same safe way; undefined when it is missing or not a regular file. */
export async function readOwnFile(file: string): Promise<string | undefined> {
  const read = await readDocumentFile(file)
  return typeof read === 'object' ? read.bytes.toString('utf8') : undefined
}
