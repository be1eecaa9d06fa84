import assert from 'node:assert/strict'
import { isStoreError, type StoreErrorKind } from './errors.ts'
import { compareIds, type Doc, type Store, type StoreChange } from './store.ts'

/*
 * The Store contract as checks anyone can run (README, "The Store
 * interface"): each check opens a fresh store, does what a store must keep
 * exact, concurrency included, and throws (node:assert) when the store breaks
 * it. A store of one's own is held to it with any test runner:
 *
 *   import { storeContract } from 'restdir/store-contract'
 *   for (const check of storeContract(openMyStore)) test(check.name, check.run)
 */

/** Opens a fresh, empty store; `dispose` closes it and removes what it kept. */
export type OpenStore = () => Promise<{ store: Store; dispose(): Promise<void> }>

export interface ContractCheck {
  /** What the store must do, as a sentence. */
  name: string
  run(): Promise<void>
}

/** Every check of the contract, the optional methods' included when the store has them. */
export function storeContract(open: OpenStore): ContractCheck[] {
  return checks.map(([name, body]) => ({
    name,
    async run() {
      const { store, dispose } = await open()
      try {
        await body(store)
      } finally {
        await dispose()
      }
    },
  }))
}

type Check = [name: string, body: (store: Store) => Promise<void>]

const checks: Check[] = [
  ['a written document reads back the same, under a strong ETag that changes with it', async (store) => {
    const first = await store.write(['notes', 'a'], { text: 'hi', n: 1 })
    assert.equal(first.created, true)
    assert.match(first.etag, /^"[^"]*"$/, 'a strong ETag is a quoted string without W/')
    assert.deepEqual(await store.read(['notes', 'a']), { doc: { text: 'hi', n: 1 }, etag: first.etag })
    const second = await store.write(['notes', 'a'], { text: 'hello', n: 1 })
    assert.equal(second.created, false)
    assert.notEqual(second.etag, first.etag)
    const again = await store.write(['notes', 'a'], { text: 'hello', n: 1 })
    assert.equal(again.etag, second.etag, 'the same document has the same ETag')
    assert.equal(await store.read(['notes', 'b']), undefined)
  }],

  ['a write makes its ancestors, which exist without a document', async (store) => {
    await store.write(['a', 'b', 'c'], { deep: true })
    assert.equal(await store.exists(['a']), true)
    assert.equal(await store.exists(['a', 'b']), true)
    assert.equal(await store.read(['a', 'b']), undefined)
    assert.equal(await store.exists(['z']), false)
    assert.deepEqual(await store.children(['a']), ['b'])
    assert.equal(await store.children(['z']), undefined)
  }],

  ['children come in id order, and documentChildren pages those that hold a document', async (store) => {
    const names = ['b', '10', 'a', '2', '0abc', 'B']
    for (const name of names) await store.write(['c', name], { name })
    await store.write(['c', 'only-children', 'x'], {})
    const expected = [...names, 'only-children'].sort(compareIds)
    assert.deepEqual(await store.children(['c']), expected)
    assert.deepEqual(expected.slice(0, 3), ['2', '10', '0abc'], 'whole numbers first, by value')
    if (!store.documentChildren) return
    const holding = expected.filter((name) => name !== 'only-children')
    assert.deepEqual(await store.documentChildren(['c'], 0, undefined), { names: holding, total: holding.length })
    assert.deepEqual(await store.documentChildren(['c'], 1, 3), { names: holding.slice(1, 3), total: holding.length })
    assert.equal(await store.documentChildren(['none'], 0, 10), undefined)
  }],

  ['remove takes a node and its subtree, prunes ancestors left empty, and says what it removed', async (store) => {
    await store.write(['r', 'x'], { keep: false })
    await store.write(['r', 'x', 'sub', 'y'], {})
    await store.write(['s', 't', 'u'], {})
    assert.deepEqual(await store.remove(['r', 'x']), { existed: true, doc: { keep: false } })
    assert.equal(await store.exists(['r', 'x', 'sub', 'y']), false)
    assert.equal(await store.exists(['r']), false, 'an ancestor left with nothing is pruned')
    assert.deepEqual(await store.remove(['s', 't']), { existed: true })
    assert.equal(await store.exists(['s']), false)
    assert.deepEqual(await store.remove(['r', 'x']), { existed: false })
  }],

  ['create writes only where no document is', async (store) => {
    const created = await store.create(['k', '1'], { v: 1 })
    assert.equal(created?.created, true)
    assert.equal(await store.create(['k', '1'], { v: 2 }), undefined)
    assert.deepEqual((await store.read(['k', '1']))?.doc, { v: 1 })
  }],

  ['of concurrent creates of one node, exactly one lands', async (store) => {
    const outcomes = await Promise.all(range(12).map((index) => store.create(['k', 'same'], { index })))
    const landed = outcomes.filter((outcome) => outcome !== undefined)
    assert.equal(landed.length, 1)
    assert.equal((await store.read(['k', 'same']))?.etag, landed[0]!.etag)
  }],

  ['a write with expect lands only while the node is at that version', async (store) => {
    const { etag } = await store.write(['v', '1'], { n: 1 })
    await refused(store.write(['v', '1'], { n: 2 }, { expect: '"stale"' }), 'version-changed')
    await refused(store.write(['v', '1'], { n: 2 }, { expect: null }), 'version-changed')
    assert.deepEqual(await store.read(['v', '1']), { doc: { n: 1 }, etag }, 'a refused write stores nothing')
    const next = await store.write(['v', '1'], { n: 2 }, { expect: etag })
    assert.equal(next.created, false)
    await refused(store.write(['v', '2'], { n: 1 }, { expect: etag }), 'version-changed')
    assert.equal(await store.exists(['v', '2']), false)
    assert.equal((await store.write(['v', '2'], { n: 1 }, { expect: null })).created, true)
  }],

  ['of concurrent writes expecting one version, exactly one lands', async (store) => {
    const { etag } = await store.write(['v', 'race'], { n: 0 })
    const outcomes = await Promise.allSettled(range(20).map((n) => store.write(['v', 'race'], { n: n + 1 }, { expect: etag })))
    const landed = outcomes.flatMap((outcome, n) => (outcome.status === 'fulfilled' ? [n + 1] : []))
    assert.equal(landed.length, 1, 'one write wins')
    for (const outcome of outcomes) if (outcome.status === 'rejected') assertKind(outcome.reason, 'version-changed')
    assert.deepEqual((await store.read(['v', 'race']))?.doc, { n: landed[0] })
  }],

  ['remove with expect removes only while the node is at that version', async (store) => {
    const { etag } = await store.write(['d', '1'], { n: 1 })
    await refused(store.remove(['d', '1'], { expect: '"stale"' }), 'version-changed')
    await refused(store.remove(['d', '1'], { expect: null }), 'version-changed')
    assert.equal((await store.read(['d', '1']))?.etag, etag)
    assert.deepEqual(await store.remove(['d', '1'], { expect: etag }), { existed: true, doc: { n: 1 } })
  }],

  ['a write with an owner is refused while the owner holds no document', async (store) => {
    await refused(store.write(['o', '1', 'item', 'a'], { n: 1 }, { owner: ['o', '1'] }), 'owner-missing')
    assert.equal(await store.exists(['o']), false, 'a refused write makes no folder either')
    await refused(store.create(['o', '1', 'item', 'b'], { n: 1 }, { owner: ['o', '1'] }), 'owner-missing')
    await store.write(['o', '1'], { owner: true })
    assert.equal((await store.write(['o', '1', 'item', 'a'], { n: 1 }, { owner: ['o', '1'] })).created, true)
    assert.equal((await store.create(['o', '1', 'item', 'b'], { n: 1 }, { owner: ['o', '1'] }))?.created, true)
  }],

  ['writes under an owner racing its removal leave no orphan', async (store) => {
    await store.write(['o', '2'], { owner: true })
    const settled: Promise<unknown>[] = []
    // Writes go on starting, a millisecond apart, before, during and after the removal.
    for (let index = 0; index < 30; index++) {
      if (index === 5) settled.push(store.remove(['o', '2']))
      const write = index % 2 === 0
        ? store.write(['o', '2', 'item', `w${index}`], { index }, { owner: ['o', '2'] })
        : store.create(['o', '2', 'item', `c${index}`], { index }, { owner: ['o', '2'] })
      settled.push(write.catch((error: unknown) => assertKind(error, 'owner-missing')))
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    await Promise.all(settled)
    assert.equal(await store.exists(['o', '2']), false, 'nothing was written after its owner went')
  }],

  ['a unique field is refused while another document holds its value, naming the holder', async (store) => {
    await store.write(['u', 'ann'], { username: 'ann' })
    const unique = { among: ['u'], field: 'username' }
    await refused(store.write(['u', 'bob'], { username: 'ann' }, { unique }), 'taken', 'ann')
    await refused(store.create(['u', 'cat'], { username: 'ann' }, { unique }), 'taken', 'ann')
    assert.equal(await store.exists(['u', 'bob']), false)
    await store.write(['u', 'ann'], { username: 'ann', more: 1 }, { unique })
    await store.write(['u', 'num'], { username: 1 }, { unique })
    await store.write(['u', 'text'], { username: '1' }, { unique })
    await store.write(['u', 'none'], { other: 'ann' }, { unique })
  }],

  ['of concurrent claims of one unique value, exactly one lands', async (store) => {
    const unique = { among: ['u'], field: 'username' }
    const outcomes = await Promise.allSettled(range(12).map((index) => store.write(['u', `n${index}`], { username: 'same' }, { unique })))
    const winners = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [`n${index}`] : []))
    assert.equal(winners.length, 1, 'one claim wins')
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') assertKind(outcome.reason, 'taken', winners[0])
    }
  }],

  ['a removal does not hold up a write to a node outside its subtree', async (store) => {
    for (let start = 0; start < 400; start += 50) {
      await Promise.all(range(50).map((index) => store.write(['big', String(start + index), 'x'], { index })))
    }
    let removed = false
    let writtenWhileRemoving = false
    const removal = store.remove(['big']).then(() => (removed = true))
    await pause()
    // A store whose removal is over before the write starts shows nothing here either way.
    const removing = !removed
    const write = store.write(['elsewhere'], { n: 1 }).then(() => (writtenWhileRemoving = !removed))
    await Promise.all([removal, write])
    if (removing) assert.ok(writtenWhileRemoving, 'the write waited for the removal of an unrelated subtree')
    assert.equal(await store.exists(['big']), false)
  }],

  ['readText, where the store has it, is the compact JSON of read, with its ETag', async (store) => {
    if (!store.readText) return
    const doc: Doc = { b: 1, a: [1, { c: 'é\u2028' }], z: null }
    await store.write(['t'], doc)
    const stored = await store.read(['t'])
    assert.deepEqual(await store.readText(['t']), { json: JSON.stringify(stored!.doc), etag: stored!.etag })
    assert.equal(JSON.stringify(stored!.doc), JSON.stringify(doc), 'key order is kept')
    assert.equal(await store.readText(['none']), undefined)
  }],

  ['subscribe, where the store has it, reports every change in order, one id more each', async (store) => {
    if (!store.subscribe) return
    assert.ok(store.lastChangeId, 'a store with subscribe has lastChangeId')
    const before = await store.lastChangeId()
    const seen: StoreChange[] = []
    const stop = store.subscribe((change) => seen.push(change))
    await store.write(['f', '1'], { n: 1 })
    await store.write(['f', '1'], { n: 2 }, { patch: { n: 2 } })
    await store.create(['f', '2'], { n: 1 })
    await store.remove(['f', '1'])
    await store.remove(['nothing'])
    await refused(store.write(['f', '2'], {}, { expect: null }), 'version-changed')
    await eventually(() => seen.length >= 4)
    stop()
    await store.write(['f', '3'], {})
    assert.deepEqual(seen.map(({ type, path, data }) => ({ type, path, data })), [
      { type: 'put', path: ['f', '1'], data: { n: 1 } },
      { type: 'patch', path: ['f', '1'], data: { n: 2 } },
      { type: 'put', path: ['f', '2'], data: { n: 1 } },
      { type: 'delete', path: ['f', '1'], data: { n: 2 } },
    ])
    assert.deepEqual(seen.map((change) => change.id), [before + 1, before + 2, before + 3, before + 4])
    assert.equal(await store.lastChangeId(), before + 5, 'lastChangeId counts changes made while no one listened')
  }],
]

function range(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index)
}

/** A few turns of the event loop, so that operations started before are under way. */
function pause(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

async function eventually(condition: () => boolean): Promise<void> {
  for (let tries = 0; tries < 100 && !condition(); tries++) await new Promise((resolve) => setTimeout(resolve, 10))
}

async function refused(operation: Promise<unknown>, kind: StoreErrorKind, reason?: string): Promise<void> {
  await assert.rejects(operation, (error: unknown) => assertKind(error, kind, reason))
}

function assertKind(error: unknown, kind: StoreErrorKind, reason?: string): true {
  assert.ok(isStoreError(error), `a StoreError, not ${String(error)}`)
  assert.equal(error.kind, kind)
  if (reason !== undefined) assert.equal(error.reason, reason)
  return true
}
