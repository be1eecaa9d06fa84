import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rm } from 'node:fs/promises'
import { FileStore, MemoryStore, StagedStore, type NodePath, type Store, type StoreChange } from '../../lib/store/index.ts'
import { makeTempDir } from '../support/helpers.ts'
import { isStoreError } from '../../lib/store/errors.ts'

/** What `operation` rejects with; undefined when it succeeds. */
function failure(operation: Promise<unknown>): Promise<unknown> {
  return operation.then(() => undefined, (error: unknown) => error)
}

// lib/store/staged.ts: a batch is staged once (docs/http-api.md, "Batches"). The store asks again only
// what the staged view asked of it, once each, and applies the view's ops and changes; staging them a
// second time would ask its questions once per op that needs them.

const stores: Array<[label: string, open: () => Promise<{ store: Store; dispose(): Promise<void> }>]> = [
  ['memory', async () => {
    const store = new MemoryStore()
    return { store, dispose: () => store.close() }
  }],
  ['folder', async () => {
    const dir = await makeTempDir()
    const store = await FileStore.open(dir)
    return { store, dispose: () => store.close().then(() => rm(dir, { recursive: true, force: true })) }
  }],
]
// The db.json store checks its batch in its tree, which no wrapper can count: the Store contract holds it (spec/store/json-file/contract.spec.ts).

/** Counts every read `store` answers, on the store object itself (so the store's own reads inside `batch` count too), and the distinct questions. */
function countReads(store: Store): { calls: number; questions: Set<string> } {
  const counted = { calls: 0, questions: new Set<string>() }
  const target = store as unknown as Record<string, (...args: unknown[]) => unknown>
  for (const name of ['read', 'children', 'exists', 'documentChildren', 'readText']) {
    const method = target[name]
    if (typeof method !== 'function') continue
    target[name] = function (this: unknown, ...args: unknown[]) {
      counted.calls++
      counted.questions.add(`${name} ${JSON.stringify(args[0] as NodePath)}`)
      return method.apply(store, args)
    }
  }
  return counted
}

for (const [label, open] of stores) {
  test(`${label}: a staged batch is applied without staging its ops again: the store asks at most the questions the view asked, once each`, async () => {
    const { store, dispose } = await open()
    try {
      for (let n = 0; n < 30; n++) await store.write(['users', `u${n}`], { name: `name${n}` })
      const staging = countReads(store)
      const view = new StagedStore(store)
      // Each write must find its name free among every user: ten ops, each reading the collection.
      for (let n = 0; n < 10; n++) await view.write(['users', `new${n}`], { name: `new${n}` }, { unique: { among: ['users'], field: 'name' } })
      await view.remove(['users', 'u0'])
      assert.ok(staging.calls > 10 * 30, `staging read the collection once per op (${staging.calls} reads)`)
      const asked = staging.questions.size
      staging.calls = 0
      const seen: StoreChange[] = []
      const stop = store.subscribe?.((change) => seen.push(change))
      await store.batch!(view.ops, view)
      assert.ok(staging.calls <= asked, `the batch asked ${staging.calls} questions of the store; the view asked ${asked} distinct ones`)
      assert.equal((await store.read(['users', 'new9']))?.doc, { name: 'new9' })
      assert.is(await store.read(['users', 'u0']), undefined)
      if (stop) {
        for (let tries = 0; tries < 100 && seen.length < 11; tries++) await new Promise((resolve) => setTimeout(resolve, 10))
        stop()
        assert.equal(seen.map(({ type, path, data }) => ({ type, path, data })), view.changes)
      }
    } finally {
      await dispose()
    }
  })
}

test('a store given ops without their staged view checks each op itself, as before', async () => {
  const store = new MemoryStore()
  const view = new StagedStore(store)
  await view.write(['c', 'x'], { n: 1 }, { expect: null })
  await store.write(['c', 'x'], { n: 2 })
  assert.ok(isStoreError(await failure(store.batch([...view.ops])), 'version-changed'))
  assert.equal((await store.read(['c', 'x']))?.doc, { n: 2 })
})

test('a batch whose store changed while it was staged (two answers to one question) is refused, even when the store is back as first read', async () => {
  const store = new MemoryStore()
  await store.write(['c', 'x'], { n: 1 })
  const view = new StagedStore(store)
  const first = await view.read(['c', 'x'])
  const written = await store.write(['c', 'x'], { n: 2 })
  await view.write(['c', 'x'], { n: 3 }, { expect: written.etag })
  await store.write(['c', 'x'], { n: 1 })
  assert.is((await store.read(['c', 'x']))?.etag, first?.etag)
  assert.ok(isStoreError(await failure(store.batch(view.ops, view)), 'version-changed'))
  assert.equal((await store.read(['c', 'x']))?.doc, { n: 1 })
})

test.run()
