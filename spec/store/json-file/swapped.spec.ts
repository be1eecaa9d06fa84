import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, statSync, watch, writeFileSync } from 'node:fs'
import { readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { JsonFileStore } from '../../../lib/store/index.ts'
import { makeTempDir, startServer, type Answer, type TestServer } from '../../support/helpers.ts'
import { withQueueOverflowed } from '../../support/queue-overflow.ts'

// A db.json that a person (or a tool) changes under the running server (docs/json-server.md,
// "Serving a db.json"): swapped for a link, a directory or a pipe, deleted, saved in the
// middle of a file write, or edited with no watch to tell of it.

const folders: string[] = []
const servers: TestServer[] = []
test.after.each(async () => {
  for (const server of servers.splice(0)) await server.close()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

const text = (value: unknown) => JSON.stringify(value, null, 2)

async function serve(content: unknown, options: { watch?: boolean } = {}) {
  const folder = await makeTempDir('restdir-swapped-')
  folders.push(folder)
  const file = join(folder, 'db.json')
  await writeFile(file, text(content))
  const store = await JsonFileStore.open(file, { log: () => {}, ...options })
  const server = await startServer({ store, jsonServer: true })
  servers.push(server)
  return { folder, file, store, server }
}

/** Resolves with the answer, or rejects when none comes within `ms` (a pipe read would hang). */
function within(ms: number, promise: Promise<Answer>, what: string): Promise<Answer> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} got no answer within ${ms} ms`)), ms)))
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

test('a db.json swapped for a link is served and written through it: the link stays, its target gets the write', async () => {
  const { folder, file, server } = await serve({ posts: [{ id: 1, title: 'one' }] })
  const target = join(folder, 'elsewhere', 'real.json')
  mkdirSync(join(folder, 'elsewhere'))
  await writeFile(target, text({ posts: [{ id: 7, title: 'linked' }] }))
  await rm(file)
  await symlink(target, file)
  // A write always looks at the file first: it lands on what the link leads to, never on the state before.
  const created = await server.request('POST', '/posts', { body: { title: 'new' } })
  assert.is(created.status, 201, created.text)
  assert.equal(created.json, { id: 8, title: 'new' })
  assert.ok(lstatSync(file).isSymbolicLink(), 'the link stays a link')
  assert.equal(JSON.parse(await readFile(target, 'utf8')), { posts: [{ id: 7, title: 'linked' }, { id: 8, title: 'new' }] })
  assert.equal((await server.request('GET', '/posts')).json, [{ id: 7, title: 'linked' }, { id: 8, title: 'new' }])
  assert.is((await server.request('DELETE', '/posts/7')).status, 200)
  assert.equal(JSON.parse(await readFile(target, 'utf8')), { posts: [{ id: 8, title: 'new' }] })
  assert.ok(lstatSync(file).isSymbolicLink(), 'still a link after a second write')
})

test('a db.json deleted, or swapped for a directory or a named pipe, refuses writes with a 503 naming what is there, never a 500 or a hang; put back, it is served and written again', async () => {
  const cases: Array<[string, (file: string) => void, string]> = [
    ['deleted', () => {}, 'db.json was deleted or moved away'],
    ['a directory', (file) => mkdirSync(file), 'db.json is a directory'],
    ['a named pipe', (file) => execFileSync('mkfifo', [file]), 'db.json is a named pipe'],
  ]
  for (const [what, swap, problem] of cases) {
    const { file, server } = await serve({ posts: [{ id: 1, title: 'one' }] })
    await rm(file)
    swap(file)
    const refused = await within(5000, server.request('POST', '/posts', { body: { title: 'lost?' } }), `${what}: POST`)
    assert.is(refused.status, 503, `${what}: ${refused.text}`)
    assert.match(String(refused.headers['content-type']), 'application/problem+json')
    assert.ok(refused.json.detail.includes(problem), `${what}: ${refused.json.detail}`)
    assert.is(refused.headers['retry-after'], '1')
    assert.not.match(refused.text, '/tmp')
    const read = await within(5000, server.request('GET', '/posts'), `${what}: GET`)
    assert.is(read.status, 200, `${what}: reads serve the last good state (${read.text})`)
    assert.equal(read.json, [{ id: 1, title: 'one' }])
    await rm(file, { recursive: true, force: true })
    await writeFile(file, text({ posts: [{ id: 1, title: 'back' }] }))
    const written = await server.request('POST', '/posts', { body: { title: 'after' } })
    assert.is(written.status, 201, `${what}, put back: ${written.text}`)
    assert.equal(JSON.parse(await readFile(file, 'utf8')).posts, [{ id: 1, title: 'back' }, { id: 2, title: 'after' }])
  }
})

test('a hand edit saved while a write is being written is kept: the write is refused with a 503, never laid over it', async () => {
  // Big enough that the temp file takes a while to write, so the edit can land before the rename.
  const posts = Array.from({ length: 40_000 }, (_, index) => ({ id: index + 1, title: `post ${index}`.padEnd(200, '.') }))
  const { folder, file, server } = await serve({ posts })
  const size = statSync(file).size
  let landedEarly = false
  for (let attempt = 0; attempt < 10 && !landedEarly; attempt++) {
    // The person retitles the first post (the rest as it was, so the store takes the edit in one change).
    const edit = { posts: posts.map((post, index) => (index === 0 ? { ...post, title: `edited by hand ${attempt}` } : post)) }
    // When the write's temp file appears, the person saves the file, while the temp file is still short of whole.
    const watcher = watch(folder, (_event, name) => {
      if (landedEarly || !name?.endsWith('.tmp')) return
      const temp = join(folder, name)
      const written = existsSync(temp) ? statSync(temp).size : size
      if (written > size / 2) return
      writeFileSync(file, text(edit))
      landedEarly = true
    })
    const answer = await server.request('PATCH', '/posts/2', { body: { title: 'by the server' } })
    watcher.close()
    if (!landedEarly) continue
    assert.is(answer.status, 503, answer.text)
    assert.match(answer.json.detail, 'db.json was changed by hand while this write was being saved')
    assert.is(await readFile(file, 'utf8'), text(edit), 'the hand edit is in the file, as saved')
    assert.equal((await server.request('GET', '/posts/1')).json, edit.posts[0], 'and is what is served')
    assert.equal((await server.request('GET', '/posts/2')).json, posts[1], 'the refused write is nowhere')
  }
  assert.ok(landedEarly, 'an edit landed while a write was under way')
})

test('a POST sent the moment a hand edit is saved lands on top of it, 100 times: told by the watch, through a link to another folder (whose edits no watch here hears), and with no watch', async () => {
  // Where the watch hears every change, a write takes its word, heard out in the check phase, instead of a look at the file.
  const cases = [
    { what: 'the file itself', linked: false, watch: true },
    { what: 'through a link', linked: true, watch: true },
    { what: 'with no watch', linked: false, watch: false },
  ]
  for (const { what, linked, watch } of cases) {
    const { folder, file, server } = await serve({ posts: [{ id: 1, title: 'one' }] }, { watch })
    let edited = file
    if (linked) {
      mkdirSync(join(folder, 'elsewhere'))
      edited = join(folder, 'elsewhere', 'real.json')
      await writeFile(edited, await readFile(file, 'utf8'))
      await rm(file)
      await symlink(edited, file)
      assert.is((await server.request('GET', '/posts/1')).status, 200)
    }
    for (let round = 0; round < 100; round++) {
      const posts = JSON.parse(await readFile(edited, 'utf8')).posts as Array<{ id: number | string; title: string }>
      const byHand = { id: `h${round}`, title: `saved by hand, round ${round}` }
      await writeFile(edited, text({ posts: [...posts, byHand] }))
      const created = await server.request('POST', '/posts', { body: { title: `posted, round ${round}` } })
      const where = `${what}, round ${round}`
      assert.is(created.status, 201, `${where}: ${created.text}`)
      const inFile = JSON.parse(await readFile(edited, 'utf8')).posts as Array<{ id: number | string }>
      assert.equal(inFile.slice(-2), [byHand, created.json], `${where}: the hand edit, then the POST`)
    }
    assert.ok(!linked || lstatSync(file).isSymbolicLink(), 'the link stays a link')
  }
})

test('a hand edit whose event the kernel dropped, its queue overflowed within one turn, is what the next POST lands on', async () => {
  const { folder, file, server } = await serve({ posts: [{ id: 1, title: 'one' }] })
  assert.is((await server.request('GET', '/posts/1')).status, 200)
  // Events for two other files of the file's folder, more than the kernel's queue holds; then the edit,
  // whose event finds the queue full.
  const flood = ['a.txt', 'b.txt'].map((name) => join(folder, name))
  const byHand = { id: 2, title: 'saved by hand' }
  const created = await withQueueOverflowed(flood, async () => {
    writeFileSync(file, text({ posts: [{ id: 1, title: 'one' }, byHand] }))
    return server.request('POST', '/posts', { body: { title: 'posted' } })
  })
  assert.is(created.status, 201, created.text)
  assert.equal(JSON.parse(await readFile(file, 'utf8')).posts, [{ id: 1, title: 'one' }, byHand, { id: 3, title: 'posted' }])
})

test('with no watch, the default look at the file (once a second) finds a hand edit: within seconds, not never', async () => {
  const { file, server } = await serve({ profile: { name: 'before' } }, { watch: false })
  assert.equal((await server.request('GET', '/profile')).json, { name: 'before' })
  await writeFile(file, text({ profile: { name: 'edited, unwatched, a longer name' } }))
  const started = Date.now()
  let seen = ''
  while (Date.now() - started < 3000) {
    seen = (await server.request('GET', '/profile')).json.name
    if (seen !== 'before') break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.is(seen, 'edited, unwatched, a longer name', 'the edit was served within 3 s')
})

test.run()
