/**
 * Lets many operations in at once (`shared`: the store's writes, which
 * order themselves through the MemoryStore's own locks) or one alone
 * (`exclusive`: making the store what its file says, after a hand edit or a
 * failed file write). An exclusive task waiting keeps new shared ones out,
 * so a stream of writes never starves it.
 */
export class ExclusiveGate {
  #shared = 0
  /** Settles when the exclusive task running or waiting is done. */
  #exclusive: Promise<void> | undefined
  #drained: (() => void) | undefined

  async shared<T>(task: () => Promise<T>): Promise<T> {
    while (this.#exclusive) await this.#exclusive
    this.#shared++
    try {
      return await task()
    } finally {
      if (--this.#shared === 0) this.#drained?.()
    }
  }

  async exclusive<T>(task: () => Promise<T>): Promise<T> {
    while (this.#exclusive) await this.#exclusive
    let release!: () => void
    this.#exclusive = new Promise<void>((resolve) => (release = resolve))
    try {
      if (this.#shared > 0) await new Promise<void>((resolve) => (this.#drained = resolve))
      this.#drained = undefined
      return await task()
    } finally {
      this.#exclusive = undefined
      release()
    }
  }
}
