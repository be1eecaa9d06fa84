import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { FileStore } from '../../../lib/store/file/file-store.ts'

// docs/storage.md, "Writes, links and removals": no write makes or writes a file outside the store
// folder, not even when a folder on its way is swapped for a link out of the store in the instant
// between the store's look at the way and the open of its temporary file. A thread swaps a folder
// for such a link and back, over and over, while the store writes through it; the folder outside is
// then compared with what it held before. That folder is on another file system, which a rename
// cannot reach (EXDEV): the one window the store leaves, inside a single rename(2) between its
// lookups of its two names, is written down in docs/storage.md, not tested here.

/**
 * From another thread, until the first of `stop`'s numbers is set: `folder` renamed away, a link to
 * `outside` put in its place, then the link removed (a folder the store made meanwhile moved aside)
 * and the folder put back, over and over. Plain JavaScript, run by the worker as it is.
 */
const swapperCode = `
const { workerData, parentPort } = require('node:worker_threads')
const fs = require('node:fs')
const { folder, kept, outside, stop } = workerData
const stopped = new Int32Array(stop)
let swaps = 0
const quietly = (call) => { try { call() } catch {} }
let aside = 0
while (Atomics.load(stopped, 0) === 0) {
  fs.renameSync(folder, kept)
  // The store may make the folder anew while it is away: then the link waits for the next round.
  quietly(() => fs.symlinkSync(outside, folder))
  quietly(() => fs.unlinkSync(folder))
  // A folder the store made meanwhile is moved aside, in one rename, so the folder can come back.
  while (!tried(() => fs.renameSync(kept, folder))) quietly(() => fs.renameSync(folder, kept + '-aside-' + aside++))
  swaps++
}
function tried(call) {
  try {
    call()
    return true
  } catch {
    return false
  }
}
parentPort.postMessage(swaps)
`

/** Every file below `folder` (links included, folders not), by path, with its contents. */
function filesIn(folder: string): Record<string, string> {
  const files: Record<string, string> = {}
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isDirectory()) files[join(entry.parentPath, entry.name).slice(folder.length)] = entry.isFile() ? readFileSync(join(entry.parentPath, entry.name), 'utf8') : '(not a file)'
  }
  return files
}

/** A new folder on a file system other than the temporary folder's (tmpfs at /dev/shm on Linux). */
function folderElsewhere(): string {
  const here = statSync(tmpdir()).dev
  for (const candidate of ['/dev/shm', '/run/user/' + process.getuid?.()]) {
    if (existsSync(candidate) && statSync(candidate).dev !== here) return mkdtempSync(join(candidate, 'restdir-write-links-'))
  }
  throw new Error('these tests need a folder on a second file system (/dev/shm)')
}

const ways = [
  // No call is slow enough to send the store to the pool.
  { label: 'on the calling thread', slowCalls: { callMs: 10_000, perSecondMs: 10_000, busyPerSecondMs: 10_000 } },
  // With a limit of 0, the first call is slow enough, and every write after it goes through the pool.
  { label: 'through the thread pool', slowCalls: { callMs: 0, perSecondMs: 0, busyPerSecondMs: 10_000 } },
]

const kinds = [
  // A replacement of a document whose own folder is swapped.
  { label: 'a replacement', swapped: ['race', 'd'], write: (store: FileStore, n: number) => store.write(['race', 'd'], { inside: n }) },
  // A create under a collection whose folder is swapped: after a few, the store trusts that folder without a look (watched-hits.ts).
  { label: 'a create', swapped: ['race'], write: (store: FileStore, n: number) => store.create(['race', `n${n}`], { inside: n }) },
  // An id too long for a folder name: its folder is hashed, and gets an `@name` file before the document's temporary file.
  { label: 'a create under a long id', swapped: ['race'], write: (store: FileStore, n: number) => store.create(['race', `${'n'.repeat(300)}${n}`], { inside: n }) },
]

for (const way of ways) {
  for (const kind of kinds) {
    test(`${kind.label} ${way.label}, through a folder swapped for a link out of the store and back from another thread: nothing is written outside`, async () => {
      const root = mkdtempSync(join(tmpdir(), 'restdir-write-links-'))
      const outside = folderElsewhere()
      writeFileSync(join(outside, '@.json'), '{"secret":1}')
      const dir = join(root, 'store')
      const store = await FileStore.open(dir, { slowCalls: way.slowCalls })
      try {
        await store.write(['race', 'd'], { inside: 0 })
        const before = filesIn(outside)
        const folder = join(dir, ...kind.swapped)
        const stop = new SharedArrayBuffer(4)
        const worker = new Worker(swapperCode, { eval: true, workerData: { folder, kept: `${folder}-kept`, outside, stop } })
        const swapped = new Promise<number>((resolve, reject) => worker.once('message', resolve).once('error', reject))
        const seen = { written: 0, refused: 0 }
        // 1.5 s of the race, and on a busy machine (where most writes meet a swap) longer, until 20 writes got through, up to 20 s.
        const started = Date.now()
        const racing = () => Date.now() - started < 1500 || (seen.written < 20 && Date.now() - started < 20_000)
        for (let n = 1; racing(); n++) {
          await kind.write(store, n).then(
            () => seen.written++,
            () => seen.refused++,
          )
        }
        Atomics.store(new Int32Array(stop), 0, 1)
        const swaps = await swapped
        const after = filesIn(outside)
        const landed = Object.keys(after).filter((name) => after[name] !== before[name])
        assert.equal(landed, [], `${landed.length} files outside the store were written: ${landed.slice(0, 5).map((name) => name.slice(-60)).join(', ')}`)
        // The race ran: writes met the swapped folder, and some got through it whole. On a busy machine the
        // swapper, spinning on one of two cores, leaves them few such moments (4 in 20 s in one run).
        assert.ok(swaps > 100 && seen.written > 0 && seen.refused > 0, `the race ran: ${swaps} swaps, ${JSON.stringify(seen)}`)
      } finally {
        await store.close()
        rmSync(root, { recursive: true, force: true })
        rmSync(outside, { recursive: true, force: true })
      }
    })
  }
}

test.run()
