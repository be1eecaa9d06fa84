import { isUtf8 } from 'node:buffer'
import { HttpError } from './http-error.ts'

export interface PathLimits {
  /** Longest raw path (before the query string) in characters. */
  maxPathLength: number
  /** Longest raw segment in characters. */
  maxSegmentLength: number
  /** Most segments in one path. */
  maxDepth: number
}

export const defaultPathLimits: PathLimits = {
  maxPathLength: 8192,
  maxSegmentLength: 1024,
  maxDepth: 32,
}

/**
 * Splits a request target into percent-decoded path segments: the one place
 * where URLs are decoded, shared by the router, the data API and static files.
 * The query string and fragment never take part; a trailing slash is ignored.
 * Throws 400 for malformed percent-encoding, an empty segment or an unencoded `.` or `..`, 414 past the limits.
 */
export function splitPath(target: string, limits: PathLimits = defaultPathLimits): string[] {
  const path = pathPartOf(target)

  if (path.length > limits.maxPathLength) {
    throw new HttpError(414, `The path is longer than ${limits.maxPathLength} characters.`)
  }
  if (path[0] !== '/') throw new HttpError(400, 'The request path must start with "/".')

  const segments: string[] = []
  let start = 1
  while (start < path.length) {
    let stop = path.indexOf('/', start)
    if (stop === -1) stop = path.length
    const raw = path.slice(start, stop)
    // A trailing slash ends the loop before it makes a segment, so an empty one means "//".
    if (raw === '') throw new HttpError(400, 'The path has an empty segment ("//"); remove the extra slash.')
    // Dot-segments are removed by clients before sending (RFC 3986 §5.2.4); one that arrives as is was
    // meant as "here" or "up", never as a name, and taking it as either could touch the wrong document.
    if (raw === '.' || raw === '..') {
      throw new HttpError(400, `The path has a "${raw}" segment; remove dot-segments before sending (RFC 3986 §5.2.4), or name a document "${raw}" as ${raw.replaceAll('.', '%2E')}.`)
    }
    if (raw.length > limits.maxSegmentLength) {
      throw new HttpError(414, `A path segment is longer than ${limits.maxSegmentLength} characters.`)
    }
    segments.push(raw.includes('%') ? percentDecodeSegment(raw) : raw)
    if (segments.length > limits.maxDepth) {
      throw new HttpError(414, `The path is deeper than ${limits.maxDepth} segments.`)
    }
    start = stop + 1
  }
  return segments
}

/** The path of a request target: what comes before its query (`?`) or fragment (`#`), RFC 3986 §3. */
export function pathPartOf(target: string): string {
  let end = target.length
  const query = target.indexOf('?')
  if (query !== -1) end = query
  const hash = target.indexOf('#')
  if (hash !== -1 && hash < end) end = hash
  return target.slice(0, end)
}

/**
 * Refuses, with the 414 a later GET of it would get, a POST whose new
 * document's URL would break a limit: the child of `target` with an id of
 * `idLength` characters must itself be a path that splitPath accepts, or the
 * server would answer 201 for a document nobody can read back or delete.
 */
export function checkNewChildPath(target: string, idLength: number, limits: PathLimits = defaultPathLimits): void {
  const path = pathPartOf(target).replace(/\/$/, '')
  try {
    splitPath(`${path}/${'x'.repeat(idLength)}`, limits)
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 414) throw error
    throw new HttpError(414, `POST here would create a document whose URL breaks a limit, so nothing is created: ${error.message}`)
  }
}

/**
 * The query of every target without one: most requests have none, and one
 * shared object spares each of them a URLSearchParams. Nothing can be added
 * to it (deleting from it or sorting it changes nothing anyway).
 */
const NO_QUERY: URLSearchParams = new (class EmptyQuery extends URLSearchParams {
  override append(): never {
    throw new TypeError('A request without a query shares this empty one: copy it (new URLSearchParams(query)) to add to it.')
  }

  override set(): never {
    return this.append()
  }
})()

/**
 * The query string of a request target, without a fragment: a client never
 * sends one (RFC 9112 §3.2), and when a raw one does, it takes no part in the
 * query, as it takes none in the path. Decoded strictly (decodeUrlEncoded).
 */
export function queryOf(target: string): URLSearchParams {
  const start = target.indexOf('?')
  const hash = target.indexOf('#')
  if (start === -1 || (hash !== -1 && hash < start)) return NO_QUERY
  return decodeUrlEncoded(target.slice(start + 1, hash === -1 ? undefined : hash), 'query parameter')
}

/**
 * Names and values of `application/x-www-form-urlencoded` text, a query string
 * or a form body, decoded as the URL Standard's parser does (§5.1: pairs split
 * at `&`, a name at its first `=`, `+` a space, `%XX` a byte, a `%` without two
 * hex digits kept as it is), except that a name or a value whose bytes are not
 * UTF-8 is a 400 naming it, where the standard puts U+FFFD in their place: what
 * is stored or matched is what was sent, or nothing (docs/http-api.md, "Requests and errors").
 */
export function decodeUrlEncoded(text: string, what: 'query parameter' | 'form field'): URLSearchParams {
  const pairs = new URLSearchParams()
  let start = 0
  while (start <= text.length) {
    let stop = text.indexOf('&', start)
    if (stop === -1) stop = text.length
    if (stop > start) {
      const equals = text.indexOf('=', start)
      const nameEnd = equals === -1 || equals > stop ? stop : equals
      const rawName = text.slice(start, nameEnd)
      const rawValue = nameEnd === stop ? '' : text.slice(nameEnd + 1, stop)
      const name = percentDecodeComponent(rawName)
      if (name === undefined) {
        throw new HttpError(400, `The ${what} name ${quoted(rawName)} is not UTF-8 once percent-decoded; percent-encode text as UTF-8 (RFC 3986 §2.5).`)
      }
      const value = percentDecodeComponent(rawValue)
      if (value === undefined) {
        throw new HttpError(400, `The ${what} ${quoted(name)} has a value that is not UTF-8 once percent-decoded (${quoted(rawValue)}); percent-encode text as UTF-8 (RFC 3986 §2.5).`)
      }
      pairs.append(name, value)
    }
    start = stop + 1
  }
  return pairs
}

/** One name or value of form-encoded text with `+` as a space and its escapes decoded, or undefined when the bytes are not UTF-8. */
function percentDecodeComponent(raw: string): string | undefined {
  const spaced = raw.includes('+') ? raw.replaceAll('+', ' ') : raw
  if (!spaced.includes('%')) return spaced
  const bytes = Buffer.from(spaced, 'utf8')
  let length = 0
  for (let index = 0; index < bytes.length; index++) {
    const high = hexValue(bytes[index + 1])
    const low = hexValue(bytes[index + 2])
    if (bytes[index] === 0x25 && high !== -1 && low !== -1) {
      bytes[length++] = high * 16 + low
      index += 2
    } else {
      bytes[length++] = bytes[index]
    }
  }
  const decoded = bytes.subarray(0, length)
  return isUtf8(decoded) ? decoded.toString('utf8') : undefined
}

function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30
  const lower = byte | 0x20
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1
}

/** Text from a request for a message: quoted, escaped, and short. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? text.slice(0, 80) + '…' : text)
}

/** A raw URL segment with its percent-escapes decoded (RFC 3986 §2.1), once; a malformed escape is a 400. */
function percentDecodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    throw new HttpError(400, `The path segment "${raw.slice(0, 80)}" has malformed percent-encoding (each "%" must start a valid UTF-8 escape such as %20).`)
  }
}

/** Joins decoded segments back into a URL path, encoding each segment. */
export function joinPath(segments: readonly string[]): string {
  return '/' + segments.map(encodePathSegment).join('/')
}

/**
 * Encodes one decoded segment for a URL. A segment that is `.` or `..` is
 * spelled `%2E`/`%2E%2E`: clients remove dot segments before sending
 * (RFC 3986 §5.2.4), so a Location of `/a/..` would lead to `/`.
 */
export function encodePathSegment(segment: string): string {
  const encoded = encodeURIComponent(segment)
  return encoded === '.' || encoded === '..' ? encoded.replaceAll('.', '%2E') : encoded
}
