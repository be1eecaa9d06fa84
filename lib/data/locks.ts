/**
 * The locks that keep writes from interleaving inside one process. Writes to
 * one node run one at a time (`KeyedLock`); a subtree removal runs alone,
 * while writes to distinct nodes run side by side (`TreeLock`).
 */

export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>()

  /** Runs `task` once every earlier task with the same key has settled. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key)
    let release!: () => void
    const done = new Promise<void>((resolve) => (release = resolve))
    const tail = previous ? previous.then(() => done) : done
    this.tails.set(key, tail)
    if (previous) await previous
    try {
      return await task()
    } finally {
      release()
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}

/** A readers-writer lock: many shared holders, or one exclusive holder. Waiting exclusives go first. */
export class TreeLock {
  private shared = 0
  private exclusive = false
  private readonly waiting: Array<{ exclusive: boolean; start: () => void }> = []

  async runShared<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire(false)
    try {
      return await task()
    } finally {
      this.shared--
      this.wake()
    }
  }

  async runExclusive<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire(true)
    try {
      return await task()
    } finally {
      this.exclusive = false
      this.wake()
    }
  }

  private acquire(exclusive: boolean): Promise<void> {
    if (this.waiting.length === 0 && this.canStart(exclusive)) {
      this.take(exclusive)
      return Promise.resolve()
    }
    return new Promise((start) => this.waiting.push({ exclusive, start }))
  }

  private canStart(exclusive: boolean): boolean {
    return exclusive ? !this.exclusive && this.shared === 0 : !this.exclusive
  }

  private take(exclusive: boolean): void {
    if (exclusive) this.exclusive = true
    else this.shared++
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.canStart(this.waiting[0].exclusive)) {
      const next = this.waiting.shift()!
      this.take(next.exclusive)
      next.start()
    }
  }
}
