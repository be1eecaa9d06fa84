import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { EventBurst } from '../../../lib/store/fs/trusted-watch.ts'

// A burst of watch events in one turn of the loop may mean the kernel's queue overflowed
// (docs/storage.md, "When a GET trusts memory"): a store told so looks at its files again.

const tick = () => new Promise((resolve) => setImmediate(resolve))

/** The counts (1-based) at which `heard()` said burst, over `events` events in one turn. */
function burstsAt(burst: EventBurst, events: number): number[] {
  const at: number[] = []
  for (let count = 1; count <= events; count++) if (burst.heard()) at.push(count)
  return at
}

test('a quarter of the queue in one turn is a burst, and so is each further quarter', () => {
  assert.equal(burstsAt(new EventBurst(16), 13), [4, 8, 12])
})

test('the count starts again each turn of the loop', async () => {
  const burst = new EventBurst(16)
  assert.equal(burstsAt(burst, 3), [])
  await tick()
  assert.equal(burstsAt(burst, 3), [], 'three events a turn never make a burst of four')
  await tick()
  assert.equal(burstsAt(burst, 4), [4])
})

test('a queue too short to quarter makes every event a burst', () => {
  assert.equal(burstsAt(new EventBurst(2), 3), [1, 2, 3])
})

test.run()
