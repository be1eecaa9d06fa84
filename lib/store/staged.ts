import { checkConditions, checkVersion, writeClaims } from './conditions.ts'
import { changeOfWrite } from './feed.ts'
import type { Claim } from './node-locks.ts'
import { etagOf, serializeDoc } from './serialize.ts'
import { compareIds, type BatchOp, type Doc, type NodePath, type Store, type StoreChange, type StoredDoc, type WriteConditions, type WriteResult } from './store.ts'
import { madeNode } from './node-tree.ts'

/*
 * A batch's view of a store (docs/http-api.md, "Batches"): the store as it is,
 * with the batch's writes and removals laid over it and nothing of them
 * stored. The requests of a batch run against it, each seeing the ones before;
 * what they did is kept as BatchOps and changes, for a store's `batch` to
 * check again and apply as one step. Each store's `batch` checks its ops on
 * one of these too, over its own reads, inside its critical section.
 */

/** The store the view lies over: only reads. */
export type BaseReader = Pick<Store, 'read' | 'children' | 'exists'>

/** One node of the overlay: `doc` undefined leaves the base's, null is "no document"; `cleared` hides the base's whole subtree. */
interface Layer {
  doc?: { text: string; etag: string } | null
  cleared?: boolean
  readonly children: Map<string, Layer>
}

export class StagedStore implements Store {
  readonly #base: BaseReader
  readonly #root: Layer = { children: new Map() }
  /** What was done, in order: a removal of nothing is left out. */
  readonly ops: BatchOp[] = []
  /** The changes the ops make, as the change feed will report them. */
  readonly changes: Omit<StoreChange, 'id'>[] = []

  constructor(base: BaseReader) {
    this.#base = base
  }

  async read(path: NodePath): Promise<StoredDoc | undefined> {
    const { layer, hidden } = this.#walk(path)
    if (layer?.doc !== undefined) return layer.doc === null ? undefined : { doc: JSON.parse(layer.doc.text) as Doc, etag: layer.doc.etag }
    return hidden ? undefined : this.#base.read(path)
  }

  async children(path: NodePath): Promise<string[] | undefined> {
    const { layer, hidden } = this.#walk(path)
    if (!layer && !hidden) return this.#base.children(path)
    const names = new Set(hidden ? [] : ((await this.#base.children(path)) ?? []))
    for (const name of layer?.children.keys() ?? []) {
      if (await this.exists([...path, name])) names.add(name)
      else names.delete(name)
    }
    if (names.size === 0 && !(await this.#holdsDocument(path))) return undefined
    return [...names].sort(compareIds)
  }

  async exists(path: NodePath): Promise<boolean> {
    const { layer, hidden } = this.#walk(path)
    if (!layer && !hidden) return this.#base.exists(path)
    if (await this.#holdsDocument(path)) return true
    return ((await this.children(path)) ?? []).length > 0
  }

  async write(path: NodePath, doc: Doc, conditions?: WriteConditions): Promise<WriteResult> {
    await checkConditions(this, path, doc, conditions)
    return this.#put(path, doc, conditions)
  }

  async create(path: NodePath, doc: Doc, conditions?: Omit<WriteConditions, 'expect' | 'patch'>): Promise<WriteResult | undefined> {
    if (await this.#holdsDocument(path)) return undefined
    await checkConditions(this, path, doc, conditions)
    return this.#put(path, doc, { ...conditions, expect: null })
  }

  async remove(path: NodePath, conditions: { expect?: string | null } = {}): Promise<{ existed: boolean; doc?: Doc }> {
    if (conditions.expect !== undefined) await checkVersion(this, path, conditions.expect)
    if (!(await this.exists(path))) return { existed: false }
    // A broken document goes all the same, as it does from a store.
    const doc = (await this.read(path).catch(() => undefined))?.doc
    const layer = this.#make(path)
    layer.doc = null
    layer.cleared = true
    layer.children.clear()
    this.ops.push(conditions.expect === undefined ? { kind: 'remove', path } : { kind: 'remove', path, expect: conditions.expect })
    this.changes.push({ type: 'delete', path, data: doc ?? null })
    return doc === undefined ? { existed: true } : { existed: true, doc }
  }

  async close(): Promise<void> {}

  async #put(path: NodePath, doc: Doc, conditions: WriteConditions | undefined): Promise<WriteResult> {
    const text = serializeDoc(doc)
    const etag = etagOf(text)
    const created = !(await this.#holdsDocument(path))
    this.#make(path).doc = { text, etag }
    // A copy: the caller may change its document after the write.
    const kept = JSON.parse(text) as Doc
    this.ops.push(conditions === undefined ? { kind: 'write', path, doc: kept } : { kind: 'write', path, doc: kept, conditions })
    this.changes.push(changeOfWrite(path, kept, conditions))
    return { created, etag }
  }

  /** Whether the node holds a document; a broken one in the base counts, as it does for `exists`. */
  async #holdsDocument(path: NodePath): Promise<boolean> {
    return (await this.read(path).catch(() => true)) !== undefined
  }

  /** The node's layer, if any, and whether a removal in the batch hides the base's document there. */
  #walk(path: NodePath): { layer: Layer | undefined; hidden: boolean } {
    let layer: Layer | undefined = this.#root
    let hidden = layer.cleared === true
    for (const segment of path) {
      layer = layer.children.get(segment)
      if (!layer) return { layer, hidden }
      hidden ||= layer.cleared === true
    }
    return { layer, hidden }
  }

  #make(path: NodePath): Layer {
    return madeNode<Layer>(this.#root, path, () => ({ children: new Map() }))
  }
}

/**
 * Checks `ops` in order against `base` as the ops before each leave it (a
 * failed condition throws its StoreError), and answers what to apply: the
 * ops that change something, and the changes they make.
 */
export async function planBatch(base: BaseReader, ops: readonly BatchOp[]): Promise<{ ops: BatchOp[]; changes: Omit<StoreChange, 'id'>[] }> {
  const staged = new StagedStore(base)
  for (const op of ops) {
    if (op.kind === 'write') await staged.write(op.path, op.doc, op.conditions)
    else await staged.remove(op.path, op.expect === undefined ? {} : { expect: op.expect })
  }
  return { ops: staged.ops, changes: staged.changes }
}

/** The claims (lib/store/node-locks.ts) a batch holds in a store of one process: every op's, all at once. */
export function batchClaims(ops: readonly BatchOp[]): Claim[] {
  return ops.flatMap((op): Claim[] => (op.kind === 'write' ? writeClaims(op.path, op.conditions) : [{ kind: 'remove', path: op.path }]))
}
