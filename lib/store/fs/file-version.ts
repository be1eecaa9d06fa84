import type { Stats } from 'node:fs'

/**
 * One version of a file, as its stat tells it. A person who edits the file
 * changes its mtime (and mostly its size); an editor that saves by renaming a
 * new file over it changes the inode. The ctime is left out: the store's own
 * rename of a finished temp file changes it without changing the content.
 */
export interface FileVersion {
  ino: number
  size: number
  mtimeMs: number
}

export function versionOf(stats: Stats): FileVersion {
  return { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs }
}

export function sameFileVersion(a: FileVersion, b: FileVersion): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino
}

/** What a file the store reads is when it is not a regular file, in words; undefined when it is one. */
export function notRegular(stats: Stats): string | undefined {
  if (stats.isFile()) return undefined
  if (stats.isDirectory()) return 'is a directory'
  if (stats.isSymbolicLink()) return 'is a link, which the store does not follow'
  if (stats.isFIFO()) return 'is a named pipe, not a regular file'
  return 'is not a regular file (a socket or a device)'
}
