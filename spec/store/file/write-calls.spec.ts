import { test } from 'uvu'
import * as assert from 'uvu/assert'
import fs, { readdirSync, readFileSync, rmSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { FileStore, type FileStoreOptions } from '../../../lib/store/file/file-store.ts'
import { makeTempDir } from '../../support/helpers.ts'

// Where a write's file-system calls run (lib/store/file/file-store.ts, #placeFile, and call-budget.ts;
// docs/speed.md, "A new document's calls stay on the event loop's thread"): on the calling thread
// while calls are quick, but for the rename that replaces a file; through the thread pool for that
// rename, or for a while after calls that waited or filled the event loop; with --sync, the
// temporary file's open, write and close on the calling thread, the rest in the pool. The
// calling thread's calls are counted through node:fs's own exports (syncBuiltinESMExports: for ES
// modules' imports too); a call through the pool is none of them.

/** The temporary file's open and its rename that `write` made on the calling thread. */
async function onThread(write: () => Promise<unknown>): Promise<{ open: number; rename: number }> {
  const counts = await callsOnThread(write)
  return { open: counts.open, rename: counts.rename }
}

/** The same, and `folders`: the opens of a folder (to flush it) on the calling thread. */
async function callsOnThread(write: () => Promise<unknown>): Promise<{ open: number; rename: number; folders: number }> {
  const { openSync, renameSync } = fs
  const counts = { open: 0, rename: 0, folders: 0 }
  fs.openSync = ((...args: Parameters<typeof openSync>) => {
    const fd = openSync(...args)
    if (fs.fstatSync(fd).isDirectory()) counts.folders++
    else counts.open++
    return fd
  }) as typeof openSync
  fs.renameSync = ((...args: Parameters<typeof renameSync>) => (counts.rename++, renameSync(...args))) as typeof renameSync
  syncBuiltinESMExports()
  try {
    await write()
    return counts
  } finally {
    fs.openSync = openSync
    fs.renameSync = renameSync
    syncBuiltinESMExports()
  }
}

/** All of a write on the calling thread; its rename alone through the pool; all of it through the pool. */
const THREAD = { open: 1, rename: 1 }
const RENAME_IN_POOL = { open: 1, rename: 0 }
const POOL = { open: 0, rename: 0 }

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
    assert.equal(await onThread(() => store.create(['posts', 'p1'], { title: 'first' })), THREAD, 'a create in a new collection')
    assert.equal(await onThread(() => store.create(['posts', 'p2'], { title: 'second' })), THREAD, 'a create beside it')
    // From the fourth on, the collection's folder is trusted with no lstat, decided in the check phase (watched-hits.ts).
    for (const id of ['p3', 'p4', 'p5']) assert.equal(await onThread(() => store.create(['posts', id], { title: id })), THREAD, `and ${id}`)
    assert.equal(await onThread(() => store.write(['profile'], { name: 'n' })), THREAD, 'a new document at the top')
    // ext4 starts writing the new file out when a rename replaces one: that rename waits on the disk.
    assert.equal(await onThread(() => store.write(['posts', 'p1'], { title: 'again' })), RENAME_IN_POOL, 'a replacement')
    assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p1', '@.json'), 'utf8')), { title: 'again' })
    assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p2', '@.json'), 'utf8')), { title: 'second' })
    assert.equal(readdirSync(join(dir, 'posts', 'p1')), ['@.json'], 'no temp file is left')
  })
})

test('a replacement writes its temporary file on the calling thread and renames it through the pool, while the event loop turns', async () => {
  await withStore({}, async (store, dir) => {
    await store.create(['posts', 'p1'], { title: 'first' })
    // The pool's rename lets the event loop turn while it runs: a callback queued before it runs first.
    let turned = false
    const immediate = setImmediate(() => (turned = true))
    assert.equal(await onThread(() => store.write(['posts', 'p1'], { title: 'again' })), RENAME_IN_POOL)
    clearImmediate(immediate)
    assert.is(turned, true, 'the rename waits in the pool')
    assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p1', '@.json'), 'utf8')), { title: 'again' })
    assert.equal(readdirSync(join(dir, 'posts', 'p1')), ['@.json'], 'no temp file is left')
  })
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
    assert.equal(await onThread(() => store.create(['posts', 'p1'], { n: 1 })), THREAD, 'the first write, on the calling thread')
    assert.equal(await onThread(() => store.create(['posts', 'p2'], { n: 2 })), POOL, 'the next, through the pool')
    assert.equal(await onThread(() => store.write(['posts', 'p3'], { n: 3 })), POOL, 'a new document by PUT, through the pool')
    assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p3', '@.json'), 'utf8')), { n: 3 })
    assert.equal(readdirSync(join(dir, 'posts', 'p2')), ['@.json'])
  })
})

test('calls that each are quick but fill the event loop past its budget send the writes to the pool', async () => {
  // No call counts as slow; the budget for all calls together is nothing.
  await withStore({ slowCalls: { callMs: 10_000, perSecondMs: 10_000, busyPerSecondMs: 0 } }, async (store) => {
    assert.equal(await onThread(() => store.create(['posts', 'p1'], { n: 1 })), THREAD, 'the first write, on the calling thread')
    assert.equal(await onThread(() => store.create(['posts', 'p2'], { n: 2 })), POOL, 'the next, through the pool')
  })
})

test('slow calls within the budget keep the writes on the calling thread', async () => {
  // Every call counts as slow, but a second's budgets of 10 s are never used up by 40 writes.
  await withStore({ slowCalls: { callMs: 0, perSecondMs: 10_000, busyPerSecondMs: 10_000 } }, async (store) => {
    for (let index = 0; index < 40; index++) await store.create(['posts', `p${index}`], { index })
    assert.equal(await onThread(() => store.create(['posts', 'last'], { n: 1 })), THREAD)
  })
})

test('with --sync, a write makes its temporary file on the calling thread, and its flushes and rename through the pool; a folder is opened to be flushed on the calling thread', async () => {
  // The calling thread's flush (fsyncSync) is counted through node:fs's own export.
  const original = fs.fsyncSync
  let flushesOnThread = 0
  fs.fsyncSync = (fd) => {
    flushesOnThread++
    return original(fd)
  }
  syncBuiltinESMExports()
  try {
    await withStore({ sync: true }, async (store, dir) => {
      // The temporary file's open, write and close wait on nothing; a rename (or a mkdir) made while a flush
      // writes out the folder waits for it. The folders down to the document are flushed: the store folder,
      // posts/ and posts/p1/, each opened here and flushed in the pool.
      assert.equal(await callsOnThread(() => store.create(['posts', 'p1'], { n: 1 })), { ...RENAME_IN_POOL, folders: 3 })
      assert.equal(await callsOnThread(() => store.write(['posts', 'p1'], { n: 2 })), { ...RENAME_IN_POOL, folders: 3 })
      assert.equal(JSON.parse(readFileSync(join(dir, 'posts', 'p1', '@.json'), 'utf8')), { n: 2 })
    })
    assert.is(flushesOnThread, 0, 'a flush on the calling thread would hold the event loop for the disk')
  } finally {
    fs.fsyncSync = original
    syncBuiltinESMExports()
  }
})

// A write that fails on the calling thread (a full disk) is held in spec/store/file/disk-faults.spec.ts:
// it leaves no temp file and no folder behind.

test.run()
