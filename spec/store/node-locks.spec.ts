import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { NodeLocks, type Claim } from '../../lib/store/node-locks.ts'

// What each task holds and who waits for whom (lib/store/node-locks.ts): the rules every store of one process keeps.

/** Starts a task holding `claims` that runs until its `finish` is called; `started` says whether it runs yet. */
function hold(locks: NodeLocks, claims: Claim[]) {
  let finish!: () => void
  const state = { started: false, finish: () => finish(), done: undefined as unknown as Promise<void> }
  state.done = locks.run(claims, () => {
    state.started = true
    return new Promise<void>((resolve) => (finish = resolve))
  })
  return state
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

test('writes to one node run one at a time; writes to others run alongside', async () => {
  const locks = new NodeLocks()
  const first = hold(locks, [{ kind: 'write', path: ['posts', '1'] }])
  const same = hold(locks, [{ kind: 'write', path: ['posts', '1'] }])
  const other = hold(locks, [{ kind: 'write', path: ['posts', '2'] }])
  const parent = hold(locks, [{ kind: 'write', path: ['posts'] }])
  await turn()
  assert.ok(first.started && other.started && parent.started)
  assert.not.ok(same.started, 'the second write to the node waits')
  first.finish()
  await first.done
  await turn()
  assert.ok(same.started, 'and runs once the first is done')
  for (const task of [same, other, parent]) task.finish()
})

test('a removal waits for writes at and below its node and holds them back; writes elsewhere go on', async () => {
  const locks = new NodeLocks()
  const below = hold(locks, [{ kind: 'write', path: ['posts', '1', 'comments', '9'] }])
  const removal = hold(locks, [{ kind: 'remove', path: ['posts', '1'] }])
  await turn()
  assert.not.ok(removal.started, 'the removal waits for the write below it')
  below.finish()
  await below.done
  await turn()
  assert.ok(removal.started)
  const at = hold(locks, [{ kind: 'write', path: ['posts', '1'] }])
  const above = hold(locks, [{ kind: 'write', path: ['posts'] }])
  const elsewhere = hold(locks, [{ kind: 'write', path: ['posts', '2'] }])
  const kept = hold(locks, [{ kind: 'write', path: ['comments', '3'] }, { kind: 'keep', path: ['posts', '1', 'x'] }])
  const keptElsewhere = hold(locks, [{ kind: 'write', path: ['comments', '4'] }, { kind: 'keep', path: ['posts', '2'] }])
  await turn()
  assert.not.ok(at.started, 'a write to the removed node waits')
  assert.not.ok(above.started, 'a write on its way waits')
  assert.not.ok(kept.started, 'a write whose owner goes with the removal waits')
  assert.ok(elsewhere.started && keptElsewhere.started)
  removal.finish()
  await removal.done
  await turn()
  assert.ok(at.started && above.started && kept.started)
  for (const task of [at, above, elsewhere, kept, keptElsewhere]) task.finish()
})

test('claims on one collection\'s unique values run one at a time, whatever node each writes', async () => {
  const locks = new NodeLocks()
  const first = hold(locks, [{ kind: 'write', path: ['users', 'a'] }, { kind: 'unique', path: ['users'] }])
  const second = hold(locks, [{ kind: 'write', path: ['users', 'b'] }, { kind: 'unique', path: ['users'] }])
  const plain = hold(locks, [{ kind: 'write', path: ['users'] }])
  await turn()
  assert.ok(first.started && plain.started)
  assert.not.ok(second.started)
  first.finish()
  await first.done
  await turn()
  assert.ok(second.started)
  second.finish()
  plain.finish()
})

test('a write to a node where many others run waits only for the one it shares', async () => {
  const locks = new NodeLocks()
  const many = Array.from({ length: 200 }, (_, n) => hold(locks, [{ kind: 'write', path: ['posts', String(n)] }]))
  const late = hold(locks, [{ kind: 'write', path: ['posts', '150'] }])
  await turn()
  assert.ok(many.every((task) => task.started))
  assert.not.ok(late.started)
  many[150].finish()
  await many[150].done
  await turn()
  assert.ok(late.started)
  for (const task of [...many, late]) task.finish()
})

test.run()
