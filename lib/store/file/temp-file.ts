import { access } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { createFileAtomically, writeTempFile, type FileCalls } from '../fs/atomic.ts'
import { errorCode, isMissing } from '../fs/fs-errors.ts'
import { LandedElsewhere } from '../fs/open-place.ts'
import { StoreError } from '../errors.ts'
import type { NodePath } from '../store.ts'
import { checkWay, isFolder } from './document-file.ts'
import { isHashedName } from './encode.ts'
import { NAME_FILE } from './names.ts'
import type { WatchedHits } from './watched-hits.ts'

/** How the store names its temporary files, and where its folders should be. */
export interface TempPaths {
  /** A fresh temporary file's name. */
  tempName(): string
  /** Where a path in the store folder is with every link resolved, where the kernel tells where an open file is (OPEN_PLACES); else undefined. */
  placeOf(inStore: string): string | undefined
}

/** What a write needs from its store to make its way down and its temporary file. */
export interface TempFiles extends TempPaths {
  readonly hits: WatchedHits
  /** Flush every file to disk before it is placed (--sync). */
  readonly sync: boolean
}

/** One document's write, before its temporary file is placed. */
export interface PendingWrite {
  path: NodePath
  /** The store folder, then one per segment. */
  directories: readonly string[]
  text: string
  /** Collects the folders this write made, for a write that fails to take away again. */
  made: string[]
  mode: 'create' | 'replace'
  calls: FileCalls
  /** Whether the temporary file's stats (its version) are wanted: the cache keeps the document. */
  keep: boolean
}

/**
 * Makes the node's missing directories (never the store folder itself: a
 * deleted store is not silently made anew) and writes the temp file beside
 * where the document goes; returns it, and with `keep` its stats (its version).
 * Every folder on the way is checked not to be a link first; a create's own
 * folder, under a new id, is only looked at when mkdir finds something there
 * (EEXIST): that lookup would wait on the parent folder's lock, held by
 * concurrent mkdirs, to say what mkdir says anyway. Where the kernel tells
 * where an open file is, the temporary file (and a hashed folder's `@name`)
 * is checked to be in its place before a byte is written to it: a link
 * swapped in on the way after the look, even in the instant before the
 * open, has the write make and write no file outside the store
 * (docs/storage.md, "Writes, links and removals", says what such a swap can
 * still do, inside the rename that places the file).
 */
export async function writeTempBeside(temps: TempFiles, write: PendingWrite) {
  const { path, directories, made, calls } = write
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        for (let depth = await temps.hits.checkWayToWrite(path, directories, write.mode === 'replace'); depth < directories.length; depth++) {
          try {
            await calls.mkdir(directories[depth])
            made.push(directories[depth])
          } catch (error) {
            if (errorCode(error) !== 'EEXIST') throw error
            // Made meanwhile, or there all along: used only when it is a folder, not a link or a file.
            isFolder(path, directories[depth], depth)
          }
        }
        await ensureNameFiles(directories, path, temps)
        const tempPath = join(directories[path.length], temps.tempName())
        // Nobody else writes a temp file: its stats are this write's version, exactly (taken only for a document the cache keeps).
        return { tempPath, stats: await writeTempFile(tempPath, write.text, temps.sync, calls, write.keep, temps.placeOf(tempPath)) }
      } catch (error) {
        // Removing an empty directory (a pruned sibling, the crash sweep, a person) may race
        // this write between mkdir and the temp file: then make it again.
        if (errorCode(error) !== 'ENOENT' || attempt === 3) throw error
      }
    }
  } catch (error) {
    if (!(error instanceof LandedElsewhere)) throw error
    // What is on the way now names the fault; a link already swapped back is refused all the same.
    checkWay(path, directories)
    throw new StoreError('blocked-path', path, 'or one above it is a link, which the store does not follow')
  }
}

/**
 * Gives every hashed directory on a node's path (`directories`: the store
 * folder, then one per segment) its `@name`, unless it has one already (then
 * it is complete: it is placed atomically), so that listing can tell it.
 */
async function ensureNameFiles(directories: readonly string[], path: NodePath, temps: TempFiles): Promise<void> {
  for (let depth = 1; depth < directories.length; depth++) {
    const directory = directories[depth]
    if (!isHashedName(basename(directory))) continue
    try {
      await access(join(directory, NAME_FILE))
    } catch (error) {
      if (!isMissing(error)) throw error
      await writeNameFile(directory, path[depth - 1], temps, temps.sync)
    }
  }
}

/** Writes a hashed directory's `@name` (its whole `segment`), unless one is there; checked to land in the store as a write's temporary file is. */
export async function writeNameFile(directory: string, segment: string, temps: TempPaths, sync: boolean): Promise<void> {
  const tempPath = join(directory, temps.tempName())
  await createFileAtomically(tempPath, join(directory, NAME_FILE), segment, sync, temps.placeOf(tempPath))
}
