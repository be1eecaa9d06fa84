import { checkConditions, checkVersion, writeClaims } from './conditions.ts'
import { ChangeFeed, changeOfWrite } from './feed.ts'
import { NodeLocks } from './node-locks.ts'
import { etagOf, serializeDoc } from './serialize.ts'
import { batchClaims, batchPlan } from './staged.ts'
import { compareIds, idInsertionPoint, type BatchOp, type Doc, type NodePath, type StagedBatch, type Store, type StoreChange, type StoredDoc, type WriteConditions, type WriteResult } from './store.ts'
import { madeNode, nodeAt } from './node-tree.ts'

export interface MemoryStoreOptions {
  /**
   * Runs inside each write and removal, between its checks and its change, as
   * a store on a disk waits there; tests make racing requests overlap with it.
   */
  pause?: (operation: 'write' | 'remove', path: NodePath) => Promise<void>
  /**
   * Told of each change as it lands: the text now kept for the node (the very
   * string, so a store built over this one shares it), or undefined when the
   * node and its subtree went. The db.json store (lib/store/json-file/) lays
   * its file out from it.
   */
  onChange?: (path: NodePath, stored: { text: string; doc: Doc } | undefined) => void
}

/** One node: its document as JSON text (so no caller can change what is stored) and its children. */
interface MemoryNode {
  text?: string
  etag?: string
  readonly children: Map<string, MemoryNode>
  /** The names of the children holding a document, in id order, once asked for; kept up to date from then on. */
  documentNames?: string[]
}

/**
 * The store in memory, for tests and throw-away servers: a tree of nodes, so
 * every operation walks only its own path, never the whole store. Same
 * answers as the file store, ETags included.
 */
export class MemoryStore implements Store {
  readonly #root: MemoryNode = { children: new Map() }
  readonly #locks = new NodeLocks()
  readonly #feed = new ChangeFeed()
  readonly #pause: MemoryStoreOptions['pause']
  readonly #onChange: MemoryStoreOptions['onChange']

  constructor(options: MemoryStoreOptions = {}) {
    this.#pause = options.pause
    this.#onChange = options.onChange
  }

  async read(path: NodePath): Promise<StoredDoc | undefined> {
    const node = nodeAt(this.#root, path)
    if (node?.text === undefined) return undefined
    return { doc: JSON.parse(node.text) as Doc, etag: node.etag as string }
  }

  async children(path: NodePath): Promise<string[] | undefined> {
    const node = nodeAt(this.#root, path)
    if (!node || !holdsSomething(node)) return undefined
    return [...node.children.keys()].sort(compareIds)
  }

  async documentChildren(path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined> {
    const node = nodeAt(this.#root, path)
    if (!node || !holdsSomething(node)) return undefined
    // Sorted once, not on every page: a page of 100 000 children costs a copy of its window.
    node.documentNames ??= [...node.children].filter(([, child]) => child.text !== undefined).map(([name]) => name).sort(compareIds)
    return { names: node.documentNames.slice(start, end), total: node.documentNames.length }
  }

  async exists(path: NodePath): Promise<boolean> {
    const node = nodeAt(this.#root, path)
    return node !== undefined && holdsSomething(node)
  }

  write(path: NodePath, doc: Doc, conditions?: WriteConditions): Promise<WriteResult> {
    return this.#locks.run(writeClaims(path, conditions), async () => {
      await checkConditions(this, path, doc, conditions)
      await this.#pause?.('write', path)
      return this.#place(path, doc, conditions)
    })
  }

  create(path: NodePath, doc: Doc, conditions?: Omit<WriteConditions, 'expect' | 'patch'>): Promise<WriteResult | undefined> {
    return this.#locks.run(writeClaims(path, conditions), async () => {
      if (nodeAt(this.#root, path)?.text !== undefined) return undefined
      await checkConditions(this, path, doc, conditions)
      await this.#pause?.('write', path)
      return this.#place(path, doc, undefined)
    })
  }

  remove(path: NodePath, conditions: { expect?: string | null } = {}): Promise<{ existed: boolean; doc?: Doc }> {
    return this.#locks.run([{ kind: 'remove', path }], async () => {
      if (conditions.expect !== undefined) await checkVersion(this, path, conditions.expect)
      await this.#pause?.('remove', path)
      const removed = this.#detach(path)
      if (removed.existed) this.#onChange?.(path, undefined)
      if (removed.existed) this.#feed.emit({ type: 'delete', path, data: removed.doc ?? null })
      return removed
    })
  }

  /**
   * Holds every node the batch claims, checks all its ops (or that what the
   * staged view read is still so: batchPlan), then applies them
   * in one turn of the event loop: no reader sees part of it. The changes are
   * reported after the last op is applied.
   */
  batch(ops: readonly BatchOp[], staged?: StagedBatch): Promise<void> {
    return this.#locks.run(batchClaims(ops), async () => {
      const plan = await batchPlan(this, ops, staged)
      if (plan.ops.length > 0) await this.#pause?.('write', plan.ops[0].path)
      // The id lists of the collections that lose members are mended once, after: one splice per removal costs the list's length each time.
      const thinned = new Set<MemoryNode>()
      for (const op of plan.ops) {
        if (op.kind === 'write') {
          for (const parent of thinned) mendNames(parent)
          thinned.clear()
          this.#place(op.path, op.doc, op.conditions, false)
        } else if (this.#detach(op.path, thinned).existed) this.#onChange?.(op.path, undefined)
      }
      for (const parent of thinned) mendNames(parent)
      for (const change of plan.changes) this.#feed.emit(change)
    })
  }

  subscribe(listener: (change: StoreChange) => void): () => void {
    return this.#feed.subscribe(listener)
  }

  async lastChangeId(): Promise<number> {
    return this.#feed.last
  }

  #place(path: NodePath, doc: Doc, conditions: WriteConditions | undefined, report = true): WriteResult {
    const text = serializeDoc(doc)
    const node = this.#make(path)
    const created = node.text === undefined
    node.text = text
    node.etag = etagOf(text)
    const names = path.length > 0 ? nodeAt(this.#root, path.slice(0, -1))!.documentNames : undefined
    if (created && names) names.splice(idInsertionPoint(names, path[path.length - 1]), 0, path[path.length - 1])
    this.#onChange?.(path, { text, doc })
    if (report) this.#feed.emit(changeOfWrite(path, doc, conditions))
    return { created, etag: node.etag }
  }

  /** Takes the subtree at `path` away; a parent whose id list it leaves stale goes into `thinned` (mended by the caller) when given. */
  #detach(path: NodePath, thinned?: Set<MemoryNode>): { existed: boolean; doc?: Doc } {
    const trail = this.#trail(path)
    const node = trail[path.length]
    if (!node || !holdsSomething(node)) return { existed: false }
    const doc = node.text === undefined ? undefined : (JSON.parse(node.text) as Doc)
    if (path.length === 0) {
      node.children.clear()
      node.text = node.etag = node.documentNames = undefined
      return { existed: true, doc }
    }
    // Detach the subtree, then the ancestors it leaves with nothing, up to the root.
    for (let depth = path.length; depth > 0; depth--) {
      const parent = trail[depth - 1]
      const detached = parent.children.get(path[depth - 1])
      parent.children.delete(path[depth - 1])
      if (detached?.text !== undefined && parent.documentNames && thinned) thinned.add(parent)
      else if (detached?.text !== undefined && parent.documentNames) {
        const at = idInsertionPoint(parent.documentNames, path[depth - 1])
        if (parent.documentNames[at] === path[depth - 1]) parent.documentNames.splice(at, 1)
      }
      if (holdsSomething(trail[depth - 1])) break
    }
    return doc === undefined ? { existed: true } : { existed: true, doc }
  }

  async close(): Promise<void> {}

  /** The nodes from the root down the path, as far as they exist. */
  #trail(path: NodePath): MemoryNode[] {
    const trail = [this.#root]
    for (const segment of path) {
      const next = trail[trail.length - 1].children.get(segment)
      if (!next) break
      trail.push(next)
    }
    return trail
  }

  #make(path: NodePath): MemoryNode {
    return madeNode<MemoryNode>(this.#root, path, () => ({ children: new Map() }))
  }
}

/** A node's id list without the children that no longer hold a document. */
function mendNames(node: MemoryNode): void {
  node.documentNames = node.documentNames?.filter((name) => node.children.get(name)?.text !== undefined)
}

function holdsSomething(node: MemoryNode): boolean {
  return node.text !== undefined || node.children.size > 0
}
