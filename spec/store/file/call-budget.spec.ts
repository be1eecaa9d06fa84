import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CallBudget, POOL_FIRST_MS, POOL_MOST_MS, SLOW_CALLS } from '../../../lib/store/file/call-budget.ts'

// How long a store stays in the thread pool after calls that waited on the disk
// (lib/store/file/call-budget.ts; docs/speed.md, "A read the cache cannot answer stays on the
// event loop's thread"), on a clock the test moves.

function budgetAt(start = 0) {
  const clock = { now: start }
  return { budget: new CallBudget(SLOW_CALLS, () => clock.now), clock }
}

/** How long, from now, the budget keeps the store in the pool (ms, to the nearest one). */
function stay(budget: CallBudget, clock: { now: number }): number {
  const from = clock.now
  while (budget.pooled) clock.now += 1
  return clock.now - from
}

test('quick calls, and one slow call within the budget, keep the store on the calling thread', () => {
  const { budget, clock } = budgetAt()
  for (let call = 0; call < 1000; call++) {
    budget.took(0.05)
    clock.now += 0.5
  }
  budget.took(SLOW_CALLS.perSecondMs - 1)
  assert.is(budget.pooled, false)
})

test('one call that waited past the budget sends the store to the pool for a second, then back', () => {
  const { budget, clock } = budgetAt(5000)
  budget.took(372)
  assert.is(budget.pooled, true)
  assert.is(stay(budget, clock), POOL_FIRST_MS)
  assert.is(budget.pooled, false)
})

test('calls that keep waiting double the stay each time, up to its most', () => {
  const { budget, clock } = budgetAt()
  const stays: number[] = []
  for (let time = 0; time < 7; time++) {
    clock.now += 200
    budget.took(SLOW_CALLS.perSecondMs + 1)
    stays.push(stay(budget, clock))
  }
  assert.equal(stays, [1000, 2000, 4000, 8000, 10_000, 10_000, 10_000])
  assert.is(POOL_MOST_MS, 10_000)
})

test('a calm longer than the longest stay starts again at a second', () => {
  const { budget, clock } = budgetAt()
  for (let time = 0; time < 3; time++) {
    budget.took(SLOW_CALLS.perSecondMs + 1)
    stay(budget, clock)
  }
  clock.now += POOL_MOST_MS - 100
  budget.took(SLOW_CALLS.perSecondMs + 1)
  assert.is(stay(budget, clock), 8000, 'within the calm: twice the last stay')
  clock.now += POOL_MOST_MS + 1
  budget.took(SLOW_CALLS.perSecondMs + 1)
  assert.is(stay(budget, clock), POOL_FIRST_MS, 'after it: a second')
})

test('calls timed while the store is in the pool neither lengthen the stay nor count after it', () => {
  const { budget, clock } = budgetAt()
  budget.took(SLOW_CALLS.perSecondMs + 1)
  clock.now += 500
  budget.took(SLOW_CALLS.perSecondMs + 1)
  assert.is(stay(budget, clock), POOL_FIRST_MS - 500)
  // The second after the stay counts its own calls: one slow call within the budget stays.
  budget.took(SLOW_CALLS.perSecondMs - 1)
  assert.is(budget.pooled, false)
})

test('calls that each are quick but fill four fifths of a second send the store to the pool', () => {
  const { budget, clock } = budgetAt()
  for (let call = 0; call < 900 && !budget.pooled; call++) {
    budget.took(0.9)
    clock.now += 1
  }
  assert.is(budget.pooled, true)
  assert.ok(clock.now > SLOW_CALLS.busyPerSecondMs / 0.9 - 2 && clock.now < 1000, `after ${clock.now} ms`)
})

test.run()
