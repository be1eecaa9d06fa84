/**
 * Ids for new documents: 12 characters of lowercase base 36, the creation
 * time in milliseconds followed by a counter, so ids sort in creation order
 * as plain strings. Within one millisecond the counter runs on; past 46 656
 * ids in one millisecond the clock is borrowed from the next one, so ids
 * never repeat and never go backwards in a process.
 */
let lastTime = 0
let counter = 0
const COUNTER_LIMIT = 36 ** 3

/** How long every new id is: 9 characters of time, 3 of counter. */
export const ID_LENGTH = 12

export function newId(now: number = Date.now()): string {
  if (now > lastTime) {
    lastTime = now
    counter = 0
  } else if (++counter === COUNTER_LIMIT) {
    lastTime += 1
    counter = 0
  }
  return lastTime.toString(36).padStart(9, '0') + counter.toString(36).padStart(3, '0')
}
