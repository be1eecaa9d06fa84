import { randomBytes } from 'node:crypto'

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

/**
 * json-server 1.0's new ids (docs/json-server.md, "json-server 1.0's mode"): 11 characters of
 * base64url, 8 random bytes, as 1.0's randomId makes them. For a store listed in its
 * file's order (a db.json), where an id's order orders nothing.
 */
export function randomShortId(): string {
  return randomBytes(8).toString('base64url')
}

/** base64url's 64 characters in code-unit order, so that ids written in them sort as their numbers do. */
const ORDERED_BASE64URL = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz'
const SHORT_COUNTER_LIMIT = 64 ** 3
let lastShortTime = 0
let shortCounter = 0

/**
 * 1.0's form for the stores that list in id order (compareIds: code units; PostgreSQL's
 * `COLLATE "C"`): 11 base64url characters, 8 of the time in milliseconds and 3 of a counter,
 * as newId's, so that a listing is in creation order, as 1.0 lists its file. The first is `-`
 * for thousands of years, so none is a whole number (which would sort first).
 */
export function newShortId(now: number = Date.now()): string {
  if (now > lastShortTime) {
    lastShortTime = now
    shortCounter = 0
  } else if (++shortCounter === SHORT_COUNTER_LIMIT) {
    lastShortTime += 1
    shortCounter = 0
  }
  return inOrderedBase64url(lastShortTime, 8) + inOrderedBase64url(shortCounter, 3)
}

function inOrderedBase64url(value: number, length: number): string {
  let text = ''
  for (let rest = value, i = 0; i < length; i++, rest = Math.floor(rest / 64)) text = ORDERED_BASE64URL[rest % 64] + text
  return text
}
