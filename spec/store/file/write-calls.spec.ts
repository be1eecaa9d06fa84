import { test } from 'uvu'
import * as assert from 'uvu/assert'
import fs, { readdirSync, readFileSync, rmSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { FileStore, type FileStoreOptions } from '../../../lib/store/file/file-store.ts'
import { makeTempDir } from '../../support/helpers.ts'

// Where a write's file-system calls run (lib/store/file/file-store.ts, #placeFile, and call-budget.ts;
// docs/speed.md, "A new document's calls stay on the event loop's thread"): on the calling thread
// while calls are quick, but for the rename that replaces a file; through the thread pool with
// --sync, for that rename, or for a while after calls that waited or filled the event loop. A write on the
// calling thread lands within the turn of the event loop it began in; one through the pool lets the
// loop turn while each call runs, so a callback queued with setImmediate runs before it lands.

/** Whether the event loop turned while `write` ran. */
async function turnedDuring(write: () => Promise<unknown>): Promise<boolean> {
  let turned = false
  const immediate = setImmediate(() => (turned = true))
  await write()
  clearImmediate(immediate)
  return turned
}

async function withStore(options: FileStoreOptions, run: (store: FileStore, dir: string) => Promise<void>) {
  const dir = await makeTempDir('restdir-write-calls-')
  const store = await FileStore.open(dir, options)
  try {
    await run(store, dir)
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

test('without --sync, a write that replaces no file lands on the calling thread; a replacement goes through the pool', async () => {
  await withStore({}, async (store, dir) => {
    assert.is(await turnedDuring(() => store.create(['posts', 'p1'], { title: 'first' })), false, 'a create in a new collection')
    assert.is(await turnedDuring(() => store.create(['posts', 'p2'], { title: 'second' })), false, 'a create beside it')
    assert.is(await turnedDuring(() => store.write(['profile'], { name: 'n' })), false, 'a new document at the top')
    // ext4 starts writing the new file out when a rename replaces one: that rename waits on the disk.
    assert.is(await turnedDuring(() => store.write(['posts', 'p1'], { title: 'again' })), true, 'a replacement')
    assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p1', '@.json'), 'utf8')), { title: 'again' })
    assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p2', '@.json'), 'utf8')), { title: 'second' })
    assert.equal(readdirSync(join(dir, 'posts', 'p1')), ['@.json'], 'no temp file is left')
  })
})

test('a replacement writes its temporary file on the calling thread and renames it through the pool', async () => {
  // The calling thread's calls are counted through node:fs's own exports.
  const { openSync, renameSync } = fs
  const onThread = { open: 0, rename: 0 }
  fs.openSync = ((...args: Parameters<typeof openSync>) => (onThread.open++, openSync(...args))) as typeof openSync
  fs.renameSync = ((...args: Parameters<typeof renameSync>) => (onThread.rename++, renameSync(...args))) as typeof renameSync
  syncBuiltinESMExports()
  try {
    await withStore({}, async (store, dir) => {
      await store.create(['posts', 'p1'], { title: 'first' })
      assert.equal(onThread, { open: 1, rename: 1 }, 'a create, all on the calling thread')
      assert.is(await turnedDuring(() => store.write(['posts', 'p1'], { title: 'again' })), true, 'the rename waits in the pool')
      assert.equal(onThread, { open: 2, rename: 1 }, 'the replacement\'s temporary file on the calling thread, its rename not')
      assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p1', '@.json'), 'utf8')), { title: 'again' })
      assert.equal(readdirSync(join(dir, 'posts', 'p1')), ['@.json'], 'no temp file is left')
    })
  } finally {
    fs.openSync = openSync
    fs.renameSync = renameSync
    syncBuiltinESMExports()
  }
})

test('a write takes its temporary file\'s stats only for a document the cache keeps, which a new one is not', async () => {
  // The version a write leaves in the cache is its temporary file's fstat (a rename keeps the inode, size and mtime).
  const { fstatSync } = fs
  let fstats = 0
  fs.fstatSync = ((...args: Parameters<typeof fstatSync>) => (fstats++, fstatSync(...args))) as typeof fstatSync
  syncBuiltinESMExports()
  try {
    await withStore({}, async (store) => {
      fstats = 0
      await store.create(['posts', 'p1'], { title: 'first' })
      await store.write(['posts', 'p2'], { title: 'second' })
      assert.is(fstats, 0, 'a POST and a PUT of documents nobody read')
      assert.equal((await store.read(['posts', 'p1']))?.doc, { title: 'first' })
      fstats = 0
      await store.write(['posts', 'p1'], { title: 'again' })
      assert.is(fstats, 1, 'a replacement of a document read: its new version is kept')
      fstats = 0
      assert.equal((await store.read(['posts', 'p1']))?.doc, { title: 'again' })
      assert.is(fstats, 0, 'and the next read is answered from it, with no file read')
    })
  } finally {
    fs.fstatSync = fstatSync
    syncBuiltinESMExports()
  }
})

test('calls that add up past the budget send the writes to the pool: the next write lets the event loop turn', async () => {
  // Every call counts as slow, and the budget is nothing: the first write's calls use it up.
  await withStore({ slowCalls: { callMs: 0, perSecondMs: 0, busyPerSecondMs: 10_000 } }, async (store, dir) => {
    assert.is(await turnedDuring(() => store.create(['posts', 'p1'], { n: 1 })), false, 'the first write, on the calling thread')
    assert.is(await turnedDuring(() => store.create(['posts', 'p2'], { n: 2 })), true, 'the next, through the pool')
    assert.is(await turnedDuring(() => store.write(['posts', 'p3'], { n: 3 })), true, 'a new document by PUT, through the pool')
    assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p3', '@.json'), 'utf8')), { n: 3 })
    assert.equal(readdirSync(join(dir, 'posts', 'p2')), ['@.json'])
  })
})

test('calls that each are quick but fill the event loop past its budget send the writes to the pool', async () => {
  // No call counts as slow; the budget for all calls together is nothing.
  await withStore({ slowCalls: { callMs: 10_000, perSecondMs: 10_000, busyPerSecondMs: 0 } }, async (store) => {
    assert.is(await turnedDuring(() => store.create(['posts', 'p1'], { n: 1 })), false, 'the first write, on the calling thread')
    assert.is(await turnedDuring(() => store.create(['posts', 'p2'], { n: 2 })), true, 'the next, through the pool')
  })
})

test('slow calls within the budget keep the writes on the calling thread', async () => {
  // Every call counts as slow, but a second's budgets of 10 s are never used up by 40 writes.
  await withStore({ slowCalls: { callMs: 0, perSecondMs: 10_000, busyPerSecondMs: 10_000 } }, async (store) => {
    for (let index = 0; index < 40; index++) await store.create(['posts', `p${index}`], { index })
    assert.is(await turnedDuring(() => store.create(['posts', 'last'], { n: 1 })), false)
  })
})

test('with --sync, every write goes through the pool, flushes and all', async () => {
  // The calling thread's flush (fsyncSync) is counted through node:fs's own export.
  const original = fs.fsyncSync
  let onThread = 0
  fs.fsyncSync = (fd) => {
    onThread++
    return original(fd)
  }
  syncBuiltinESMExports()
  try {
    await withStore({ sync: true }, async (store, dir) => {
      assert.is(await turnedDuring(() => store.create(['posts', 'p1'], { n: 1 })), true)
      assert.is(await turnedDuring(() => store.write(['posts', 'p1'], { n: 2 })), true)
      assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p1', '@.json'), 'utf8')), { n: 2 })
    })
    assert.is(onThread, 0, 'a flush on the calling thread would hold the event loop for the disk')
  } finally {
    fs.fsyncSync = original
    syncBuiltinESMExports()
  }
})

// A write that fails on the calling thread (a full disk) is held in spec/store/file/disk-faults.spec.ts:
// it leaves no temp file and no folder behind.

test.run()
