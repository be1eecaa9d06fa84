import assert from 'node:assert/strict'
import { isStoreError, type StoreErrorKind } from './errors.ts'
import { StagedStore } from './staged.ts'
import type { Doc, Store, StoreChange } from './store.ts'

/*
 * The Store contract as checks anyone can run (docs/library.md, "The Store interface"): each check opens a fresh store, does what a store must keep
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
  ['read gives undefined for a node that holds no document', async (store) => {
    assert.deepEqual(await store.read(['user', 'nobody']), undefined)
  }],

  ['a written document reads back equal, with the strong ETag the write reported', async (store) => {
    const first = await store.write(['user', 'abc'], { id: 'abc', name: 'Ann', tags: ['x'], nested: { n: 1 } })
    assert.ok(first.created)
    assert.match(first.etag, /^"[^"]*"$/, 'a strong ETag is a quoted string without W/')
    const stored = await store.read(['user', 'abc'])
    assert.deepEqual(stored, { doc: { id: 'abc', name: 'Ann', tags: ['x'], nested: { n: 1 } }, etag: first.etag })
    const second = await store.write(['user', 'abc'], { id: 'abc', name: 'Bob' })
    assert.ok(!second.created)
    assert.deepEqual((await store.read(['user', 'abc']))?.doc, { id: 'abc', name: 'Bob' })
  }],

  ['the ETag changes when the document changes and stays when it does not', async (store) => {
    const one = await store.write(['e'], { n: 1 })
    const two = await store.write(['e'], { n: 2 })
    const again = await store.write(['e'], { n: 2 })
    assert.notEqual(one.etag, two.etag)
    assert.deepEqual(again.etag, two.etag)
    assert.deepEqual((await store.read(['e']))?.etag, two.etag)
  }],

  ['changing a document that was read or written does not change the stored one', async (store) => {
    const doc: Doc = { list: [1] }
    await store.write(['m'], doc)
    ;(doc.list as number[]).push(2)
    const read = await store.read(['m'])
    ;(read?.doc.list as number[]).push(3)
    assert.deepEqual((await store.read(['m']))?.doc, { list: [1] })
  }],

  ['create writes where no document is, and never replaces one', async (store) => {
    const created = await store.create(['c'], { v: 1 })
    assert.ok(created?.created)
    assert.deepEqual(await store.create(['c'], { v: 2 }), undefined)
    assert.deepEqual((await store.read(['c']))?.doc, { v: 1 })
  }],

  ['of 50 concurrent creates of one node exactly one wins, and its document is stored', async (store) => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, n) => store.create(['race'], { n })))
    const winners = results.flatMap((result, n) => (result ? [n] : []))
    assert.deepEqual(winners.length, 1)
    assert.deepEqual((await store.read(['race']))?.doc, { n: winners[0] })
  }],

  ['many concurrent writes to distinct nodes all land', async (store) => {
    const names = Array.from({ length: 100 }, (_, n) => `n${String(n).padStart(3, '0')}`)
    await Promise.all(names.map((name) => store.write(['bulk', name], { name })))
    assert.deepEqual(await store.children(['bulk']), names)
    for (const name of names) assert.deepEqual((await store.read(['bulk', name]))?.doc, { name })
  }],

  ['writing a node makes its ancestors exist without documents of their own', async (store) => {
    await store.write(['a', 'b', 'c'], { deep: true })
    assert.ok(await store.exists(['a']))
    assert.ok(await store.exists(['a', 'b']))
    assert.deepEqual(await store.read(['a']), undefined)
    assert.deepEqual(await store.children(['a']), ['b'])
    assert.deepEqual(await store.children([]), ['a'])
  }],

  ['exists is false for nothing and true for a document or children', async (store) => {
    assert.ok(!await store.exists(['x']))
    await store.write(['x'], {})
    assert.ok(await store.exists(['x']))
    assert.ok(!await store.exists(['x', 'y']))
  }],

  ['children lists whole numbers by value, then other names in code-unit order, [] for a leaf and undefined for a missing node', async (store) => {
    const names = ['b', 'a', 'B', 'é', 'Z', 'a b', '10', '9', '07', '-1', '100000000000000000001', '😀', '\uffff', '_', '~']
    for (const name of names) await store.write(['list', name], { name })
    const order = ['9', '10', '100000000000000000001', '-1', '07', 'B', 'Z', '_', 'a', 'a b', 'b', '~', 'é', '😀', '\uffff']
    const listed = inStoreOrder(store, names, order)
    assert.deepEqual(await store.children(['list']), listed)
    assert.deepEqual((await store.documentChildren?.(['list'], 1, 3))?.names, listed.slice(1, 3))
    assert.deepEqual(await store.children(['list', 'a']), [])
    assert.deepEqual(await store.children(['missing']), undefined)
  }],

  ['remove takes the document and its whole subtree and answers what it removed', async (store) => {
    await store.write(['u', '1'], { id: '1' })
    await store.write(['u', '1', 'x', 'y'], { id: 'y' })
    await store.write(['u', '2'], { id: '2' })
    assert.deepEqual(await store.remove(['u', '1']), { existed: true, doc: { id: '1' } })
    assert.deepEqual(await store.read(['u', '1']), undefined)
    assert.deepEqual(await store.read(['u', '1', 'x', 'y']), undefined)
    assert.ok(!await store.exists(['u', '1']))
    assert.deepEqual(await store.children(['u']), ['2'])
  }],

  ['remove of a node with children but no document reports it existed, without a document', async (store) => {
    await store.write(['p', 'q'], {})
    assert.deepEqual(await store.remove(['p']), { existed: true })
    assert.ok(!await store.exists(['p', 'q']))
  }],

  ['remove of nothing reports that nothing existed', async (store) => {
    assert.deepEqual(await store.remove(['ghost']), { existed: false })
    await store.write(['real'], {})
    assert.deepEqual(await store.remove(['real', 'ghost']), { existed: false })
  }],

  ['removing the last node below prunes ancestors left empty, and only those', async (store) => {
    await store.write(['keep'], { kept: true })
    await store.write(['keep', 'a', 'b', 'c'], {})
    await store.write(['gone', 'a', 'b'], {})
    await store.write(['side', 'a', 'b'], {})
    await store.write(['side', 'c'], {})
    await store.remove(['keep', 'a', 'b', 'c'])
    await store.remove(['gone', 'a', 'b'])
    await store.remove(['side', 'a', 'b'])
    assert.ok(!await store.exists(['keep', 'a']))
    assert.deepEqual(await store.children(['keep']), [])
    assert.ok(!await store.exists(['gone']))
    assert.deepEqual(await store.children(['side']), ['c'])
    assert.deepEqual(await store.children([]), ['keep', 'side'])
  }],

  ['removing the root empties the store', async (store) => {
    await store.write([], { root: true })
    await store.write(['a'], {})
    assert.deepEqual(await store.remove([]), { existed: true, doc: { root: true } })
    assert.ok(!await store.exists([]))
    assert.deepEqual(await store.children([]), undefined)
  }],

  ['segments such as .., a/b, CON, Ab and aB are distinct nodes', async (store) => {
    const names = ['..', '.', 'a/b', 'a%2Fb', 'CON', 'con', 'con.txt', 'Ab', 'aB', 'ab', 'café', 'cafe\u0301', '', ' ']
    for (const name of names) await store.write(['odd', name], { name })
    assert.deepEqual(await store.children(['odd']), inStoreOrder(store, names, [...names].sort()))
    for (const name of names) assert.deepEqual((await store.read(['odd', name]))?.doc, { name })
  }],

  ['very long segments that share their first characters are distinct nodes, listed by their full names', async (store) => {
    const long = 'L'.repeat(300)
    const names = [long + '1', long + '2', '😀'.repeat(80)]
    for (const name of names) await store.write(['long', name, 'leaf'], { name })
    assert.deepEqual(await store.children(['long']), inStoreOrder(store, names, [...names].sort()))
    for (const name of names) assert.deepEqual((await store.read(['long', name, 'leaf']))?.doc, { name })
    await store.remove(['long', names[0], 'leaf'])
    assert.deepEqual(await store.children(['long']), [names[1], names[2]].sort())
  }],

  ['every string is a segment of its own, listed in code-unit order: NUL, U+0001, lone surrogates, U+E000 to U+FFFF and characters beyond', async (store) => {
    const names = ['a\u0000', 'a', 'a\u0001', 'a\u0002', '\ud800', '\udfff', '\ud83d\ude00', '\ue000', '\uffff', '\ud7ff', '\u0000', 'a/b', 'a\u0001\u0001']
    for (const name of names) await store.write(['units', name], { name })
    assert.deepEqual(await store.children(['units']), inStoreOrder(store, names, [...names].sort()))
    for (const name of names) assert.deepEqual((await store.read(['units', name]))?.doc, { name })
    assert.deepEqual(await store.remove(['units', '\ud800']), { existed: true, doc: { name: '\ud800' } })
    assert.deepEqual(await store.read(['units', '\ud800']), undefined)
    assert.deepEqual((await store.read(['units', '\ud83d\ude00']))?.doc, { name: '\ud83d\ude00' })
  }],

  ['a node named "a/b" and the node b below a are distinct, with their own children, and removing one keeps the other', async (store) => {
    await store.write(['s', 'a/b', 'x'], { under: 'a/b' })
    await store.write(['s', 'a', 'b', 'y'], { under: 'a, b' })
    await store.write(['s', 'a', 'b/y'], { under: 'a' })
    assert.deepEqual(await store.children(['s', 'a/b']), ['x'])
    assert.deepEqual(await store.children(['s', 'a', 'b']), ['y'])
    assert.deepEqual(await store.children(['s', 'a']), ['b', 'b/y'])
    assert.deepEqual(await store.remove(['s', 'a']), { existed: true })
    assert.deepEqual((await store.read(['s', 'a/b', 'x']))?.doc, { under: 'a/b' })
    assert.deepEqual(await store.children(['s']), ['a/b'])
  }],

  ['documentChildren gives a window of the children holding a document, in order, and how many there are', async (store) => {
    if (!store.documentChildren) return
    for (const name of ['d', 'b', 'a', 'c', 'E']) await store.write(['w', name], { name })
    await store.write(['w', 'only-children', 'x'], {})
    const order = inStoreOrder(store, ['d', 'b', 'a', 'c', 'E'], ['E', 'a', 'b', 'c', 'd'])
    assert.deepEqual(await store.documentChildren(['w'], 1, 3), { names: order.slice(1, 3), total: 5 })
    assert.deepEqual(await store.documentChildren(['w'], 3, undefined), { names: order.slice(3), total: 5 })
    assert.deepEqual(await store.documentChildren(['w'], 9, 12), { names: [], total: 5 })
    assert.deepEqual(await store.documentChildren(['w', 'only-children'], 0, 10), { names: ['x'], total: 1 })
    assert.deepEqual(await store.documentChildren(['w', 'only-children', 'x'], 0, 10), { names: [], total: 0 })
    assert.deepEqual(await store.documentChildren(['nothing'], 0, 10), undefined)
  }],

  ['a write reports created for a node that only had children, and replaced once it holds a document', async (store) => {
    await store.write(['parent', 'child'], {})
    assert.ok((await store.write(['parent'], { v: 1 })).created)
    assert.ok(!(await store.write(['parent'], { v: 2 })).created)
    assert.ok((await store.create(['other', 'child'], {}))?.created)
    assert.ok((await store.create(['other'], { v: 1 }))?.created)
    assert.deepEqual(await store.create(['other'], { v: 2 }), undefined)
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
    // A removal may end before the write has gone its way (a store that removes fast, on a quiet
    // machine): that proves nothing either way, so the race is run again, up to five times, each with
    // a subtree twice as large, so that its removal takes longer than one write. A store whose removal
    // holds up every write never once lets the write land first.
    const outcomes: string[][] = []
    for (let attempt = 0, size = 400; attempt < 5; attempt++, size *= 2) {
      for (let start = 0; start < size; start += 50) {
        await Promise.all(range(50).map((index) => store.write(['big', String(start + index), 'x'], { index })))
      }
      // Which landed first: as the change feed tells, where the store has one (it reports each change as it lands), else as the calls return.
      const landed: string[] = []
      const stop = store.subscribe?.((change) => landed.push(change.type))
      const removal = store.remove(['big']).then(() => stop || landed.push('delete'))
      await pause()
      // A store whose removal is over before the write starts shows nothing here either way.
      const removing = !landed.includes('delete')
      const write = store.write(['elsewhere'], { n: attempt }).then(() => stop || landed.push('put'))
      await Promise.all([removal, write])
      stop?.()
      assert.equal(await store.exists(['big']), false)
      if (!removing) continue
      outcomes.push(landed)
      if (landed[0] === 'put') return
    }
    assert.equal(outcomes.length, 0, `the write waited for the removal of an unrelated subtree every time: ${JSON.stringify(outcomes)}`)
  }],

  ['readText, where the store has it, is the compact JSON of read, with its ETag', async (store) => {
    if (!store.readText) return
    const doc: Doc = { b: 1, a: [1, { c: 'é\u2028' }], z: null }
    await store.write(['t'], doc)
    const stored = await store.read(['t'])
    const text = await store.readText(['t'])
    assert.deepEqual({ json: text?.json, etag: text?.etag }, { json: JSON.stringify(stored!.doc), etag: stored!.etag })
    assert.equal(JSON.stringify(stored!.doc), JSON.stringify(doc), 'key order is kept')
    assert.equal(await store.readText(['none']), undefined)
  }],

  ['readTextNow, where the store has it, answers as readText, at once or not, and follows each write', async (store) => {
    if (!store.readTextNow) return
    const textOf = async (path: string[]) => {
      const text = await store.readTextNow!(path)
      return text && { json: text.json, etag: text.etag }
    }
    for (const doc of [{ n: 1 }, { n: 2, list: ['é'] }]) {
      await store.write(['t'], doc)
      for (let read = 0; read < 3; read++) {
        const expected = await store.readText!(['t'])
        assert.deepEqual(await textOf(['t']), { json: JSON.stringify(doc), etag: expected!.etag })
      }
    }
    assert.equal(await store.readTextNow(['none']), undefined)
    await store.remove(['t'])
    assert.equal(await store.readTextNow(['t']), undefined)
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

  ['batch, where the store has it, applies its ops in order, each seeing the ones before, and reports their changes after all of them, one id more each', async (store) => {
    if (!store.batch) return
    const kept = await store.write(['bt', 'kept'], { n: 1 })
    await store.write(['bt', 'gone', 'below'], { n: 0 })
    const seen: StoreChange[] = []
    const stop = store.subscribe?.((change) => seen.push(change))
    const before = await store.lastChangeId?.()
    await store.batch([
      { kind: 'write', path: ['bt', 'new'], doc: { n: 1 }, conditions: { expect: null } },
      { kind: 'write', path: ['bt', 'new'], doc: { n: 2 }, conditions: { patch: { n: 2 } } },
      { kind: 'write', path: ['bt', 'kept'], doc: { n: 2 }, conditions: { expect: kept.etag } },
      { kind: 'remove', path: ['bt', 'gone'] },
      { kind: 'write', path: ['bt', 'gone', 'again'], doc: { n: 3 }, conditions: { owner: ['bt', 'new'] } },
      { kind: 'remove', path: ['bt', 'nothing'] },
    ])
    assert.deepEqual((await store.read(['bt', 'new']))?.doc, { n: 2 })
    assert.deepEqual((await store.read(['bt', 'kept']))?.doc, { n: 2 })
    assert.deepEqual(await store.read(['bt', 'gone', 'below']), undefined)
    assert.deepEqual(await store.children(['bt', 'gone']), ['again'])
    if (!stop) return
    await eventually(() => seen.length >= 5)
    stop()
    assert.deepEqual(seen.map(({ type, path, data }) => ({ type, path, data })), [
      { type: 'put', path: ['bt', 'new'], data: { n: 1 } },
      { type: 'patch', path: ['bt', 'new'], data: { n: 2 } },
      { type: 'put', path: ['bt', 'kept'], data: { n: 2 } },
      { type: 'delete', path: ['bt', 'gone'], data: null },
      { type: 'put', path: ['bt', 'gone', 'again'], data: { n: 3 } },
    ])
    assert.deepEqual(seen.map((change) => change.id), [1, 2, 3, 4, 5].map((more) => before! + more))
  }],

  ['batch, where the store has it, stores nothing and reports nothing when any op\'s condition fails, whatever its position', async (store) => {
    if (!store.batch) return
    const kept = await store.write(['bf', 'kept'], { n: 1 })
    await store.write(['bf', 'user', 'u1'], { name: 'ann' })
    const good = [
      { kind: 'write', path: ['bf', 'new'], doc: { n: 1 } },
      { kind: 'write', path: ['bf', 'kept'], doc: { n: 2 }, conditions: { expect: kept.etag } },
      { kind: 'remove', path: ['bf', 'user', 'u1'] },
    ] as const
    const failing = [
      [{ kind: 'write', path: ['bf', 'kept'], doc: { n: 9 }, conditions: { expect: '"stale"' } }, 'version-changed'],
      [{ kind: 'write', path: ['bf', 'orphan'], doc: {}, conditions: { owner: ['bf', 'nobody'] } }, 'owner-missing'],
      [{ kind: 'write', path: ['bf', 'user', 'u2'], doc: { name: 'bob' }, conditions: { unique: { among: ['bf', 'user'], field: 'name' } } }, 'taken'],
      [{ kind: 'remove', path: ['bf', 'kept'], expect: null }, 'version-changed'],
    ] as const
    const seen: StoreChange[] = []
    const stop = store.subscribe?.((change) => seen.push(change))
    for (const [op, kind] of failing) {
      for (let position = 0; position <= good.length; position++) {
        // 'taken' needs a holder: a user named bob written earlier in the same batch.
        const holder = kind === 'taken' ? [{ kind: 'write', path: ['bf', 'user', 'u3'], doc: { name: 'bob' } } as const] : []
        const ops = [...holder, ...good.slice(0, position), op, ...good.slice(position)]
        await refused(store.batch(ops), kind)
        assert.deepEqual((await store.read(['bf', 'kept']))?.doc, { n: 1 })
        assert.deepEqual(await store.read(['bf', 'new']), undefined)
        assert.deepEqual(await store.read(['bf', 'user', 'u3']), undefined)
        assert.deepEqual((await store.read(['bf', 'user', 'u1']))?.doc, { name: 'ann' })
      }
    }
    await pause()
    stop?.()
    assert.deepEqual(seen, [], 'a refused batch reports no change')
  }],

  ['batch, given the staged view that made its ops, refuses them and stores nothing when a write landed meanwhile on what an op relied on', async (store) => {
    if (!store.batch) return
    await store.write(['bs', 'kept'], { n: 1 })
    await store.write(['bs', 'user', 'ann'], { name: 'ann' })
    // Each: what the view stages, then what another client does before the store applies it.
    const races: Array<[stage: (view: StagedStore) => Promise<unknown>, meanwhile: () => Promise<unknown>]> = [
      [async (view) => view.write(['bs', 'kept'], { n: 2 }, { expect: (await store.read(['bs', 'kept']))?.etag }), () => store.write(['bs', 'kept'], { n: 3 })],
      [(view) => view.write(['bs', 'user', 'u2'], { name: 'bob' }, { unique: { among: ['bs', 'user'], field: 'name' } }), () => store.write(['bs', 'user', 'u3'], { name: 'bob' })],
      [(view) => view.write(['bs', 'list', 'l1'], { n: 1 }, { owner: ['bs', 'user', 'ann'] }), () => store.remove(['bs', 'user', 'ann'])],
      [async (view) => view.remove(['bs', 'kept'], { expect: (await store.read(['bs', 'kept']))?.etag }), () => store.write(['bs', 'kept'], { n: 4 })],
    ]
    for (const [stage, meanwhile] of races) {
      const view = new StagedStore(store)
      await stage(view)
      const before = await snapshot(store, ['bs'])
      await meanwhile()
      const after = await snapshot(store, ['bs'])
      assert.notDeepEqual(after, before)
      await assert.rejects(store.batch(view.ops, view), (error: unknown) => isStoreError(error) && ['version-changed', 'owner-missing', 'taken'].includes(error.kind))
      assert.deepEqual(await snapshot(store, ['bs']), after, 'a refused batch stores nothing')
    }
  }],
]

/** Every document below `path`, by path. */
async function snapshot(store: Store, path: readonly string[]): Promise<Record<string, Doc>> {
  const found: Record<string, Doc> = {}
  const stored = await store.read(path)
  if (stored) found[path.join('/')] = stored.doc
  for (const name of (await store.children(path)) ?? []) Object.assign(found, await snapshot(store, [...path, name]))
  return found
}

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

/**
 * The order a store lists children written in the order `written`: id order
 * (`idOrder`), or, for a store listed in its file's order (Store.fileOrder),
 * the order they were written in.
 */
function inStoreOrder(store: Store, written: readonly string[], idOrder: readonly string[]): readonly string[] {
  return store.fileOrder ? written : idOrder
}
