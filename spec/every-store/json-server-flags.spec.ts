import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { makeTempDir, send, testStoreKind } from '../support/helpers.ts'
import { freshSchema } from '../support/postgres.ts'
import { freePort } from '../support/process.ts'
import { startProgram, stopPrograms, type Running } from '../support/side-by-side.ts'

// json-server's flags (docs/json-server.md, "Its command line") on the store of this pass: the
// command starts from the same db.json (--fixture) in a store folder, in memory or in PostgreSQL,
// and each flag must do there what it does on a db.json (spec/cli/json-server-flags.spec.ts
// compares that with json-server itself).

const db = {
  posts: [{ id: 1, title: 'json-server', author: 'typicode' }, { id: 2, title: 'restdir', author: 'someone' }],
  comments: [{ id: 1, body: 'some comment', postId: 1 }],
  profile: { name: 'typicode' },
}

const cleanups: Array<() => Promise<void>> = []

test.after(async () => {
  await stopPrograms()
  for (const cleanup of cleanups) await cleanup()
})

/** The store arguments of this pass: a folder, nothing (in memory, with --fixture) or a fresh PostgreSQL schema. */
async function storeArgs(): Promise<string[]> {
  if (testStoreKind === 'memory') return []
  if (testStoreKind === 'postgres') {
    const schema = await freshSchema(process.env.RESTDIR_TEST_POSTGRES_URL!)
    cleanups.push(() => schema.drop())
    return ['--store', schema.url]
  }
  const dir = await makeTempDir('restdir-flags-store-')
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return ['--store', dir]
}

/** restdir started from db.json on this pass's store, in a folder holding a/ and b/, with `args`. */
async function start(args: string[], files: Record<string, string> = {}): Promise<Running> {
  const cwd = await makeTempDir('restdir-flags-')
  cleanups.push(() => rm(cwd, { recursive: true, force: true }))
  const all = { 'db.json': JSON.stringify(db), 'a/page.txt': 'page from a', 'b/page.txt': 'page from b', 'b/only-b.txt': 'only in b', ...files }
  for (const [name, text] of Object.entries(all)) {
    await mkdir(path.dirname(path.join(cwd, name)), { recursive: true })
    await writeFile(path.join(cwd, name), text)
  }
  const port = await freePort()
  return startProgram('restdir', ['--fixture', 'db.json', ...(await storeArgs()), '-p', String(port), '-q', ...args], cwd, port)
}

test('-s a --static b: the first folder that has the file answers, and the data API answers beside them', async () => {
  const cli = await start(['-s', 'a', '--static', 'b', '--json-server'])
  assert.is((await send(cli.port, 'GET', '/page.txt')).text, 'page from a')
  assert.is((await send(cli.port, 'GET', '/only-b.txt')).text, 'only in b')
  assert.is((await send(cli.port, 'GET', '/posts/1')).json.title, 'json-server')
  await cli.stop()
})

test('--ro refuses every write, with 403 in the json-server mode and 405 outside it, and changes nothing', async () => {
  for (const [args, status] of [[['--ro'], 405], [['--read-only', '--json-server'], 403]] as const) {
    const cli = await start([...args])
    const refused = await send(cli.port, 'POST', '/posts', { body: { title: 'refused' } })
    assert.is(refused.status, status, `${args.join(' ')}: ${refused.text}`)
    assert.is(refused.headers['content-type'], 'application/problem+json')
    assert.is((await send(cli.port, 'DELETE', '/posts/1')).status, status)
    assert.is((await send(cli.port, 'GET', '/posts/1')).json.title, 'json-server')
    await cli.stop()
  }
})

test('--no-cors sends no CORS header, and refuses a write from another origin', async () => {
  const other = { Origin: 'http://localhost:5173' }
  const plain = await start([])
  assert.is((await send(plain.port, 'GET', '/posts/1', { headers: other })).headers['access-control-allow-origin'], other.Origin, 'a loopback origin gets them otherwise')
  await plain.stop()
  const cli = await start(['--nc'])
  const read = await send(cli.port, 'GET', '/posts/1', { headers: other })
  assert.is(read.status, 200)
  assert.equal(Object.keys(read.headers).filter((name) => name.startsWith('access-control-')), [])
  const preflight = await send(cli.port, 'OPTIONS', '/posts', { headers: { ...other, 'Access-Control-Request-Method': 'POST' } })
  assert.is(preflight.status, 403)
  assert.is((await send(cli.port, 'PUT', '/notes/a', { headers: other, body: { v: 1 } })).status, 403)
  const own = await send(cli.port, 'PUT', '/notes/a', { headers: { Origin: `http://127.0.0.1:${cli.port}` }, body: { v: 1 } })
  assert.is(own.status, 201, 'the server\'s own page writes')
  assert.equal(Object.keys(own.headers).filter((name) => name.startsWith('access-control-')), [])
  await cli.stop()
})

test('-S snaps, then s and Enter: db-<time>.json holds the data as GET /db answers it', async () => {
  const cli = await start(['-S', 'snaps', '--json-server', '--watch'], { 'snaps/.keep': '' })
  assert.is((await send(cli.port, 'POST', '/comments', { body: { body: 'another', postId: 2 } })).status, 201)
  cli.type('s\n')
  const deadline = Date.now() + 20_000
  let files: string[] = []
  while ((files = readdirSync(path.join(cli.cwd, 'snaps')).filter((name) => /^db-\d+\.json$/.test(name))).length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.is(files.length, 1, `one snapshot: ${files.join(' ')}`)
  const snapshot = JSON.parse(readFileSync(path.join(cli.cwd, 'snaps', files[0]), 'utf8'))
  assert.equal(snapshot, (await send(cli.port, 'GET', '/db')).json)
  assert.is(snapshot.comments.length, 2)
  assert.equal(snapshot.profile, db.profile)
  await cli.stop()
})

test('a json-server.json gives its options, a list of static folders among them', async () => {
  const cli = await start([], { 'json-server.json': JSON.stringify({ 'read-only': true, static: ['b', 'a'] }) })
  assert.is((await send(cli.port, 'GET', '/page.txt')).text, 'page from b')
  assert.is((await send(cli.port, 'PUT', '/notes/a', { body: {} })).status, 405)
  assert.match(cli.stdout(), /options from \S+json-server\.json \(--config\)/)
  await cli.stop()
})

test.run()
