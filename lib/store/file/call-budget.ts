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
/**
 * How long (ms) a store reads and writes through the thread pool after such
 * calls: a second the first time, twice as long each time they come back
 * within POOL_MOST_MS of the last stay's end, up to POOL_MOST_MS. A disk
 * that one call waited on once (writeback holding a folder for a few hundred
 * ms) costs a second of the pool's dearer calls, not ten; a disk every call
 * waits on (a cold cache) soon holds the store in the pool ten seconds at a
 * time, and then holds the event loop some 100 ms every ten seconds, when
 * the store tries the calling thread again.
 */
export const POOL_FIRST_MS = 1000
export const POOL_MOST_MS = 10_000

/**
 * The calls a store made on the calling thread, second by second. One slow
 * call may be the machine taking the processor away for a moment (a virtual
 * machine's does, several times a second, in any code); the disk shows as
 * slow calls that add up. Calls that are each quick but fill most of the
 * event loop's time are the kernel's own work (ext4 looking for a free inode
 * past many just deleted), which the pool's threads share with other cores.
 * Past either budget within a second, the store uses the pool for a while
 * (POOL_FIRST_MS).
 */
export class CallBudget {
  readonly #limits: SlowCalls
  readonly #now: () => number
  /** Until when (performance.now()) the store's calls go through the pool. */
  #poolUntil = -Infinity
  /** How long the next stay in the pool lasts. */
  #poolMs = POOL_FIRST_MS
  /** The time calls took since #since (performance.now()): the slow ones, and all. */
  #slowMs = 0
  #callsMs = 0
  #since = 0

  /** `now` is the clock (a test's own); performance.now() by default. */
  constructor(limits: SlowCalls, now: () => number = () => performance.now()) {
    this.#limits = limits
    this.#now = now
  }

  /** Whether calls go through the pool now. */
  get pooled(): boolean {
    return this.#now() < this.#poolUntil
  }

  /** A call (or a read's few) on the calling thread that took `ms`. */
  took(ms: number): void {
    const now = this.#now()
    // A call begun before the store went to the pool: the stay already answers for it.
    if (now < this.#poolUntil) return
    if (now - this.#since > 1000) {
      this.#since = now
      this.#slowMs = 0
      this.#callsMs = 0
    }
    this.#callsMs += ms
    if (ms > this.#limits.callMs) this.#slowMs += ms
    if (this.#slowMs > this.#limits.perSecondMs || this.#callsMs > this.#limits.busyPerSecondMs) this.#toPool(now)
  }

  #toPool(now: number): void {
    if (now - this.#poolUntil > POOL_MOST_MS) this.#poolMs = POOL_FIRST_MS
    this.#poolUntil = now + this.#poolMs
    this.#poolMs = Math.min(this.#poolMs * 2, POOL_MOST_MS)
    // The next second on the calling thread starts its own count.
    this.#since = -Infinity
  }
}
