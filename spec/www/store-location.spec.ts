import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createHash } from 'node:crypto'
import { writeFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { documentLocation, encodeSegment, parseStoreHeader } from '../../www/store-location.js'
import { encodeSegment as serverEncodeSegment } from '../../lib/store/file/encode.ts'
import { describeStore, storeHeaderValue } from '../../lib/static/store-header.ts'
import type { AddressInfo } from 'node:net'
import { createServer } from '../../lib/server.ts'
import { makeTempDir, send, startServer } from '../support/helpers.ts'
import { seeded, seedFrom } from '../support/random.ts'

// Where the playground says a document lives (www/store-location.js), and what the
// server tells it about its store (X-Restdir-Store, lib/static/store-header.ts).

const sha256Hex = async (text: string) => createHash('sha256').update(text).digest('hex')

test('the page spells folder names exactly as the store does, for hand-picked and random segments', async () => {
  const picked = ['notes', 'Ada', '..', '.', 'a.b', '.hidden', 'trail.', 'con', 'LPT1.txt', 'nul', 'é', '😀', '\ud800', 'a b/c', '%41', '!a', 'x'.repeat(200), 'x'.repeat(201), 'É'.repeat(150), '']
  for (const segment of picked) {
    assert.is(await encodeSegment(segment, sha256Hex), serverEncodeSegment(segment), JSON.stringify(segment))
  }
  const seed = seedFrom('LOCATION_SEED')
  const random = seeded(seed)
  for (let round = 0; round < 2000; round++) {
    const length = random.pick([1, 2, 5, 20, 199, 200, 201, 300])
    const segment = random.text(length, 'abcXYZ09._-~!%@ éß中😀\ud800con')
    assert.is(await encodeSegment(segment, sha256Hex), serverEncodeSegment(segment), `seed ${seed}: ${JSON.stringify(segment)}`)
  }
})

test('a folder store names the file: the store folder as started, the URL\'s folders as the store spells them, then @.json', async () => {
  const folder = { kind: 'folder', name: 'store' }
  assert.is((await documentLocation(folder, ['notes', 'first'], sha256Hex)).text, 'store/notes/first/@.json')
  assert.is((await documentLocation(folder, ['user', 'Ada Lovelace'], sha256Hex)).text, 'store/user/!ada%20!lovelace/@.json')
  assert.is((await documentLocation(folder, ['notes'], sha256Hex, { members: true })).text, 'store/notes/*/@.json')
  assert.is((await documentLocation({ kind: 'folder' }, ['a'], sha256Hex)).text, 'the store folder/a/@.json', 'a remote client is not told the name')
  const long = 'x'.repeat(201)
  assert.is((await documentLocation(folder, [long])).text, `store/${'x'.repeat(150)}~…/@.json`, 'without SHA-256 (a page not on localhost or HTTPS) the hash shows as …')
})

test('a db.json names the file and the JSON path; PostgreSQL the table and key; memory says so', async () => {
  const db = { kind: 'json-file', name: 'db.json' }
  assert.is((await documentLocation(db, ['posts', '1'])).text, 'db.json → posts[id=1]')
  assert.is((await documentLocation(db, ['profile'])).text, 'db.json → profile')
  // A db.json is its own declaration: its `user` is a collection like any other, by `id`.
  assert.is((await documentLocation(db, ['user', 'u1'])).text, 'db.json → user[id=u1]')
  assert.is((await documentLocation(db, ['user', 'u1', 'playlist', 'p1'])).text, 'db.json → @nodes[path=/user/u1/playlist/p1]')
  assert.is((await documentLocation(db, ['a', 'b', 'c'])).text, 'db.json → @nodes[path=/a/b/c]')
  assert.is((await documentLocation(db, ['posts'], undefined, { members: true })).text, 'db.json → posts[…]')
  const postgres = { kind: 'postgres' }
  assert.is((await documentLocation(postgres, ['notes', 'first'])).text, "table restdir_nodes, row parent = '/notes/', name = 'first'")
  assert.is((await documentLocation(postgres, ['it\'s'])).text, "table restdir_nodes, row parent = '/', name = 'it''s'")
  assert.is((await documentLocation(postgres, ['notes'], undefined, { members: true })).text, "table restdir_nodes, rows with parent = '/notes/'")
  assert.match((await documentLocation({ kind: 'memory' }, ['a'])).text, /^in memory/)
})

test('the page reads the header: kind, and a percent-encoded name', () => {
  assert.equal(parseStoreHeader('folder; name="my%20store"'), { kind: 'folder', name: 'my store' })
  assert.equal(parseStoreHeader('postgres'), { kind: 'postgres', name: undefined })
  assert.equal(parseStoreHeader(null), { kind: 'other' })
  assert.equal(parseStoreHeader('folder; name="%E0"'), { kind: 'folder', name: undefined })
})

test('a store is named relative to the folder the server started in, never by an absolute path, and a database never', () => {
  const cwd = path.resolve('/home/someone/project')
  assert.equal(describeStore('./store', cwd), { kind: 'folder', name: 'store' })
  assert.equal(describeStore(path.join(cwd, 'data', 'store'), cwd), { kind: 'folder', name: 'data/store' })
  assert.equal(describeStore(cwd, cwd), { kind: 'folder', name: '.' })
  assert.equal(describeStore('/srv/private/stores/demo', cwd), { kind: 'folder', name: 'demo' }, 'outside: its last part only')
  assert.equal(describeStore('../elsewhere/db.json', cwd), { kind: 'json-file', name: 'db.json' })
  assert.equal(describeStore('postgres://app:secret@db.example/restdir', cwd), { kind: 'postgres' })
  assert.equal(describeStore({ memory: true }, cwd), { kind: 'memory' })
})

test('the name goes to a loopback client only; anyone else hears the kind', () => {
  const folder = { kind: 'folder' as const, name: 'my "store"' }
  assert.is(storeHeaderValue(folder, '127.0.0.1'), 'folder; name="my%20%22store%22"')
  assert.is(storeHeaderValue(folder, '::ffff:127.0.0.1'), 'folder; name="my%20%22store%22"')
  assert.is(storeHeaderValue(folder, '::1'), 'folder; name="my%20%22store%22"')
  assert.is(storeHeaderValue(folder, '192.168.1.20'), 'folder')
  assert.is(storeHeaderValue(folder, undefined), 'folder')
  assert.is(storeHeaderValue({ kind: 'postgres' }, '127.0.0.1'), 'postgres')
})

test('the page\'s own answer carries X-Restdir-Store for a folder, a db.json and memory', async () => {
  const dir = await makeTempDir()
  const folderServer = await startServer({ store: dir })
  const dbFile = path.join(await makeTempDir(), 'db.json')
  await writeFile(dbFile, '{"posts": []}\n')
  const dbServer = await startServer({ store: dbFile })
  // A fixture and no store: memory (startServer always names a store, so the server is made here).
  const memoryServer = createServer({ fixture: dbFile, quiet: true })
  await memoryServer.ready
  await new Promise<void>((resolve) => memoryServer.listen(0, '127.0.0.1', resolve))
  const memoryPort = (memoryServer.address() as AddressInfo).port
  try {
    assert.is((await folderServer.request('HEAD', '/')).headers['x-restdir-store'], `folder; name="${path.basename(dir)}"`)
    assert.is((await dbServer.request('HEAD', '/index.html')).headers['x-restdir-store'], 'json-file; name="db.json"')
    assert.is((await send(memoryPort, 'GET', '/')).headers['x-restdir-store'], 'memory')
    assert.is((await folderServer.request('GET', '/?_children')).headers['x-restdir-store'], undefined, 'data answers do not carry it')
  } finally {
    await folderServer.close()
    await dbServer.close()
    await memoryServer.shutdown()
    await rm(dir, { recursive: true, force: true })
    await rm(path.dirname(dbFile), { recursive: true, force: true })
  }
})

test.run()
