import { randomBytes, timingSafeEqual } from 'node:crypto'
import { P_INITIAL, S_INITIAL } from './blowfish-tables.ts'

// bcrypt (Provos and Mazieres, "A Future-Adaptable Password Scheme", 1999) in
// the form bcryptjs 2.4 writes and reads, which json-server-auth stores in a
// db.json: `$2a$`, `$2b$` or `$2y$`, a two-digit cost, 22 characters of salt
// and 31 of hash, in bcrypt's own base64 alphabet. A hash made here verifies
// with bcryptjs and the other way round, so accounts move both ways.
// This file computes; lib/auth/hash-pool.ts runs it off the event loop.

/** A password hash that cannot be read: named, so a login answers a refusal instead of failing. */
export class MalformedHash extends Error {
  constructor(reason: string) {
    super(`not a bcrypt hash: ${reason}`)
    this.name = 'MalformedHash'
  }
}

/** The cost json-server-auth hashes with (its SALT_LENGTH): 2^10 rounds. */
export const DEFAULT_COST = 10
export const MIN_COST = 4
export const MAX_COST = 31

export type BcryptVersion = '2a' | '2b' | '2y'
const VERSIONS: readonly string[] = ['2a', '2b', '2y']

/** A stored hash taken apart. */
export interface BcryptHash {
  version: BcryptVersion
  cost: number
  salt: Uint8Array
}

const ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const ALPHABET_INDEX = new Map([...ALPHABET].map((character, index) => [character, index]))
const SALT_BYTES = 16
/** The bytes of a password that count: the P-array's 18 words. */
export const KEY_BYTES = 72
const HASH_SHAPE = /^\$(2[aby])\$(\d\d)\$([./A-Za-z0-9]{53})$/
/** "OrpheanBeholderScryDoubt", the text bcrypt encrypts 64 times. */
const MAGIC = [0x4f727068, 0x65616e42, 0x65686f6c, 0x64657253, 0x63727944, 0x6f756274]

/** Reads a stored hash; a string of another shape or cost is a `MalformedHash`. */
export function parseHash(hash: string): BcryptHash {
  if (typeof hash !== 'string') throw new MalformedHash('not a string')
  const match = HASH_SHAPE.exec(hash)
  if (match === null) throw new MalformedHash('expected $2a$, $2b$ or $2y$, a two-digit cost and 53 characters of salt and hash')
  const cost = Number(match[2])
  if (cost < MIN_COST || cost > MAX_COST) throw new MalformedHash(`the cost ${match[2]} is outside ${MIN_COST}–${MAX_COST}`)
  return { version: match[1] as BcryptVersion, cost, salt: decodeBase64(match[3].slice(0, 22), SALT_BYTES) }
}

/** Hashes `password` with a new random salt (or the one given) at `cost`, as bcryptjs's `hashSync` does. */
export function hashPassword(password: string, cost = DEFAULT_COST, salt: Uint8Array = randomBytes(SALT_BYTES), version: BcryptVersion = '2a'): string {
  if (typeof password !== 'string') throw new TypeError('a password is a string')
  if (!Number.isInteger(cost) || cost < MIN_COST || cost > MAX_COST) throw new RangeError(`a bcrypt cost is an integer from ${MIN_COST} to ${MAX_COST}, not ${cost}`)
  if (salt.length !== SALT_BYTES) throw new RangeError(`a bcrypt salt is ${SALT_BYTES} bytes, not ${salt.length}`)
  if (!VERSIONS.includes(version)) throw new RangeError(`a bcrypt version is 2a, 2b or 2y, not ${String(version)}`)
  return hashWith(password, { version, cost, salt })
}

/**
 * Whether `password` is the one `hash` was made from. The hashes are compared
 * with `timingSafeEqual`, so the time taken says nothing of where they differ.
 * A hash that cannot be read is a `MalformedHash`, thrown before any work.
 */
export function verifyPassword(password: string, hash: string): boolean {
  const parsed = parseHash(hash)
  if (typeof password !== 'string') return false
  const computed = Buffer.from(hashWith(password, parsed), 'latin1')
  const stored = Buffer.from(hash, 'latin1')
  return computed.length === stored.length && timingSafeEqual(computed, stored)
}

function hashWith(password: string, { version, cost, salt }: BcryptHash): string {
  // bcryptjs ends the key with a NUL byte for every minor version ($2a$, $2b$, $2y$);
  // the key schedule reads 72 bytes of it as a cycle, so bytes past the 72nd never count
  // and are not even encoded.
  const key = [...utf8Bytes(password, KEY_BYTES), 0]
  const words = eksBlowfish(cost, salt, key)
  const hash = new Uint8Array(words.length * 4)
  words.forEach((word, index) => {
    hash[index * 4] = word >>> 24
    hash[index * 4 + 1] = (word >>> 16) & 0xff
    hash[index * 4 + 2] = (word >>> 8) & 0xff
    hash[index * 4 + 3] = word & 0xff
  })
  // The last of the 24 bytes is never written out (23 bytes, 31 characters), as in OpenBSD's bcrypt.
  return `$${version}$${String(cost).padStart(2, '0')}$${encodeBase64(salt, SALT_BYTES)}${encodeBase64(hash, 23)}`
}

/** The expensive key setup (2^cost rounds), then "OrpheanBeholderScryDoubt" encrypted 64 times. */
function eksBlowfish(cost: number, salt: Uint8Array, key: number[]): number[] {
  const state: BlowfishState = { P: Int32Array.from(P_INITIAL), S: Int32Array.from(S_INITIAL) }
  expandKey(state, key, salt)
  const rounds = 2 ** cost
  for (let round = 0; round < rounds; round++) {
    expandKey(state, key)
    expandKey(state, salt)
  }
  const text = Int32Array.from(MAGIC)
  for (let time = 0; time < 64; time++) {
    for (let block = 0; block < text.length; block += 2) encipher(state, text, block)
  }
  return [...text]
}

interface BlowfishState {
  P: Int32Array
  S: Int32Array
}

/** The next 32 bits of `bytes` read as a cycle, from `offset.at`. */
function nextWord(bytes: ArrayLike<number>, offset: { at: number }): number {
  let word = 0
  for (let index = 0; index < 4; index++) {
    word = (word << 8) | (bytes[offset.at] & 0xff)
    offset.at = (offset.at + 1) % bytes.length
  }
  return word
}

/**
 * Blowfish's key schedule: the P-array XORed with the key, then P and S
 * replaced by successive encryptions; with `salt` (eksblowfish's first step),
 * the block encrypted is XORed with the salt's words each time.
 */
function expandKey(state: BlowfishState, key: ArrayLike<number>, salt?: ArrayLike<number>): void {
  const { P, S } = state
  const keyOffset = { at: 0 }
  for (let index = 0; index < P.length; index++) P[index] ^= nextWord(key, keyOffset)
  const block = new Int32Array(2)
  const saltOffset = { at: 0 }
  const fill = (table: Int32Array): void => {
    for (let index = 0; index < table.length; index += 2) {
      if (salt !== undefined) {
        block[0] ^= nextWord(salt, saltOffset)
        block[1] ^= nextWord(salt, saltOffset)
      }
      encipher(state, block, 0)
      table[index] = block[0]
      table[index + 1] = block[1]
    }
  }
  fill(P)
  fill(S)
}

/** Encrypts the 64-bit block at `text[offset]`, `text[offset + 1]` in place: 16 Feistel rounds. */
function encipher({ P, S }: BlowfishState, text: Int32Array, offset: number): void {
  let left = text[offset] ^ P[0]
  let right = text[offset + 1]
  for (let round = 1; round <= 16; round += 2) {
    right ^= feistel(S, left) ^ P[round]
    left ^= feistel(S, right) ^ P[round + 1]
  }
  text[offset] = right ^ P[17]
  text[offset + 1] = left
}

function feistel(S: Int32Array, half: number): number {
  return (((S[half >>> 24] + S[0x100 | ((half >>> 16) & 0xff)]) ^ S[0x200 | ((half >>> 8) & 0xff)]) + S[0x300 | (half & 0xff)]) | 0
}

/**
 * A password's UTF-8 bytes, as bcryptjs encodes a string. A lone surrogate
 * (valid in JSON text) is written as its own three bytes, where `Buffer.from`
 * would write U+FFFD for each, so two passwords never share a key; bcryptjs
 * 2.4 itself cannot hash such a string, so there is nothing to agree with.
 */
export function utf8Bytes(text: string, limit = Infinity): number[] {
  const bytes: number[] = []
  for (let index = 0; index < text.length && bytes.length < limit; index++) {
    let code = text.charCodeAt(index)
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const low = text.charCodeAt(index + 1)
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00)
        index++
      }
    }
    if (code < 0x80) bytes.push(code)
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f))
    else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f))
    else bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f))
  }
  return bytes.length > limit ? bytes.slice(0, limit) : bytes
}

/** bcrypt's base64: its own alphabet, no padding, `length` bytes written. */
function encodeBase64(bytes: Uint8Array, length: number): string {
  let text = ''
  for (let index = 0; index < length; index += 3) {
    const first = bytes[index]
    const second = index + 1 < length ? bytes[index + 1] : 0
    const third = index + 2 < length ? bytes[index + 2] : 0
    text += ALPHABET[first >> 2] + ALPHABET[((first & 0x03) << 4) | (second >> 4)]
    if (index + 1 < length) text += ALPHABET[((second & 0x0f) << 2) | (third >> 6)]
    if (index + 2 < length) text += ALPHABET[third & 0x3f]
  }
  return text
}

/** The first `length` bytes of bcrypt's base64 `text` (22 characters hold 16 bytes and 4 spare bits, ignored as bcryptjs ignores them). */
function decodeBase64(text: string, length: number): Uint8Array {
  const bits = [...text].map((character) => ALPHABET_INDEX.get(character) ?? 0)
  const bytes = new Uint8Array(length)
  for (let byte = 0, sextet = 0; byte < length; sextet += 4) {
    const [a, b, c, d] = [bits[sextet], bits[sextet + 1] ?? 0, bits[sextet + 2] ?? 0, bits[sextet + 3] ?? 0]
    bytes[byte++] = (a << 2) | (b >> 4)
    if (byte < length) bytes[byte++] = ((b & 0x0f) << 4) | (c >> 2)
    if (byte < length) bytes[byte++] = ((c & 0x03) << 6) | d
  }
  return bytes
}
