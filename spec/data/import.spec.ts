import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, send } from '../support/helpers.ts'
import { assertJson, assertProblem } from '../support/assertions.ts'
import { readDocumentFiles, runCli, startCli, stopAll } from '../support/process.ts'

// `--import` goes through the rules of the API (docs/json-server.md, "Coming from json-server"):
// users as /user keeps them, numbers and keys exactly as written, every problem
// of a file reported in one run, and nothing written unless the whole file is right.

const folders: string[] = []
async function folder(): Promise<string> {
  const dir = await makeTempDir()
  folders.push(dir)
  return dir
}
test.after(async () => {
  await stopAll()
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function importFile(text: string): Promise<{ status: number | null; stdout: string; stderr: string; store: string }> {
  const dir = await folder()
  const file = join(dir, 'db.json')
  writeFileSync(file, text)
  const store = join(dir, 'store')
  const exit = await runCli(['--import', file, '--store', store])
  return { status: exit.code, stdout: exit.stdout, stderr: exit.stderr, store }
}

async function storedFiles(store: string): Promise<string[]> {
  try {
    return [...(await readDocumentFiles(store)).keys()]
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

test('an import with many problems reports each with where it is, in one run, and writes nothing', async () => {
  const db = `{
    "user": [
      {"id": 1, "username": "first"},
      {"username": "dup"},
      {"username": "dup"},
      {"username": 42},
      {"user_id": 7, "id": 8},
      {"user_id": 9, "username": "", "playlist": [{"id": 1, "songs": "one"}, {"id": 1}]}
    ],
    "posts": [{"id": 1, "views": 1e400}, "text", {"id": 2, "title": "a", "title": "b"}],
    "score": {"value": 12345678901234567890, "zero": -0},
    "count": 3
  }`
  const { status, stdout, stderr, store } = await importFile(db)
  assert.is(status, 1, `exit status (stdout ${stdout})`)
  const expected = [
    /user\[2\]\.username: "dup" is also the username of user\[1\]/,
    /user\[3\]\.username: username must be a non-empty string \(got 42\)/,
    /user\[4\]\.id: 8 disagrees with user_id 7/,
    /user\[5\]\.username: username must be a non-empty string \(got ""\)/,
    /user\[5\]\.playlist\[0\]\.songs: songs must be an array \(got string\)/,
    /user\[5\]\.playlist\[1\]\.id: repeats the id "1"/,
    /posts\[0\]\.views: 1e400 is out of range/,
    /posts\[1\]: is a string/,
    /posts\[2\]\.title: the key "title" appears more than once/,
    /score\.value: 12345678901234567890 has more precision than a double holds/,
    /score\.zero: -0 is negative zero/,
    /count: holds a number/,
  ]
  for (const problem of expected) assert.match(stderr, problem)
  assert.match(stderr, /\(12 problems\); nothing was written/)
  assert.equal(await storedFiles(store), [], 'the store holds no document')
})

test('--import reads a db.json by the rules of the store that serves it: a byte-order mark skipped, white space alone an empty database, broken JSON named by line and column', async () => {
  const dir = await folder()
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text)
    return join(dir, name)
  }
  for (const empty of [write('empty.json', ' \n'), write('bom.json', '\uFEFF\n')]) {
    const imported = await runCli(['--import', empty, '--store', join(dir, `store-${empty.length}`)])
    assert.is(imported.code, 0, imported.stderr)
    assert.match(imported.stdout, /imported 0 documents \(0 collections\)/)
    const served = await startCli(['--port', '0', empty, '--quiet'])
    try {
      // Served as an empty database: no resource, so /posts is a 404 to a read and to a write, as json-server answers.
      assert.is((await send(served.port, 'GET', '/posts')).status, 404)
      assert.is((await send(served.port, 'POST', '/posts', { body: { title: 'a' } })).status, 404)
      assert.equal((await send(served.port, 'GET', '/db')).json, {})
    } finally {
      await served.stop()
    }
  }
  const broken = write('broken.json', '{\n  "posts": [\n    {"id": 1,}\n  ]\n}\n')
  const said = 'broken.json is not valid JSON: line 3, column 14: expected a property name in double quotes.'
  const imported = await runCli(['--import', broken, '--store', join(dir, 'store')])
  assert.is(imported.code, 1)
  assert.ok(imported.stderr.endsWith(`/${said}\n`), imported.stderr)
  const served = await runCli(['--port', '0', broken])
  assert.is(served.code, 1)
  assert.ok(served.stderr.endsWith(`${said}\n`), served.stderr)
})

test('a db.json with more values than the store names (five) that JSON.parse would change: --import names each, the store the first five and how many more', async () => {
  const dir = await folder()
  const file = join(dir, 'db.json')
  const digits = (index: number) => `0.1000000000000000055511151231257827${index}`
  writeFileSync(file, `{"posts": [${[0, 1, 2, 3, 4, 5, 6].map((index) => `{"id": ${index + 1}, "n": ${digits(index)}}`).join(', ')}]}`)
  const imported = await runCli(['--import', file, '--store', join(dir, 'store')])
  assert.is(imported.code, 1)
  for (let index = 0; index < 7; index++) assert.match(imported.stderr, `posts[${index}].n: ${digits(index)} has more precision than a double holds`)
  assert.match(imported.stderr, /\(7 problems\); nothing was written/)
  const served = await runCli(['--port', '0', file])
  assert.is(served.code, 1)
  assert.match(served.stderr, `at posts[4].n ${digits(4)} has more precision`)
  assert.not.match(served.stderr, digits(5))
  assert.match(served.stderr, /; and 2 more\.\n$/)
})

test('users imported with json-server ids follow the rules of /user, and a user keeps its own name', async () => {
  const db = {
    user: [
      { id: 1, username: 'ann' },
      { user_id: 'zz', id: 'zz', username: 'bob', playlist: [{ id: 1, name: 'mix', songs: [1, 'two'] }, { name: 'no id' }] },
      { username: 'carl' },
    ],
  }
  const { status, stdout, stderr, store } = await importFile(JSON.stringify(db))
  assert.is(status, 0, stderr)
  assert.match(stdout, /imported 5 documents \(1 collection\)/)
  const server = await startCli(['--port', '0', '--store', store, '--quiet'])
  try {
    assertJson(await send(server.port, 'GET', '/user/1'), 200, { user_id: '1', username: 'ann' })
    assertJson(await send(server.port, 'GET', '/user/zz'), 200, { user_id: 'zz', username: 'bob' })
    const users = (await send(server.port, 'GET', '/user')).json as { user_id: string; username: string }[]
    const carl = users.find((user) => user.username === 'carl')
    assert.match(carl?.user_id ?? '', /^[0-9a-z]{12}$/, 'a user without an id gets one as user_id')
    assert.equal(Object.keys(carl ?? {}).sort(), ['user_id', 'username'])
    assertJson(await send(server.port, 'GET', '/user/zz/playlist/1'), 200, { playlist_id: '1', user_id: 'zz', name: 'mix', songs: [1, 'two'] })
    const playlists = (await send(server.port, 'GET', '/user/zz/playlist')).json as { playlist_id: string; name: string; songs: unknown[]; user_id: string }[]
    const made = playlists.find((playlist) => playlist.name === 'no id')
    assert.equal(made && { ...made, playlist_id: 'x' }, { playlist_id: 'x', user_id: 'zz', name: 'no id', songs: [] })
    assertProblem(await send(server.port, 'POST', '/user', { body: { username: 'ann' } }), 409, /taken by user "1"/)
    assertJson(await send(server.port, 'PUT', '/user/zz', { body: { username: 'bob', city: 'Paris' } }), 200, { username: 'bob', city: 'Paris', user_id: 'zz' })
  } finally {
    await server.stop()
  }
})

test('an imported username a user of the store already holds is refused', async () => {
  const first = await importFile(JSON.stringify({ user: [{ id: 1, username: 'ann' }] }))
  assert.is(first.status, 0, first.stderr)
  const dir = await folder()
  const file = join(dir, 'db.json')
  writeFileSync(file, JSON.stringify({ user: [{ id: 2, username: 'ann' }] }))
  const again = await runCli(['--import', file, '--store', first.store, '--force'])
  assert.is(again.code, 1)
  assert.match(again.stderr, /user\[0\]\.username: "ann" is taken by user "1" in the store/)
  assert.equal(await storedFiles(first.store), [join('user', '1', '@.json')])
})

test('the summary reports an empty array as empty, not as a collection created', async () => {
  const { status, stdout, stderr, store } = await importFile('{"posts": [{"id": 1}], "comments": [], "profile": {"name": "x"}}')
  assert.is(status, 0, stderr)
  assert.match(stdout, /imported 2 documents \(1 collection\)/)
  assert.match(stdout, /"comments" is an empty array: no collection was created for it/)
  const server = await startCli(['--port', '0', '--store', store, '--quiet'])
  try {
    assert.is((await send(server.port, 'GET', '/comments')).status, 404)
    assertJson(await send(server.port, 'GET', '/posts/1'), 200, { id: 1 })
  } finally {
    await server.stop()
  }
})

test('numeric ids come back as numbers and list in numeric order, as json-server keeps them; a body may send the number for its URL', async () => {
  const db = '{"posts": [' + [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((id) => `{"id": ${id}, "title": "post ${id}"}`).join(', ') + ', {"id": "x", "title": "named"}]}'
  const { status, stderr, store } = await importFile(db)
  assert.is(status, 0, stderr)
  const server = await startCli(['--port', '0', '--store', store, '--quiet'])
  try {
    const all = await send(server.port, 'GET', '/posts')
    assert.equal(all.json.map((post: { id: unknown }) => post.id), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 'x'])
    // A page is read from the index in the same order.
    assert.equal((await send(server.port, 'GET', '/posts?_page=2&_limit=5')).json.map((post: { id: unknown }) => post.id), [6, 7, 8, 9, 10])
    assertJson(await send(server.port, 'GET', '/posts/10'), 200, { id: 10, title: 'post 10' })
    assertJson(await send(server.port, 'PATCH', '/posts/10', { body: { title: 'patched' } }), 200, { id: 10, title: 'patched' })
    assertJson(await send(server.port, 'PUT', '/posts/12', { body: { id: 12, title: 'new' } }), 201, { id: 12, title: 'new' })
    assertJson(await send(server.port, 'PUT', '/posts/13', { body: { title: 'no id sent' } }), 201, { id: '13', title: 'no id sent' })
    assertProblem(await send(server.port, 'PUT', '/posts/12', { body: { id: 13 } }), 400, /differs from the URL's last segment "12"/)
    assertProblem(await send(server.port, 'PUT', '/posts/012', { body: { id: 12 } }), 400, /differs/)
    assert.equal((await send(server.port, 'GET', '/posts?_start=9&_end=14')).json.map((post: { id: unknown }) => post.id), [10, 11, 12, '13', 'x'])
  } finally {
    await server.stop()
  }
})

test('importing the same db.json again with --force adds no second copy of its items without an id; a new or a further equal item is added', async () => {
  const dir = await folder()
  const file = join(dir, 'db.json')
  const store = join(dir, 'store')
  const posts = (docs: Map<string, unknown>) => [...docs.entries()].filter(([at]) => at.startsWith('posts/')).map(([, doc]) => doc as Record<string, unknown>)
  const titles = async () => posts(await readDocumentFiles(store)).map((doc) => String(doc.title)).sort()
  writeFileSync(file, JSON.stringify({ posts: [{ id: 1, title: 'one' }, { title: 'a' }, { title: 'a' }, { title: 'b', tags: ['x'] }] }))
  assert.is((await runCli(['--import', file, '--store', store])).code, 0)
  assert.equal(await titles(), ['a', 'a', 'b', 'one'])
  const firstIds = posts(await readDocumentFiles(store)).map((doc) => doc.id)
  for (let again = 0; again < 2; again++) {
    const exit = await runCli(['--import', file, '--store', store, '--force'])
    assert.is(exit.code, 0, exit.stderr)
    assert.equal(await titles(), ['a', 'a', 'b', 'one'], `run ${again + 2} adds nothing`)
  }
  assert.equal(posts(await readDocumentFiles(store)).map((doc) => doc.id).sort(), firstIds.sort(), 'the items keep the ids they were given first')
  // A field that differs makes another item; a third equal item is a third copy.
  writeFileSync(file, JSON.stringify({ posts: [{ id: 1, title: 'one' }, { title: 'a' }, { title: 'a' }, { title: 'a' }, { title: 'b', tags: ['y'] }] }))
  assert.is((await runCli(['--import', file, '--store', store, '--force'])).code, 0)
  assert.equal(await titles(), ['a', 'a', 'a', 'b', 'b', 'one'])
})

test.run()
