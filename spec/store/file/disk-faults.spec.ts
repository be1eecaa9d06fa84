import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { mkdir, readdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { FileStore, StoreError } from '../../../lib/store/index.ts'
import { makeTempDir, startServer, touchLater, type Answer, type TestServer } from '../../support/helpers.ts'

// What a real disk brings: broken files, pipes, links, a full disk, a store
// folder taken away. Each test makes the fault for real in a store folder of
// its own (these are the file store's faults; the memory store has no files).

/** Resolves with the answer, or rejects when none comes within `ms` (a hang must fail the test, not stall it). */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} got no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

function assertProblem(answer: Answer, status: number, ...mentions: string[]): void {
  assert.is(answer.status, status, answer.text)
  assert.match(String(answer.headers['content-type']), 'application/problem+json')
  for (const text of mentions) assert.ok(answer.json.detail.includes(text), `detail ${JSON.stringify(answer.json.detail)} mentions ${JSON.stringify(text)}`)
  assert.not.match(answer.text, '/tmp')
  assert.not.match(answer.text, '    at ')
}

/** Captures what the server writes with console.error while `task` runs. */
async function capturingLog<T>(task: (log: string[]) => Promise<T>): Promise<T> {
  const log: string[] = []
  const original = console.error
  console.error = (...parts: unknown[]) => log.push(parts.map(String).join(' '))
  try {
    return await task(log)
  } finally {
    console.error = original
  }
}

// ---------------------------------------------------------------- broken files

const broken = suite<{ dir: string; server: TestServer }>('a broken document file')

broken.before.each(async (context) => {
  context.dir = await makeTempDir()
  context.server = await startServer({ store: context.dir })
  await context.server.request('PUT', '/shelf/good', { body: { title: 'fine' } })
})
broken.after.each(async ({ dir, server }) => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

/** Each way a hand-made file can be wrong, the file it makes, and what the answer must say. */
const badFiles: { name: string; make(file: string): void; says: string }[] = [
  { name: 'invalid JSON', make: (file) => writeFileSync(file, '{"title": '), says: 'is not valid JSON' },
  { name: 'an array', make: (file) => writeFileSync(file, '[1, 2]'), says: 'holds an array' },
  { name: 'an empty file', make: (file) => writeFileSync(file, ''), says: 'is empty' },
  { name: 'a directory', make: (file) => mkdirSync(join(file, 'inner'), { recursive: true }), says: 'is a directory' },
]

for (const bad of badFiles) {
  broken(`${bad.name} in a document's place is a 409 naming its URL, its collection still lists, and PUT then DELETE repair it`, async ({ dir, server }) => {
    await mkdir(join(dir, 'shelf', 'bad'), { recursive: true })
    bad.make(join(dir, 'shelf', 'bad', '@.json'))

    const read = await server.request('GET', '/shelf/bad')
    assertProblem(read, 409, '/shelf/bad', bad.says)

    const listing = await capturingLog(async (log) => {
      const answer = await server.request('GET', '/shelf')
      assert.ok(log.some((line) => line.includes('/shelf/bad') && line.includes(bad.says)), log.join('\n'))
      return answer
    })
    assert.is(listing.status, 200)
    assert.equal(listing.json, [{ id: 'good', title: 'fine' }])
    assert.is(listing.headers['x-restdir-skipped'], '/shelf/bad')
    // Sorted and filtered listings read every document: they leave it out too.
    const sorted = await server.request('GET', '/shelf?_sort=title')
    assert.equal(sorted.json, [{ id: 'good', title: 'fine' }])
    assert.is(sorted.headers['x-restdir-skipped'], '/shelf/bad')

    // A PATCH needs the document it would merge into: it hears what is wrong.
    assertProblem(await server.request('PATCH', '/shelf/bad', { body: { title: 'merged' } }), 409, bad.says)

    const put = await server.request('PUT', '/shelf/bad', { body: { title: 'repaired' } })
    assert.is(put.status, 200, put.text)
    assert.equal((await server.request('GET', '/shelf/bad')).json, { id: 'bad', title: 'repaired' })
    assert.equal(JSON.parse(readFileSync(join(dir, 'shelf', 'bad', '@.json'), 'utf8')), { id: 'bad', title: 'repaired' })

  })
}

broken('a DELETE removes a broken document file, whatever is wrong with it', async ({ dir, server }) => {
  for (const [index, bad] of badFiles.entries()) {
    await mkdir(join(dir, 'shelf', `bad${index}`), { recursive: true })
    bad.make(join(dir, 'shelf', `bad${index}`, '@.json'))
  }
  for (const index of badFiles.keys()) {
    const answer = await server.request('DELETE', `/shelf/bad${index}`)
    assert.is(answer.status, 204, `${badFiles[index].name}: ${answer.text}`)
    assert.is((await server.request('GET', `/shelf/bad${index}`)).status, 404)
    assert.not.ok(existsSync(join(dir, 'shelf', `bad${index}`)))
  }
  const listing = await server.request('GET', '/shelf')
  assert.equal(listing.json, [{ id: 'good', title: 'fine' }])
  assert.is(listing.headers['x-restdir-skipped'], undefined)
})

broken.run()

// ---------------------------------------------------------------- pipes

const pipes = suite<{ dir: string; server: TestServer; fifos: string[] }>('a FIFO in a document file\'s place')

pipes.before.each(async (context) => {
  context.dir = await makeTempDir()
  context.fifos = []
  context.server = await startServer({ store: context.dir })
})
pipes.after.each(async ({ dir, server, fifos }) => {
  // Should a reader be stuck on a pipe, opening its other end lets it go, so the server can close.
  for (const fifo of fifos) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
    } catch {}
  }
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

pipes('is answered at once as a 409, and many GETs of pipes never stall other documents, static files or writes', async ({ dir, server, fifos }) => {
  await server.request('PUT', '/pipes/fine', { body: { ok: true } })
  // More pipes than Node's file-system thread pool has threads (4): each would hold one.
  for (let index = 0; index < 8; index++) {
    const folder = join(dir, 'pipes', `p${index}`)
    mkdirSync(folder, { recursive: true })
    execFileSync('mkfifo', [join(folder, '@.json')])
    fifos.push(join(folder, '@.json'))
  }
  const reads = fifos.map((_, index) => within(5000, server.request('GET', `/pipes/p${index}`), `GET /pipes/p${index}`))
  for (const answer of await Promise.all(reads)) assertProblem(answer, 409, 'is a named pipe')
  // Everything else is served meanwhile, the thread pool included (an uncached read and a write use it).
  const others = await within(5000, Promise.all([
    server.request('GET', '/index.html'),
    server.request('PUT', '/pipes/new', { body: { made: true } }),
    server.request('GET', '/pipes/fine'),
  ]), 'reads and writes beside the pipes')
  assert.equal(others.map((answer) => answer.status), [200, 201, 200])
  const listing = await within(5000, server.request('GET', '/pipes'), 'GET /pipes')
  assert.equal(listing.json, [{ id: 'fine', ok: true }, { id: 'new', made: true }])
  assert.is(listing.headers['x-restdir-skipped']?.toString().split(', ').length, 8)
  // And a PUT replaces the pipe with a document.
  assert.is((await server.request('PUT', '/pipes/p0', { body: { was: 'a pipe' } })).status, 200)
  assert.equal((await server.request('GET', '/pipes/p0')).json, { id: 'p0', was: 'a pipe' })
})

pipes('a device in a document file\'s place (an endless /dev/zero) is refused at once, never read', async ({ dir, server }) => {
  mkdirSync(join(dir, 'dev', 'zero'), { recursive: true })
  const file = join(dir, 'dev', 'zero', '@.json')
  let writer: ChildProcess | undefined
  try {
    execFileSync('mknod', [file, 'c', '1', '5'], { stdio: 'pipe' })
  } catch {
    // Where mknod is not permitted, what a reader of /dev/zero meets is made another way: a pipe a
    // writer keeps filling, which opens at once and never ends.
    execFileSync('mkfifo', [file])
    writer = spawn('sh', ['-c', `exec cat /dev/zero > '${file}'`], { stdio: 'ignore' })
  }
  try {
    assert.ok(!statSync(file).isFile(), 'no regular file stands at /dev/zero')
    assertProblem(await within(5000, server.request('GET', '/dev/zero'), 'GET /dev/zero'), 409, '/dev/zero', 'not a regular file')
    assert.is((await server.request('PUT', '/dev/zero', { body: { was: 'a device' } })).status, 200)
    assert.equal((await server.request('GET', '/dev/zero')).json, { id: 'zero', was: 'a device' })
  } finally {
    writer?.kill('SIGKILL')
  }
})

pipes('in place of a long name\'s @name file never stalls a listing', async ({ dir, server, fifos }) => {
  const long = 'x'.repeat(300)
  assert.is((await server.request('PUT', `/names/${long}`, { body: {} })).status, 201)
  assert.is((await server.request('PUT', '/names/short', { body: {} })).status, 201)
  const [hashed] = readdirSync(join(dir, 'names')).filter((name) => name !== 'short')
  const nameFile = join(dir, 'names', hashed, '@name')
  rmSync(nameFile)
  execFileSync('mkfifo', [nameFile])
  fifos.push(nameFile)
  touchLater(join(dir, 'names'))
  const listing = await within(5000, server.request('GET', '/names?_children'), 'GET /names?_children')
  assert.equal(listing.json, ['short'])
})

pipes.run()

// ---------------------------------------------------------------- links

const links = suite<{ dir: string; outside: string; server: TestServer }>('a link in the store')

links.before.each(async (context) => {
  context.dir = await makeTempDir()
  context.outside = await makeTempDir('restdir-outside-')
  writeFileSync(join(context.outside, '@.json'), '{"secret": "outside"}')
  mkdirSync(join(context.outside, 'inner'))
  writeFileSync(join(context.outside, 'inner', '@.json'), '{"secret": "inner"}')
  context.server = await startServer({ store: context.dir })
  await context.server.request('PUT', '/h/real', { body: { here: true } })
})
links.after.each(async ({ dir, outside, server }) => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
  await rm(outside, { recursive: true, force: true })
})

links('a folder linked out of the store is neither read, listed, written through nor deleted through', async ({ dir, outside, server }) => {
  symlinkSync(outside, join(dir, 'h', 'link'))
  const read = await server.request('GET', '/h/link')
  assertProblem(read, 409, '/h/link', 'link')
  assert.not.match(read.text, 'secret')
  assertProblem(await server.request('GET', '/h/link/inner'), 409, 'link')
  assertProblem(await server.request('GET', '/h/link?_children'), 409, 'link')
  const listing = await server.request('GET', '/h')
  assert.equal(listing.json, [{ id: 'real', here: true }])
  assert.equal((await server.request('GET', '/h?_children')).json, ['real'])

  assertProblem(await server.request('PUT', '/h/link/new', { body: { x: 1 } }), 409, '/h/link/new', 'link')
  assertProblem(await server.request('POST', '/h/link', { body: { x: 1 } }), 409, 'link')
  assertProblem(await server.request('DELETE', '/h/link/inner'), 409, 'link')
  assert.equal(readdirSync(outside).sort(), ['@.json', 'inner'])
  assert.equal(readdirSync(join(outside, 'inner')), ['@.json'])

  // Deleting the linked node removes the link alone.
  assert.is((await server.request('DELETE', '/h/link')).status, 204)
  assert.not.ok(existsSync(join(dir, 'h', 'link')))
  assert.equal(readFileSync(join(outside, '@.json'), 'utf8'), '{"secret": "outside"}')
})

links('a document file linked out of the store is refused, and a PUT replaces the link, not the file it points to', async ({ dir, outside, server }) => {
  mkdirSync(join(dir, 'h', 'file'))
  symlinkSync(join(outside, '@.json'), join(dir, 'h', 'file', '@.json'))
  const read = await server.request('GET', '/h/file')
  assertProblem(read, 409, '/h/file', 'is a link')
  assert.not.match(read.text, 'secret')
  assert.is((await server.request('GET', '/h')).headers['x-restdir-skipped'], '/h/file')
  assert.is((await server.request('PUT', '/h/file', { body: { mine: 1 } })).status, 200)
  assert.equal(readFileSync(join(outside, '@.json'), 'utf8'), '{"secret": "outside"}')
  assert.equal((await server.request('GET', '/h/file')).json, { id: 'file', mine: 1 })
})

links('a link swapped in for a folder the cache knows is still refused', async ({ dir, outside, server }) => {
  assert.is((await server.request('GET', '/h/real')).status, 200) // now cached
  await rename(join(dir, 'h', 'real'), join(dir, 'h', 'away'))
  symlinkSync(outside, join(dir, 'h', 'real'))
  const read = await server.request('GET', '/h/real')
  assertProblem(read, 409, 'link')
  assert.not.match(read.text, 'secret')
  assertProblem(await server.request('PUT', '/h/real', { body: { x: 1 } }), 409, 'link')
  assert.equal(readdirSync(outside).sort(), ['@.json', 'inner'])
})

links.run()

// ---------------------------------------------------------------- the store folder taken away

const gone = suite<{ dir: string; server: TestServer }>('the store folder under a running server')

gone.before.each(async (context) => {
  context.dir = await makeTempDir()
  context.server = await startServer({ store: context.dir })
  await context.server.request('PUT', '/notes/a', { body: { text: 'a' } })
})
gone.after.each(async ({ dir, server }) => {
  await server.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
  await rm(dir + '-moved', { recursive: true, force: true })
})

gone('deleted: reads and writes are 503 naming the cause, the folder is never made anew, and the log says so', async ({ dir, server }) => {
  await rm(dir, { recursive: true })
  await capturingLog(async (log) => {
    assertProblem(await server.request('GET', '/notes/a'), 503, 'store folder was deleted or moved')
    assertProblem(await server.request('GET', '/notes'), 503, 'store folder was deleted or moved')
    assertProblem(await server.request('PUT', '/notes/b', { body: { text: 'b' } }), 503, 'store folder was deleted or moved')
    assertProblem(await server.request('POST', '/notes', { body: { text: 'c' } }), 503, 'store folder was deleted or moved')
    assertProblem(await server.request('DELETE', '/notes/a'), 503, 'store folder was deleted or moved')
    assert.ok(log.some((line) => line.includes('store folder') && line.includes('deleted or moved')), log.join('\n'))
  })
  assert.not.ok(existsSync(dir), 'the store folder was made anew')
})

gone('moved away and back: 503 meanwhile, then served again', async ({ dir, server }) => {
  await rename(dir, dir + '-moved')
  await capturingLog(async () => {
    assertProblem(await server.request('GET', '/notes/b'), 503, 'deleted or moved')
    assertProblem(await server.request('PUT', '/notes/b', { body: { text: 'b' } }), 503, 'deleted or moved')
  })
  assert.not.ok(existsSync(dir))
  await rename(dir + '-moved', dir)
  assert.equal((await server.request('GET', '/notes/a')).json, { id: 'a', text: 'a' })
  assert.is((await server.request('PUT', '/notes/b', { body: { text: 'b' } })).status, 201)
})

gone.run()

// ---------------------------------------------------------------- a small disk (tmpfs)

/** Mounts a tmpfs of `size` at a fresh folder, or says why it cannot. */
async function mountTmpfs(size: string): Promise<{ dir: string; unmount(): Promise<void> } | string> {
  if (process.platform !== 'linux') return 'tmpfs needs Linux'
  const dir = await makeTempDir('restdir-tmpfs-')
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' })
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    return `mount -t tmpfs is not permitted here (${String((error as Error).message).split('\n')[0]})`
  }
  return {
    dir,
    async unmount() {
      execFileSync('umount', [dir], { stdio: 'pipe' })
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** Why a tmpfs cannot be mounted here, or undefined when it can (tried once, synchronously, at load). */
function whyNoTmpfs(): string | undefined {
  if (process.platform !== 'linux') return 'tmpfs needs Linux'
  const dir = mkdtempSync(join(tmpdir(), 'restdir-tmpfs-probe-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'pipe' })
    execFileSync('umount', [dir], { stdio: 'pipe' })
    return undefined
  } catch (error) {
    return `mount -t tmpfs is not permitted here (${String((error as Error).message).split('\n')[0]})`
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const tmpfsRefusal = whyNoTmpfs()
if (tmpfsRefusal) console.log(`  skipping the full-disk and read-only tests: ${tmpfsRefusal}`)
const disk = suite('a small disk')
/** The tests of this suite, skipped (and said why above) where no tmpfs can be mounted. */
const diskTest = tmpfsRefusal ? disk.skip : disk

/** Every name under `dir`, as relative paths. */
async function everything(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort()
}

diskTest('full: a write is 507, the old version stays, no temp file or folder is left, and writes work again once space is freed', async () => {
  const mount = await mountTmpfs('1m')
  if (typeof mount === 'string') throw new Error(mount)
  const store = join(mount.dir, 'store')
  await mkdir(store)
  const server = await startServer({ store: store })
  try {
    assert.is((await server.request('PUT', '/notes/a', { body: { text: 'first' } })).status, 201)
    // Fill what is left of the disk.
    try {
      writeFileSync(join(mount.dir, 'filler'), Buffer.alloc(2 * 1024 * 1024, 1))
    } catch (error) {
      assert.is((error as NodeJS.ErrnoException).code, 'ENOSPC')
    }
    const before = await everything(store)
    const big = { text: 'x'.repeat(64 * 1024) }

    await capturingLog(async (log) => {
      assertProblem(await server.request('PUT', '/notes/a', { body: big }), 507, 'disk', 'full')
      assert.ok(log.some((line) => line.includes('the disk is full')), log.join('\n'))
    })
    assert.equal((await server.request('GET', '/notes/a')).json, { id: 'a', text: 'first' })
    assertProblem(await server.request('PUT', '/deep/new/node', { body: big }), 507, 'full')
    assertProblem(await server.request('POST', '/notes', { body: big }), 507, 'full')
    assert.equal(await everything(store), before, 'a failed write left something behind')
    assert.equal((await server.request('GET', '/?_children')).json, ['notes'])
    assert.equal((await server.request('GET', '/notes')).json, [{ id: 'a', text: 'first' }])

    await rm(join(mount.dir, 'filler'))
    assert.is((await server.request('PUT', '/notes/a', { body: big })).status, 200)
    assert.is((await server.request('PUT', '/deep/new/node', { body: big })).status, 201)
    assert.equal((await server.request('GET', '/notes/a')).json, { id: 'a', ...big })
  } finally {
    await server.close(true)
    await mount.unmount()
  }
})

diskTest('made read-only: writes are 503 saying so, reads go on, and writes work again once it is writable', async () => {
  const mount = await mountTmpfs('1m')
  if (typeof mount === 'string') throw new Error(mount)
  const store = join(mount.dir, 'store')
  await mkdir(store)
  const server = await startServer({ store: store })
  try {
    assert.is((await server.request('PUT', '/notes/a', { body: { text: 'first' } })).status, 201)
    execFileSync('mount', ['-o', 'remount,ro', mount.dir])
    await capturingLog(async (log) => {
      assertProblem(await server.request('PUT', '/notes/a', { body: { text: 'second' } }), 503, 'cannot be written')
      assertProblem(await server.request('PUT', '/notes/b', { body: { text: 'b' } }), 503, 'cannot be written')
      assertProblem(await server.request('DELETE', '/notes/a'), 503, 'cannot be written')
      assert.is(log.filter((line) => line.includes('cannot be written')).length, 1, log.join('\n'))
    })
    assert.equal((await server.request('GET', '/notes/a')).json, { id: 'a', text: 'first' })
    execFileSync('mount', ['-o', 'remount,rw', mount.dir])
    assert.is((await server.request('PUT', '/notes/a', { body: { text: 'second' } })).status, 200)
  } finally {
    await server.close(true).catch(() => {})
    await mount.unmount()
  }
})

// ---------------------------------------------------------------- a disk that fills while a batch's files are placed

/** tmpfs counts what it holds in pages of 4 KiB. */
const PAGE = 4096
/** The nodes of the batch: each already holds a small document, and the batch replaces it with one of 15 pages. */
const batchNodes = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5']
const batchDoc = (name: string) => ({ v: 'new', name, pad: 'x'.repeat(15 * PAGE - 200) })

/**
 * Fills the tmpfs at `mount` with a file so that what is left holds the
 * batch's journal (all six documents) and two of its files, and about half a
 * third: the batch is journaled, then the disk fills while its third file is
 * placed. Returns the filler's path.
 */
function fillForBatch(mount: string): string {
  const journalPages = Math.ceil(JSON.stringify(batchNodes.map(batchDoc)).length / PAGE) + 1
  const leave = journalPages + 2 * 15 + 8
  const free = statfsSync(mount).bavail * statfsSync(mount).bsize / PAGE
  assert.ok(free > leave, `the tmpfs has ${free} pages free`)
  const filler = join(mount, 'filler')
  writeFileSync(filler, Buffer.alloc((free - leave) * PAGE, 1))
  return filler
}

/** The journals of batches in the store folder. */
function journals(store: string): string[] {
  return readdirSync(store).filter((name) => name.startsWith('@batch-'))
}

/** What the document file of a batch node holds on disk: 'new', 'old', or something else. */
function onDisk(store: string, name: string): string {
  return (JSON.parse(readFileSync(join(store, 'b', name, '@.json'), 'utf8')) as { v: string }).v
}

/** Starts a server on a store folder on a fresh tmpfs, with the batch's nodes and a node beside them written. */
async function storeOnSmallDisk(): Promise<{ mount: { dir: string; unmount(): Promise<void> }; store: string; server: TestServer }> {
  const mount = await mountTmpfs('2m')
  if (typeof mount === 'string') throw new Error(mount)
  const store = join(mount.dir, 'store')
  await mkdir(store)
  const server = await startServer({ store })
  for (const name of batchNodes) assert.is((await server.request('PUT', `/b/${name}`, { body: { v: 'old' } })).status, 201)
  assert.is((await server.request('PUT', '/outside/a', { body: { v: 'a' } })).status, 201)
  return { mount, store, server }
}

/** Sends the batch that replaces every batch node; the disk fills on its third file, so it must be a 507. */
async function sendFillingBatch(server: TestServer, store: string): Promise<void> {
  const requests = batchNodes.map((name) => ({ method: 'PUT', path: `/b/${name}`, body: batchDoc(name) }))
  const answer = await capturingLog(() => within(5000, server.request('POST', '/?_batch', { body: { requests } }), 'the batch'))
  // The batch's own answer names the fault and says it is completed from its journal, not to be sent again.
  assertProblem(answer, 507, 'the disk is full', 'completes it from the journal', 'Do not send it again')
  // The disk really is half placed, and the journal there: what the store must neither serve nor lose.
  assert.equal(batchNodes.map((name) => onDisk(store, name)), ['new', 'new', 'old', 'old', 'old', 'old'])
  assert.is(journals(store).length, 1)
}

/** Polls `check` until it holds, or fails after `ms`. */
async function eventually(ms: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

diskTest('filled while a batch places its files: the batch is 507, its nodes are 503 with Retry-After until space is freed, then it is completed and later writes survive a restart', async () => {
  const { mount, store, server: first } = await storeOnSmallDisk()
  let server = first
  try {
    const { last } = (await server.request('GET', '/outside?_changes')).json as { last: number }
    const filler = fillForBatch(mount.dir)
    await sendFillingBatch(server, store)

    // Neither half of the batch is served, nor a node above it, and none waits: each is a 503 at once.
    for (const target of ['/b/n0', '/b/n5', '/b', '/b?_children', '/?_children']) {
      const answer = await within(2000, server.request('GET', target), `GET ${target}`)
      assertProblem(answer, 503, 'could not be completed on disk', 'the disk is full')
      assert.is(answer.headers['retry-after'], '1')
    }
    // No write to its nodes is taken: the batch, when completed, would overwrite it.
    assertProblem(await within(2000, server.request('PUT', '/b/n3', { body: { v: 'lost?' } }), 'PUT /b/n3'), 503, 'could not be completed on disk')
    assertProblem(await within(2000, server.request('DELETE', '/b/n0'), 'DELETE /b/n0'), 503, 'could not be completed on disk')
    assertProblem(await within(2000, server.request('POST', '/?_batch', { body: { requests: [{ method: 'PUT', path: '/b/n4', body: { v: 'x' } }] } }), 'a second batch'), 503)
    // Nodes elsewhere are served.
    assert.equal((await server.request('GET', '/outside/a')).json, { id: 'a', v: 'a' })
    assert.is((await server.request('PUT', '/outside/a', { body: { v: 'a2' } })).status, 200)

    await rm(filler)
    await eventually(5000, 'the batch completed', async () => (await server.request('GET', '/b/n5')).status === 200)
    for (const name of batchNodes) assert.equal((await server.request('GET', `/b/${name}`)).json, { id: name, ...batchDoc(name) })
    assert.equal(journals(store), [])
    const changes = (await server.request('GET', `/b?_changes&since=${last}`)).json as { changes: { type: string; path: string }[] }
    assert.equal(changes.changes.map(({ type, path }) => `${type} ${path}`), batchNodes.map((name) => `put /b/${name}`))

    assert.is((await server.request('PUT', '/b/n3', { body: { v: 'after' } })).status, 200)
    await server.close(true)
    server = await startServer({ store })
    assert.equal((await server.request('GET', '/b/n3')).json, { id: 'n3', v: 'after' })
    assert.equal((await server.request('GET', '/b/n0')).json, { id: 'n0', ...batchDoc('n0') })
    assert.equal((await server.request('GET', '/outside/a')).json, { id: 'a', v: 'a2' })
  } finally {
    await server.close(true).catch(() => {})
    await mount.unmount()
  }
})

diskTest('a server closed while a batch is unfinished closes at once, stops retrying, and the next start completes the batch from its journal', async () => {
  const { mount, store, server } = await storeOnSmallDisk()
  try {
    const filler = fillForBatch(mount.dir)
    await sendFillingBatch(server, store)
    await within(3000, server.close(true), 'closing the server')
    await rm(filler)
    // Space is free, but a closed store no longer retries: the journal waits for the next start.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.is(journals(store).length, 1)
    assert.is(onDisk(store, 'n5'), 'old')
  } catch (error) {
    await server.close(true).catch(() => {})
    await mount.unmount()
    throw error
  }
  const next = await startServer({ store })
  try {
    for (const name of batchNodes) assert.equal((await next.request('GET', `/b/${name}`)).json, { id: name, ...batchDoc(name) })
    assert.equal(journals(store), [])
  } finally {
    await next.close(true)
    await mount.unmount()
  }
})

/** A store (no server) on a store folder on a fresh tmpfs, the batch's nodes written. */
async function fileStoreOnSmallDisk(): Promise<{ mount: { dir: string; unmount(): Promise<void> }; dir: string; store: FileStore }> {
  const mount = await mountTmpfs('2m')
  if (typeof mount === 'string') throw new Error(mount)
  const dir = join(mount.dir, 'store')
  await mkdir(dir)
  const store = await FileStore.open(dir)
  try {
    for (const name of batchNodes) await store.write(['b', name], { v: 'old' })
  } catch (error) {
    await store.close()
    await mount.unmount()
    throw error
  }
  return { mount, dir, store }
}

/** Fills the disk and sends the store the batch that replaces every batch node: it fails on its third file. */
function failingBatch(store: FileStore, mount: string): Promise<unknown> {
  fillForBatch(mount)
  return capturingLog(() => store.batch(batchNodes.map((name) => ({ kind: 'write' as const, path: ['b', name], doc: batchDoc(name) }))).catch((error: unknown) => error))
}

diskTest('the store itself refuses every write on one chain with an unfinished batch\'s nodes, whatever was read before, and takes writes elsewhere', async () => {
  const { mount, dir, store } = await fileStoreOnSmallDisk()
  try {
    const failed = await failingBatch(store, mount.dir)
    assert.is((failed as StoreError).kind, 'batch-interrupted')
    assert.is(((failed as StoreError).cause as StoreError).kind, 'disk-full')
    const refused = async (what: string, attempt: Promise<unknown>) => {
      const error = await within(2000, attempt.then(() => undefined, (caught: unknown) => caught), what)
      assert.ok(error instanceof StoreError && error.kind === 'batch-unfinished', `${what}: ${String(error)}`)
    }
    await refused('write /b/n5', store.write(['b', 'n5'], { v: 'lost?' }))
    await refused('create /b/n0/below', store.create(['b', 'n0', 'below'], { v: 'lost?' }))
    await refused('remove /b', store.remove(['b']))
    await refused('batch /b/n4', store.batch([{ kind: 'write', path: ['b', 'n4'], doc: { v: 'lost?' } }]))
    assert.is(onDisk(dir, 'n5'), 'old')
    assert.ok(existsSync(join(dir, 'b', 'n5')))
    assert.is((await store.write(['elsewhere'], { v: 'taken' })).created, true)
  } finally {
    await within(3000, store.close(), 'closing the store')
    await mount.unmount()
  }
})

diskTest('a page of an unfinished batch\'s nodes, answered from memory a moment before, is refused as each of them is', async () => {
  const { mount, store } = await fileStoreOnSmallDisk()
  try {
    // The disk fills while the batch writes n2: n3 to n5 it has not touched, and their files stay as they were.
    const unplaced = batchNodes.slice(3)
    const fromMemory = () => store.textsFromMemory(['b'], unplaced)
    // Read four times each: cached, hot, watched, then trusted (lib/store/file/watched-hits.ts).
    for (let read = 0; read < 4; read++) for (const name of unplaced) await store.readText(['b', name])
    assert.equal(await fromMemory(), unplaced.map(() => '{"v":"old"}'))
    await failingBatch(store, mount.dir)
    assert.is(await fromMemory(), undefined, 'not from memory')
    const error = await store.readText(['b', 'n3']).then(() => undefined, (caught: unknown) => caught)
    assert.ok(error instanceof StoreError && error.kind === 'batch-unfinished', String(error))
  } finally {
    await within(3000, store.close(), 'closing the store')
    await mount.unmount()
  }
})

disk.run()
