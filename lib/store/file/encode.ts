import { createHash } from 'node:crypto'

/**
 * The mapping from one decoded URL segment to one directory name. Distinct
 * segments must never share a directory, also where the file system folds
 * case (macOS, Windows) or Unicode normalization (macOS), and every name must
 * be legal on Windows, macOS and Linux. So a name holds only lower-case ASCII
 * letters, digits and `-_.!%~`:
 *
 * - `a-z 0-9 - _` stay as they are, and so does `.` except first or last
 *   (`.`, `..` and Windows' dropped trailing dots are thereby escaped);
 * - an upper-case ASCII letter becomes `!` and its lower-case letter;
 * - any other character becomes `%` and two lower-case hex digits per UTF-8 byte;
 * - a name Windows reserves for a device (`con`, `lpt1.txt`) gets its first letter escaped;
 * - a name longer than 200 characters is cut and ends in `~` and a hash.
 */

/** Longest name kept whole; most file systems allow 255 bytes per name. */
const LONGEST_NAME = 200
/** How much of a too-long encoding a hashed name keeps, so a person still recognizes it. */
const HASHED_PREFIX = 150
/** A name holding only characters that need no escaping: the fast path. */
const PLAIN_NAME = /^[a-z0-9_-](?:[a-z0-9._-]*[a-z0-9_-])?$/
/**
 * Windows opens a device for these names, with or without an extension
 * ("Naming Files, Paths, and Namespaces", learn.microsoft.com). COM0 and LPT0
 * are listed there too, so they are escaped as well.
 */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\.|$)/

/**
 * Names made lately, by segment: every request encodes its path again, and a
 * server meets the same collection names and hot ids over and over. A look-up
 * here costs a fraction of the two tests below. Bounded in count and in the
 * length of what is kept (a few hundred KiB at most): emptied when full.
 */
const madeNames = new Map<string, string>()
const MOST_MADE_NAMES = 4096
const LONGEST_MADE_NAME_KEPT = 64

/** The directory name for one decoded URL segment. */
export function encodeSegment(segment: string): string {
  const made = madeNames.get(segment)
  if (made !== undefined) return made
  const name = nameOf(segment)
  if (segment.length > LONGEST_MADE_NAME_KEPT) return name
  if (madeNames.size >= MOST_MADE_NAMES) madeNames.clear()
  madeNames.set(segment, name)
  return name
}

function nameOf(segment: string): string {
  // An empty segment cannot come from a URL, but must never alias its parent;
  // a lone `!` is never produced otherwise.
  if (segment === '') return '!'
  let name = PLAIN_NAME.test(segment) ? segment : escapeCharacters(segment)
  if (WINDOWS_DEVICE.test(name)) name = escapeByte(name.charCodeAt(0)) + name.slice(1)
  if (name.length <= LONGEST_NAME) return name
  // The hash covers the whole encoding, which is injective even for strings
  // UTF-8 cannot carry (lone surrogates). `~` never occurs in a whole name.
  return name.slice(0, HASHED_PREFIX) + '~' + createHash('sha256').update(name).digest('hex').slice(0, 40)
}

/** True for a name that was cut and hashed: its segment is kept in the directory's `@name` file. */
export function isHashedName(name: string): boolean {
  return name.includes('~')
}

/**
 * The segment a (not hashed) directory name stands for: the exact inverse of
 * encodeSegment. Throws for any name encodeSegment would not produce (a folder
 * made by hand, `User`, `%41`), so such a folder never poses as another node.
 */
export function decodeFolderName(name: string): string {
  if (name === '!') return ''
  let segment = ''
  let bytes: number[] = []
  let index = 0
  while (index < name.length) {
    const char = name[index]
    if (char === '%') {
      bytes.push(parseHexByte(name, index + 1))
      index += 3
      continue
    }
    if (bytes.length > 0) {
      segment += decodeUtf8(bytes, name)
      bytes = []
    }
    if (char === '!' && isLowerLetter(name[index + 1])) {
      segment += name[index + 1].toUpperCase()
      index += 2
    } else if (/[a-z0-9._-]/.test(char)) {
      segment += char
      index += 1
    } else {
      throw notAnEncoding(name)
    }
  }
  if (bytes.length > 0) segment += decodeUtf8(bytes, name)
  // Rejects escapes of characters that stay literal, overlong UTF-8 and the like.
  if (encodeSegment(segment) !== name) throw notAnEncoding(name)
  return segment
}

function escapeCharacters(segment: string): string {
  const last = segment.length - 1
  let name = ''
  for (let index = 0; index < segment.length; index++) {
    const unit = segment.charCodeAt(index)
    if (isPlainUnit(unit) || (unit === 0x2e && index !== 0 && index !== last)) {
      name += segment[index]
    } else if (unit >= 0x41 && unit <= 0x5a) {
      name += '!' + String.fromCharCode(unit + 0x20)
    } else {
      const codePoint = segment.codePointAt(index) as number
      if (codePoint > 0xffff) index++
      for (const byte of utf8Bytes(codePoint)) name += escapeByte(byte)
    }
  }
  return name
}

/** `a-z`, `0-9`, `-` and `_`. */
function isPlainUnit(unit: number): boolean {
  return (unit >= 0x61 && unit <= 0x7a) || (unit >= 0x30 && unit <= 0x39) || unit === 0x2d || unit === 0x5f
}

function isLowerLetter(char: string | undefined): boolean {
  return char !== undefined && char >= 'a' && char <= 'z'
}

function escapeByte(byte: number): string {
  return '%' + byte.toString(16).padStart(2, '0')
}

/**
 * UTF-8 (RFC 3629 §3) of one code point. A lone surrogate, which UTF-8 cannot
 * carry, gets the same three-byte form (as in WTF-8), so that no two
 * JavaScript strings share an encoding.
 */
function utf8Bytes(codePoint: number): number[] {
  if (codePoint < 0x80) return [codePoint]
  const tail = (shift: number) => 0x80 | ((codePoint >> shift) & 0x3f)
  if (codePoint < 0x800) return [0xc0 | (codePoint >> 6), tail(0)]
  if (codePoint < 0x10000) return [0xe0 | (codePoint >> 12), tail(6), tail(0)]
  return [0xf0 | (codePoint >> 18), tail(12), tail(6), tail(0)]
}

/** The inverse of utf8Bytes for a run of bytes; throws on anything malformed. */
function decodeUtf8(bytes: number[], name: string): string {
  let text = ''
  let index = 0
  while (index < bytes.length) {
    const lead = bytes[index]
    const length = lead < 0x80 ? 1 : lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0
    if (length === 0 || index + length > bytes.length) throw notAnEncoding(name)
    let codePoint = length === 1 ? lead : lead & (0x7f >> length)
    for (let next = index + 1; next < index + length; next++) {
      if ((bytes[next] & 0xc0) !== 0x80) throw notAnEncoding(name)
      codePoint = (codePoint << 6) | (bytes[next] & 0x3f)
    }
    if (codePoint > 0x10ffff) throw notAnEncoding(name)
    text += String.fromCodePoint(codePoint)
    index += length
  }
  return text
}

function parseHexByte(name: string, index: number): number {
  const hex = name.slice(index, index + 2)
  if (!/^[0-9a-f]{2}$/.test(hex)) throw notAnEncoding(name)
  return parseInt(hex, 16)
}

function notAnEncoding(name: string): Error {
  return new RangeError(`"${name}" is not a directory name made by encodeSegment.`)
}
