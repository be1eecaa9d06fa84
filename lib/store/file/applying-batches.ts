import { StoreError } from '../errors.ts'
import type { NodeLocks } from '../node-locks.ts'
import { batchClaims } from '../staged.ts'
import type { BatchOp, NodePath, StoreChange } from '../store.ts'

/** A batch whose journal is on disk: its ops, in order, and the changes the feed reports once they are all in place. */
export interface JournaledBatch {
  readonly ops: readonly BatchOp[]
  readonly journal: string
  readonly changes: readonly Omit<StoreChange, 'id'>[]
}

/** What the store lends the batches: its claims, the placing of a batch's files and the dropping of its journal, and its change feed. */
export interface BatchPlacing {
  readonly locks: NodeLocks
  place(ops: readonly BatchOp[], journal: string): Promise<void>
  emit(change: Omit<StoreChange, 'id'>): void
}

/** How often an unfinished batch is tried again. */
const RETRY_MS = 1000

/**
 * The batches whose files the folder store is placing, by the nodes they
 * change (docs/storage.md, "Batches"). Once a read has seen one change of a
 * batch, later reads see all of them: a read of a node a batch is changing,
 * or of one above or below it, waits until the batch's files are all placed.
 *
 * A batch whose files could not all be placed, or whose journal could not be
 * dropped (a full or failing disk), is unfinished: its journal is on disk, so
 * it is completed, never rolled back. Until it is, every read and write of a
 * node on one chain with one it changes is refused at once (a write let
 * through would be overwritten when the journal is applied again), and it is
 * tried again about once a second, under its claims, from its first op.
 */
export class ApplyingBatches {
  readonly #applying = new Set<{ paths: readonly NodePath[]; done: Promise<void> }>()
  readonly #unfinished = new Set<JournaledBatch & { paths: readonly NodePath[]; fault: unknown }>()
  readonly #placing: BatchPlacing
  #timer: NodeJS.Timeout | undefined
  #retrying: Promise<void> | undefined
  #stopped = false

  constructor(placing: BatchPlacing) {
    this.#placing = placing
  }

  /** True while no batch is being placed or left unfinished: no read waits for one. */
  get idle(): boolean {
    return this.#applying.size === 0 && this.#unfinished.size === 0
  }

  /**
   * What a read of `path` waits for; undefined (one check of two sets' sizes) without a batch under way.
   * Throws a 'batch-unfinished' StoreError for a node of an unfinished batch, also after the wait.
   */
  settled(path: NodePath): Promise<unknown> | undefined {
    if (this.#applying.size === 0 && this.#unfinished.size === 0) return undefined
    this.refuseUnfinished(path)
    const waits = [...this.#applying].filter((batch) => batch.paths.some((changed) => onOneChain(changed, path))).map((batch) => batch.done)
    return waits.length === 0 ? undefined : Promise.all(waits).then(() => this.refuseUnfinished(path))
  }

  /** Throws a 'batch-unfinished' StoreError when an unfinished batch changes `path` or a node above or below it. */
  refuseUnfinished(path: NodePath): void {
    if (this.#unfinished.size === 0) return
    for (const batch of this.#unfinished) {
      if (batch.paths.some((changed) => onOneChain(changed, path))) throw new StoreError('batch-unfinished', path, faultOf(batch.fault))
    }
  }

  /**
   * Places a journaled batch's files and drops its journal, with reads of its
   * nodes waiting, then reports its changes. When that fails, the batch is
   * kept unfinished (see above), and its answer is a 'batch-interrupted'
   * StoreError naming the fault (its cause).
   */
  async run(batch: JournaledBatch): Promise<void> {
    const paths = batch.ops.map((op) => op.path)
    let placed!: () => void
    const applying = { paths, done: new Promise<void>((resolve) => (placed = resolve)) }
    this.#applying.add(applying)
    try {
      await this.#placing.place(batch.ops, batch.journal)
    } catch (error) {
      // Kept before the claims go and the waiting reads wake: none of them may see the batch half placed.
      this.#unfinished.add({ ...batch, paths, fault: error })
      this.#retryLater()
      const interrupted = new StoreError('batch-interrupted', error instanceof StoreError ? error.path : paths[0], faultOf(error))
      interrupted.cause = error
      throw interrupted
    } finally {
      this.#applying.delete(applying)
      placed()
    }
    for (const change of batch.changes) this.#placing.emit(change)
  }

  /** Stops the retries and waits for one under way: a journal left unfinished is completed at the next start (journal.ts). */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#retrying
  }

  #retryLater(): void {
    if (this.#timer !== undefined || this.#stopped) return
    this.#timer = setInterval(() => {
      this.#retrying ??= this.#retry().finally(() => (this.#retrying = undefined))
    }, RETRY_MS)
    // The retries never keep the process alive on their own.
    this.#timer.unref()
  }

  /** Tries each unfinished batch once, oldest first; each that is completed is served again and reports its changes. */
  async #retry(): Promise<void> {
    for (const batch of [...this.#unfinished]) {
      if (this.#stopped) return
      try {
        // Under the batch's claims: no write of its nodes runs meanwhile (and each is refused after).
        await this.#placing.locks.run(batchClaims(batch.ops), async () => {
          await this.#placing.place(batch.ops, batch.journal)
          this.#unfinished.delete(batch)
        })
      } catch (error) {
        batch.fault = error
        continue
      }
      for (const change of batch.changes) this.#placing.emit(change)
    }
    if (this.#unfinished.size === 0) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }
}

/** The fault that keeps a batch unfinished, in words for a client. */
function faultOf(error: unknown): string {
  const kind = error instanceof StoreError ? error.kind : undefined
  if (kind === 'disk-full') return 'the disk is full'
  if (kind === 'read-only') return 'the store folder cannot be written'
  if (kind === 'out-of-descriptors') return 'the server ran out of file descriptors'
  if (kind === 'store-gone') return 'the store folder was deleted or moved away'
  return 'the disk failed'
}

/** Whether one of the two nodes is the other or lies below it. */
function onOneChain(a: NodePath, b: NodePath): boolean {
  const length = Math.min(a.length, b.length)
  for (let index = 0; index < length; index++) if (a[index] !== b[index]) return false
  return true
}
