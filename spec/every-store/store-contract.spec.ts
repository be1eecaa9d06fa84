import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rm } from 'node:fs/promises'
import { storeContract, type OpenStore } from '../../lib/store/contract.ts'
import { FileStore, MemoryStore } from '../../lib/store/index.ts'
import { makeTempDir, openTestStore, testStoreKind } from '../support/helpers.ts'

// The Store contract (docs/library.md, "The Store interface"), exported as `restdir/store-contract`, held on
// the store of this pass (spec/run.mjs): a FileStore, a MemoryStore that waits inside its writes as a
// disk does (so its races interleave), and a PostgresStore; the file pass adds a FileStore with sync,
// one that makes its calls through the thread pool (after the first, as after slow ones), and a
// MemoryStore as it is.
const stores: Array<[label: string, open: OpenStore]> = [[testStoreKind, openTestStore]]
if (testStoreKind === 'file') {
  stores.push(['file with sync', async () => {
    const dir = await makeTempDir()
    const store = await FileStore.open(dir, { sync: true })
    return { store, dispose: () => store.close().then(() => rm(dir, { recursive: true, force: true })) }
  }])
  // Writes on the calling thread are the default; these go through the pool from the first slow call on.
  stores.push(['file through the thread pool', async () => {
    const dir = await makeTempDir()
    const store = await FileStore.open(dir, { slowCalls: { callMs: 0, perSecondMs: 0, busyPerSecondMs: 10_000 } })
    return { store, dispose: () => store.close().then(() => rm(dir, { recursive: true, force: true })) }
  }])
  stores.push(['memory, never waiting', async () => {
    const store = new MemoryStore()
    return { store, dispose: () => store.close() }
  }])
}

for (const [label, open] of stores) {
  for (const check of storeContract(open)) test(`${label}: ${check.name}`, check.run)
}

test('the bundled stores give the same strong ETags: 22 base64url characters of the document\'s hash', async () => {
  const { store, dispose } = await openTestStore()
  try {
    const { etag } = await store.write(['e'], { n: 1 })
    assert.match(etag, /^"[A-Za-z0-9_-]{22}"$/)
    assert.is(etag, '"5AmL0siYWMM4oqplZ3r5zM"', 'the SHA-1 of the pretty JSON text, as the file holds it')
  } finally {
    await dispose()
  }
})

test.run()
