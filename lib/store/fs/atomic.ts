import { close, fstatSync, fsync, open as openFile, writeFile, writev, type Stats } from 'node:fs'
import { link, open, rename, rm, unlink } from 'node:fs/promises'
import { errorCode } from './fs-errors.ts'

/**
 * Writes `text` (or the bytes `parts` hold, in order: one writev(2), so a
 * db.json's kept blocks go out without being joined first) to a new file
 * `tempPath`, which must not exist yet; with
 * `sync`, flushes it to disk before returning, so that renaming it into place
 * can never expose a file whose contents are still only in memory. Returns
 * the file's stats, taken through its descriptor (no second lookup of the
 * path): a rename keeps the inode, size and mtime, so they are the version
 * the document will have in place.
 *
 * Through the callback API on a bare descriptor: three hand-offs to the
 * thread pool (open, write, close) like a `FileHandle`, without building one
 * and its promises on every write (bench/RESULTS.md).
 */
export async function writeTempFile(tempPath: string, text: string | readonly Buffer[], sync: boolean): Promise<Stats> {
  const fd = await callback<number>((done) => openFile(tempPath, 'wx', 0o666, done))
  let stats: Stats
  try {
    if (typeof text === 'string') await callback<void>((done) => writeFile(fd, text, done))
    else await writeParts(fd, text)
    if (sync) await callback<void>((done) => fsync(fd, done))
    stats = fstatSync(fd)
  } catch (error) {
    await callback<void>((done) => close(fd, done)).catch(() => {})
    await unlink(tempPath).catch(() => {})
    throw error
  }
  await callback<void>((done) => close(fd, done))
  return stats
}

/** Writes every byte of `parts` at the descriptor's position; a short writev goes on with what is left. */
async function writeParts(fd: number, parts: readonly Buffer[]): Promise<void> {
  const total = parts.reduce((sum, part) => sum + part.length, 0)
  const written = await callback<number>((done) => writev(fd, parts as Buffer[], done))
  if (written < total) await callback<void>((done) => writeFile(fd, Buffer.concat(parts as Buffer[]).subarray(written), done))
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
): Promise<'created' | 'replaced' | 'exists'> {
  if (mode === 'overwrite' || mode === 'into-new-folder') {
    await renameOver(tempPath, target)
    return mode === 'overwrite' ? 'replaced' : 'created'
  }
  try {
    await link(tempPath, target)
    await unlink(tempPath)
    return 'created'
  } catch (error) {
    if (errorCode(error) !== 'EEXIST' || mode === 'create') {
      await unlink(tempPath).catch(() => {})
      if (errorCode(error) === 'EEXIST') return 'exists'
      throw error
    }
  }
  await renameOver(tempPath, target)
  return 'replaced'
}

/**
 * rename(2) of a temp file onto `target`. A directory in the target's place
 * (a broken document that a person or a tool made a folder) is removed first:
 * a replacement is how a client repairs it. A rename that fails leaves no temp file.
 */
async function renameOver(tempPath: string, target: string): Promise<void> {
  try {
    try {
      await rename(tempPath, target)
    } catch (error) {
      const code = errorCode(error)
      if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error
      await rm(target, { recursive: true, force: true })
      await rename(tempPath, target)
    }
  } catch (error) {
    await unlink(tempPath).catch(() => {})
    throw error
  }
}

/** Writes a whole file at `target` only if none is there; false when one was. */
export async function createFileAtomically(tempPath: string, target: string, text: string, sync: boolean): Promise<boolean> {
  await writeTempFile(tempPath, text, sync)
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
  const handle = await open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
