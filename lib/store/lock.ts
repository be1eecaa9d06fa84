import { readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { createFileAtomically } from './atomic.ts'
import { errorCode } from './fs-errors.ts'

/** The lock a FileStore holds on its folder, so that one server at a time writes there. */
export interface StoreLock {
  readonly file: string
  /** What we wrote: the lock is still ours while the file holds exactly this. */
  readonly content: string
  /** True when the previous holder died without releasing it: its run crashed. */
  readonly takenOver: boolean
}

/**
 * Takes `<directory>/@lock`. A lock whose process is alive (this one
 * included) refuses with code ESTORELOCKED; a lock left by a dead process,
 * or one nobody can read, is taken over, so a crash never keeps a store shut.
 */
export async function takeLock(directory: string, tempPath: string, runId: string): Promise<StoreLock> {
  const file = join(directory, '@lock')
  const content = JSON.stringify({ pid: process.pid, run: runId }) + '\n'
  let takenOver = false
  // Written whole then linked into place, so another server never reads a half-written lock.
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await createFileAtomically(tempPath, file, content, false)) return { file, content, takenOver }
    const holder = await readHolder(file)
    if (holder === 'released') continue
    if (holder !== 'unreadable' && isAlive(holder)) throw lockedError(directory, file, holder)
    await unlink(file).catch(() => {})
    takenOver = true
  }
  throw new Error(`Could not take the lock ${file}: other programs keep changing it.`)
}

/** Removes the lock file, unless someone else has taken it over since. */
export async function releaseLock(lock: StoreLock): Promise<void> {
  const content = await readFile(lock.file, 'utf8').catch(() => undefined)
  if (content === lock.content) await unlink(lock.file).catch(() => {})
}

/** The pid in a lock file; 'released' when it went away meanwhile. */
async function readHolder(file: string): Promise<number | 'released' | 'unreadable'> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? 'released' : 'unreadable'
  }
  try {
    const { pid } = JSON.parse(text) as { pid?: unknown }
    return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0 ? pid : 'unreadable'
  } catch {
    return 'unreadable'
  }
}

/** Signal 0 only checks that the process exists (kill(2)); EPERM means it exists but is not ours. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errorCode(error) === 'EPERM'
  }
}

function lockedError(directory: string, file: string, pid: number): Error {
  const error: NodeJS.ErrnoException = new Error(
    `The store folder ${directory} is in use by another restdir (pid ${pid}). ` +
      `Stop that one first, or delete ${file} if no restdir is running.`,
  )
  error.code = 'ESTORELOCKED'
  return error
}
