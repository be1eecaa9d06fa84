/*
 * When a store's calls to the file system belong on Node's thread pool
 * rather than on the event loop's thread (docs/speed.md, "A read the cache
 * cannot answer stays on the event loop's thread").
 */

/**
 * When calls on the calling thread belong on the pool: slower than `callMs`
 * each, more than `perSecondMs` in all within a second (they wait on the
 * disk); or all calls more than `busyPerSecondMs` within a second (the
 * kernel's work fills the event loop).
 */
export interface SlowCalls {
  callMs: number
  perSecondMs: number
  busyPerSecondMs: number
}

/**
 * Calls that fill four fifths of the event loop's time: those of `POST`s alone, as fast as they
 * come, fill three fifths of it (the JavaScript and HTTP around them take the rest), and handing
 * them to the pool then costs each half as much CPU again for nothing (docs/speed.md). ext4's
 * search for a free inode after many deletions makes each call cost hundreds of µs: that fills it.
 *
 * A read or a write's call on the calling thread that took longer than 1 ms
 * may have waited on the disk, or only lost the processor for a moment,
 * which a pool would not have spared the event loop either: a 2-core virtual
 * machine takes it from a loop that makes no call at all some three times a
 * second, and a loop of writes, with the file system's journal, sees 20–65 ms
 * of such calls in a second (docs/speed.md). A disk that the calls wait on
 * (a cold cache, writes held back while dirty pages go out) costs 1–200 ms
 * a call, call after call: a tenth of the event loop's time is soon past.
 */
export const SLOW_CALLS: SlowCalls = { callMs: 1, perSecondMs: 100, busyPerSecondMs: 800 }
/** How long (ms) a store reads and writes through the thread pool after such calls. */
const POOL_AFTER_SLOW_MS = 10_000

/**
 * The calls a store made on the calling thread, second by second. One slow
 * call may be the machine taking the processor away for a moment (a virtual
 * machine's does, several times a second, in any code); the disk shows as
 * slow calls that add up. Calls that are each quick but fill most of the
 * event loop's time are the kernel's own work (ext4 looking for a free inode
 * past many just deleted), which the pool's threads share with other cores.
 * Past either budget within a second, the store uses the pool for a while.
 */
export class CallBudget {
  readonly #limits: SlowCalls
  /** Until when (performance.now()) the store's calls go through the pool. */
  #poolUntil = 0
  /** The time calls took since #since (performance.now()): the slow ones, and all. */
  #slowMs = 0
  #callsMs = 0
  #since = 0

  constructor(limits: SlowCalls) {
    this.#limits = limits
  }

  /** Whether calls go through the pool now. */
  get pooled(): boolean {
    return performance.now() < this.#poolUntil
  }

  /** A call (or a read's few) on the calling thread that took `ms`. */
  took(ms: number): void {
    const now = performance.now()
    if (now - this.#since > 1000) {
      this.#since = now
      this.#slowMs = 0
      this.#callsMs = 0
    }
    this.#callsMs += ms
    if (ms > this.#limits.callMs) this.#slowMs += ms
    if (this.#slowMs > this.#limits.perSecondMs || this.#callsMs > this.#limits.busyPerSecondMs) this.#poolUntil = now + POOL_AFTER_SLOW_MS
  }
}
