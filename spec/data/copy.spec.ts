import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { FileStore, ImportError, MemoryStore, PostgresStore, copyStore, importDatabaseFile, type NodePath, type Store } from '../../lib/index.ts'
import { makeTempDir, send, startServer } from '../support/helpers.ts'
import { runCli, startCli, stopAll } from '../support/process.ts'
import { freshSchema, startTestPostgres, type TestPostgres } from '../support/postgres.ts'

// Moving a store (docs/postgres.md, "Moving a store"): `--import` copies a store folder
// into PostgreSQL and back, or a json-server db.json into either, every
// document arriving as the source answers it. A copy into a store that holds
// documents, from a folder a server is using, from a source with a broken
// document, or into itself is refused, and writes nothing.

let postgres: TestPostgres | undefined
const folders: string[] = []
const schemas: { drop(): Promise<void> }[] = []

test.before(async () => {
  postgres = await startTestPostgres()
})

test.after(async () => {
  await stopAll()
  for (const schema of schemas) await schema.drop().catch(() => {})
  await postgres?.dispose()
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function folder(): Promise<string> {
  const dir = await makeTempDir('restdir-copy-')
  folders.push(dir)
  return dir
}

async function database(): Promise<string> {
  const schema = await freshSchema(postgres!.url)
  schemas.push(schema)
  return schema.url
}

/** Every file of a store folder but its lock, by path, with its bytes as text. */
async function folderFiles(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = join(at, entry.name)
      if (entry.isDirectory()) await walk(full)
      else if (!entry.name.startsWith('@lock')) files.set(relative(dir, full), await readFile(full, 'utf8'))
    }
  }
  await walk(dir)
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** Every document of a store as it answers it: path → compact JSON text and ETag. */
async function storeDocuments(store: Store): Promise<Map<string, { json: string; etag: string }>> {
  const found = new Map<string, { json: string; etag: string }>()
  const visit = async (path: NodePath): Promise<void> => {
    const stored = await store.read(path)
    if (stored) found.set(JSON.stringify(path), { json: JSON.stringify(stored.doc), etag: stored.etag })
    for (const name of (await store.children(path)) ?? []) await visit([...path, name])
  }
  await visit([])
  return found
}

const LONG = 'l'.repeat(300)

/** A store folder written through the API: numeric ids, odd names, nested subtrees, users and playlists. */
async function sourceFolder(): Promise<{ dir: string; count: number }> {
  const dir = join(await folder(), 'source')
  const server = await startServer({ store: dir })
  const put = async (target: string, body: unknown) => {
    const answer = await server.request('PUT', target, { body })
    assert.is(answer.status, 201, `${target}: ${answer.text}`)
  }
  try {
    for (const id of [1, 2, 10, 100]) await put(`/posts/${id}`, { id, title: `post ${id}`, views: id * 1.5, nested: { z: 1, a: [2, { b: null }] } })
    await put('/posts/10/comments/1', { id: 1, text: 'nested' })
    await put('/posts/10/comments/1/replies/x', { text: 'deeper' })
    const odd = ['héllo wörld', 'Ada', 'ada', '🙂', 'a%2Fb', '%', '..', 'con', 'dot.', '\u0001x', 'a\u0000b', LONG, '\uffff', 'tab\there']
    for (const name of odd) await put(`/odd/${encodeURIComponent(name).replace(/\./g, '%2E')}`, { name, 'key é': '🙂', 'b': 1, 'a': 2 })
    await put(`/only/${encodeURIComponent('nested ✓')}/leaf`, { v: 'only below a node without a document' })
    const user = await server.request('POST', '/user', { body: { username: 'ünïcode', email: 'u@example.com' } })
    assert.is(user.status, 201, user.text)
    const playlist = await server.request('POST', `/user/${user.json.user_id}/playlist`, { body: { name: 'mix', songs: ['a', 'b'] } })
    assert.is(playlist.status, 201, playlist.text)
    assert.is((await server.request('POST', '/user', { body: { username: 'second' } })).status, 201)
    return { dir, count: 4 + 2 + odd.length + 1 + 3 }
  } finally {
    await server.close(true)
  }
}

test('a store folder copied into PostgreSQL and back is the same, byte for byte, and PostgreSQL answers every document with the same text and ETag', async () => {
  const { dir: source, count } = await sourceFolder()
  const url = await database()
  const into = await runCli(['--import', source, '--store', url])
  assert.is(into.code, 0, into.stderr)
  assert.match(into.stdout, new RegExp(`copied ${count} documents from ${source} into postgres://`))
  assert.not.match(into.stdout, /not in restdir's own form/)

  // What the database answers is what the folder answers, ETags included.
  const [folderStore, databaseStore] = [await FileStore.open(source), await PostgresStore.open(url, { log: () => {} })]
  try {
    const expected = await storeDocuments(folderStore)
    assert.is(expected.size, count)
    assert.equal(await storeDocuments(databaseStore), expected)
  } finally {
    await Promise.all([folderStore.close(), databaseStore.close()])
  }

  const back = join(await folder(), 'back')
  const out = await runCli(['--import', url, '--store', back])
  assert.is(out.code, 0, out.stderr)
  assert.match(out.stdout, new RegExp(`copied ${count} documents from postgres://\\S+ into ${back}\\n`))
  const [before, after] = [await folderFiles(source), await folderFiles(back)]
  assert.ok(before.size >= count)
  assert.equal([...after.keys()], [...before.keys()], 'the same folders and files')
  for (const [file, text] of before) assert.is(after.get(file), text, file)

  // And a server on the copy serves them: a numeric id as a number, odd names, the user's playlist.
  const server = await startServer({ store: back })
  try {
    const posts = await server.request('GET', '/posts')
    assert.equal(posts.json.map((post: { id: unknown }) => post.id), [1, 2, 10, 100])
    assert.is((await server.request('GET', `/odd/${encodeURIComponent('🙂')}`)).json.name, '🙂')
    const users = await server.request('GET', '/user?username=%C3%BCn%C3%AFcode')
    assert.is(users.json.length, 1)
    const playlists = await server.request('GET', `/user/${users.json[0].user_id}/playlist`)
    assert.equal(playlists.json.map((playlist: { songs: string[] }) => playlist.songs), [['a', 'b']])
  } finally {
    await server.close(true)
  }
})

test('a json-server db.json goes into PostgreSQL as into a folder: the same documents with the same ETags', async () => {
  const dir = await folder()
  const file = join(dir, 'db.json')
  writeFileSync(file, JSON.stringify({
    posts: [{ id: 1, title: 'one', tags: ['a'] }, { id: 'zwölf', title: 'twelve' }],
    user: [{ id: 'u1', username: 'ada', playlist: [{ id: 'p1', songs: ['s'] }] }],
    profile: { name: 'typicode' },
  }))
  const url = await database()
  const imported = await runCli(['--import', file, '--store', url])
  assert.is(imported.code, 0, imported.stderr)
  assert.match(imported.stdout, /imported 5 documents \(2 collections\)/)

  const intoFolder = await FileStore.open(join(dir, 'store'))
  const fromDatabase = await PostgresStore.open(url, { log: () => {} })
  try {
    await importDatabaseFile(intoFolder, file)
    const expected = await storeDocuments(intoFolder)
    assert.is(expected.size, 5)
    assert.equal(await storeDocuments(fromDatabase), expected)
  } finally {
    await Promise.all([intoFolder.close(), fromDatabase.close()])
  }
})

test('a copy into a store that holds documents is refused and writes nothing; with --force it merges, the source replacing the same paths', async () => {
  const dir = await folder()
  const source = join(dir, 'source')
  const target = join(dir, 'target')
  const from = await FileStore.open(source)
  await from.write(['notes', '1'], { text: 'from the source' })
  await from.write(['notes', '2'], { text: 'new' })
  await from.close()
  const into = await FileStore.open(target)
  await into.write(['notes', '1'], { text: 'in the target' })
  await into.write(['kept'], { text: 'only in the target' })
  await into.close()

  const refused = await runCli(['--import', source, '--store', target])
  assert.is(refused.code, 1)
  assert.match(refused.stderr, /nothing was written:\n  the target holds documents already \(\/kept, \/notes\/1\)\. Copy into an empty store, or use --force/)
  const untouched = await folderFiles(target)
  assert.equal([...untouched.keys()], ['kept/@.json', 'notes/1/@.json'])

  const forced = await runCli(['--import', source, '--store', target, '--force'])
  assert.is(forced.code, 0, forced.stderr)
  const merged = await FileStore.open(target)
  try {
    assert.equal((await merged.read(['notes', '1']))?.doc, { text: 'from the source' })
    assert.equal((await merged.read(['notes', '2']))?.doc, { text: 'new' })
    assert.equal((await merged.read(['kept']))?.doc, { text: 'only in the target' })
  } finally {
    await merged.close()
  }
})

test('a store folder a running server holds is refused, naming its pid, and the target is left as it was', async () => {
  const dir = await folder()
  const source = join(dir, 'source')
  const server = await startCli(['--port', '0', '--store', source, '--quiet'])
  assert.is((await send(server.port, 'PUT', '/notes/1', { body: { text: 'served' } })).status, 201)
  const target = join(dir, 'target')
  const refused = await runCli(['--import', source, '--store', target])
  assert.is(refused.code, 1)
  assert.match(refused.stderr, new RegExp(`The store folder ${source} is in use by another restdir \\(pid ${server.child.pid}\\); stop it before importing`))
  assert.not.ok(existsSync(target), 'the target folder the import would have made is not left behind')
  assert.is((await send(server.port, 'GET', '/notes/1')).status, 200, 'the server keeps serving')
  await server.stop()
})

test('a source holding a document that is not JSON, a named pipe or a link, or a link in a node\'s place, names each, and nothing is written', async () => {
  const dir = await folder()
  const source = join(dir, 'source')
  const from = await FileStore.open(source)
  for (const name of ['good', 'broken', 'pipe', 'link']) await from.write(['notes', name], { name })
  await from.close()
  await writeFile(join(source, 'notes', 'broken', '@.json'), '{"text": "cut off')
  await rm(join(source, 'notes', 'pipe', '@.json'))
  execFileSync('mkfifo', [join(source, 'notes', 'pipe', '@.json')])
  await rm(join(source, 'notes', 'link', '@.json'))
  await symlink(join(source, 'notes', 'good', '@.json'), join(source, 'notes', 'link', '@.json'))
  await symlink(join(source, 'notes', 'good'), join(source, 'notes', 'linked%20folder'))

  const url = await database()
  const refused = await runCli(['--import', source, '--store', url])
  assert.is(refused.code, 1)
  assert.match(refused.stderr, new RegExp(`The store ${source} cannot be imported \\(4 problems\\); nothing was written:\\n` +
    '  /notes/broken: is not valid JSON\\.\\n  /notes/link: is a link, which the store does not follow\\.\\n' +
    '  /notes/linked%20folder: is a link, which the store does not follow\\.\\n  /notes/pipe: is a named pipe, not a regular file\\.'))
  const target = await PostgresStore.open(url, { log: () => {} })
  try {
    assert.is(await target.children([]), undefined, 'the database holds nothing')
  } finally {
    await target.close()
  }
})

test('importing a store into itself is refused as a usage error: the same folder, one inside the other, the same database', async () => {
  const dir = await folder()
  const store = join(dir, 'store')
  const url = await database()
  const cases: [string[], RegExp][] = [
    [['--import', store, '--store', `${store}/`], /the source and the target are the same folder/],
    [['--import', store, '--store', join(store, 'copy')], /the target folder is inside the source folder/],
    [['--import', join(store, 'notes'), '--store', store], /the source folder is inside the target folder/],
    [['--import', url, '--store', url], /the source and the target are the same database/],
  ]
  await FileStore.open(join(store, 'notes')).then((made) => made.close())
  for (const [args, message] of cases) {
    const refused = await runCli(args)
    assert.is(refused.code, 2, refused.stderr)
    assert.match(refused.stderr, message)
  }
  assert.not.ok(existsSync(join(store, 'copy')))
})

test('copyStore, the library call: a store into itself, and a hand-edited document, which arrives in restdir\'s own form with a new ETag', async () => {
  const memory = new MemoryStore()
  let refused: unknown
  await copyStore(memory, memory).catch((error: unknown) => (refused = error))
  assert.instance(refused, ImportError)
  assert.match((refused as Error).message, /cannot be copied into itself/)

  const dir = await folder()
  const source = await FileStore.open(dir)
  await source.write(['a'], { text: 'as written' })
  await source.write(['b'], { text: 'as written' })
  await source.close()
  await writeFile(join(dir, 'b', '@.json'), '{"text":"by hand","n":1}')
  const from = await FileStore.open(dir)
  const into = new MemoryStore()
  try {
    const before = await storeDocuments(from)
    assert.equal(await copyStore(from, into, { sourceLabel: dir }), { documents: 2, rewritten: 1 })
    const after = await storeDocuments(into)
    assert.equal([...after.values()].map((doc) => doc.json), [...before.values()].map((doc) => doc.json))
    assert.is(after.get('["a"]')!.etag, before.get('["a"]')!.etag)
    assert.is.not(after.get('["b"]')!.etag, before.get('["b"]')!.etag)
  } finally {
    await from.close()
  }
})

test.run()
