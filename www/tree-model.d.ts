// Types of tree-model.js, for the specs that test it from TypeScript.

export interface TreeNode {
  /** Decoded path segments from the API root; [] is the root. */
  segments: string[]
  name: string
  parent: TreeNode | null
  /** null until the node's children were listed. */
  children: TreeNode[] | null
  expanded: boolean
  loading: Promise<boolean> | null
}

export interface EventOutcome {
  changed: TreeNode[]
  removed?: TreeNode
  flash?: TreeNode
  recheck?: TreeNode
}

export function createRoot(name: string): TreeNode
export function isExpandable(node: TreeNode): boolean
export function setChildren(node: TreeNode, names: string[]): void
export function removeNode(node: TreeNode): boolean
export function find(root: TreeNode, segments: string[]): TreeNode | undefined
export function deepestKnown(root: TreeNode, segments: string[]): TreeNode
export function applyEvent(root: TreeNode, type: 'put' | 'patch' | 'delete', payload: { path?: string }): EventOutcome
export function visibleNodes(root: TreeNode, limit: number): TreeNode[]
export function visibleAncestor(node: TreeNode): TreeNode
export function survivingAncestor(node: TreeNode): TreeNode
