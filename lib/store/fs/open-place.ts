import { closeSync, constants, openSync, readlinkSync } from 'node:fs'

/**
 * Where an open file really is, as the kernel names it (`/proc/self/fd/N`, Linux): true where that
 * can be read. A read opens first and checks where the open landed, and a write checks where its
 * temporary file was made before it writes a byte, so no link swapped in on the way, even between a
 * look at the way and the open, leads either out of the store (docs/storage.md, "Writes, links and
 * removals"); elsewhere the folders on the way are looked at before the open.
 */
export const OPEN_PLACES = process.platform === 'linux' && placesWork()

function placesWork(): boolean {
  try {
    const fd = openSync('/', constants.O_RDONLY)
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === '/'
    } finally {
      closeSync(fd)
    }
  } catch {
    return false
  }
}

/** Where the file open at `fd` is now, every link resolved; ` (deleted)` follows a path removed or replaced since the open (OPEN_PLACES only). */
export function placeOf(fd: number): string {
  return readlinkSync(`/proc/self/fd/${fd}`)
}

/** Whether the file open at `fd` is at `place`, or was when it was replaced or removed since (OPEN_PLACES only). */
export function isAt(fd: number, place: string): boolean {
  const at = placeOf(fd)
  return at === place || at === `${place} (deleted)`
}

/** A file made through a link that led out of where it was asked for: `at` is where it landed. */
export class LandedElsewhere extends Error {
  constructor(readonly at: string) {
    super(`a file was made at ${at}, not where it was asked for`)
  }
}
