import type { Doc, NodePath, StoreChange, WriteConditions } from './store.ts'

/** How the change feed reports a write: a `patch` when the write says it applied one, else a `put` of the document. */
export function changeOfWrite(path: NodePath, doc: Doc, conditions: WriteConditions | undefined): Omit<StoreChange, 'id'> {
  return conditions?.patch !== undefined ? { type: 'patch', path, data: conditions.patch } : { type: 'put', path, data: doc }
}

/**
 * The change feed of a store in one process (Store.subscribe): ids are one
 * more per change, starting from the time the store opened in microseconds,
 * so they keep growing across restarts.
 */
export class ChangeFeed {
  #last = Date.now() * 1000
  readonly #listeners = new Set<(change: StoreChange) => void>()

  get last(): number {
    return this.#last
  }

  subscribe(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  emit(change: Omit<StoreChange, 'id'>): void {
    const numbered: StoreChange = { id: ++this.#last, ...change }
    for (const listener of this.#listeners) listener(numbered)
  }
}
