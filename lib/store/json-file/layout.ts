import type { Doc, NodePath } from '../store.ts'
import { childrenOf, familyAt, type NestedFamily } from '../families.ts'
import { nodeAt } from '../node-tree.ts'

/*
 * How a tree of nodes is laid out as a json-server db.json (docs/json-server.md,
 * "Serving a db.json"): a top-level object is the document at `/name`, a
 * top-level array the collection `/name`, each item the document at
 * `/name/<id>`; a declared family's member holds its children's arrays by their names
 * (with the seed's declarations, a user's `playlist` array holds its playlists,
 * `/user/<user_id>/playlist/<playlist_id>`), as lib/data/import.ts reads them.
 * A document that layout has no place for (deeper, the root's, one whose id
 * field does not name it) goes into the `@nodes` array, by its path.
 * The text is exactly what `JSON.stringify(value, null, 2)` gives.
 */

/** The top-level key of the documents json-server's layout has no place for. */
export const NODES_KEY = '@nodes'

/**
 * The name the store gives an item of a plain collection that has no id in
 * the file (docs/json-server.md, "Serving a db.json"): `#` and its place in
 * the array, never written into the file. json-server 0.17 finds items by
 * their id only, so the json-server mode answers 404 at any such URL.
 */
export function idlessName(index: number): string {
  return `#${index}`
}

export function isIdlessName(segment: string): boolean {
  return /^#\d+'*$/.test(segment)
}

/**
 * The fields whose value names an item of a collection, the first one given deciding; `idField`
 * names a plain collection's items (`id`, or json-server's `--id`).
 */
export function idFieldsOf(path: NodePath, families: readonly NestedFamily[], idField = 'id'): readonly string[] {
  if (path.length < 2 || path.length % 2 !== 0) return []
  const family = familyAt(families, path.slice(0, -1))
  if (family) return [family.idField, 'id']
  return path.length === 2 ? [idField] : []
}

/** The segment an item's id fields give it: undefined when none is given (absent or null), null when the one given is no string or number. */
export function segmentOfItem(item: Doc, fields: readonly string[]): string | undefined | null {
  for (const field of fields) {
    if (!Object.hasOwn(item, field) || item[field] === null) continue
    const id = item[field]
    if (typeof id === 'string') return id
    if (typeof id === 'number' && Number.isFinite(id)) return String(id)
    return null
  }
  return undefined
}

/**
 * Whether a document at `path` can be an item of its array: its id field names it, or (an item of a
 * plain top-level collection) it has no id at all, as json-server keeps such an item; and (a declared
 * member) it has no field named as its children's array.
 */
function fitsAsItem(path: NodePath, doc: Doc, families: readonly NestedFamily[], idField: string): boolean {
  const fields = idFieldsOf(path, families, idField)
  if (fields.length === 0) return false
  const segment = segmentOfItem(doc, fields)
  if (segment === undefined && isIdlessName(path[path.length - 1]) && path.length === 2 && !familyAt(families, path.slice(0, 1))) return true
  if (segment !== path[path.length - 1]) return false
  return !childrenOf(families, familyAt(families, path.slice(0, -1))).some((child) => Object.hasOwn(doc, child.collection))
}

interface LayoutNode {
  /** The document as the MemoryStore keeps it (serializeDoc: 2-space JSON and a newline), the same string. */
  text?: string
  /** Whether the document can be an item of its collection's array (fitsAsItem). */
  fits?: boolean
  /**
   * The document as the file holds it, `spaces` in, as UTF-8, made at the
   * first file write after it changed: every later write sends these bytes as
   * they are, so a file write costs a copy of the file, not a re-indentation
   * and an encoding of every document.
   */
  placed?: { spaces: number; bytes: Buffer }
  /** A top-level value that is no document (json-server's `$schema`, an array of strings): kept where it is, never served. */
  kept?: { value: unknown }
  /** In the order of the file: new children go last. */
  readonly children: Map<string, LayoutNode>
  /** The names of the children holding a document, in the order of the file, made when asked for (documentNames). */
  documentNames?: string[]
  /** A top-level collection's array as the last file write laid it out (see collectionParts). */
  laidOut?: LaidOut
}

/**
 * What a top-level collection's array came to at the last file write, kept
 * while nothing in it changes but items added last (what a POST does), so a
 * file write appends the new items' bytes to the kept blocks instead of
 * laying the array out again; the file is then written from the blocks with
 * writev(2) (bench/RESULTS.md, "POST into a db.json").
 */
interface LaidOut {
  /**
   * The array without its closing bracket, as UTF-8 blocks, each the items of
   * one file write (the first block those laid out afresh) with the bytes that
   * open the array or separate the items before each (FIRST_ITEM, NEXT_ITEM).
   * Empty while the array has no item.
   */
  blocks: Buffer[]
  /** What the collection put in `@nodes`. */
  elsewhere: string[]
  /** Items added last since, each a plain document with nothing below it: laid out at the next file write. */
  added: LayoutNode[]
}

/** What opens a top-level array and indents its first item; what separates and indents each next one. */
const FIRST_ITEM = Buffer.from('[\n    ')
const NEXT_ITEM = Buffer.from(',\n    ')

export class Layout {
  #root: LayoutNode = { children: new Map() }
  /** Whether the file ends with a newline: kept as the file had it. */
  trailingNewline = true
  readonly #families: readonly NestedFamily[]
  readonly #idField: string

  /** `idField`: the field naming a plain collection's items (json-server's `--id`). */
  constructor(families: readonly NestedFamily[] = [], idField = 'id') {
    this.#families = families
    this.#idField = idField
  }

  /** Places a document (a write), keeping the node where it is in the file, or last among its siblings when new. */
  set(path: NodePath, text: string, doc: Doc): void {
    const top = path.length === 2 ? this.#root.children.get(path[0]) : undefined
    const added = top !== undefined && !top.children.has(path[1])
    const name = path[path.length - 1]
    const parent = path.length > 0 ? nodeAt(this.#root, path.slice(0, -1)) : undefined
    const isNew = path.length > 0 && !parent?.children.has(name)
    const node = this.#make(path)
    // A new child goes last, in the file as in the names kept; one that held no document yet has its place already.
    if (isNew) this.#parentOf(path)!.documentNames?.push(name)
    else if (node.text === undefined && parent) parent.documentNames = undefined
    node.text = text
    node.fits = fitsAsItem(path, doc, this.#families, this.#idField)
    node.placed = undefined
    if (added && node.fits && top.laidOut) top.laidOut.added.push(node)
    else this.#changedBelow(path)
  }

  /** A top-level array (an empty one included) or a kept value, in its place in the file. */
  setTopLevel(name: string, kept?: { value: unknown }): void {
    const node = this.#make([name])
    node.kept = kept
    this.#changedBelow([name])
  }

  /**
   * Takes a node and its subtree away (a removal), and the nodes above it left
   * empty, except a top-level collection whose item it was: json-server keeps
   * `"posts": []` once its last item is deleted, and so does this file.
   */
  remove(path: NodePath): void {
    this.#changedBelow(path)
    if (path.length === 0) {
      for (const [name, node] of this.#root.children) if (node.kept === undefined) this.#root.children.delete(name)
      this.#root.text = undefined
      return
    }
    const trail = [this.#root]
    for (const segment of path.slice(0, -1)) {
      const next = trail[trail.length - 1].children.get(segment)
      if (!next) return
      trail.push(next)
    }
    trail[trail.length - 1].children.delete(path[path.length - 1])
    trail[trail.length - 1].documentNames = undefined
    // The removal of an item keeps its collection; a deeper one leaves no empty array behind (a node with nothing stops existing).
    const lowest = path.length === 2 ? 2 : 1
    for (let depth = trail.length - 1; depth >= lowest; depth--) {
      const node = trail[depth]
      if (node.text !== undefined || node.children.size > 0) break
      trail[depth - 1].children.delete(path[depth - 1])
    }
  }

  /**
   * The top-level collections that hold no item (`"comments": []`): json-server serves each as
   * `[]` (docs/json-server.md, "Serving a db.json"), and so does the store; in the file's order.
   */
  emptyCollections(): string[] {
    const names: string[] = []
    for (const [name, node] of this.#root.children) {
      if (name !== NODES_KEY && node.kept === undefined && node.text === undefined && node.children.size === 0) names.push(name)
    }
    return names
  }

  /** The top-level names the file serves, in its order: its collections and its documents (json-server's resources). */
  resources(): string[] {
    return [...this.#root.children].filter(([name, node]) => name !== NODES_KEY && node.kept === undefined).map(([name]) => name)
  }

  /** The document texts by path, for comparing with a file read again. */
  *documents(): Generator<[NodePath, string]> {
    const walk = function* (path: string[], node: LayoutNode): Generator<[NodePath, string]> {
      if (node.text !== undefined) yield [path, node.text]
      for (const [name, child] of node.children) yield* walk([...path, name], child)
    }
    yield* walk([], this.#root)
  }

  /** The names of the children of `path` in the order of the file; undefined when there is no such node. */
  childNames(path: NodePath): string[] | undefined {
    const node = nodeAt(this.#root, path)
    return node && [...node.children.keys()]
  }

  /** The names of the children of `path` that hold a document, in the order of the file (kept until one comes or goes). */
  documentNames(path: NodePath): readonly string[] | undefined {
    const node = nodeAt(this.#root, path)
    if (!node) return undefined
    node.documentNames ??= [...node.children].filter(([, child]) => child.text !== undefined).map(([name]) => name)
    return node.documentNames
  }

  #parentOf(path: NodePath): LayoutNode | undefined {
    return nodeAt(this.#root, path.slice(0, -1))
  }

  /** The text of the document at `path`, if there is one. */
  textAt(path: NodePath): string | undefined {
    return nodeAt(this.#root, path)?.text
  }

  /**
   * The whole file, as `JSON.stringify(db, null, 2)` would write it (and a final newline when the
   * file had one), as UTF-8 parts in order, each collection's kept blocks among them as they are (LaidOut).
   */
  serializeParts(): Buffer[] {
    const parts = new Parts()
    const elsewhere: string[] = []
    if (this.#root.text !== undefined) elsewhere.push(nodeEntry([], this.#root))
    let first = true
    const member = (name: string): void => {
      parts.text(`${first ? '{\n' : ',\n'}  ${JSON.stringify(name)}: `)
      first = false
    }
    for (const [name, node] of this.#root.children) {
      if (name === NODES_KEY) collect([name], node, elsewhere)
      else if (node.kept !== undefined) {
        member(name)
        parts.text(indent(JSON.stringify(node.kept.value, null, 2), 2))
      } else if (node.text !== undefined && node.children.size === 0) {
        member(name)
        parts.bytes(placedBytes(node, 2))
      } else {
        if (node.text !== undefined) elsewhere.push(nodeEntry([name], node))
        member(name)
        collectionParts(name, node, elsewhere, this.#families, parts)
      }
    }
    if (elsewhere.length > 0) {
      member(NODES_KEY)
      parts.text(`[\n${elsewhere.join(',\n')}\n  ]`)
    }
    parts.text(first ? '{}' : '\n}')
    if (this.trailingNewline) parts.text('\n')
    return parts.done()
  }

  /** Something other than an item added last changed at `path`: its top-level collection is laid out afresh. */
  #changedBelow(path: NodePath): void {
    if (path.length === 0) for (const node of this.#root.children.values()) node.laidOut = undefined
    else {
      const top = this.#root.children.get(path[0])
      if (top) top.laidOut = undefined
    }
  }

  #make(path: NodePath): LayoutNode {
    let node = this.#root
    for (const segment of path) {
      let next = node.children.get(segment)
      if (!next) node.children.set(segment, (next = { children: new Map() }))
      node = next
      // A document written below a kept value (`/tags/x` where `tags` is an array of strings) takes its place.
      node.kept = undefined
    }
    return node
  }
}

/**
 * A top-level collection's array: its items that fit, each followed in
 * `elsewhere` by what it cannot hold. Laid out afresh after a change, else
 * the kept blocks with the items added since (LaidOut).
 */
function collectionParts(name: string, node: LayoutNode, elsewhere: string[], families: readonly NestedFamily[], parts: Parts): void {
  let laidOut = node.laidOut
  if (laidOut === undefined) {
    const own: string[] = []
    const items = layItems([name], node, 4, own, families, (item) => placedBytes(item, 4), (text) => Buffer.from(text))
    laidOut = node.laidOut = { blocks: items.length === 0 ? [] : [itemsBlock(items, true)], elsewhere: own, added: [] }
  } else if (laidOut.added.length > 0) {
    laidOut.blocks.push(itemsBlock(laidOut.added.map((item) => placedBytes(item, 4)), laidOut.blocks.length === 0))
    laidOut.added = []
    joinSmallBlocks(laidOut.blocks)
  }
  elsewhere.push(...laidOut.elsewhere)
  if (laidOut.blocks.length === 0) parts.text('[]')
  else {
    for (const block of laidOut.blocks) parts.bytes(block)
    parts.text('\n  ]')
  }
}

/**
 * Joins the newest blocks while the one before them is less than twice their
 * size, so each block is at least twice the size of the next: a collection
 * keeps a few dozen blocks at most, and each byte is copied again only when
 * what came after it has doubled. Joining every block into one past a count
 * would copy the whole array every so many file writes, as big as it has grown.
 */
function joinSmallBlocks(blocks: Buffer[]): void {
  let joined = blocks.length
  let size = blocks[joined - 1].length
  while (joined > 1 && blocks[joined - 2].length < 2 * size) size += blocks[--joined - 1].length
  if (joined < blocks.length) blocks.push(Buffer.concat(blocks.splice(joined - 1)))
}

/** Items' bytes as one block, each after what separates it (the first one opening the array when `opens`). */
function itemsBlock(items: readonly Buffer[], opens: boolean): Buffer {
  const list: Buffer[] = []
  for (const item of items) list.push(opens && list.length === 0 ? FIRST_ITEM : NEXT_ITEM, item)
  return Buffer.concat(list)
}

/** A file's parts as they are made: text runs joined and encoded once, kept bytes between them as they are. */
class Parts {
  readonly #parts: Buffer[] = []
  #text = ''

  text(text: string): void {
    this.#text += text
  }

  bytes(block: Buffer): void {
    this.#flush()
    this.#parts.push(block)
  }

  done(): Buffer[] {
    this.#flush()
    return this.#parts
  }

  #flush(): void {
    if (this.#text.length > 0) this.#parts.push(Buffer.from(this.#text))
    this.#text = ''
  }
}

/**
 * A collection's items that fit, `spaces` in, each with its children's arrays
 * nested when it is a declared member: a plain item as `plain` gives it, one
 * with nested arrays as `nested` makes it of its whole text.
 */
function layItems<T>(path: NodePath, node: LayoutNode, spaces: number, elsewhere: string[], families: readonly NestedFamily[], plain: (item: LayoutNode) => T, nested: (text: string) => T): T[] {
  const items: T[] = []
  const children = childrenOf(families, familyAt(families, path))
  for (const [segment, child] of node.children) {
    const itemPath = [...path, segment]
    if (child.text === undefined || !child.fits) {
      collect(itemPath, child, elsewhere)
      continue
    }
    let text: string | undefined
    for (const [childName, grandchild] of child.children) {
      if (grandchild.text === undefined && children.some((family) => family.collection === childName)) {
        const inner = ' '.repeat(spaces + 4)
        const texts = layItems([...itemPath, childName], grandchild, spaces + 4, elsewhere, families, (item) => `${inner}${placedText(item, spaces + 4)}`, (itemText) => `${inner}${itemText}`)
        if (texts.length > 0) text = withLastMember(text ?? placedText(child, spaces), childName, `[\n${texts.join(',\n')}\n${' '.repeat(spaces + 2)}]`, spaces)
      } else collect([...itemPath, childName], grandchild, elsewhere)
    }
    items.push(text === undefined ? plain(child) : nested(text))
  }
  return items
}

/** Every document of a subtree, as `@nodes` entries. */
function collect(path: NodePath, node: LayoutNode, elsewhere: string[]): void {
  if (node.text !== undefined) elsewhere.push(nodeEntry(path, node))
  for (const [name, child] of node.children) collect([...path, name], child, elsewhere)
}

/** One `@nodes` entry: `{ "path": [...segments], "document": {...} }`, 4 spaces in. */
function nodeEntry(path: NodePath, node: LayoutNode): string {
  const pathText = indent(JSON.stringify(path, null, 2), 6)
  return `    {\n      "path": ${pathText},\n      "document": ${placedText(node, 6)}\n    }`
}

/** A node's document as the file holds it, `spaces` in, as UTF-8 (kept until the document or its place changes). */
function placedBytes(node: LayoutNode, spaces: number): Buffer {
  if (node.placed?.spaces !== spaces) node.placed = { spaces, bytes: Buffer.from(indentDoc(node.text!, spaces)) }
  return node.placed.bytes
}

/** The same as text, for the rarer places that build on it (a top-level document, `@nodes`, a member with nested arrays). */
function placedText(node: LayoutNode, spaces: number): string {
  return placedBytes(node, spaces).toString('utf8')
}

/** A document's stored text (ending in a newline) as a value `spaces` in. */
function indentDoc(text: string, spaces: number): string {
  return indent(text.endsWith('\n') ? text.slice(0, -1) : text, spaces)
}

/** Every line after the first moved `spaces` in (a JSON string never holds a raw newline, so each one is the layout's). */
function indent(text: string, spaces: number): string {
  return text.replaceAll('\n', '\n' + ' '.repeat(spaces))
}

/** An object's text (`spaces` in) with one more member last. */
function withLastMember(objectText: string, name: string, valueText: string, spaces: number): string {
  const inner = ' '.repeat(spaces + 2)
  if (objectText === '{}') return `{\n${inner}${JSON.stringify(name)}: ${valueText}\n${' '.repeat(spaces)}}`
  const head = objectText.slice(0, objectText.length - (spaces + 2))
  return `${head},\n${inner}${JSON.stringify(name)}: ${valueText}\n${' '.repeat(spaces)}}`
}
