import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync, spawnSync } from 'node:child_process'
import fs, { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { FileStore } from '../../../lib/store/file/file-store.ts'
import { OPEN_PLACES } from '../../../lib/store/fs/open-place.ts'
import { reachableCommand, startCli, stopAll, unprivilegedUser } from '../../support/process.ts'

// A read the cache cannot answer (lib/store/file/file-store.ts, #readFile): on the calling thread
// while reads are fast, through the thread pool for a while after a slow one. Both ways keep every
// rule of docs/storage.md, "Writes, links and removals": no link followed, no pipe waited on.

/** What reading `path` gives: the document, or the kind and reason of the error. */
async function outcome(store: FileStore, path: string[]) {
  return store.read(path).then(
    (stored) => stored?.doc,
    (error: { kind?: string; reason?: string }) => `${error.kind}: ${error.reason}`,
  )
}

/** A store folder beside a folder outside it that links point into; nothing is cached, so every read is a cold one. */
async function storeWithLinks(slowCalls?: { callMs: number; perSecondMs: number; busyPerSecondMs: number }) {
  const root = mkdtempSync(join(tmpdir(), 'restdir-cold-read-'))
  const outside = join(root, 'outside')
  mkdirSync(join(outside, 'sub'), { recursive: true })
  writeFileSync(join(outside, '@.json'), '{"secret":1}')
  writeFileSync(join(outside, 'sub', '@.json'), '{"secret":2}')
  mkdirSync(join(outside, 'empty'))
  const dir = join(root, 'store')
  const store = await FileStore.open(dir, { cache: { maxEntries: 0, maxBytes: 0 }, ...(slowCalls === undefined ? {} : { slowCalls }) })
  await store.write(['notes', 'a'], { id: 'a', n: 1 })
  symlinkSync(outside, join(dir, 'notes', 'linked'))
  symlinkSync(join(outside, 'empty'), join(dir, 'notes', 'empty-link'))
  mkdirSync(join(dir, 'notes', 'file-link'))
  symlinkSync(join(outside, '@.json'), join(dir, 'notes', 'file-link', '@.json'))
  mkdirSync(join(dir, 'notes', 'pipe'))
  execFileSync('mkfifo', [join(dir, 'notes', 'pipe', '@.json')])
  return { store, dir, outside, close: async () => { await store.close(); rmSync(root, { recursive: true, force: true }) } }
}

const ways = [
  { label: 'on the calling thread', slowCalls: undefined, folderLink: 'blocked-path: is a link, which the store does not follow', aboveLink: 'blocked-path: has above it a link, which the store does not follow' },
  // A slow read sends the store's misses to the pool: with a limit of 0, the first read is slow enough.
  // Where the kernel tells where an open landed, a read that landed elsewhere looks at the way to name what is wrong; else the pool's realpath cannot.
  {
    label: 'through the thread pool, after a slow read',
    slowCalls: { callMs: 0, perSecondMs: 0, busyPerSecondMs: 10_000 },
    folderLink: OPEN_PLACES ? 'blocked-path: is a link, which the store does not follow' : 'blocked-path: or one above it is a link, which the store does not follow',
    aboveLink: OPEN_PLACES ? 'blocked-path: has above it a link, which the store does not follow' : 'blocked-path: or one above it is a link, which the store does not follow',
  },
]

for (const way of ways) {
  test(`a cold read ${way.label} reads the file as it is now, and follows no link and waits on no pipe`, async () => {
    const { store, dir, close } = await storeWithLinks(way.slowCalls)
    try {
      assert.equal(await outcome(store, ['notes', 'a']), { id: 'a', n: 1 })
      writeFileSync(join(dir, 'notes', 'a', '@.json'), '{"id":"a","n":2,"by":"hand"}')
      assert.equal(await outcome(store, ['notes', 'a']), { id: 'a', n: 2, by: 'hand' })
      assert.is(await outcome(store, ['notes', 'linked']), way.folderLink)
      assert.is(await outcome(store, ['notes', 'linked', 'sub']), way.aboveLink)
      assert.is(await outcome(store, ['notes', 'file-link']), 'bad-document: is a link, which the store does not follow')
      assert.is(await outcome(store, ['notes', 'pipe']), 'bad-document: is a named pipe, not a regular file')
      assert.is(await outcome(store, ['notes', 'missing']), undefined)
      // A link on the way to no document file is no document, either way (the pool's stat follows it to nothing).
      assert.is(await outcome(store, ['notes', 'empty-link']), undefined)
      assert.is(await outcome(store, ['nothing', 'here']), undefined)
    } finally {
      await close()
    }
  })
}

for (const way of ways) {
  test(`a cold read ${way.label} leaves the file's access time as it was: a read writes nothing to the disk`, async () => {
    const { store, dir, close } = await storeWithLinks(way.slowCalls)
    try {
      // The first read goes on the calling thread either way; after it, the slow way's reads go through the pool.
      assert.equal(await outcome(store, ['notes', 'a']), { id: 'a', n: 1 })
      await store.write(['notes', 'b'], { id: 'b' })
      const file = join(dir, 'notes', 'b', '@.json')
      const control = join(dir, '..', 'control.json')
      writeFileSync(control, '{}')
      // Read last an hour before they were written: under relatime, Linux's default, the next read would note it.
      const anHourBefore = new Date(statSync(file).mtimeMs - 3_600_000)
      for (const path of [file, control]) utimesSync(path, anHourBefore, statSync(path).mtime)
      const untouched = statSync(file).atimeMs
      readFileSync(control)
      assert.ok(statSync(control).atimeMs > statSync(file).atimeMs, 'this file system notes reads: a plain read of a file beside it moved its access time')
      assert.equal(await outcome(store, ['notes', 'b']), { id: 'b' })
      assert.is(statSync(file).atimeMs, untouched)
    } finally {
      await close()
    }
  })
}

// Root may read any file without noting the read; a server run as another user may not, for a file it does not own.
const otherUser = process.platform !== 'linux' ? { reason: 'O_NOATIME is Linux\'s' } : process.getuid?.() === 0 ? unprivilegedUser() : { reason: 'only root can make a file another user owns' }
const withOtherUser = 'reason' in otherUser ? test.skip : test
if ('reason' in otherUser) console.log(`  cold-read.spec: skipping the read of a file another user owns: ${otherUser.reason}`)

withOtherUser('a document file a person saved as another user, readable by the server\'s, is read all the same', async () => {
  const user = otherUser as { uid: number; gid: number }
  const parent = mkdtempSync(join(tmpdir(), 'restdir-cold-read-owner-'))
  try {
    chmodSync(parent, 0o755)
    const store = join(parent, 'store')
    mkdirSync(join(store, 'notes', 'a'), { recursive: true })
    mkdirSync(join(parent, 'package'))
    for (const folder of [store, join(store, 'notes'), join(store, 'notes', 'a')]) chownSync(folder, user.uid, user.gid)
    // Saved by root, readable by all: the server's user may read it, and may not read it without noting the read.
    writeFileSync(join(store, 'notes', 'a', '@.json'), '{"id":"a","by":"root"}', { mode: 0o644 })
    const server = await startCli(['--port', '0', '--store', store], { user, command: await reachableCommand(join(parent, 'package')), cwd: parent })
    try {
      const read = await fetch(`${server.url}/notes/a`)
      assert.equal({ status: read.status, body: await read.json() }, { status: 200, body: { id: 'a', by: 'root' } })
      assert.is((await fetch(`${server.url}/notes/b`, { method: 'PUT', body: '{"n":1}', headers: { 'content-type': 'application/json' } })).status, 201)
      assert.equal(await (await fetch(`${server.url}/notes/b`)).json(), { id: 'b', n: 1 })
    } finally {
      await server.stop()
    }
    // Through the pool, reads already under way when the first is refused are made again too: the package's own read, run as that user.
    const files = ['c', 'd', 'e'].map((name) => {
      mkdirSync(join(store, 'notes', name))
      writeFileSync(join(store, 'notes', name, '@.json'), `{"id":"${name}"}`, { mode: 0o644 })
      return join(store, 'notes', name, '@.json')
    })
    const reader = pathToFileURL(join(parent, 'package', 'dist', 'lib', 'store', 'file', 'document-file.js')).href
    const script = `import { readDocumentFile } from ${JSON.stringify(reader)}
const reads = await Promise.all(${JSON.stringify(files)}.map((file) => readDocumentFile(file).then((read) => read.bytes.toString(), (error) => error.code)))
console.log(JSON.stringify(reads))`
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { ...user, cwd: parent, encoding: 'utf8', timeout: 20_000 })
    assert.is(run.stderr, '')
    assert.equal(JSON.parse(run.stdout), ['{"id":"c"}', '{"id":"d"}', '{"id":"e"}'])
  } finally {
    rmSync(parent, { recursive: true, force: true })
  }
})
test.after(() => stopAll())

/**
 * From another thread, until told to stop: a document's folder renamed away, a link to a folder
 * outside the store put in its place, then the link removed and the folder put back, over and over.
 * The swaps made are counted in `shared[0]`; a 1 in `shared[1]` stops it. Plain JavaScript, run by
 * the worker as it is.
 */
const swapperCode = `
const { workerData } = require('node:worker_threads')
const fs = require('node:fs')
const { folder, kept, outside, shared } = workerData
while (Atomics.load(shared, 1) === 0) {
  fs.renameSync(folder, kept)
  fs.symlinkSync(outside, folder)
  fs.unlinkSync(folder)
  fs.renameSync(kept, folder)
  Atomics.add(shared, 0, 1)
}
`

for (const way of ways) {
  test(`a folder swapped for a link out of the store and back from another thread, over and over: no cold read ${way.label} reads through it`, async () => {
    // Unless the way says otherwise, no call is slow enough to send the store to the pool.
    const { store, dir, outside, close } = await storeWithLinks(way.slowCalls ?? { callMs: 10_000, perSecondMs: 10_000, busyPerSecondMs: 10_000 })
    try {
      await store.write(['race', 'd'], { inside: true })
      // The race runs for at least 1.5 s, and on until it has made 1000 swaps and 10 reads of the
      // document in its place, however slow the machine: up to 30 s.
      const shared = new Int32Array(new SharedArrayBuffer(8))
      const worker = new Worker(swapperCode, { eval: true, workerData: { folder: join(dir, 'race', 'd'), kept: join(dir, 'race', 'kept'), outside, shared } })
      const stopped = new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject))
      const seen = { inside: 0, outside: 0, other: 0 }
      const started = Date.now()
      const ran = () => Atomics.load(shared, 0) >= 1000 && seen.inside >= 10
      try {
        while (Date.now() - started < 1500 || (!ran() && Date.now() - started < 30_000)) {
          const read = await outcome(store, ['race', 'd'])
          if (read !== undefined && typeof read === 'object' && 'secret' in read) seen.outside++
          else if (read !== undefined && typeof read === 'object' && 'inside' in read) seen.inside++
          else seen.other++
        }
      } finally {
        Atomics.store(shared, 1, 1)
        await stopped
      }
      assert.is(seen.outside, 0, `${seen.outside} of ${seen.inside + seen.outside + seen.other} reads answered the file outside the store`)
      assert.ok(ran(), `the race ran: ${Atomics.load(shared, 0)} swaps, ${JSON.stringify(seen)}`)
    } finally {
      await close()
    }
  })
}

/** Runs `during` with node:fs's statSync and openSync (for ES modules' imports too) and JSON.parse counted: what the store calls for one read. */
async function counting(file: string, marker: string, during: () => Promise<unknown>) {
  const patchable = fs as { statSync: typeof fs.statSync; openSync: typeof fs.openSync }
  const { statSync, openSync } = fs
  const { parse } = JSON
  const count = { stats: 0, opens: 0, parses: 0 }
  patchable.statSync = function (this: unknown, ...args: Parameters<typeof statSync>) {
    if (String(args[0]) === file) count.stats++
    return statSync.apply(this, args)
  } as typeof statSync
  patchable.openSync = function (this: unknown, ...args: Parameters<typeof openSync>) {
    if (String(args[0]) === file) count.opens++
    return openSync.apply(this, args)
  } as typeof openSync
  JSON.parse = (text: string, reviver?: Parameters<typeof parse>[1]) => {
    if (typeof text === 'string' && text.includes(marker)) count.parses++
    return parse(text, reviver)
  }
  syncBuiltinESMExports()
  try {
    await during()
  } finally {
    patchable.statSync = statSync
    patchable.openSync = openSync
    JSON.parse = parse
    syncBuiltinESMExports()
  }
  return count
}

test('a cold read on the calling thread opens the file with no stat before it; an answer read cold is kept compact, so its next read parses nothing', async () => {
  const { store, dir, close } = await storeWithLinks()
  const file = join(dir, 'notes', 'a', '@.json')
  writeFileSync(file, JSON.stringify({ id: 'a', marker: 'cold-marker' }, null, 2))
  let reopened: FileStore | undefined
  try {
    const cold = await counting(file, 'cold-marker', () => store.readText(['notes', 'a']))
    assert.is(cold.stats, 0, 'a file the cache does not hold is opened at once')
    assert.is(cold.parses, 1, 'parsed once, to check it and make its compact text')
    // With a cache, the text kept is the compact one the answer sent: the hit after it sends it with no parse.
    await store.close()
    reopened = await FileStore.open(dir)
    assert.is((await reopened.readText(['notes', 'a']))?.json, '{"id":"a","marker":"cold-marker"}')
    const hit = await counting(file, 'cold-marker', () => reopened!.readText(['notes', 'a']))
    assert.is(hit.stats, 1, 'a hit stats its file')
    assert.is(hit.parses, 0, 'and parses nothing')
  } finally {
    await reopened?.close()
    await close()
  }
})

test('a file found missing is looked for with a stat next time, which tells no file more cheaply than an open that fails; once there, it is read', async () => {
  const { store, dir, close } = await storeWithLinks()
  const file = join(dir, 'notes', 'later', '@.json')
  try {
    const first = await counting(file, 'later-marker', () => store.readText(['notes', 'later']))
    // Where the open is checked for where it landed, it alone tells; elsewhere the lstat of the folder does.
    assert.equal({ stats: first.stats, opens: first.opens }, { stats: 0, opens: OPEN_PLACES ? 1 : 0 }, 'its folder is missing: no stat')
    mkdirSync(join(dir, 'notes', 'later'))
    const second = await counting(file, 'later-marker', () => store.readText(['notes', 'later']))
    assert.equal({ stats: second.stats, opens: second.opens }, { stats: 1, opens: 0 }, 'found missing before: one stat, no open')
    writeFileSync(file, '{"id":"later","marker":"later-marker"}')
    assert.is((await store.readText(['notes', 'later']))?.json, '{"id":"later","marker":"later-marker"}')
  } finally {
    await close()
  }
})

test('a document of 100 kB is read whole in its one read', async () => {
  const { store, dir, close } = await storeWithLinks()
  try {
    const big = { id: 'a', text: 'x'.repeat(100_000) }
    writeFileSync(join(dir, 'notes', 'a', '@.json'), JSON.stringify(big))
    assert.equal(await outcome(store, ['notes', 'a']), big)
  } finally {
    await close()
  }
})

test.run()
