import { test } from 'uvu'
import * as assert from 'uvu/assert'
import fs, { existsSync, statSync, watch, type PathLike, type StatSyncOptions } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { JsonFileStore, type JsonFileStoreOptions } from '../../../lib/store/index.ts'
import { KEEP_ASIDE_BYTES } from '../../../lib/store/json-file/group-writer.ts'
import { loadDeclarations, seedDeclarations } from '../../../lib/data/declarations.ts'
import type { RestdirOptions } from '../../../lib/options.ts'
import { makeTempDir, startServer, wrapStore, type TestServer } from '../../support/helpers.ts'
import { openStream } from '../../support/event-stream.ts'
import { seeded, seedFrom } from '../../support/random.ts'

const RANDOM_SEED = seedFrom('LAYOUT_SEED')

// A db.json served as the store it is (docs/json-server.md, "Serving a db.json"), through real HTTP.

const folders: string[] = []
const servers: TestServer[] = []
test.after.each(async () => {
  for (const server of servers.splice(0)) await server.close()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

const quiet = () => {}

/** A db.json written as json-server writes one, served through an opened JsonFileStore. */
async function serveDatabase(text: string | undefined, options: JsonFileStoreOptions = {}, serverOptions: RestdirOptions = {}) {
  const folder = await makeTempDir('restdir-dbjson-')
  folders.push(folder)
  const file = join(folder, 'db.json')
  if (text !== undefined) await writeFile(file, text)
  const store = await JsonFileStore.open(file, { log: quiet, ...options })
  const server = await startServer({ store, ...serverOptions })
  servers.push(server)
  return { file, store, server, folder }
}

function seed() {
  return {
    posts: [
      { id: 1, title: 'json-server', views: 100, tags: ['a', 'b'] },
      { id: 2, title: 'restdir', views: 200, author: { name: 'Ann' } },
    ],
    comments: [{ id: 'c1', text: 'a comment', postId: 1 }],
    profile: { name: 'typicode' },
    $schema: './node_modules/json-server/schema.json',
  }
}

const asJsonServerWrites = (value: unknown) => JSON.stringify(value, null, 2)

async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, withinMs: number): Promise<T> {
  const started = Date.now()
  for (;;) {
    const value = await probe()
    if (done(value) || Date.now() - started > withinMs) return value
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

test('a write leaves the rest of the file byte for byte as json-server writes it: key order, 2-space indentation, numeric ids, no final newline where it had none', async () => {
  const db = seed()
  const { file, server } = await serveDatabase(asJsonServerWrites(db))
  const patched = await server.request('PATCH', '/posts/2', { body: { title: 'restdir, patched' } })
  assert.is(patched.status, 200, patched.text)
  const posted = await server.request('POST', '/posts', { body: { title: 'new', views: 0 } })
  assert.is(posted.status, 201, posted.text)
  db.posts[1].title = 'restdir, patched'
  db.posts.push(posted.json)
  assert.is(await readFile(file, 'utf8'), asJsonServerWrites(db))
  assert.is(typeof JSON.parse(await readFile(file, 'utf8')).posts[0].id, 'number', 'a numeric id stays a number')
})

test('a file that ends with a newline keeps it; a deleted last item leaves its collection as [] as json-server does', async () => {
  const db = { posts: [{ id: '1', title: 'only' }], profile: { name: 'x' } }
  const { file, server } = await serveDatabase(asJsonServerWrites(db) + '\n')
  assert.is((await server.request('DELETE', '/posts/1')).status, 200)
  assert.is(await readFile(file, 'utf8'), asJsonServerWrites({ posts: [], profile: { name: 'x' } }) + '\n')
})

test('with the seed\'s families declared, users keep their playlists nested under them, as an import reads them; deeper documents go to @nodes, and all come back after a restart', async () => {
  const { file, server, store } = await serveDatabase('{}\n', { families: loadDeclarations(seedDeclarations) }, { resources: seedDeclarations })
  const user = await server.request('POST', '/user', { body: { username: 'ann' } })
  assert.is(user.status, 201, user.text)
  const userId = user.json.user_id as string
  const playlist = await server.request('POST', `/user/${userId}/playlist`, { body: { name: 'mix', songs: ['one'] } })
  assert.is(playlist.status, 201, playlist.text)
  assert.is((await server.request('PUT', '/posts/1/comments/7', { body: { text: 'deep' } })).status, 201)
  const written = JSON.parse(await readFile(file, 'utf8'))
  assert.equal(written.user, [{ user_id: userId, username: 'ann', playlist: [playlist.json] }])
  assert.equal(written['@nodes'], [{ path: ['posts', '1', 'comments', '7'], document: { id: '7', text: 'deep' } }])
  await store.close()
  const reopened = await startServer({ store: await JsonFileStore.open(file, { log: quiet, families: loadDeclarations(seedDeclarations) }), resources: seedDeclarations })
  servers.push(reopened)
  assert.equal((await reopened.request('GET', `/user/${userId}/playlist/${playlist.json.playlist_id}`)).json, playlist.json)
  assert.equal((await reopened.request('GET', '/posts/1/comments/7')).json, { id: '7', text: 'deep' })
})

test('100 concurrent POSTs share a few file writes, and every one is in the file when its answer comes', async () => {
  const { file, store, server } = await serveDatabase(asJsonServerWrites(seed()))
  const before = store.fileWrites
  const answers = await Promise.all(Array.from({ length: 100 }, (_, n) => server.request('POST', '/posts', { body: { n } })))
  const writes = store.fileWrites - before
  assert.ok(answers.every((answer) => answer.status === 201))
  const posts = JSON.parse(await readFile(file, 'utf8')).posts as Array<{ id: string; n?: number }>
  for (const answer of answers) assert.ok(posts.some((post) => post.id === answer.json.id && post.n === answer.json.n), `${answer.json.id} is in the file`)
  assert.ok(writes <= 25, `100 writes took ${writes} file writes`)
})

test('100 concurrent POSTs where the watch hears every change look at the file a few times, not once each', async () => {
  // A write takes the watch's word, heard out in the check phase, that the file is as the last look found it
  // (lib/store/fs/trusted-watch.ts); each file write the store makes is heard as a change, and looked at again.
  const { file, server } = await serveDatabase(asJsonServerWrites(seed()))
  // Both stats of node:fs are counted (an lstat looks at the file, and a stat through a link); statSync is read-only in its types.
  const calls = fs as unknown as Record<'lstatSync' | 'statSync', (path: PathLike, options?: StatSyncOptions) => unknown>
  const { lstatSync, statSync } = calls
  let looks = 0
  calls.lstatSync = (path, options) => (path === file && looks++, lstatSync(path, options))
  calls.statSync = (path, options) => (path === file && looks++, statSync(path, options))
  syncBuiltinESMExports()
  let answers: Array<{ status: number }>
  try {
    answers = await Promise.all(Array.from({ length: 100 }, (_, n) => server.request('POST', '/posts', { body: { n } })))
  } finally {
    calls.lstatSync = lstatSync
    calls.statSync = statSync
    syncBuiltinESMExports()
  }
  assert.ok(answers.every((answer) => answer.status === 201))
  // One look each would be 100, and the file writes' own looks come on top; a few per file write (at most 25, above) is some 50.
  assert.ok(looks < 100, `100 POSTs looked at the file ${looks} times`)
})

test('the store never takes its own file write for a hand edit, even when it looks at the file as the write is renamed into place', async () => {
  // Reads look at the file each time here (statInterval 0): one that stats the file between the rename
  // and the moment the store notes the version it wrote would otherwise read the whole file again,
  // holding up every write meanwhile.
  const { store, server } = await serveDatabase(asJsonServerWrites(seed()), { statInterval: 0 })
  const before = store.reloads
  let writing = true
  const reads = (async () => {
    while (writing) {
      await store.read(['posts', '1'])
      await new Promise((resolve) => setImmediate(resolve))
    }
  })()
  for (let round = 0; round < 20; round++) {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => server.request('POST', '/posts', { body: { n } })))
    assert.ok(answers.every((answer) => answer.status === 201))
  }
  writing = false
  await reads
  assert.ok(store.fileWrites > 20, `the file was written ${store.fileWrites} times`)
  assert.is(store.reloads - before, 0, 'the file was read again after the store\'s own writes')
})

test('a big db.json is linked aside before the rename and that name removed after it, so the rename frees nothing; a small one is renamed over; nothing is left beside the file', async () => {
  // lib/store/json-file/group-writer.ts, #replaceFile; a file kept aside by a run that died is a dead temp file, removed as the store opens.
  for (const [what, count, keptAside] of [['a big file', 4000, true], ['a small file', 3, false]] as const) {
    const posts = Array.from({ length: count }, (_, index) => ({ id: index + 1, title: `post ${index + 1}`.padEnd(100, '.') }))
    const folder = await makeTempDir('restdir-dbjson-')
    folders.push(folder)
    const file = join(folder, 'db.json')
    await writeFile(file, asJsonServerWrites({ posts }))
    assert.is(statSync(file).size >= KEEP_ASIDE_BYTES, keptAside, `${what}: its size`)
    await writeFile(join(folder, '.db.json.0123abcd-7.tmp'), asJsonServerWrites({ posts: [] }))
    const store = await JsonFileStore.open(file, { log: quiet })
    const server = await startServer({ store })
    servers.push(server)
    assert.equal((await readdir(folder)).sort(), ['.db.json.lock', 'db.json'], `${what}: a dead run's temp file is gone once the store is open`)
    // Each name that appears beside the file: the new file's temp name, and the old file's while it is kept aside.
    const names = new Set<string>()
    const watcher = watch(folder, (_event, name) => name?.endsWith('.tmp') && names.add(name))
    for (let post = 0; post < 3; post++) assert.is((await server.request('POST', '/posts', { body: { title: `new ${post}` } })).status, 201)
    const nothingBeside = await eventually(async () => (await readdir(folder)).filter((name) => name !== 'db.json' && name !== '.db.json.lock'), (left) => left.length === 0 && names.size >= (keptAside ? 6 : 3), 2000)
    watcher.close()
    assert.equal(nothingBeside, [], `${what}: nothing is left beside the file`)
    assert.is(names.size, keptAside ? 6 : 3, `${what}: the names that came and went beside the file in 3 file writes (${[...names].join(', ')})`)
    assert.is(JSON.parse(await readFile(file, 'utf8')).posts.length, count + 3, `${what}: the file holds every post`)
  }
})

test('a batch is in the db.json whole after one file write, and a failed batch leaves the file as it was (docs/http-api.md, "Batches")', async () => {
  const { file, store, server } = await serveDatabase(asJsonServerWrites(seed()))
  const before = store.fileWrites
  const stored = await server.request('POST', '/?_batch', { body: { requests: [
    { method: 'POST', path: '/posts', body: { title: 'new' } },
    { method: 'PATCH', path: '/posts/1', body: { views: 101 } },
    { method: 'POST', path: '/comments', body: { text: 'on new', postId: '$0.id' } },
  ] } })
  assert.is(stored.status, 200, stored.text)
  assert.is(store.fileWrites - before, 1, 'one file write holds the whole batch')
  const id = stored.json.responses[0].body.id
  const written = JSON.parse(await readFile(file, 'utf8'))
  assert.ok(written.posts.some((post: { id: unknown; title?: string }) => post.id === id && post.title === 'new'))
  assert.is(written.posts.find((post: { id: unknown }) => post.id === 1).views, 101)
  assert.ok(written.comments.some((comment: { postId?: unknown }) => comment.postId === id), 'the comment names the new post')
  const text = await readFile(file, 'utf8')
  const failed = await server.request('POST', '/?_batch', { body: { requests: [
    { method: 'PATCH', path: '/posts/2', body: { views: 0 } },
    { method: 'PATCH', path: '/posts/999', body: { views: 0 } },
  ] } })
  assert.is(failed.status, 404, failed.text)
  assert.is(store.fileWrites - before, 1, 'a failed batch writes nothing')
  assert.is(await readFile(file, 'utf8'), text)
})

test('a hand edit is served within a second, and event streams hear it as the change it made', async () => {
  const db = seed()
  const { file, server } = await serveDatabase(asJsonServerWrites(db), { statInterval: 1000 })
  const stream = await openStream(server.port, '/posts')
  assert.is((await stream.next()).event, 'value')
  db.posts[0].title = 'edited by hand'
  await writeFile(file, asJsonServerWrites(db))
  const started = Date.now()
  const read = await eventually(() => server.request('GET', '/posts/1'), (answer) => answer.json.title === 'edited by hand', 1500)
  assert.is(read.json.title, 'edited by hand')
  assert.ok(Date.now() - started <= 1000, `served after ${Date.now() - started} ms`)
  const event = await stream.next()
  assert.equal([event.event, event.data], ['put', { path: '/posts/1', data: db.posts[0] }])
  stream.close()
})

test('a hand edit reaches an open event stream within a second with no other request, as the changes it made', async () => {
  const db = seed()
  const { file, server } = await serveDatabase(asJsonServerWrites(db))
  const stream = await openStream(server.port, '/')
  assert.is((await stream.next()).event, 'value')
  const edited = structuredClone(db)
  edited.posts[0].title = 'edited by hand, nothing asked'
  edited.comments = []
  await writeFile(file, asJsonServerWrites(edited))
  const started = Date.now()
  const first = await stream.next(1000)
  const second = await stream.next(1000 - (Date.now() - started))
  assert.ok(Date.now() - started <= 1000, `heard after ${Date.now() - started} ms`)
  assert.equal([first, second].map((event) => [event.event, event.data]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), [
    ['delete', { path: '/comments/c1', data: db.comments[0] }],
    ['put', { path: '/posts/1', data: edited.posts[0] }],
  ])
  stream.close()
})

test('where no watch tells of a hand edit, the stat of every second still pushes it to an open event stream', async () => {
  const db = seed()
  const { file, server } = await serveDatabase(asJsonServerWrites(db), { statInterval: 300, watch: false })
  const stream = await openStream(server.port, '/profile')
  assert.is((await stream.next()).event, 'value')
  db.profile.name = 'by hand, unwatched, nothing asked'
  await writeFile(file, asJsonServerWrites(db))
  const event = await stream.next(1000)
  assert.equal([event.event, event.data], ['put', { path: '/profile', data: db.profile }])
  stream.close()
})

test('a hand edit is seen within a second by a stat even where no watch tells of it', async () => {
  const db = seed()
  const { file, server } = await serveDatabase(asJsonServerWrites(db), { statInterval: 1000, watch: false })
  await server.request('GET', '/posts/1')
  db.profile.name = 'by hand, unwatched'
  await writeFile(file, asJsonServerWrites(db))
  const read = await eventually(() => server.request('GET', '/profile'), (answer) => answer.json.name === db.profile.name, 1000)
  assert.is(read.json.name, db.profile.name)
})

test('a hand edit that breaks the JSON is never overwritten: reads keep the last good state, writes get a 503 naming the file, line and column, and both recover once it is mended', async () => {
  const db = seed()
  const { file, server } = await serveDatabase(asJsonServerWrites(db))
  const broken = asJsonServerWrites(db).replace('"views": 200,', '"views": 200')
  await writeFile(file, broken)
  const refused = await eventually(() => server.request('PUT', '/posts/2', { body: { title: 'lost?' } }), (answer) => answer.status !== 200, 1000)
  assert.is(refused.status, 503, refused.text)
  assert.is(refused.headers['content-type'], 'application/problem+json')
  assert.is(refused.headers['retry-after'], '1')
  // Line 16 is `"author": {` after the `"views": 200` that lost its comma.
  assert.match(refused.json.detail, /db\.json is not valid JSON: line 16, column 7: expected "," or "}"/, refused.json.detail)
  assert.is((await server.request('POST', '/posts', { body: { title: 'also refused' } })).status, 503)
  const kept = await server.request('GET', '/posts/2')
  assert.is(kept.status, 200)
  assert.is(kept.json.title, 'restdir', 'reads serve the last good state')
  assert.is(await readFile(file, 'utf8'), broken, 'the broken file is left as the person left it')

  db.posts[1].title = 'mended by hand'
  await writeFile(file, asJsonServerWrites(db))
  const taken = await eventually(() => server.request('PATCH', '/posts/2', { body: { views: 201 } }), (answer) => answer.status === 200, 1000)
  assert.is(taken.status, 200, taken.text)
  assert.equal(taken.json, { ...db.posts[1], views: 201 })
  assert.is(JSON.parse(await readFile(file, 'utf8')).posts[1].views, 201)
})

test('a missing file is made as {} and served; its folder must exist', async () => {
  const folder = await makeTempDir('restdir-dbjson-')
  folders.push(folder)
  const file = join(folder, 'db.json')
  const store = await JsonFileStore.open(file, { log: quiet })
  assert.is(await readFile(file, 'utf8'), '{}\n')
  await store.close()
  const refused = await JsonFileStore.open(join(folder, 'no-such-folder', 'db.json')).then(() => undefined, (error: Error) => error)
  assert.match(String(refused?.message), /the folder .*no-such-folder does not exist/)
})

test('a second server on the same file is refused, naming the file; the first one\'s clean stop lets the next start', async () => {
  const { file, store } = await serveDatabase('{}')
  const refused = await JsonFileStore.open(file).then(() => undefined, (error: NodeJS.ErrnoException) => error)
  assert.is(refused?.code, 'ESTORELOCKED')
  assert.ok(refused?.message.includes(`${file} is served by another restdir (pid ${process.pid})`), refused?.message)
  await store.close()
  assert.not.ok(existsSync(join(file, '..', '.db.json.lock')), 'a clean stop removes the lock folder')
  const next = await JsonFileStore.open(file)
  await next.close()
})

test('POSTs one file write after another keep the layout: into an empty array, and past the blocks a collection keeps before joining them', async () => {
  // Each added item is appended to its array's kept UTF-8 blocks, the newest joined as they pile up (lib/store/json-file/layout.ts).
  const db = { comments: [] as Array<Record<string, unknown>>, posts: [{ id: 1, title: 'a' }] }
  const { file, server } = await serveDatabase(asJsonServerWrites(db))
  // A file write for another key lays the empty array out and keeps it: the first POST then appends to nothing.
  assert.is((await server.request('PATCH', '/posts/1', { body: { title: 'b' } })).status, 200)
  db.posts[0].title = 'b'
  assert.is(await readFile(file, 'utf8'), asJsonServerWrites(db))
  for (let step = 0; step < 150; step++) {
    const created = await server.request('POST', '/comments', { body: { text: `comment ${step}`, é: step } })
    assert.is(created.status, 201, created.text)
    db.comments.push(created.json)
    assert.is(await readFile(file, 'utf8'), asJsonServerWrites(db), `after POST ${step + 1}`)
  }
})

test('POSTs into a big array copy what they add, not the array: its kept blocks are joined as the newest double', async () => {
  // Every join of blocks goes through Buffer.concat: the bytes it makes, over 300 file writes, are counted.
  const posts = Array.from({ length: 5000 }, (_, n) => ({ id: n + 1, title: `post number ${n + 1}`, views: n }))
  const { file, store } = await serveDatabase(asJsonServerWrites({ posts }))
  // The first file write lays the array out (one copy of it); the next ones append to what it kept.
  assert.ok(await store.create(['posts', '5001'], { id: 5001, title: 'added 5001' }))
  const arrayBytes = statSync(file).size
  const concat = Buffer.concat
  let copied = 0
  Buffer.concat = ((list: readonly Uint8Array[], length?: number) => {
    const joined = concat(list, length)
    copied += joined.length
    return joined
  }) as typeof Buffer.concat
  try {
    for (let id = 5002; id <= 5301; id++) assert.ok(await store.create(['posts', String(id)], { id, title: `added ${id}` }))
  } finally {
    Buffer.concat = concat
  }
  const added = statSync(file).size - arrayBytes
  // Each added byte is copied once into its item's block, then again each time the blocks after it double: at most some 9 times in 300 file writes.
  assert.ok(copied < 12 * added, `${copied} bytes copied for ${added} added to an array of ${arrayBytes}`)
  assert.equal(JSON.parse(await readFile(file, 'utf8')).posts.length, 5301)
})

test(`after 300 random writes the file is laid out as JSON.stringify lays it out, and holds what the API serves (seed ${RANDOM_SEED})`, async () => {
  // Added items are laid out onto the kept text of their array; anything else lays the array out afresh (lib/store/json-file/layout.ts).
  const { file, server } = await serveDatabase(asJsonServerWrites(seed()))
  const random = seeded(RANDOM_SEED)
  const ids = ['1', '2']
  for (let step = 0; step < 300; step++) {
    const existing = random.pick(ids)
    const roll = random.int(10)
    if (roll <= 3) {
      const created = await server.request('POST', '/posts', { body: { title: `new ${step}`, n: step } })
      ids.push(created.json.id)
    } else if (roll === 4) {
      const id = `p${step}`
      await server.request('PUT', `/posts/${id}`, { body: { title: `put ${step}` } })
      ids.push(id)
    } else if (roll === 5) await server.request('PUT', `/posts/${existing}`, { body: { title: `changed ${step}` } })
    else if (roll === 6) await server.request('PATCH', `/posts/${existing}`, { body: { views: step } })
    else if (roll === 7 && ids.length > 1) {
      await server.request('DELETE', `/posts/${existing}`)
      ids.splice(ids.indexOf(existing), 1)
    } else if (roll === 8) await server.request('PUT', `/posts/${existing}/notes/n${step}`, { body: { text: 'deep' } })
    else await server.request('POST', '/comments', { body: { postId: existing } })
    const text = await readFile(file, 'utf8')
    const written = JSON.parse(text)
    assert.is(text, asJsonServerWrites(written) + (text.endsWith('\n') ? '\n' : ''), `step ${step}: the file is laid out as JSON.stringify lays it out`)
    const served = (await server.request('GET', '/posts')).json as Array<{ id: unknown }>
    const byId = (docs: Array<{ id: unknown }>) => Object.fromEntries(docs.map((doc) => [String(doc.id), doc]))
    assert.equal(byId(written.posts), byId(served), `step ${step}: the file's posts are the ones served`)
  }
})

test('a batch of 1,000 POSTs into a collection of 20,000 integer ids holds no one: a small GET sent meanwhile is answered within a second', async () => {
  const posts = Array.from({ length: 20_000 }, (_, index) => ({ id: index + 1, title: `post ${index + 1}` }))
  const folder = await makeTempDir('restdir-dbjson-')
  folders.push(folder)
  await writeFile(join(folder, 'db.json'), asJsonServerWrites({ posts, profile: { name: 'p' } }))
  // Served as the command line serves a db.json: in json-server's mode, whose POSTs take the next integer id.
  // Each listing of a collection the store is asked for is counted: the batch may list it once, not once a POST.
  let listings = 0
  const counted = (operation: string) => {
    if (operation === 'children' || operation === 'documentChildren') listings++
  }
  const store = wrapStore(await JsonFileStore.open(join(folder, 'db.json'), { log: quiet }), { before: counted })
  const server = await startServer({ store, jsonServer: true })
  servers.push(server)
  // The first write after loading lays out the whole file once; what is measured is the batch.
  assert.is((await server.request('POST', '/posts', { body: { title: 'first' } })).json.id, 20_001)
  const requests = Array.from({ length: 1000 }, (_, n) => ({ method: 'POST', path: '/posts', body: { n } }))
  listings = 0
  const started = performance.now()
  let batchDone = 0
  const batch = server.request('POST', '/?_batch', { body: { requests } }).then((answer) => {
    batchDone = performance.now() - started
    return answer
  })
  const waits: number[] = []
  while (batchDone === 0) {
    const sent = performance.now()
    assert.is((await server.request('GET', '/profile')).status, 200)
    waits.push(performance.now() - sent)
  }
  const answer = await batch
  assert.is(answer.status, 200, answer.text)
  // Each POST took the next integer id, as json-server gives them.
  assert.equal(answer.json.responses.map((response: { body: { id: number } }) => response.body.id), Array.from({ length: 1000 }, (_, n) => 20_002 + n))
  assert.ok(listings <= 4, `the store was asked for the collection's children ${listings} times`)
  const slowest = Math.max(...waits)
  console.log(`  batch ${batchDone.toFixed(0)} ms; ${waits.length} GETs meanwhile, the slowest ${slowest.toFixed(0)} ms`)
  // A fixed figure: a batch that lists its collection for each POST held every GET for seconds.
  assert.ok(slowest < 1000, `a GET waited ${slowest.toFixed(0)} ms during the batch`)
})

test.run()
