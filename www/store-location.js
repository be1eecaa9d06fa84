/**
 * Where a document lives in the store the server runs on, as the page shows it
 * under an exchange. The server names its store's kind, and to a client on its
 * own machine the folder or db.json (`X-Restdir-Store` on the page's answer,
 * lib/static/store-header.ts). Pure functions, no DOM: spec/www/store-location.spec.ts
 * checks the folder spelling against the server's own (lib/store/file/encode.ts).
 */

/** `folder; name="store"` → { kind: 'folder', name: 'store' }; a missing header is an unknown store. */
export function parseStoreHeader(value) {
  const match = /^\s*([a-z-]+)\s*(?:;\s*name="([^"]*)")?\s*$/.exec(value ?? '')
  if (!match) return { kind: 'other' }
  let name
  try {
    name = match[2] === undefined ? undefined : decodeURIComponent(match[2])
  } catch {
    name = undefined
  }
  return { kind: match[1], name }
}

/**
 * Where the node at `segments` (decoded, below the API root) keeps its document:
 * { kind, text } where text is what to show, e.g. "store/notes/first/@.json"; with
 * `members`, where the documents of the collection there live (every `@.json` one folder below "store/notes").
 * `sha256Hex(text)` (async) spells the rare name too long for a folder; without it the hash shows as "…".
 */
export async function documentLocation(store, segments, sha256Hex, { members = false } = {}) {
  switch (store.kind) {
    case 'folder': {
      // docs/storage.md, "The store folder": one folder per segment, the document in @.json.
      const folders = await Promise.all(segments.map((segment) => encodeSegment(segment, sha256Hex)))
      return { kind: 'folder', text: [store.name ?? 'the store folder', ...folders, ...(members ? ['*'] : []), '@.json'].join('/') }
    }
    case 'json-file':
      return { kind: 'json-file', text: `${store.name ?? 'the db.json'} → ${members && segments.length === 1 ? `${segments[0]}[…]` : jsonPath(segments)}` }
    case 'postgres':
      return { kind: 'postgres', text: members ? `table restdir_nodes, rows with parent = ${sqlText(parentKey(segments))}` : postgresRow(segments) }
    case 'memory':
      return { kind: 'memory', text: 'in memory: nothing is written to disk, and a restart starts empty (or from the fixture)' }
    default:
      return { kind: 'other', text: 'in the store the server was given' }
  }
}

/**
 * Where docs/json-server.md, "Serving a db.json", puts a node: a top-level key, an
 * item of a top-level array by its `id`, anything else in the `@nodes` array by its
 * path. The file is its own declaration: a `user` key is the file's, like any other.
 */
function jsonPath(segments) {
  const [first, second] = segments
  if (segments.length === 0) return '@nodes[path=/]'
  if (segments.length === 1) return first
  if (segments.length === 2) return `${first}[id=${second}]`
  return `@nodes[path=/${segments.join('/')}]`
}

/** docs/postgres.md, "What is stored how": the row of restdir_nodes keyed by (parent, name). */
function postgresRow(segments) {
  if (segments.length === 0) return "table restdir_nodes, row parent = '', name = ''"
  return `table restdir_nodes, row parent = ${sqlText(parentKey(segments.slice(0, -1)))}, name = ${sqlText(segments.at(-1))}`
}

/** The key of a node as a parent: `/notes/` (a `/` inside a segment is U+0001 U+0003 there). */
function parentKey(segments) {
  return '/' + segments.map((segment) => segment.replaceAll('/', '\u0001\u0003') + '/').join('')
}

function sqlText(text) {
  return `'${text.replaceAll("'", "''")}'`
}

/** Longest folder name kept whole, and how much of a longer one is kept before its hash (lib/store/file/encode.ts). */
const LONGEST_NAME = 200
const HASHED_PREFIX = 150
const PLAIN_NAME = /^[a-z0-9_-](?:[a-z0-9._-]*[a-z0-9_-])?$/
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\.|$)/

/**
 * The folder name of one segment, spelled as the store spells it (docs/storage.md,
 * "How a URL becomes a folder"): lower-case letters, digits, `-`, `_` and inner dots
 * stay, `A` becomes `!a`, anything else `%` and hex bytes of its UTF-8.
 */
export async function encodeSegment(segment, sha256Hex) {
  if (segment === '') return '!'
  let name = PLAIN_NAME.test(segment) ? segment : escapeCharacters(segment)
  if (WINDOWS_DEVICE.test(name)) name = escapeByte(name.charCodeAt(0)) + name.slice(1)
  if (name.length <= LONGEST_NAME) return name
  const hash = sha256Hex ? (await sha256Hex(name)).slice(0, 40) : '…'
  return name.slice(0, HASHED_PREFIX) + '~' + hash
}

function escapeCharacters(segment) {
  const last = segment.length - 1
  let name = ''
  for (let index = 0; index < segment.length; index++) {
    const unit = segment.charCodeAt(index)
    if (isPlainUnit(unit) || (unit === 0x2e && index !== 0 && index !== last)) {
      name += segment[index]
    } else if (unit >= 0x41 && unit <= 0x5a) {
      name += '!' + String.fromCharCode(unit + 0x20)
    } else {
      const codePoint = segment.codePointAt(index)
      if (codePoint > 0xffff) index++
      for (const byte of utf8Bytes(codePoint)) name += escapeByte(byte)
    }
  }
  return name
}

function isPlainUnit(unit) {
  return (unit >= 0x61 && unit <= 0x7a) || (unit >= 0x30 && unit <= 0x39) || unit === 0x2d || unit === 0x5f
}

function escapeByte(byte) {
  return '%' + byte.toString(16).padStart(2, '0')
}

/** UTF-8 of one code point; a lone surrogate gets the three-byte form, as the server writes it. */
function utf8Bytes(codePoint) {
  if (codePoint < 0x80) return [codePoint]
  const tail = (shift) => 0x80 | ((codePoint >> shift) & 0x3f)
  if (codePoint < 0x800) return [0xc0 | (codePoint >> 6), tail(0)]
  if (codePoint < 0x10000) return [0xe0 | (codePoint >> 12), tail(6), tail(0)]
  return [0xf0 | (codePoint >> 18), tail(12), tail(6), tail(0)]
}
