import { test } from 'uvu'
import * as assert from 'uvu/assert'
import fs, { linkSync, mkdirSync, readdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync, type FSWatcher } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { rm } from 'node:fs/promises'
import { join, sep } from 'node:path'
import { Worker } from 'node:worker_threads'
import { makeTempDir, startServer, type TestServer } from '../../support/helpers.ts'
import { FileStore } from '../../../lib/store/file/file-store.ts'
import { TRUST_MS, WATCH_IDLE_MS } from '../../../lib/store/file/watched-hits.ts'
import { withQueueOverflowed } from '../../support/queue-overflow.ts'

// A hot document's GET needs no stat while its folder is watched, and a hand edit is still what the
// next GET returns (docs/storage.md, "Editing by hand"); `watches: 0` is the store that stats every GET,
// as it does wherever a watch cannot be trusted.

/** The file of `/notes/<id>`. */
const fileOf = (dir: string, id: string) => join(dir, 'notes', id, '@.json')

/**
 * Counts the stats of document files the server makes (fs.statSync, which every read that is not
 * trusted starts with), and the watches open. Without these counts the tests below would pass on a
 * store that stats every GET, or watches every folder there is.
 */
const watching = (() => {
  // node:fs's own exports, changed for the whole process (syncBuiltinESMExports: for ES modules' imports too).
  const patchable = fs as { statSync: typeof fs.statSync; lstatSync: typeof fs.lstatSync; watch: typeof fs.watch }
  const realStat = fs.statSync
  const realLstat = fs.lstatSync
  const realWatch = fs.watch
  const stats = new Map<string, number>()
  const lstats = new Map<string, number>()
  const open = new Map<FSWatcher, string>()
  const made: string[] = []
  let deaf = false
  let refuse: string | undefined
  const countedStat = function (this: unknown, ...args: Parameters<typeof realStat>) {
    const file = String(args[0])
    stats.set(file, (stats.get(file) ?? 0) + 1)
    return realStat.apply(this, args)
  } as typeof realStat
  const countedLstat = function (this: unknown, ...args: Parameters<typeof realLstat>) {
    const file = String(args[0])
    lstats.set(file, (lstats.get(file) ?? 0) + 1)
    return realLstat.apply(this, args)
  } as typeof realLstat
  const countedWatch = ((directory: string, options: { persistent?: boolean }) => {
    if (refuse) throw Object.assign(new Error(`${refuse}: refused for the test`), { code: refuse })
    const watcher = realWatch(directory, options)
    made.push(directory)
    // A deaf watcher hears nothing more, as one the kernel stopped would.
    const emit = watcher.emit.bind(watcher)
    watcher.emit = ((name: string, ...args: unknown[]) => (deaf && name === 'change' ? false : emit(name, ...args))) as typeof watcher.emit
    open.set(watcher, directory)
    const close = watcher.close.bind(watcher)
    watcher.close = () => {
      open.delete(watcher)
      close()
    }
    return watcher
  }) as typeof fs.watch
  return {
    start() {
      patchable.statSync = countedStat
      patchable.lstatSync = countedLstat
      patchable.watch = countedWatch
      syncBuiltinESMExports()
    },
    stop() {
      patchable.statSync = realStat
      patchable.lstatSync = realLstat
      patchable.watch = realWatch
      syncBuiltinESMExports()
    },
    /** Stats of `file` (a path of any kind) since the last call. */
    statsOf(file: string): number {
      const count = stats.get(file) ?? 0
      stats.delete(file)
      return count
    },
    /** Lstats of `path` (a folder on the way to a document, checkWay) since the last call. */
    lstatsOf(path: string): number {
      const count = lstats.get(path) ?? 0
      lstats.delete(path)
      return count
    },
    /** Watches made on `dir` or a folder inside it since the process started. */
    madeIn(dir: string): number {
      return made.filter((directory) => directory === dir || directory.startsWith(dir + sep)).length
    },
    /** Watches open on `dir` or a folder inside it. */
    openIn(dir: string): number {
      return [...open.values()].filter((directory) => directory === dir || directory.startsWith(dir + sep)).length
    },
    /** Every watcher fails: it hears nothing more, and says so once. */
    fail() {
      deaf = true
      for (const watcher of open.keys()) watcher.emit('error', Object.assign(new Error('the watch failed (test)'), { code: 'EIO' }))
    },
    refuse(code: string | undefined) {
      refuse = code
    },
    reset() {
      deaf = false
      refuse = undefined
      stats.clear()
      lstats.clear()
    },
  }
})()
test.before(watching.start)
test.after(watching.stop)
test.before.each(watching.reset)

/**
 * Moves the clock the store goes by (performance.now, for the whole process) `ms` ahead, as if that
 * long had passed; returns what puts it back.
 */
function advanceClock(ms: number): () => void {
  const now = performance.now.bind(performance)
  performance.now = () => now() + ms
  return () => {
    delete (performance as { now?: unknown }).now
  }
}

/** A server on a fresh store folder opened with `watches`; `close` closes the store and removes the folder. */
async function startOnFolder(watches?: number): Promise<TestServer & { store: FileStore }> {
  const dir = await makeTempDir()
  const store = await FileStore.open(dir, { watches })
  const server = await startServer({ store })
  return {
    ...server,
    dir,
    store,
    async close() {
      await server.close()
      await store.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** GETs `target` until it is trusted: four reads (its first stat, a second within a second that watches its folder, a third whose stat trusts it, a fourth with none). */
async function warm(server: TestServer, target: string): Promise<void> {
  for (let read = 0; read < 4; read++) assert.is((await server.request('GET', target)).status, 200)
}

/*
 * The edits and the reads come from other threads than the server's, as from another process: the
 * editor's write queues its event in the kernel at once, and the server reads it in its own loop,
 * in the same turn as the request or before. Plain JavaScript, run by each worker as it is.
 */
const editorCode = `
const { workerData, parentPort } = require('node:worker_threads')
const fs = require('node:fs')
const http = require('node:http')
const { port, file, draft, pairs, path } = workerData
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const get = () => new Promise((resolve, reject) => {
  http.get({ port, host: '127.0.0.1', path, agent }, (res) => {
    let text = ''
    res.setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => resolve({ status: res.statusCode, text }))
  }).on('error', reject)
})
;(async () => {
  let stale = 0
  let first
  for (let n = 0; n < pairs; n++) {
    const text = JSON.stringify({ id: 'target', n }, null, 2)
    // In place as a script or some editors do, or saved by rename as most editors do.
    if (n % 2 === 0) fs.writeFileSync(file, text)
    else {
      fs.writeFileSync(draft, text)
      fs.renameSync(draft, file)
    }
    const answer = await get()
    // The document itself, or its item in a page of /notes.
    const body = answer.status === 200 ? JSON.parse(answer.text) : undefined
    const read = body === undefined ? answer.status : Array.isArray(body) ? body.find((item) => item.id === 'target')?.n : body.n
    if (read !== n) {
      stale++
      first ??= { wrote: n, read }
    }
    // Read once more: a hit that finds the file unchanged, so that the next edit is made while the document is trusted.
    if ((await get()).status !== 200) stale++
  }
  agent.destroy()
  parentPort.postMessage({ stale, first })
})().catch((error) => parentPort.postMessage({ error: String(error) }))
`

const loadCode = `
const { workerData, parentPort } = require('node:worker_threads')
const http = require('node:http')
const { port, targets } = workerData
const agent = new http.Agent({ keepAlive: true })
let running = true
let requests = 0
let wrong = 0
parentPort.once('message', () => (running = false))
const loop = (target) => new Promise((resolve) => {
  const next = () => {
    if (!running) return resolve()
    http.get({ port, host: '127.0.0.1', path: target, agent }, (res) => {
      res.resume().on('end', () => {
        requests++
        if (res.statusCode !== 200) wrong++
        next()
      })
    }).on('error', () => resolve())
  }
  next()
})
Promise.all(targets.map(loop)).then(() => {
  agent.destroy()
  parentPort.postMessage({ requests, wrong })
})
`

function runWorker<T>(code: string, data: object): { worker: Worker; done: Promise<T> } {
  const worker = new Worker(code, { eval: true, workerData: data })
  // A worker that has said its result is ended, so that nothing it still holds keeps the test process alive.
  const done = new Promise<T>((resolve, reject) => {
    worker.once('message', (message: T) => {
      resolve(message)
      void worker.terminate()
    })
    worker.once('error', reject)
  })
  return { worker, done }
}

const PAIRS = 20_000
const OTHERS = 3

/**
 * `pairs` hand edits of /notes/target, each read back at once over HTTP at `read` (the document, or a
 * page of /notes that holds it), while other threads GET other documents.
 */
async function editAndReadUnderLoad(server: TestServer, read = '/notes/target', pairs = PAIRS) {
  for (let index = 0; index < OTHERS; index++) await server.request('PUT', `/notes/other${index}`, { body: { index } })
  await server.request('PUT', '/notes/target', { body: { n: -1 } })
  await warm(server, read)
  const targets = Array.from({ length: OTHERS }, (_, index) => `/notes/other${index}`)
  for (const target of targets) await warm(server, target)
  for (const target of targets) watching.statsOf(fileOf(server.dir, target.slice('/notes/'.length)))
  const load = runWorker<{ requests: number; wrong: number }>(loadCode, { port: server.port, targets: [...targets, ...targets] })
  const file = fileOf(server.dir, 'target')
  const editor = runWorker<{ stale: number; first?: unknown; error?: string }>(editorCode, {
    port: server.port,
    file,
    draft: join(server.dir, 'notes', 'target', '.@.json.swp'),
    pairs,
    path: read,
  })
  const edited = await editor.done
  load.worker.postMessage('stop')
  const loaded = await load.done
  const othersStats = targets.reduce((sum, target) => sum + watching.statsOf(fileOf(server.dir, target.slice('/notes/'.length))), 0)
  return { edited, loaded, othersStats }
}

test('20 000 hand edits, in place and saved by rename, are each what the next GET returns, while other hot documents are answered with no stat', async () => {
  const server = await startOnFolder()
  try {
    const { edited, loaded, othersStats } = await editAndReadUnderLoad(server)
    assert.is(edited.error, undefined)
    assert.is(edited.stale, 0, `a stale answer: ${JSON.stringify(edited.first)}`)
    assert.is(loaded.wrong, 0)
    assert.ok(loaded.requests > 2000, `the load ran (${loaded.requests} GETs)`)
    // At most one stat a second for each of them (TRUST_MS), not one per GET.
    assert.ok(othersStats < loaded.requests / 20, `${othersStats} stats for ${loaded.requests} GETs of watched documents`)
  } finally {
    await server.close()
  }
})

test('with no watches (watches: 0), the same 20 000 edits are each what the next GET returns, every GET looking at its file', async () => {
  const server = await startOnFolder(0)
  try {
    const { edited, loaded, othersStats } = await editAndReadUnderLoad(server)
    assert.is(edited.error, undefined)
    assert.is(edited.stale, 0, `a stale answer: ${JSON.stringify(edited.first)}`)
    assert.is(loaded.wrong, 0)
    assert.ok(othersStats >= loaded.requests, `${othersStats} stats for ${loaded.requests} GETs`)
    assert.is(watching.openIn(server.dir), 0)
  } finally {
    await server.close()
  }
})

/** A plain page, and json-server 1.0's page (its documents under `data`). */
const pages = [
  { url: '/notes?_limit=3', items: (body: unknown) => body },
  { url: '/notes?_page=1&_per_page=3', items: (body: unknown) => (body as { data: unknown }).data },
]

for (const page of pages) {
  test(`a page of /notes read again and again (${page.url}) answers its documents with no stat, all at once, and a hand edit of one is in the next page`, async () => {
    // The store's readText, counted: how many of a page's documents are read one by one.
    const readText = FileStore.prototype.readText
    let readOneByOne = 0
    FileStore.prototype.readText = function (this: FileStore, path) {
      readOneByOne++
      return readText.call(this, path)
    }
    const server = await startOnFolder()
    try {
      const ids = ['p0', 'p1', 'p2']
      for (const [n, id] of ids.entries()) await server.request('PUT', `/notes/${id}`, { body: { n } })
      await warm(server, page.url)
      for (const id of ids) watching.statsOf(fileOf(server.dir, id))
      const ownFile = join(server.dir, 'notes', '@.json')
      watching.statsOf(ownFile)
      watching.statsOf(join(server.dir, 'notes'))
      readOneByOne = 0
      for (let read = 0; read < 5; read++) assert.equal(page.items((await server.request('GET', page.url)).json), ids.map((id, n) => ({ id, n })))
      assert.equal(ids.map((id) => watching.statsOf(fileOf(server.dir, id))), [0, 0, 0], 'a page of trusted documents needs no stat')
      assert.is(readOneByOne, 0, 'and is answered from memory all at once (FileStore.textsFromMemory), none of its documents read one by one')
      // The watched folder was found to hold no document of its own: no page looks for it again, and the listing does not ask of a folder with children.
      assert.is(watching.statsOf(ownFile), 0, "no look at the collection's own document")
      // The listing's index takes the collection folder's version from the lstat that checks the way to it.
      assert.is(watching.statsOf(join(server.dir, 'notes')), 0, 'no stat of the collection folder')
      writeFileSync(fileOf(server.dir, 'p1'), JSON.stringify({ id: 'p1', n: 11 }))
      assert.equal(page.items((await server.request('GET', page.url)).json), [{ id: 'p0', n: 0 }, { id: 'p1', n: 11 }, { id: 'p2', n: 2 }])
      assert.equal(ids.map((id) => watching.statsOf(fileOf(server.dir, id))), [0, 1, 0], 'only the edited one is looked at again')
      // A document given to /notes by hand is what the next GET of /notes answers.
      writeFileSync(ownFile, JSON.stringify({ about: 'notes' }))
      assert.equal((await server.request('GET', '/notes')).json, { about: 'notes' })
    } finally {
      FileStore.prototype.readText = readText
      await server.close()
    }
  })
}

/** Holds the next open of a file through node:fs/promises (a read through the pool) once the file is open, until `release`. */
function holdNextPooledOpen(): { opened: Promise<void>; release: () => void } {
  const promises = fs.promises as { open: typeof fs.promises.open }
  const realOpen = promises.open
  let opened!: () => void
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  promises.open = (async (...args: Parameters<typeof realOpen>) => {
    promises.open = realOpen
    syncBuiltinESMExports()
    const handle = await realOpen(...args)
    opened()
    await released
    return handle
  }) as typeof realOpen
  syncBuiltinESMExports()
  return { opened: new Promise<void>((resolve) => (opened = resolve)), release }
}

test('a read through the pool that began before a hand edit, and ends after a stat trusted the newer version, is not what the next read answers', async () => {
  const dir = await makeTempDir()
  // Every read through the pool once one has been timed, as after reads that waited on a cold disk (call-budget.ts).
  const store = await FileStore.open(dir, { slowCalls: { callMs: 0, perSecondMs: 0, busyPerSecondMs: 0 } })
  const path = ['notes', 'target']
  const file = fileOf(dir, 'target')
  const draft = join(dir, 'notes', 'target', '.draft')
  const byHand = async (n: number) => {
    writeFileSync(draft, JSON.stringify({ n }))
    fs.renameSync(draft, file)
    // Its event is read in the next turns of the loop.
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const read = async () => JSON.parse((await store.readText(path))!.json) as { n: number }
  try {
    await store.write(path, { n: 0 })
    for (let time = 0; time < 4; time++) assert.equal(await read(), { n: 0 })
    watching.statsOf(file)
    assert.equal(await read(), { n: 0 })
    assert.is(watching.statsOf(file), 0, 'trusted before the edits')
    // A miss whose read opens version 1, then waits in the pool.
    await byHand(1)
    const held = holdNextPooledOpen()
    const slowRead = read()
    await held.opened
    // Version 2 is read, then a stat finds it: trusted again.
    await byHand(2)
    assert.equal(await read(), { n: 2 })
    assert.equal(await read(), { n: 2 })
    watching.statsOf(file)
    assert.equal(await read(), { n: 2 })
    assert.is(watching.statsOf(file), 0, 'version 2 trusted')
    // The slow read ends, and puts version 1 in the cache: no hit may answer it.
    held.release()
    assert.equal(await slowRead, { n: 1 })
    assert.equal(await read(), { n: 2 })
    assert.equal(await read(), { n: 2 })
  } finally {
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test('5 000 hand edits of a document are each in the next page of /notes that holds it, while other hot documents are answered with no stat', async () => {
  const server = await startOnFolder()
  try {
    const { edited, loaded, othersStats } = await editAndReadUnderLoad(server, '/notes?_limit=10', 5000)
    assert.is(edited.error, undefined)
    assert.is(edited.stale, 0, `a stale page: ${JSON.stringify(edited.first)}`)
    assert.is(loaded.wrong, 0)
    assert.ok(othersStats < loaded.requests / 20, `${othersStats} stats for ${loaded.requests} GETs of watched documents`)
  } finally {
    await server.close()
  }
})

/** A collection's own document made and removed by hand, each time read back at once with a GET of the collection. */
const ownDocumentCode = `
const { workerData, parentPort } = require('node:worker_threads')
const fs = require('node:fs')
const http = require('node:http')
const { port, file, draft, pairs } = workerData
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const get = () => new Promise((resolve, reject) => {
  http.get({ port, host: '127.0.0.1', path: '/notes', agent }, (res) => {
    let text = ''
    res.setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => resolve(JSON.parse(text)))
  }).on('error', reject)
})
;(async () => {
  let stale = 0
  let first
  for (let n = 0; n < pairs; n++) {
    // The listing while there is no document of its own, read twice so that the next edit finds it trusted.
    for (let read = 0; read < 2; read++) {
      if (!Array.isArray(await get())) {
        stale++
        first ??= { removed: n }
      }
    }
    const text = JSON.stringify({ own: n })
    if (n % 2 === 0) fs.writeFileSync(file, text)
    else {
      fs.writeFileSync(draft, text)
      fs.renameSync(draft, file)
    }
    const body = await get()
    if (body.own !== n) {
      stale++
      first ??= { wrote: n, read: body }
    }
    fs.unlinkSync(file)
  }
  agent.destroy()
  parentPort.postMessage({ stale, first })
})().catch((error) => parentPort.postMessage({ error: String(error) }))
`

test('2 000 times a document given to /notes by hand and taken away again: each time the next GET of /notes answers it, then the listing, under load', async () => {
  const server = await startOnFolder()
  try {
    for (let index = 0; index < OTHERS; index++) await server.request('PUT', `/notes/other${index}`, { body: { index } })
    const targets = Array.from({ length: OTHERS }, (_, index) => `/notes/other${index}`)
    for (const target of targets) await warm(server, target)
    await warm(server, '/notes')
    const ownFile = join(server.dir, 'notes', '@.json')
    watching.statsOf(ownFile)
    // Trusted to hold no document: the listing looks for it no more.
    for (let read = 0; read < 5; read++) assert.ok(Array.isArray((await server.request('GET', '/notes')).json))
    assert.is(watching.statsOf(ownFile), 0, 'trusted before the edits')
    const load = runWorker<{ requests: number; wrong: number }>(loadCode, { port: server.port, targets: [...targets, ...targets] })
    const editor = runWorker<{ stale: number; first?: unknown; error?: string }>(ownDocumentCode, {
      port: server.port,
      file: ownFile,
      draft: join(server.dir, 'notes', '.@.json.swp'),
      pairs: 2000,
    })
    const edited = await editor.done
    load.worker.postMessage('stop')
    const loaded = await load.done
    assert.is(edited.error, undefined)
    assert.is(edited.stale, 0, `a stale answer: ${JSON.stringify(edited.first)}`)
    assert.is(loaded.wrong, 0)
  } finally {
    await server.close()
  }
})

test('a document read less than once a second is not watched (each of its reads would stat anyway); one read twice within a second is', async () => {
  const server = await startOnFolder()
  try {
    await server.request('PUT', '/notes/rare', { body: { n: 1 } })
    for (let read = 0; read < 2; read++) {
      assert.is((await server.request('GET', '/notes/rare')).status, 200)
      await new Promise((resolve) => setTimeout(resolve, TRUST_MS + 50))
    }
    assert.is((await server.request('GET', '/notes/rare')).status, 200)
    assert.is(watching.openIn(server.dir), 0, 'no watch for a document read seconds apart')
    assert.is((await server.request('GET', '/notes/rare')).status, 200)
    // The store folder, /notes and the document's folder.
    assert.is(watching.openIn(server.dir), 3, 'read again within a second: watched')
  } finally {
    await server.close()
  }
})

test('a change no event tells (a write through a hard link from another folder) is seen within a second: the trust ends with a stat', async () => {
  const server = await startOnFolder()
  const outside = await makeTempDir()
  try {
    await server.request('PUT', '/notes/linked', { body: { n: 1 } })
    await warm(server, '/notes/linked')
    const file = fileOf(server.dir, 'linked')
    watching.statsOf(file)
    assert.equal((await server.request('GET', '/notes/linked')).json, { id: 'linked', n: 1 })
    assert.is(watching.statsOf(file), 0, 'a trusted hit needs no stat')
    const alias = join(outside, 'alias.json')
    linkSync(file, alias)
    writeFileSync(alias, JSON.stringify({ id: 'linked', n: 22 }))
    await new Promise((resolve) => setTimeout(resolve, TRUST_MS + 100))
    assert.equal((await server.request('GET', '/notes/linked')).json, { id: 'linked', n: 22 })
  } finally {
    await server.close()
    await rm(outside, { recursive: true, force: true })
  }
})

test('a hand edit whose event the kernel dropped, its queue overflowed within one turn, is what the next GET returns', async () => {
  const server = await startOnFolder()
  try {
    for (const id of ['hot', 'b', 'c']) {
      await server.request('PUT', `/notes/${id}`, { body: { n: 1 } })
      await warm(server, `/notes/${id}`)
    }
    const file = fileOf(server.dir, 'hot')
    watching.statsOf(file)
    assert.equal((await server.request('GET', '/notes/hot')).json, { id: 'hot', n: 1 })
    assert.is(watching.statsOf(file), 0, 'a trusted hit needs no stat')
    // Events in two other watched folders (of files the store ignores), more than the kernel's queue
    // holds; then the edit, whose event finds the queue full.
    const flood = ['b', 'c'].map((id) => join(server.dir, 'notes', id, '@flood'))
    const read = await withQueueOverflowed(flood, async () => {
      writeFileSync(file, JSON.stringify({ id: 'hot', n: 22 }))
      return server.request('GET', '/notes/hot')
    })
    assert.equal(read.json, { id: 'hot', n: 22 })
    assert.is(watching.statsOf(file), 1, 'looked at after the burst')
  } finally {
    await server.close()
  }
})

test('at most `watches` folders are watched; documents hot together beyond that take no watch from each other, one unused for WATCH_IDLE_MS makes room, and none is left once the store is closed', async () => {
  const server = await startOnFolder(6)
  let restoreClock = () => {}
  try {
    const ids = Array.from({ length: 12 }, (_, index) => `d${index}`)
    const madeBefore = watching.madeIn(server.dir)
    // The writes watch the store folder (their way through /notes, checkWayToWrite); the reads add the rest.
    for (const id of ids) await server.request('PUT', `/notes/${id}`, { body: { id, n: 0 } })
    assert.is(watching.openIn(server.dir), 1)
    let most = 0
    for (let round = 0; round < 3; round++) {
      for (const id of ids) {
        await warm(server, `/notes/${id}`)
        most = Math.max(most, watching.openIn(server.dir))
      }
    }
    // The store folder, /notes and four documents' folders, each watched once: a watch made and closed costs tens of stats.
    assert.is(most, 6)
    assert.is(watching.madeIn(server.dir) - madeBefore, 6, 'no watch traded for another')
    // The first four hot keep their watches while they are read: their GETs need no stat; the others' need one.
    watching.statsOf(fileOf(server.dir, 'd11'))
    watching.statsOf(fileOf(server.dir, 'd0'))
    await server.request('GET', '/notes/d11')
    await server.request('GET', '/notes/d0')
    assert.is(watching.statsOf(fileOf(server.dir, 'd0')), 0, 'a watch in use stays')
    assert.is(watching.statsOf(fileOf(server.dir, 'd11')), 1, 'and takes none from a document hot now')
    // Once the watched documents have gone unread for WATCH_IDLE_MS, a document hot now takes a watch.
    restoreClock = advanceClock(WATCH_IDLE_MS)
    await warm(server, '/notes/d11')
    watching.statsOf(fileOf(server.dir, 'd11'))
    await server.request('GET', '/notes/d11')
    assert.is(watching.statsOf(fileOf(server.dir, 'd11')), 0, 'a watch unused for WATCH_IDLE_MS made room')
    assert.is(watching.openIn(server.dir), 6)
    for (const id of ids) writeFileSync(fileOf(server.dir, id), JSON.stringify({ id, n: 1 }))
    for (const id of ids) assert.equal((await server.request('GET', `/notes/${id}`)).json, { id, n: 1 })
    await server.store.close()
    assert.is(watching.openIn(server.dir), 0)
  } finally {
    restoreClock()
    await server.close()
  }
})

test('a watch closed to make room leaves the folders above the new one watched: one of them moved away and replaced by hand is seen by the next GET', async () => {
  // The store folder, /notes and one document's folder.
  const server = await startOnFolder(3)
  let restoreClock = () => {}
  try {
    await server.request('PUT', '/notes/a', { body: { n: 1 } })
    await server.request('PUT', '/notes/b', { body: { n: 1 } })
    await warm(server, '/notes/a')
    restoreClock = advanceClock(WATCH_IDLE_MS)
    // /notes/a's watch goes, and with it nothing /notes/b needs: /notes had no other document below it.
    await warm(server, '/notes/b')
    watching.statsOf(fileOf(server.dir, 'b'))
    await server.request('GET', '/notes/b')
    assert.is(watching.statsOf(fileOf(server.dir, 'b')), 0, '/notes/b is watched and trusted')
    fs.renameSync(join(server.dir, 'notes'), join(server.dir, 'old-notes'))
    mkdirSync(join(server.dir, 'notes', 'b'), { recursive: true })
    writeFileSync(fileOf(server.dir, 'b'), JSON.stringify({ id: 'b', n: 2 }))
    assert.equal((await server.request('GET', '/notes/b')).json, { id: 'b', n: 2 })
  } finally {
    restoreClock()
    await server.close()
  }
})

test('a watcher that fails leaves every GET looking at its file: a hand edit after it is what the next GET returns', async () => {
  const server = await startOnFolder()
  try {
    await server.request('PUT', '/notes/e', { body: { n: 1 } })
    await warm(server, '/notes/e')
    const file = fileOf(server.dir, 'e')
    watching.statsOf(file)
    await server.request('GET', '/notes/e')
    assert.is(watching.statsOf(file), 0, 'a trusted hit needs no stat')
    watching.fail()
    assert.is(watching.openIn(server.dir), 0)
    writeFileSync(file, JSON.stringify({ id: 'e', n: 2 }))
    assert.equal((await server.request('GET', '/notes/e')).json, { id: 'e', n: 2 })
    assert.is(watching.statsOf(file), 1)
  } finally {
    await server.close()
  }
})

test('a watch refused (the per-user limit, ENOSPC) leaves every GET looking at its file', async () => {
  const server = await startOnFolder()
  try {
    watching.refuse('ENOSPC')
    await server.request('PUT', '/notes/r', { body: { n: 1 } })
    await warm(server, '/notes/r')
    const file = fileOf(server.dir, 'r')
    for (let n = 2; n < 6; n++) {
      writeFileSync(file, JSON.stringify({ id: 'r', n }))
      watching.statsOf(file)
      assert.equal((await server.request('GET', '/notes/r')).json, { id: 'r', n })
      assert.is(watching.statsOf(file), 1)
    }
    assert.is(watching.openIn(server.dir), 0)
  } finally {
    await server.close()
  }
})

test('a folder above a hot document moved away and replaced by hand is seen by the next GET', async () => {
  const server = await startOnFolder()
  try {
    await server.request('PUT', '/notes/m', { body: { n: 1 } })
    await warm(server, '/notes/m')
    await warm(server, '/notes/m')
    fs.renameSync(join(server.dir, 'notes'), join(server.dir, 'old-notes'))
    mkdirSync(join(server.dir, 'notes', 'm'), { recursive: true })
    writeFileSync(fileOf(server.dir, 'm'), JSON.stringify({ id: 'm', n: 2 }))
    assert.equal((await server.request('GET', '/notes/m')).json, { id: 'm', n: 2 })
  } finally {
    await server.close()
  }
})

/** The lstats of /posts' folder that each of `count` POSTs to /posts made, with their statuses. */
async function postsLooking(server: TestServer, count: number, body: object = { n: 1 }): Promise<{ lstats: number[]; statuses: number[] }> {
  const lstats: number[] = []
  const statuses: number[] = []
  watching.lstatsOf(join(server.dir, 'posts'))
  for (let index = 0; index < count; index++) {
    statuses.push((await server.request('POST', '/posts', { body })).status)
    lstats.push(watching.lstatsOf(join(server.dir, 'posts')))
  }
  return { lstats, statuses }
}

test('writes through a collection written into twice within a second need no lstat of its folder, once the store folder is watched; with no watches each looks', async () => {
  const server = await startOnFolder()
  const unwatched = await startOnFolder(0)
  let restoreClock = () => {}
  try {
    // The first finds no folder; the second finds it; the third, within a second, watches the store folder;
    // the fourth's lstat, made with that watch open, trusts the way.
    assert.equal(await postsLooking(server, 6), { lstats: [1, 1, 1, 1, 0, 0], statuses: [201, 201, 201, 201, 201, 201] })
    assert.is(watching.openIn(server.dir), 1, 'the store folder alone is watched')
    assert.equal((await postsLooking(unwatched, 6)).lstats, [1, 1, 1, 1, 1, 1])
    assert.is(watching.openIn(unwatched.dir), 0)
    // A PUT over a document looks at its own folder, never again at the collection's.
    const id = readdirSync(join(server.dir, 'posts'))[0]
    watching.lstatsOf(join(server.dir, 'posts', id))
    assert.is((await server.request('PUT', `/posts/${id}`, { body: { id, n: 2 } })).status, 200)
    assert.is(watching.lstatsOf(join(server.dir, 'posts')), 0)
    assert.is(watching.lstatsOf(join(server.dir, 'posts', id)), 1)
    // Trusted for a second (TRUST_MS) at most, as a hit is: then an lstat again, which trusts it anew.
    restoreClock = advanceClock(TRUST_MS)
    assert.equal((await postsLooking(server, 2)).lstats, [1, 0])
  } finally {
    restoreClock()
    await server.close()
    await unwatched.close()
  }
})

test('a link, a file or another folder put by hand in the place of a trusted collection\'s folder is what the next write finds', async () => {
  const server = await startOnFolder()
  const outside = await makeTempDir()
  const posts = join(server.dir, 'posts')
  try {
    assert.equal((await postsLooking(server, 5)).lstats.slice(-1), [0], 'the way is trusted')
    renameSync(posts, join(server.dir, 'kept'))
    symlinkSync(outside, posts)
    assert.is((await server.request('POST', '/posts', { body: { n: 2 } })).status, 409, 'a link is not followed')
    assert.is((await server.request('PUT', '/posts/chosen', { body: { n: 2 } })).status, 409)
    assert.equal(readdirSync(outside), [], 'nothing was written outside the store')
    unlinkSync(posts)
    renameSync(join(server.dir, 'kept'), posts)
    assert.equal((await postsLooking(server, 3)).lstats.slice(-1), [0], 'trusted again')
    renameSync(posts, join(server.dir, 'kept'))
    writeFileSync(posts, 'not a folder')
    assert.is((await server.request('POST', '/posts', { body: { n: 3 } })).status, 409, 'a file is no folder')
    unlinkSync(posts)
    renameSync(join(server.dir, 'kept'), posts)
    assert.equal((await postsLooking(server, 3)).lstats.slice(-1), [0], 'trusted again')
    const before = readdirSync(posts).length
    renameSync(posts, join(server.dir, 'kept'))
    mkdirSync(posts)
    const created = await server.request('POST', '/posts', { body: { n: 4 } })
    assert.is(created.status, 201)
    assert.equal(readdirSync(posts), [created.json.id], 'the new folder holds the new document')
    assert.is(readdirSync(join(server.dir, 'kept')).length, before, 'the one moved away holds no more than before')
  } finally {
    await server.close()
    await rm(outside, { recursive: true, force: true })
  }
})

/*
 * From another thread, as from another process: the collection's folder swapped for a link to a
 * folder outside the store and back, each time followed at once by a POST, while other threads
 * keep the server busy. Plain JavaScript, run by the worker as it is.
 */
const swapperCode = `
const { workerData, parentPort } = require('node:worker_threads')
const fs = require('node:fs')
const http = require('node:http')
const { port, posts, kept, outside, rounds } = workerData
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const post = () => new Promise((resolve, reject) => {
  const req = http.request({ port, host: '127.0.0.1', path: '/posts', method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
    res.resume().on('end', () => resolve(res.statusCode))
  })
  req.on('error', reject)
  req.end('{"n":1}')
})
;(async () => {
  let followed = 0
  let refusedReal = 0
  for (let round = 0; round < rounds; round++) {
    // Two writes through the real folder: the way is trusted again before the link goes in.
    for (let write = 0; write < 2; write++) if ((await post()) !== 201) refusedReal++
    fs.renameSync(posts, kept)
    fs.symlinkSync(outside, posts)
    if ((await post()) !== 409) followed++
    fs.unlinkSync(posts)
    fs.renameSync(kept, posts)
  }
  agent.destroy()
  parentPort.postMessage({ followed, refusedReal })
})().catch((error) => parentPort.postMessage({ error: String(error) }))
`

test('500 times a link put in place of a trusted collection\'s folder from another thread: no POST after it follows it, under load', async () => {
  const server = await startOnFolder()
  const outside = await makeTempDir()
  try {
    assert.equal((await postsLooking(server, 5)).lstats.slice(-1), [0], 'the way is trusted')
    for (let index = 0; index < OTHERS; index++) await server.request('PUT', `/notes/other${index}`, { body: { index } })
    const targets = Array.from({ length: OTHERS }, (_, index) => `/notes/other${index}`)
    const load = runWorker<{ requests: number; wrong: number }>(loadCode, { port: server.port, targets: [...targets, ...targets] })
    const swapper = runWorker<{ followed: number; refusedReal: number; error?: string }>(swapperCode, {
      port: server.port,
      posts: join(server.dir, 'posts'),
      kept: join(server.dir, 'kept'),
      outside,
      rounds: 500,
    })
    const swapped = await swapper.done
    load.worker.postMessage('stop')
    const loaded = await load.done
    assert.is(swapped.error, undefined)
    assert.is(swapped.followed, 0, 'a POST answered otherwise than 409 while a link was in place')
    assert.equal(readdirSync(outside), [], 'nothing was written outside the store')
    assert.is(swapped.refusedReal, 0)
    assert.ok(loaded.requests > 1000, `the load ran (${loaded.requests} GETs)`)
  } finally {
    await server.close()
    await rm(outside, { recursive: true, force: true })
  }
})

test.run()
