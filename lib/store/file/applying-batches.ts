import type { NodePath } from '../store.ts'

/**
 * The batches whose files the folder store is placing, by the nodes they
 * change (docs/storage.md, "Batches"). Once a read has seen one change of a
 * batch, later reads see all of them: a read of a node a batch is changing,
 * or of one above or below it, waits until the batch's files are all placed.
 */
export class ApplyingBatches {
  readonly #applying = new Set<{ paths: readonly NodePath[]; done: Promise<void> }>()

  /** What a read of `path` waits for; undefined (one check of a set's size) without a batch under way. */
  settled(path: NodePath): Promise<unknown> | undefined {
    if (this.#applying.size === 0) return undefined
    const waits = [...this.#applying].filter((batch) => batch.paths.some((changed) => onOneChain(changed, path))).map((batch) => batch.done)
    return waits.length === 0 ? undefined : Promise.all(waits)
  }

  /** Runs `place`, the placing of a batch's files changing `paths`, with reads of them waiting for it. */
  async run<T>(paths: readonly NodePath[], place: () => Promise<T>): Promise<T> {
    let placed!: () => void
    const applying = { paths, done: new Promise<void>((resolve) => (placed = resolve)) }
    this.#applying.add(applying)
    try {
      return await place()
    } finally {
      this.#applying.delete(applying)
      placed()
    }
  }
}

/** Whether one of the two nodes is the other or lies below it. */
function onOneChain(a: NodePath, b: NodePath): boolean {
  const length = Math.min(a.length, b.length)
  for (let index = 0; index < length; index++) if (a[index] !== b[index]) return false
  return true
}
