import { checkConditions, checkVersion, writeClaims } from './conditions.ts'
import { changeOfWrite } from './feed.ts'
import { StoreError } from './errors.ts'
import type { Claim } from './node-locks.ts'
import { etagOf, serializeDoc } from './serialize.ts'
import { compareIds, idInsertionPoint, type BaseReader, type BatchOp, type Doc, type NodePath, type StagedBatch, type Store, type StoreChange, type StoredDoc, type WriteConditions, type WriteResult } from './store.ts'
import { madeNode } from './node-tree.ts'
import { HttpError } from '../http-error.ts'

/*
 * A batch's view of a store (docs/http-api.md, "Batches"): the store as it is,
 * with the batch's writes and removals laid over it and nothing of them
 * stored. The requests of a batch run against it, each seeing the ones before;
 * what they did is kept as BatchOps and changes, and so is every answer the
 * view had from the store (ReadRecord). A store's `batch` (batchPlan) then
 * asks the store those questions again inside its critical section: when
 * every answer is still the same, each op's conditions hold as they did when
 * it was staged, and the ops and changes are applied as they are, staged
 * once; when one differs, the store refuses and the batch runs again.
 */

export type { BaseReader }

/** One node of the overlay: `doc` undefined leaves the base's, null is "no document"; `cleared` hides the base's whole subtree. */
interface Layer {
  doc?: { text: string; etag: string } | null
  cleared?: boolean
  readonly children: Map<string, Layer>
}

/** What a batch's documents may come to in all, in multiples of the body limit (docs/http-api.md, "Batches"). */
export const BATCH_TEXT_FACTOR = 16

export class StagedStore implements Store, StagedBatch {
  /** The store, through the record of what the view asked it. */
  readonly #base: ReadRecord
  readonly #root: Layer = { children: new Map() }
  /** What was done, in order: a removal of nothing is left out. */
  readonly ops: BatchOp[] = []
  /** The changes the ops make, as the change feed will report them. */
  readonly changes: Omit<StoreChange, 'id'>[] = []
  /**
   * The children holding a document of each node `documentChildren` was asked
   * about, in id order, listed once and then kept as the batch writes and
   * removes: each POST of a batch asks for the greatest (lib/data/ids.ts), and
   * a batch of them must not list its collection again each time.
   */
  readonly #documentNames = new Map<string, { path: NodePath; names: string[] }>()

  /** Characters of the documents the batch has written so far, held to `#maxText` (docs/http-api.md, "Batches"). */
  #text = 0
  readonly #maxText: number

  /** `maxText`: the most characters of documents the batch may write in all; a write past it is a `413`. */
  constructor(base: BaseReader, maxText = Infinity) {
    this.#base = new ReadRecord(base)
    this.#maxText = maxText
  }

  /** StagedBatch: refuses, as 'version-changed', unless `base` answers every question the view asked of its store as it did then. */
  confirm(base: BaseReader): Promise<void> {
    return this.#base.confirm(base)
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

  async documentChildren(path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined> {
    const names = await this.#documentNamesOf(path)
    return names && { names: names.slice(start, end), total: names.length }
  }

  async exists(path: NodePath): Promise<boolean> {
    const { layer, hidden } = this.#walk(path)
    if (!layer && !hidden) return this.#base.exists(path)
    if (await this.#holdsDocument(path)) return true
    // A child the batch made is enough, without listing the base's.
    for (const name of layer?.children.keys() ?? []) if (await this.exists([...path, name])) return true
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
    for (const known of this.#documentNames.values()) {
      if (known.path.length === path.length - 1 && known.path.every((segment, at) => segment === path[at])) removeName(known.names, path[path.length - 1])
      else if (known.path.length >= path.length && path.every((segment, at) => segment === known.path[at])) known.names.length = 0
    }
    this.ops.push(conditions.expect === undefined ? { kind: 'remove', path } : { kind: 'remove', path, expect: conditions.expect })
    this.changes.push({ type: 'delete', path, data: doc ?? null })
    return doc === undefined ? { existed: true } : { existed: true, doc }
  }

  async close(): Promise<void> {}

  async #put(path: NodePath, doc: Doc, conditions: WriteConditions | undefined): Promise<WriteResult> {
    const text = serializeDoc(doc)
    // Each document is within its own bound already (the body limit, a patch's); this bounds what the batch holds of them together.
    this.#text += text.length
    if (this.#text > this.#maxText) {
      throw new HttpError(413, `The batch's documents would come to more than ${this.#maxText} characters in all (${BATCH_TEXT_FACTOR} times --max-body); send it as smaller batches.`)
    }
    const etag = etagOf(text)
    const created = !(await this.#holdsDocument(path))
    this.#make(path).doc = { text, etag }
    if (created && path.length > 0) {
      const known = this.#documentNames.get(JSON.stringify(path.slice(0, -1)))
      if (known) insertName(known.names, path[path.length - 1])
    }
    // A copy: the caller may change its document after the write.
    const kept = JSON.parse(text) as Doc
    this.ops.push(conditions === undefined ? { kind: 'write', path, doc: kept } : { kind: 'write', path, doc: kept, conditions })
    this.changes.push(changeOfWrite(path, kept, conditions))
    return { created, etag }
  }

  /** The names documentChildren answers from: listed on the first question, then kept by #put and remove. */
  async #documentNamesOf(path: NodePath): Promise<string[] | undefined> {
    const key = JSON.stringify(path)
    const known = this.#documentNames.get(key)
    if (known) return known.names.length > 0 || (await this.exists(path)) ? known.names : undefined
    if (!(await this.exists(path))) return undefined
    const { layer, hidden } = this.#walk(path)
    const names = hidden ? [] : [...((await this.#base.documentNames(path)) ?? [])]
    for (const name of layer?.children.keys() ?? []) {
      if (await this.#holdsDocument([...path, name])) insertName(names, name)
      else removeName(names, name)
    }
    this.#documentNames.set(key, { path, names })
    return names
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

/** Puts `name` into id-ordered `names` unless it is there: at the end, the usual place of a new id, in O(1). */
function insertName(names: string[], name: string): void {
  const at = namePosition(names, name)
  if (names[at] !== name) names.splice(at, 0, name)
}

function removeName(names: string[], name: string): void {
  const at = namePosition(names, name)
  if (names[at] === name) names.splice(at, 1)
}

/** The first position in id-ordered `names` at which `name` could stand. */
function namePosition(names: readonly string[], name: string): number {
  // A new id most often goes last: no search for it.
  if (names.length === 0 || compareIds(names[names.length - 1], name) < 0) return names.length
  return idInsertionPoint(names, name)
}

/** One question a staged view asks its store, and the answer it had, as text: a version, a list of names… */
type Question = 'read' | 'children' | 'exists' | 'names'

/**
 * The store under a staged view, answering as it does and noting the first
 * answer to each question (a node's document's version or its absence,
 * whether a node exists, a node's children, those holding a document): what
 * the batch relied on. A second answer unlike the first means the store
 * changed while the batch was staged: it cannot be applied as staged.
 */
class ReadRecord {
  readonly #base: BaseReader
  readonly #answers = new Map<string, { question: Question; path: NodePath; answer: string }>()
  #torn = false

  constructor(base: BaseReader) {
    this.#base = base
  }

  read(path: NodePath): Promise<StoredDoc | undefined> {
    return this.#note('read', path, this.#base.read(path), (stored) => stored?.etag ?? '-')
  }

  children(path: NodePath): Promise<string[] | undefined> {
    return this.#note('children', path, this.#base.children(path), listed)
  }

  exists(path: NodePath): Promise<boolean> {
    return this.#note('exists', path, this.#base.exists(path), String)
  }

  /** The names of the node's children holding a document, in id order; undefined when it does not exist. */
  documentNames(path: NodePath): Promise<string[] | undefined> {
    return this.#note('names', path, documentNamesOf(this.#base, path), listed)
  }

  /** Asks `base` each question again, in the order first asked; the first answer unlike the one noted refuses the batch. */
  async confirm(base: BaseReader): Promise<void> {
    if (this.#torn) throw new StoreError('version-changed', [], 'the store changed while the batch was staged')
    for (const { question, path, answer } of this.#answers.values()) {
      if ((await answerOf(base, question, path)) !== answer) throw new StoreError('version-changed', path, 'the store changed after the batch was staged')
    }
  }

  async #note<T>(question: Question, path: NodePath, asked: Promise<T>, text: (answer: T) => string): Promise<T> {
    let answer: string
    try {
      const result = await asked
      answer = text(result)
      return result
    } catch (error) {
      answer = failure(error)
      throw error
    } finally {
      const key = `${question} ${JSON.stringify(path)}`
      const noted = this.#answers.get(key)
      if (!noted) this.#answers.set(key, { question, path, answer: answer! })
      else if (noted.answer !== answer!) this.#torn = true
    }
  }
}

/** The answer to `question` as ReadRecord notes it, a failure included. */
async function answerOf(base: BaseReader, question: Question, path: NodePath): Promise<string> {
  try {
    if (question === 'read') return (await base.read(path))?.etag ?? '-'
    if (question === 'exists') return String(await base.exists(path))
    return listed(question === 'children' ? await base.children(path) : await documentNamesOf(base, path))
  } catch (error) {
    return failure(error)
  }
}

function listed(names: readonly string[] | undefined): string {
  return names === undefined ? '-' : JSON.stringify(names)
}

/** A failed answer (a broken document's 'bad-document'…), noted as its kind. */
function failure(error: unknown): string {
  return `!${error instanceof StoreError ? error.kind : 'error'}`
}

/** The node's children holding a document, as Store.documentChildren lists them; from `children` and `read` where the store has no documentChildren (a broken document counts, as for `exists`). */
async function documentNamesOf(base: BaseReader, path: NodePath): Promise<string[] | undefined> {
  if (base.documentChildren) return (await base.documentChildren(path, 0, undefined))?.names
  const children = await base.children(path)
  if (!children) return undefined
  const names: string[] = []
  for (const name of children) if ((await base.read([...path, name]).catch(() => true)) !== undefined) names.push(name)
  return names
}

/**
 * What a store's `batch` applies, worked out inside its critical section
 * against `base`, its own reads there: when `staged` is the staged view
 * that made these very ops, its ops and changes as they are, once every
 * answer it had from the store is still so (else 'version-changed'); for ops
 * made any other way, planBatch's.
 */
export async function batchPlan(base: BaseReader, ops: readonly BatchOp[], staged: StagedBatch | undefined): Promise<{ ops: readonly BatchOp[]; changes: readonly Omit<StoreChange, 'id'>[] }> {
  if (staged === undefined || staged.ops !== ops) return planBatch(base, ops)
  await staged.confirm(base)
  return { ops: staged.ops, changes: staged.changes }
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
