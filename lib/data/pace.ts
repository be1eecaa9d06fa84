import { setImmediate as nextTurn } from 'node:timers/promises'

/** Longest one request's work holds the event loop between two yields, in milliseconds (docs/http-api.md, "Listing queries"). */
export const SLICE_MS = 2

/**
 * Work is counted in characters scanned, copied or parsed: about what 32 KiB
 * of text costs (0.03–0.15 ms) is done between two looks at the clock, so a
 * look costs next to nothing and the slice is overrun by little.
 */
const CLOCK_EVERY = 32 * 1024

/** What any step costs at least, so that a loop over small items looks at the clock every 128 of them. */
const STEP_COST = 256

/** The cost to give a step whose size is unknown but may be large (a batch of reads): the clock is read after it. */
export const HEAVY_STEP = CLOCK_EVERY

/**
 * Spends work on the event loop: returns a promise to await when the slice
 * is used up, after which other requests have had their turn; otherwise
 * undefined (await only then: a loop over small steps stays synchronous).
 */
export type Pace = (cost?: number) => Promise<void> | undefined

/**
 * The budget of one request's work on the main thread (docs/http-api.md, "Listing queries"): every loop over documents, and every scan of a long text, spends
 * what it does here, in characters, so one huge document counts as what it
 * is, not as one item of a list; once the work since the last yield took
 * SLICE_MS, other requests get their turn.
 */
export function pacer(): Pace {
  let sliceStart = performance.now()
  let spent = 0
  return (cost = 0) => {
    spent += cost + STEP_COST
    if (spent < CLOCK_EVERY) return undefined
    spent = 0
    if (performance.now() - sliceStart < SLICE_MS) return undefined
    return nextTurn().then(() => {
      sliceStart = performance.now()
    })
  }
}

/**
 * Runs at most `width` tasks at once, the others waiting their turn in order:
 * big listings take turns, so that each turn of the event loop serves one of
 * them and every other request, not all of them at once.
 */
export class Gate {
  #running = 0
  readonly #waiting: (() => void)[] = []
  constructor(readonly width: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.width) await new Promise<void>((resolve) => this.#waiting.push(resolve))
    else this.#running++
    try {
      return await task()
    } finally {
      const next = this.#waiting.shift()
      if (next) next()
      else this.#running--
    }
  }
}
