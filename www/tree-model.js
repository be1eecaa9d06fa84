import { decodePath } from './api.js'

/**
 * The tree of the store as data, without a page: nodes, which are open, and
 * how a change from the event stream reshapes them. Every function here only
 * reads and changes nodes, and answers which nodes the view must redraw.
 *
 * A node: { segments, name, parent, children: Node[] | null (not loaded yet),
 *           expanded, loading: Promise | null }.
 */

/** The root of a tree, open from the start; `name` is what its row shows (the API base). */
export function createRoot(name) {
  const root = makeNode([], null, name)
  root.expanded = true
  return root
}

function makeNode(segments, parent, name = segments.at(-1)) {
  return { segments, name, parent, children: null, expanded: false, loading: null }
}

/** A node can open while its children are unknown, or when it has some. */
export function isExpandable(node) {
  return node.children === null || node.children.length > 0
}

/** Makes `node.children` match `names`, keeping the nodes (and their open state) that stay. */
export function setChildren(node, names) {
  const existing = new Map((node.children ?? []).map((child) => [child.name, child]))
  node.children = names.map((name) => existing.get(name) ?? makeNode([...node.segments, name], node))
}

/** Takes `node` out of its parent's children; false when it was not there. */
export function removeNode(node) {
  const parent = node.parent
  if (!parent?.children) return false
  parent.children = parent.children.filter((child) => child !== node)
  return true
}

/** Adds a child named `name` in its sorted place (code-unit order, as the server lists). */
function insertChild(parent, name) {
  const child = makeNode([...parent.segments, name], parent)
  const at = parent.children.findIndex((other) => other.name > name)
  parent.children.splice(at === -1 ? parent.children.length : at, 0, child)
  return child
}

/** The node at `segments`, or undefined when it is not known. */
export function find(root, segments) {
  let node = root
  for (const name of segments) {
    node = node.children?.find((other) => other.name === name)
    if (!node) return undefined
  }
  return node
}

/** The deepest known node on the way to `segments`. */
export function deepestKnown(root, segments) {
  let node = root
  for (const name of segments) {
    const child = node.children?.find((other) => other.name === name)
    if (!child) break
    node = child
  }
  return node
}

/**
 * Walks to `segments`, adding the nodes a change says now exist, as far as
 * children are loaded; returns the deepest node reached and the nodes added
 * or given a new child.
 */
function reveal(root, segments) {
  const changed = []
  let node = root
  for (let index = 0; index < segments.length; index++) {
    if (node.children === null) break
    let child = node.children.find((other) => other.name === segments[index])
    if (!child) {
      child = insertChild(node, segments[index])
      // A new last node has nothing below it; a new node on the way has at least the next one.
      if (index === segments.length - 1) child.children = []
      changed.push(child, node)
    }
    node = child
  }
  return { node, changed }
}

/**
 * Applies one event of the store's stream (`put`, `patch` or `delete`, with
 * its `{ path }`). Answers what the view must do: redraw `changed`, take
 * `removed` off the page, flash `flash` (the node the change touched, or the
 * closest one known), and list `recheck` again: after a delete the store
 * prunes ancestors left with nothing, which the event does not name.
 */
export function applyEvent(root, type, payload) {
  const segments = decodePath(payload.path ?? '/')
  if (type === 'delete') {
    const node = find(root, segments)
    if (node === root) {
      setChildren(root, [])
      return { changed: [root] }
    }
    const removed = node && removeNode(node) ? node : undefined
    const closest = node ? node.parent : deepestKnown(root, segments)
    const recheck = closest !== root && !closest.children?.length ? closest : undefined
    return { changed: removed ? [closest] : [], removed, flash: closest, recheck }
  }
  const { node, changed } = reveal(root, segments)
  return { changed, flash: node }
}

/** The nodes a reader sees, top to bottom: each open node's first `limit` children. */
export function visibleNodes(root, limit) {
  const list = []
  const walk = (node) => {
    list.push(node)
    if (node.expanded && node.children) node.children.slice(0, limit).forEach(walk)
  }
  walk(root)
  return list
}

/** The node itself, or its highest closed ancestor (which hides it). */
export function visibleAncestor(node) {
  let visible = node
  for (let above = node.parent; above; above = above.parent) if (!above.expanded) visible = above
  return visible
}

/**
 * Where re-listing starts after a delete below `node`: the store prunes
 * ancestors left with neither document nor children, so `node` may be gone.
 * The closest ancestor that surely survived (the root, or one with other
 * children); listing from there down to `node` asks only nodes that exist.
 */
export function survivingAncestor(node) {
  let top = node
  while (top.parent?.parent && top.parent.children?.length === 1) top = top.parent
  return top.parent ?? top
}
