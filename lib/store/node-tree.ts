/** The node at `path` below `root` in a tree of nodes kept by name, or undefined where the path leaves the tree. */
export function nodeAt<N extends { readonly children: Map<string, N> }>(root: N, path: readonly string[]): N | undefined {
  let node: N | undefined = root
  for (const segment of path) {
    node = node.children.get(segment)
    if (!node) return undefined
  }
  return node
}

/** The node at `path` below `root` in a tree of nodes kept by name, made (with every node on the way) where missing. */
export function madeNode<N extends { readonly children: Map<string, N> }>(root: N, path: readonly string[], made: () => N): N {
  let node = root
  for (const segment of path) {
    let next = node.children.get(segment)
    if (!next) node.children.set(segment, (next = made()))
    node = next
  }
  return node
}
