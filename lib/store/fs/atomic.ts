import { close, closeSync, fstatSync, fsync, fsyncSync, linkSync, mkdirSync, open as openFile, openSync, renameSync, unlinkSync, writeFile, writeFileSync, writev, writevSync, type Stats } from 'node:fs'
import { link, mkdir, rename, rm, unlink } from 'node:fs/promises'
import { errorCode } from './fs-errors.ts'
import { isAt, LandedElsewhere, placeOf } from './open-place.ts'

/**
 * The file-system calls a write makes, either through Node's thread pool
 * (`POOL_CALLS`) or on the calling thread (`THREAD_CALLS`). The write
 * sequence below is written once against either: awaiting a call on the
 * calling thread costs a microtask, not a trip through the pool.
 */
export interface FileCalls {
  mkdir(path: string): void | Promise<unknown>
  /** Opens a new file for writing; fails when one is there. */
  create(path: string): number | Promise<number>
  /** Writes every byte of `text` (or of `parts`, in order: one writev(2)) at the descriptor's position. */
  write(fd: number, text: string | readonly Buffer[]): void | Promise<void>
  fsync(fd: number): void | Promise<void>
  close(fd: number): void | Promise<void>
  rename(from: string, to: string): void | Promise<void>
  link(from: string, to: string): void | Promise<void>
  unlink(path: string): void | Promise<void>
  removeTree(path: string): void | Promise<void>
}

/**
 * Through the callback API on a bare descriptor: three hand-offs to the
 * thread pool (open, write, close) like a `FileHandle`, without building one
 * and its promises on every write (bench/RESULTS.md).
 */
export const POOL_CALLS: FileCalls = {
  mkdir: (path) => mkdir(path),
  create: (path) => callback<number>((done) => openFile(path, 'wx', 0o666, done)),
  write: (fd, text) => (typeof text === 'string' ? callback<void>((done) => writeFile(fd, text, done)) : writeParts(fd, text)),
  fsync: (fd) => callback<void>((done) => fsync(fd, done)),
  close: (fd) => callback<void>((done) => close(fd, done)),
  rename,
  link,
  unlink,
  removeTree: (path) => rm(path, { recursive: true, force: true }),
}

/**
 * The same calls on the calling thread. For files the kernel holds in
 * memory (no `--sync`) a write's six calls cost less here than the pool's
 * hand-offs and wake-ups around them (docs/speed.md); a caller goes back to
 * POOL_CALLS when a write takes long, as the disk then holds the event loop.
 */
export const THREAD_CALLS: FileCalls = {
  mkdir: (path) => mkdirSync(path),
  create: (path) => openSync(path, 'wx', 0o666),
  write: (fd, text) => {
    if (typeof text === 'string') return writeFileSync(fd, text)
    const rest = unwritten(text, writevSync(fd, text as Buffer[]))
    if (rest) writeFileSync(fd, rest)
  },
  fsync: (fd) => fsyncSync(fd),
  close: (fd) => closeSync(fd),
  rename: (from, to) => renameSync(from, to),
  link: (from, to) => linkSync(from, to),
  unlink: (path) => unlinkSync(path),
  // A folder in a document's place may hold anything: it is removed off the calling thread.
  removeTree: POOL_CALLS.removeTree,
}

/**
 * What a `--sync` write makes: its temporary file is opened, written and
 * closed on the calling thread, as a write without `--sync` makes it (a new
 * file in a folder no flush holds; its bytes only go to the page cache), and
 * the rest goes through the pool. The flushes wait on the disk; while they
 * run, ext4 holds the folders and inode blocks they write out, so a `mkdir` or
 * a `rename` made meanwhile waits for them, and on the calling thread would
 * hold the event loop (docs/speed.md).
 */
export const FLUSHING_CALLS: FileCalls = { ...POOL_CALLS, create: THREAD_CALLS.create, write: THREAD_CALLS.write, close: THREAD_CALLS.close }

/** `calls`, each on the calling thread and timed: `took` hears how many ms each one took. */
export function timedCalls(calls: FileCalls, took: (ms: number) => void): FileCalls {
  const timed: Record<string, (...args: never[]) => unknown> = {}
  for (const [name, call] of Object.entries(calls) as [string, (...args: never[]) => unknown][]) {
    timed[name] = (...args) => {
      const started = performance.now()
      try {
        return call(...args)
      } finally {
        took(performance.now() - started)
      }
    }
  }
  return timed as unknown as FileCalls
}

/**
 * Writes `text` (or the bytes `parts` hold, in order: one writev(2), so a
 * db.json's kept blocks go out without being joined first) to a new file
 * `tempPath`, which must not exist yet; with
 * `sync`, flushes it to disk before returning, so that renaming it into place
 * can never expose a file whose contents are still only in memory. Returns
 * the file's stats, taken through its descriptor (no second lookup of the
 * path): a rename keeps the inode, size and mtime, so they are the version
 * the document will have in place. With `place` (where `tempPath` is with
 * every link resolved; OPEN_PLACES), the new file is checked to be there
 * before a byte is written: one made elsewhere, through a link swapped in on
 * the way, is removed again and LandedElsewhere thrown.
 */
export async function writeTempFile(tempPath: string, text: string | readonly Buffer[], sync: boolean, calls?: FileCalls): Promise<Stats>
/** `withStats` false: a caller that keeps no version of the file is spared the fstat. */
export async function writeTempFile(tempPath: string, text: string | readonly Buffer[], sync: boolean, calls: FileCalls, withStats: boolean, place?: string): Promise<Stats | undefined>
export async function writeTempFile(tempPath: string, text: string | readonly Buffer[], sync: boolean, calls = POOL_CALLS, withStats = true, place?: string): Promise<Stats | undefined> {
  const fd = await calls.create(tempPath)
  let stats: Stats | undefined
  try {
    if (place !== undefined && !isAt(fd, place)) throw new LandedElsewhere(placeOf(fd))
    await calls.write(fd, text)
    if (sync) await calls.fsync(fd)
    if (withStats) stats = fstatSync(fd)
  } catch (error) {
    await quietly(() => calls.close(fd))
    // An empty file made outside goes from where it landed: the path asked for may lead elsewhere again by now.
    await quietly(() => calls.unlink(error instanceof LandedElsewhere ? error.at : tempPath))
    throw error
  }
  await calls.close(fd)
  return stats
}

/** Writes every byte of `parts` at the descriptor's position; a short writev goes on with what is left. */
async function writeParts(fd: number, parts: readonly Buffer[]): Promise<void> {
  const rest = unwritten(parts, await callback<number>((done) => writev(fd, parts as Buffer[], done)))
  if (rest) await callback<void>((done) => writeFile(fd, rest, done))
}

/** What a writev(2) of `parts` that wrote `written` bytes left to write, if anything. */
function unwritten(parts: readonly Buffer[], written: number): Buffer | undefined {
  const total = parts.reduce((sum, part) => sum + part.length, 0)
  return written < total ? Buffer.concat(parts as Buffer[]).subarray(written) : undefined
}

/** Makes a call whose failure does not matter (the cleanup after a failed write), on either thread. */
async function quietly(call: () => unknown): Promise<void> {
  try {
    await call()
  } catch {
    // What failed first is what the caller reports.
  }
}

/** One call of node:fs's callback API as a promise. */
function callback<T>(call: (done: (error: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => call((error, value) => (error ? reject(error) : resolve(value as T))))
}

/**
 * Moves a finished temp file to `target` in one atomic step, so a reader or a
 * crash sees the old file or the new one, never a torn one. A hard link only
 * succeeds where `target` does not exist yet, which tells a creation from a
 * replacement exactly, even under concurrency; `create` mode stops there.
 * `overwrite` is for a caller that knows a document is there, and
 * `into-new-folder` for one that has just made the target's folder and knows
 * nothing else writes there: one rename each.
 */
export async function placeFile(
  tempPath: string,
  target: string,
  mode: 'create' | 'replace' | 'overwrite' | 'into-new-folder',
  calls = POOL_CALLS,
): Promise<'created' | 'replaced' | 'exists'> {
  if (mode === 'overwrite' || mode === 'into-new-folder') {
    await renameOver(tempPath, target, calls)
    return mode === 'overwrite' ? 'replaced' : 'created'
  }
  try {
    await calls.link(tempPath, target)
    await calls.unlink(tempPath)
    return 'created'
  } catch (error) {
    if (errorCode(error) !== 'EEXIST' || mode === 'create') {
      await quietly(() => calls.unlink(tempPath))
      if (errorCode(error) === 'EEXIST') return 'exists'
      throw error
    }
  }
  await renameOver(tempPath, target, calls)
  return 'replaced'
}

/**
 * rename(2) of a temp file onto `target`. A directory in the target's place
 * (a broken document that a person or a tool made a folder) is removed first:
 * a replacement is how a client repairs it. A rename that fails leaves no temp file.
 */
async function renameOver(tempPath: string, target: string, calls: FileCalls): Promise<void> {
  try {
    try {
      await calls.rename(tempPath, target)
    } catch (error) {
      const code = errorCode(error)
      if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error
      await calls.removeTree(target)
      await calls.rename(tempPath, target)
    }
  } catch (error) {
    await quietly(() => calls.unlink(tempPath))
    throw error
  }
}

/** Writes a whole file at `target` only if none is there; false when one was. `place`: as writeTempFile's. */
export async function createFileAtomically(tempPath: string, target: string, text: string, sync: boolean, place?: string): Promise<boolean> {
  await writeTempFile(tempPath, text, sync, POOL_CALLS, false, place)
  return (await placeFile(tempPath, target, 'create')) === 'created'
}

/**
 * Makes a directory's entries durable: a new or renamed file survives power
 * loss only once the directory holding it is flushed too (fsync(2), NOTES).
 * Node cannot open a directory on Windows (EISDIR); there the file's own
 * flush is all it offers.
 */
export async function fsyncDirectory(directory: string): Promise<void> {
  if (process.platform === 'win32') return
  // Only the flush waits on the disk: the open and the close are made here, the flush in the pool.
  const fd = openSync(directory, 'r')
  try {
    await POOL_CALLS.fsync(fd)
  } finally {
    closeSync(fd)
  }
}
