import { fsyncDirectory } from './atomic.ts'

/**
 * Flushes directories to disk, sharing one fsync among every write that
 * asks for the same directory at about the same time (a group commit).
 *
 * A flush covers only the changes made before it started, so a request that
 * arrives while one is running waits for the next; all requests that arrive
 * meanwhile share that next one. Under 100 concurrent writes to one
 * collection, the store folder and the collection's folder are flushed a
 * few times instead of a hundred.
 */
interface FlushState {
  /** The fsync in progress, if any. */
  running?: Promise<void>
  /** The fsync that starts when the running one ends, shared by everyone who asked meanwhile. */
  queued?: Promise<void>
}

export class DirectoryFlusher {
  readonly #states = new Map<string, FlushState>()
  readonly #fsync: (directory: string) => Promise<void>

  constructor(fsync: (directory: string) => Promise<void> = fsyncDirectory) {
    this.#fsync = fsync
  }

  flush(directory: string): Promise<void> {
    let state = this.#states.get(directory)
    if (state === undefined) this.#states.set(directory, (state = {}))
    if (state.running === undefined) return (state.running = this.#run(directory, state))
    const current = state
    current.queued ??= current.running!.catch(() => {}).then(() => {
      current.queued = undefined
      return (current.running = this.#run(directory, current))
    })
    return current.queued
  }

  #run(directory: string, state: FlushState): Promise<void> {
    return this.#fsync(directory).finally(() => {
      state.running = undefined
      if (state.queued === undefined) this.#states.delete(directory)
    })
  }
}
