import type { NodePath } from '../store.ts'

/**
 * How a node's path becomes the keys of its row in `restdir_nodes` (docs/postgres.md,
 * "Running on PostgreSQL"). Segments are kept so that the database's "C"
 * collation (byte order of UTF-8) sorts them in UTF-16 code-unit order, the
 * order the Store interface promises, and so that every JavaScript string
 * can be kept (see nameOf).
 */

/**
 * A segment as the `name` column keeps it: as it is, except three kinds of
 * UTF-16 code unit, so that the "C" collation (UTF-8 byte order) gives
 * code-unit order and every string can be stored:
 *
 * - U+0000, which PostgreSQL text cannot hold, becomes U+0001 U+0001, and
 *   U+0001 becomes U+0001 U+0002 (both still sort below U+0002);
 * - every unit from U+D800 up (surrogates, so also characters beyond U+FFFF,
 *   and U+E000 to U+FFFF) becomes the code point 0x800 above it (U+E000 to
 *   U+107FF). UTF-8 order puts characters beyond U+FFFF after U+FFFF, while
 *   code-unit order puts them (as surrogates) before U+E000: shifting the
 *   units keeps code-unit order, and a lone surrogate becomes a character too.
 */
export function nameOf(segment: string): string {
  let name = ''
  let plainFrom = 0
  for (let index = 0; index < segment.length; index++) {
    const unit = segment.charCodeAt(index)
    if (unit > 0x0001 && unit < 0xd800) continue
    name += segment.slice(plainFrom, index)
    plainFrom = index + 1
    if (unit === 0x0000) name += '\u0001\u0001'
    else if (unit === 0x0001) name += '\u0001\u0002'
    else name += String.fromCodePoint(unit + 0x800)
  }
  return plainFrom === 0 ? segment : name + segment.slice(plainFrom)
}

/** The inverse of nameOf. */
export function segmentOf(name: string): string {
  if (!/[\u0001\ue000-\uffff\ud800-\udfff]/.test(name)) return name
  let segment = ''
  for (let index = 0; index < name.length; index++) {
    const codePoint = name.codePointAt(index) as number
    if (codePoint === 0x0001) {
      segment += name.charCodeAt(++index) === 0x0001 ? '\u0000' : '\u0001'
    } else if (codePoint >= 0xe000) {
      segment += String.fromCharCode(codePoint - 0x800)
      if (codePoint > 0xffff) index++
    } else {
      segment += name[index]
    }
  }
  return segment
}

/**
 * The key of the node at `path` as a parent: `/` for the root, else `/`, each
 * segment's name with `/` spelled U+0001 U+0003, and `/` after each, e.g.
 * `/users/42/`. Keys of nodes below it start with it, and no other key does.
 */
export function pathKey(path: NodePath): string {
  let key = '/'
  for (const segment of path) key += nameOf(segment).replaceAll('/', '\u0001\u0003') + '/'
  return key
}

/** The (parent, name) of the node's row; the root's is ('', ''), which no other node has. */
export function keyOf(path: NodePath): [string, string] {
  if (path.length === 0) return ['', '']
  return [pathKey(path.slice(0, -1)), nameOf(path[path.length - 1])]
}

/** The rows of the node's ancestors below the root, as the two arrays unnest takes. */
export function ancestorKeys(path: NodePath): [string[], string[]] {
  const parents: string[] = []
  const names: string[] = []
  for (let depth = 1; depth < path.length; depth++) {
    const [parent, name] = keyOf(path.slice(0, depth))
    parents.push(parent)
    names.push(name)
  }
  return [parents, names]
}

/** The name of the advisory lock of the subtree at `path`: writes in it take it shared, its removal exclusively. */
export function treeLockKey(path: NodePath): string {
  return `tree ${pathKey(path)}`
}

/** The first key after every key that starts with `key` (which ends in `/`): the same with `0`, the next byte, last. */
export function afterKeysBelow(key: string): string {
  return key.slice(0, -1) + '0'
}
