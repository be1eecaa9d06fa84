import { setImmediate as nextTurn } from 'node:timers/promises'

/** Longest the event loop is held by one loop between two yields, in milliseconds. */
const SLICE_MS = 2

/**
 * Lets work on a big collection (reading, filtering, sorting it) share the
 * event loop (README, "Listing queries"): awaiting what `pace()` returns
 * inside a loop gives other requests their turn once the loop has run for a
 * few milliseconds; otherwise it returns undefined and costs next to nothing.
 */
export function pacer(): (everyCall?: boolean) => Promise<void> | undefined {
  let sliceStart = performance.now()
  let calls = 0
  return (everyCall = false) => {
    // The clock is read every 32 calls (or each, for loops whose steps are big): cheap enough for a loop over small documents.
    if ((!everyCall && (++calls & 31) !== 0) || performance.now() - sliceStart < SLICE_MS) return undefined
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
