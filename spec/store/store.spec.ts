import { spawn, spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { toHttpError } from '../../lib/http/problem.ts'
import { StoreError } from '../../lib/store/errors.ts'
import { FileStore } from '../../lib/store/index.ts'
import type { NodePath } from '../../lib/store/index.ts'
import { crashWrite } from '../support/fixtures/store-crash-writer.ts'
import { seeded } from '../support/random.ts'

function tempFolder(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'restdir-store-'))
}

/** Everything below `dir`, as relative paths, sorted: the layout a person sees. */
async function listTree(dir: string): Promise<string[]> {
  return ((await readdir(dir, { recursive: true })) as string[]).sort()
}

/** The pid of a process that has exited, so no lock can belong to it. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid as number
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

// ---------------------------------------------------------------------------
// What every store does is the Store contract (lib/store/contract.ts), held on
// every store by spec/every-store/store-contract.spec.ts; here, what is the file store's own.

// ---------------------------------------------------------------------------
// What only the file store shows: its files, its lock, its crash safety.

const files = suite<{ dir: string; store: FileStore }>('FileStore files', {} as { dir: string; store: FileStore })
files.before.each(async (context) => {
  context.dir = await tempFolder()
  context.store = await FileStore.open(context.dir)
})
files.after.each(async ({ dir, store }) => {
  await store.close()
  await rm(dir, { recursive: true, force: true })
})

files('the document of /user/abc is the file user/abc/@.json, pretty JSON ending in a newline', async ({ dir, store }) => {
  await store.write(['user', 'abc'], { id: 'abc', name: 'Ann' })
  const text = await readFile(join(dir, 'user', 'abc', '@.json'), 'utf8')
  assert.is(text, '{\n  "id": "abc",\n  "name": "Ann"\n}\n')
  assert.equal(await listTree(dir), ['@lock', '@lock.sock', 'user', join('user', 'abc'), join('user', 'abc', '@.json')])
})

files('node directories carry the encoded segment names', async ({ dir, store }) => {
  for (const name of ['..', 'a/b', 'CON', 'con', 'Ab', 'aB', 'é']) await store.write([name], {})
  const names = (await readdir(dir)).filter((name) => !name.startsWith('@')).sort()
  assert.equal(names, ['!ab', '!c!o!n', '%2e%2e', '%63on', '%c3%a9', 'a!b', 'a%2fb'])
})

files('a hashed directory keeps the whole segment in its @name file', async ({ dir, store }) => {
  const long = 'é'.repeat(100)
  await store.write([long], {})
  const [name] = (await readdir(dir)).filter((entry) => !entry.startsWith('@'))
  assert.match(name, /~[0-9a-f]{40}$/)
  assert.is(await readFile(join(dir, name, '@name'), 'utf8'), long)
})

files('a document edited by hand is what the next read returns, with a new ETag', async ({ dir, store }) => {
  const { etag } = await store.write(['note'], { text: 'old' })
  await writeFile(join(dir, 'note', '@.json'), '{"text": "edited by hand"}')
  const stored = await store.read(['note'])
  assert.equal(stored?.doc, { text: 'edited by hand' })
  assert.is.not(stored?.etag, etag)
  // Files saved by Windows editors may start with a byte-order mark.
  await writeFile(join(dir, 'note', '@.json'), '\ufeff{"text": "bom"}')
  assert.equal((await store.read(['note']))?.doc, { text: 'bom' })
})

files('a document file that is not valid JSON is a bad-document error naming the node, and can still be removed', async ({ dir, store }) => {
  await store.write(['broken', 'doc'], {})
  await writeFile(join(dir, 'broken', 'doc', '@.json'), '{"text": ')
  const error = await rejection(store.read(['broken', 'doc']))
  assert.instance(error, StoreError)
  assert.is((error as StoreError).kind, 'bad-document')
  assert.equal((error as StoreError).path, ['broken', 'doc'])
  assert.is((error as StoreError).reason, 'is not valid JSON')
  assert.not.ok((error as StoreError).message.includes(dir))
  assert.equal(await store.remove(['broken', 'doc']), { existed: true })
  assert.not.ok(await store.exists(['broken']))
})

files('a document file holding JSON that is not an object is a bad-document error as well', async ({ dir, store }) => {
  await store.write(['arr'], {})
  await writeFile(join(dir, 'arr', '@.json'), '[1, 2]')
  const error = await rejection(store.read(['arr']))
  assert.is((error as StoreError).kind, 'bad-document')
  assert.is((error as StoreError).reason, 'holds an array')
})

files('folders that are no encoding and stray files are not nodes', async ({ dir, store }) => {
  await store.write(['real'], {})
  await mkdir(join(dir, 'Notes'))
  await mkdir(join(dir, 'con'))
  await writeFile(join(dir, 'readme.txt'), 'hello')
  await writeFile(join(dir, 'real', 'draft.json'), '{}')
  assert.equal(await store.children([]), ['real'])
  assert.equal(await store.children(['real']), [])
})

files('an empty directory left over is not a node', async ({ dir, store }) => {
  await mkdir(join(dir, 'empty'))
  await writeFile(join(dir, 'empty', '@tmp-left-over'), '{}')
  assert.not.ok(await store.exists(['empty']))
  assert.is(await store.children(['empty']), undefined)
  assert.equal(await store.remove(['empty']), { existed: false })
})

files('removing a subtree leaves no trash and no empty directories behind', async ({ dir, store }) => {
  await store.write(['keep'], {})
  await store.write(['a', 'b', 'c'], {})
  await store.write(['a', 'b', 'c', 'd'], {})
  await store.write(['long', 'x'.repeat(300), 'leaf'], {})
  await store.remove(['a', 'b'])
  await store.remove(['long', 'x'.repeat(300), 'leaf'])
  assert.equal(await listTree(dir), ['@lock', '@lock.sock', 'keep', join('keep', '@.json')])
})

files('a path too long for the file system is a path-too-long error, which the client hears as 414', async ({ store }) => {
  const path = Array.from({ length: 32 }, (_, n) => `${n}`.repeat(250).slice(0, 250))
  for (const attempt of [() => store.write(path, {}), () => store.read(path), () => store.create(path, {})]) {
    const error = await rejection(attempt())
    assert.instance(error, StoreError)
    assert.is((error as StoreError).kind, 'path-too-long')
    assert.is(toHttpError(error).status, 414)
  }
})

files.run()

const lock = suite('FileStore lock')

lock('a second FileStore on the same folder is refused while the first is open, and let in once it closes', async () => {
  const dir = await tempFolder()
  const first = await FileStore.open(dir)
  const error = (await rejection(FileStore.open(dir))) as NodeJS.ErrnoException
  assert.is(error.code, 'ESTORELOCKED')
  assert.is(
    error.message,
    `The store folder ${dir} is in use by another restdir (pid ${process.pid}); stop that one first.`,
  )
  await first.close()
  assert.equal(await readdir(dir), [], 'closing removes the lock note and the lock socket')
  const second = await FileStore.open(dir)
  assert.equal(JSON.parse(await readFile(join(dir, '@lock'), 'utf8')).pid, process.pid)
  await second.close()
  await rm(dir, { recursive: true })
})

lock('a lock note naming a live pid is taken over when nobody listens on the lock socket', async () => {
  const dir = await tempFolder()
  // pid 1 always lives (in a container it is the restarted server itself): a pid proves nothing.
  await writeFile(join(dir, '@lock'), '{"pid":1}\n')
  const store = await FileStore.open(dir)
  assert.equal(JSON.parse(await readFile(join(dir, '@lock'), 'utf8')).pid, process.pid)
  await store.close()
  await rm(dir, { recursive: true })
})

lock('a lock left by a dead process is taken over, and the crashed run is cleaned up', async () => {
  const dir = await tempFolder()
  await writeFile(join(dir, '@lock'), JSON.stringify({ pid: deadPid() }))
  await mkdir(join(dir, 'user', 'abc'), { recursive: true })
  await writeFile(join(dir, 'user', 'abc', '@.json'), '{"id": "abc"}\n')
  await writeFile(join(dir, 'user', 'abc', '@tmp-dead-7'), '{"id": "ab')
  await writeFile(join(dir, '@tmp-dead-lock'), '{"pid": 1}')
  await mkdir(join(dir, '@trash-dead-3', 'old'), { recursive: true })
  await writeFile(join(dir, '@trash-dead-3', 'old', '@.json'), '{}')
  await mkdir(join(dir, 'user', 'half', 'made'), { recursive: true })
  await writeFile(join(dir, 'user', 'half', 'made', '@tmp-dead-9'), '{}')

  const store = await FileStore.open(dir)
  await store.recovery
  assert.equal(JSON.parse(await readFile(join(dir, '@lock'), 'utf8')).pid, process.pid)
  assert.equal(await listTree(dir), ['@lock', '@lock.sock', 'user', join('user', 'abc'), join('user', 'abc', '@.json')])
  assert.equal(await store.read(['user', 'abc']).then((stored) => stored?.doc), { id: 'abc' })
  await store.close()
  await rm(dir, { recursive: true })
})

lock('writes made while the crash cleanup runs all land, also in directories it is removing', async () => {
  const dir = await tempFolder()
  await writeFile(join(dir, '@lock'), JSON.stringify({ pid: deadPid() }))
  const names = Array.from({ length: 300 }, (_, n) => `n${n}`)
  for (const name of names) await mkdir(join(dir, 'left', name, 'empty'), { recursive: true })
  const store = await FileStore.open(dir)
  const writes: Promise<unknown>[] = []
  for (const name of names) {
    writes.push(store.write(['left', name], { name }))
    // Spread the writes over the time the cleanup runs.
    await new Promise((next) => setImmediate(next))
  }
  await Promise.all(writes)
  await store.recovery
  assert.equal(await store.children(['left']), [...names].sort())
  for (const name of names) assert.equal((await store.read(['left', name]))?.doc, { name })
  await store.close()
  await rm(dir, { recursive: true })
})

lock('a lock file nobody can read is taken over', async () => {
  const dir = await tempFolder()
  await writeFile(join(dir, '@lock'), 'not json')
  const store = await FileStore.open(dir)
  await store.recovery
  assert.equal(JSON.parse(await readFile(join(dir, '@lock'), 'utf8')).pid, process.pid)
  await store.close()
  await rm(dir, { recursive: true })
})

lock('close leaves alone a lock that another run has taken over since', async () => {
  const dir = await tempFolder()
  const store = await FileStore.open(dir)
  await writeFile(join(dir, '@lock'), '{"pid":1}\n')
  await store.close()
  assert.is(await readFile(join(dir, '@lock'), 'utf8'), '{"pid":1}\n')
  await rm(dir, { recursive: true })
})

lock.run()

// ---------------------------------------------------------------------------
// A process killed at a random instant (seeded) loses no acknowledged write
// and leaves no torn document: the store it leaves opens and reads whole.

const crash = suite('FileStore crash')

/** Runs the writer fixture until `killAfter` ms after it is ready, then SIGKILLs it; returns the sequences it acknowledged. */
async function writeThenKill(dir: string, first: number, killAfter: number): Promise<number[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'support', 'fixtures', 'store-crash-writer.ts'), dir, String(first)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout.setEncoding('utf8')
  const exited = new Promise((done) => child.once('exit', done))
  await new Promise<void>((ready) => {
    child.stdout.on('data', (chunk: string) => {
      output += chunk
      if (output.startsWith('ready\n')) ready()
    })
    child.once('exit', () => ready())
  })
  await new Promise((wait) => setTimeout(wait, killAfter))
  child.kill('SIGKILL')
  await exited
  assert.ok(output.startsWith('ready\n'), 'the writer started')
  // Only whole lines: the kill may cut the last one.
  return output.split('\n').slice(1, -1).map((line) => JSON.parse(line).sequence as number)
}

/** Every `@.json` below `dir`, as node paths (the directory names, not decoded: they only need to be distinct). */
async function documentFiles(dir: string): Promise<string[]> {
  return (await listTree(dir)).filter((path) => path.endsWith('@.json'))
}

crash('after SIGKILL at random instants every acknowledged write is there and no document is torn', async () => {
  const dir = await tempFolder()
  const random = seeded(7)
  const lastWritten = new Map<string, number>()
  let acknowledged = 0
  for (let round = 0; round < 5; round++) {
    const first = (round + 1) * 1_000_000
    for (const sequence of await writeThenKill(dir, first, random.between(20, 250))) {
      lastWritten.set(JSON.stringify(crashWrite(sequence).path), sequence)
      acknowledged++
    }

    const store = await FileStore.open(dir)
    await store.recovery
    assert.equal(JSON.parse(await readFile(join(dir, '@lock'), 'utf8')).pid, process.pid, 'the lock is taken over')
    for (const [key, sequence] of lastWritten) {
      const path = JSON.parse(key) as NodePath
      const stored = await store.read(path)
      assert.ok(stored, `${key} is there`)
      const found = stored.doc.sequence as number
      assert.ok(found >= sequence, `${key} holds write ${sequence} or a later one, not ${found}`)
      assert.equal(crashWrite(found).path, path, `${key} holds a write meant for it`)
      assert.equal(stored.doc, crashWrite(found).doc, `${key} holds write ${found} whole`)
    }
    for (const file of await documentFiles(dir)) JSON.parse(await readFile(join(dir, file), 'utf8'))
    assert.not.ok((await listTree(dir)).some((path) => /@tmp-|@trash-/.test(path)), 'the leftovers are swept')
    await store.close()
  }
  assert.ok(acknowledged > 50, `the writer got ${acknowledged} writes acknowledged`)
  await rm(dir, { recursive: true })
})

crash.run()
