import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { DirectoryFlusher } from '../../../lib/store/fs/flush.ts'

// With --sync, concurrent writes share directory fsyncs (a group commit), yet
// each write waits for a flush that began after its own change.

/** A fake fsync that records each call and finishes when told to. */
function fakeFsync() {
  const calls: Array<{ directory: string; finish: () => void; fail: (error: Error) => void }> = []
  const fsync = (directory: string) =>
    new Promise<void>((resolve, reject) => calls.push({ directory, finish: resolve, fail: reject }))
  return { calls, fsync }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

test('many flushes of one directory asked for together share two fsyncs', async () => {
  const { calls, fsync } = fakeFsync()
  const flusher = new DirectoryFlusher(fsync)
  const first = flusher.flush('/store/items')
  const rest = Array.from({ length: 50 }, () => flusher.flush('/store/items'))
  assert.is(calls.length, 1)
  calls[0].finish()
  await first
  await tick()
  assert.is(calls.length, 2, 'the ones that came during the first fsync share the next')
  calls[1].finish()
  await Promise.all(rest)
  assert.is(calls.length, 2)
})

test('a flush asked for while one runs waits for a new one, which began after it was asked', async () => {
  const { calls, fsync } = fakeFsync()
  const flusher = new DirectoryFlusher(fsync)
  void flusher.flush('/store')
  let laterDone = false
  const later = flusher.flush('/store').then(() => (laterDone = true))
  calls[0].finish()
  await tick()
  assert.not.ok(laterDone, 'the fsync that was running may have missed its change')
  assert.is(calls.length, 2)
  calls[1].finish()
  await later
  assert.ok(laterDone)
})

test('different directories are flushed separately, and a failed fsync fails only those who shared it', async () => {
  const { calls, fsync } = fakeFsync()
  const flusher = new DirectoryFlusher(fsync)
  const a = flusher.flush('/a')
  const b = flusher.flush('/b')
  assert.equal(calls.map((call) => call.directory), ['/a', '/b'])
  calls[0].fail(new Error('EIO'))
  calls[1].finish()
  assert.is(await a.then(() => 'flushed', (error: Error) => error.message), 'EIO')
  await b
  const again = flusher.flush('/a')
  assert.is(calls.length, 3, 'a new request after a failure gets a new fsync')
  calls[2].finish()
  await again
})

test.run()
