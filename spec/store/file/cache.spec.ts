import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, startServer, startServerOnFolder, touchLater, type TestServer } from '../../support/helpers.ts'
import { DocumentCache } from '../../../lib/store/file/document-cache.ts'
import { FileStore } from '../../../lib/store/file/file-store.ts'

// The file store keeps hot documents in memory; the files stay the truth (docs/storage.md, "Where the data goes").

/** The file holding the document of `/notes/<id>` (plain ASCII segments keep their names). */
const fileOf = (dir: string, id: string) => join(dir, 'notes', id, '@.json')

// These tests look at the files, so they bring their own folder (a file store, whichever store the run tests).

/**
 * Counts the reads the cache answers: each time it hands out the entry of the
 * version on disk. Without the count, a cache never filled would pass every
 * test below, since the file alone gives the same answers.
 */
const cacheHits = (() => {
  const entry = DocumentCache.prototype.entry
  let hits = 0
  function counted(this: DocumentCache, ...args: Parameters<typeof entry>) {
    const found = entry.apply(this, args)
    if (found) hits++
    return found
  }
  return {
    start: () => void (DocumentCache.prototype.entry = counted),
    stop: () => void (DocumentCache.prototype.entry = entry),
    /** The hits since the last call. */
    take(): number {
      const taken = hits
      hits = 0
      return taken
    },
  }
})()
test.before(cacheHits.start)
test.after(cacheHits.stop)

/** A GET, and whether the cache answered it. */
async function getCounted(server: TestServer, target: string, headers?: Record<string, string>) {
  cacheHits.take()
  const answer = await server.request('GET', target, { headers })
  return Object.assign(answer, { fromCache: cacheHits.take() > 0 })
}

/** A PUT, then a GET: a document is kept in the cache once someone has read it. */
async function putAndRead(server: TestServer, target: string, body: unknown) {
  const put = await server.request('PUT', target, { body })
  await server.request('GET', target)
  return put
}

test('a document file edited by hand in place is what the next GET returns', async () => {
  const server = await startServerOnFolder()
  try {
    await putAndRead(server, '/notes/a', { text: 'written by the server' })
    const cached = await getCounted(server, '/notes/a')
    assert.equal(cached.json, { id: 'a', text: 'written by the server' })
    assert.ok(cached.fromCache, 'the written document was in the cache')
    writeFileSync(fileOf(server.dir, 'a'), JSON.stringify({ id: 'a', text: 'edited by a person', extra: true }))
    const answer = await getCounted(server, '/notes/a')
    assert.is(answer.status, 200)
    assert.equal(answer.json, { id: 'a', text: 'edited by a person', extra: true })
    assert.not.ok(answer.fromCache)
    assert.ok((await getCounted(server, '/notes/a')).fromCache, 'the edited version is cached in turn')
  } finally {
    await server.close()
  }
})

test('an edit that keeps the size is seen through the file modification time', async () => {
  const server = await startServerOnFolder()
  try {
    await putAndRead(server, '/notes/b', { text: 'aaaa' })
    const before = await getCounted(server, '/notes/b')
    assert.ok(before.fromCache, 'the written document was in the cache')
    const file = fileOf(server.dir, 'b')
    writeFileSync(file, readFileSync(file, 'utf8').replace('aaaa', 'bbbb'))
    touchLater(file)
    const after = await getCounted(server, '/notes/b')
    assert.equal(after.json, { id: 'b', text: 'bbbb' })
    assert.is.not(after.headers.etag, before.headers.etag)
    assert.not.ok(after.fromCache)
  } finally {
    await server.close()
  }
})

test('a document saved the way editors do, a new file renamed over the old one, is seen', async () => {
  const server = await startServerOnFolder()
  try {
    await putAndRead(server, '/notes/c', { text: 'old!' })
    const file = fileOf(server.dir, 'c')
    // Same size and same mtime as the version the server read last: only the inode tells them apart.
    const sameTime = 1_700_000_000
    utimesSync(file, sameTime, sameTime)
    assert.equal((await server.request('GET', '/notes/c')).json, { id: 'c', text: 'old!' })
    const cached = await getCounted(server, '/notes/c')
    assert.equal(cached.json, { id: 'c', text: 'old!' })
    assert.ok(cached.fromCache, 'the version read last is in the cache')
    const replacement = join(server.dir, 'notes', 'c', 'editor-swap')
    writeFileSync(replacement, readFileSync(file, 'utf8').replace('old!', 'new!'))
    utimesSync(replacement, sameTime, sameTime)
    renameSync(replacement, file)
    const swapped = await getCounted(server, '/notes/c')
    assert.equal(swapped.json, { id: 'c', text: 'new!' })
    assert.not.ok(swapped.fromCache)
  } finally {
    await server.close()
  }
})

test('a page is answered from the cached texts, and a document edited by hand in place is what the next page lists', async () => {
  const server = await startServerOnFolder()
  try {
    for (const id of ['a', 'b', 'c']) await server.request('PUT', `/notes/${id}`, { body: { text: `${id} by the server` } })
    for (const id of ['a', 'b', 'c']) await server.request('GET', `/notes/${id}`)
    const cached = await getCounted(server, '/notes?_limit=3')
    assert.ok(cached.fromCache, 'the page was answered from the cache')
    assert.is(cached.text, '[{"id":"a","text":"a by the server"},{"id":"b","text":"b by the server"},{"id":"c","text":"c by the server"}]\n')
    // Same size, pretty-printed with a byte-order mark as an editor may leave it: the page shows the edit, compact.
    const file = fileOf(server.dir, 'b')
    writeFileSync(file, '\uFEFF{\n  "id": "b",\n  "text": "B BY A PERSON"\n}\n')
    touchLater(file)
    const edited = await getCounted(server, '/notes?_limit=3')
    assert.is(edited.text, '[{"id":"a","text":"a by the server"},{"id":"b","text":"B BY A PERSON"},{"id":"c","text":"c by the server"}]\n')
    assert.is(edited.text, (await server.request('GET', '/notes?id_ne=none&_limit=3')).text, 'the filtered listing serialises the same text')
  } finally {
    await server.close()
  }
})

test('an ETag from before a hand edit no longer gets a 304', async () => {
  const server = await startServerOnFolder()
  try {
    const put = await putAndRead(server, '/notes/d', { n: 1 })
    const etag = String(put.headers.etag)
    const unchanged = await getCounted(server, '/notes/d', { 'If-None-Match': etag })
    assert.is(unchanged.status, 304)
    assert.ok(unchanged.fromCache, 'the 304 came from the cached version')
    writeFileSync(fileOf(server.dir, 'd'), JSON.stringify({ id: 'd', n: 22 }))
    const answer = await getCounted(server, '/notes/d', { 'If-None-Match': etag })
    assert.is(answer.status, 200)
    assert.equal(answer.json, { id: 'd', n: 22 })
    assert.not.ok(answer.fromCache)
  } finally {
    await server.close()
  }
})

test('a PATCH after a hand edit merges into the edited document', async () => {
  const server = await startServerOnFolder()
  try {
    await putAndRead(server, '/notes/e', { a: 1 })
    assert.ok((await getCounted(server, '/notes/e')).fromCache, 'the written document was in the cache')
    writeFileSync(fileOf(server.dir, 'e'), JSON.stringify({ id: 'e', a: 1, byHand: 'yes' }))
    const patched = await server.request('PATCH', '/notes/e', { body: { b: 2 } })
    assert.equal(patched.json, { id: 'e', a: 1, byHand: 'yes', b: 2 })
    assert.equal((await server.request('GET', '/notes/e')).json, { id: 'e', a: 1, byHand: 'yes', b: 2 })
  } finally {
    await server.close()
  }
})

test('a document deleted by hand is a 404, and a PUT there creates it again with a 201', async () => {
  const server = await startServerOnFolder()
  try {
    await putAndRead(server, '/notes/f', { n: 1 })
    await server.request('PUT', '/notes/f', { body: { n: 2 } })
    assert.ok((await getCounted(server, '/notes/f')).fromCache, 'the written document was in the cache')
    rmSync(join(server.dir, 'notes', 'f'), { recursive: true })
    const gone = await getCounted(server, '/notes/f')
    assert.is(gone.status, 404)
    assert.not.ok(gone.fromCache)
    const put = await server.request('PUT', '/notes/f', { body: { n: 3 } })
    assert.is(put.status, 201)
    assert.equal((await server.request('GET', '/notes/f')).json, { id: 'f', n: 3 })
  } finally {
    await server.close()
  }
})

test('a document written by the server after it was read is read back at once, with the ETag its write answered', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/notes/g', { body: { n: -1 } })
    await server.request('GET', '/notes/g')
    for (let n = 0; n < 5; n++) {
      const put = await server.request('PUT', '/notes/g', { body: { n } })
      const get = await getCounted(server, '/notes/g')
      assert.equal(get.json, { id: 'g', n })
      assert.is(get.headers.etag, put.headers.etag)
      assert.ok(get.fromCache, `write ${n} was in the cache`)
    }
  } finally {
    await server.close()
  }
})

test('a document created and not yet read takes no room in the cache; its first GET reads the file, and keeps it', async () => {
  const server = await startServerOnFolder()
  try {
    const put = await server.request('PUT', '/notes/h', { body: { n: 1 } })
    const post = await server.request('POST', '/notes', { body: { n: 2 } })
    for (const [target, answer] of [['/notes/h', put], [String(post.headers.location), post]] as const) {
      const first = await getCounted(server, target)
      assert.not.ok(first.fromCache, `${target} was not kept when it was created`)
      assert.is(first.headers.etag, answer.headers.etag)
      assert.ok((await getCounted(server, target)).fromCache, `${target} is kept once read`)
    }
  } finally {
    await server.close()
  }
})

test('a document deleted by hand after it was read, then PUT with no read between, is created again with a 201', async () => {
  const server = await startServerOnFolder()
  try {
    await putAndRead(server, '/notes/i', { n: 1 })
    rmSync(fileOf(server.dir, 'i'))
    const put = await server.request('PUT', '/notes/i', { body: { n: 2 } })
    assert.is(put.status, 201)
    const replaced = await server.request('PUT', '/notes/i', { body: { n: 3 } })
    assert.is(replaced.status, 200)
    assert.equal((await server.request('GET', '/notes/i')).json, { id: 'i', n: 3 })
  } finally {
    await server.close()
  }
})

const version = (n: number, size = 10) => ({ ino: n, size, mtimeMs: 1000 })

test('the cache keeps at most its number of entries, dropping the least recently used', () => {
  const cache = new DocumentCache({ maxEntries: 2, maxBytes: 1000 })
  cache.set('a', '{"n":1}', '"a"', version(1))
  cache.set('b', '{"n":2}', '"b"', version(2))
  assert.ok(cache.get('a', version(1)), 'a read makes a the most recently used')
  cache.set('c', '{"n":3}', '"c"', version(3))
  assert.is(cache.size, 2)
  assert.is(cache.get('b', version(2)), undefined)
  assert.equal(cache.get('a', version(1)), { doc: { n: 1 }, etag: '"a"' })
  assert.ok(cache.get('c', version(3)))
})

test('a document read between writes of many others stays cached, and so do the newest', () => {
  const cache = new DocumentCache({ maxEntries: 3, maxBytes: 1000 })
  cache.set('hot', '{"hot":true}', '"hot"', version(0))
  for (let n = 1; n <= 100; n++) {
    cache.set(`cold${n}`, '{}', `"${n}"`, version(n))
    assert.ok(cache.get('hot', version(0)), `hot is still there after ${n} others`)
  }
  assert.is(cache.size, 3)
  assert.ok(cache.get('cold100', version(100)), 'the newest is kept')
  assert.is(cache.get('cold1', version(1)), undefined, 'an old one used once went')
})

test('a document just kept is not the one dropped, even when every other was used since', () => {
  const cache = new DocumentCache({ maxEntries: 3, maxBytes: 1000 })
  for (const name of ['a', 'b', 'c']) cache.set(name, '{}', `"${name}"`, version(name.charCodeAt(0)))
  for (const name of ['a', 'b', 'c']) assert.ok(cache.get(name, version(name.charCodeAt(0))))
  cache.set('d', '{}', '"d"', version(100))
  assert.is(cache.size, 3)
  assert.ok(cache.get('d', version(100)), 'the new document is kept')
  assert.is(cache.get('a', version(97)), undefined, 'the oldest goes')
})

test('the cache keeps at most its number of bytes, and never a file larger than that', () => {
  const cache = new DocumentCache({ maxEntries: 100, maxBytes: 25 })
  cache.set('a', '{}', '"a"', version(1, 10))
  cache.set('b', '{}', '"b"', version(2, 10))
  cache.set('c', '{}', '"c"', version(3, 10))
  assert.is(cache.size, 2)
  assert.is(cache.get('a', version(1, 10)), undefined)
  cache.set('big', '{}', '"big"', version(4, 26))
  assert.is(cache.get('big', version(4, 26)), undefined)
})

test('a full cache keeps a file at its second read, not its first: documents read once each push out none read again', async () => {
  const dir = await makeTempDir()
  // No watches: every GET asks the cache for the version on disk, and is counted.
  const store = await FileStore.open(dir, { cache: { maxEntries: 3, maxBytes: 1_000_000 }, watches: 0 })
  const server = await startServer({ store })
  try {
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) assert.is((await server.request('PUT', `/notes/${id}`, { body: { id } })).status, 201)
    for (const id of ['a', 'b', 'c']) assert.not.ok((await getCounted(server, `/notes/${id}`)).fromCache, `${id}: read from its file, and kept while there is room`)
    for (const id of ['d', 'e', 'f']) {
      assert.not.ok((await getCounted(server, `/notes/${id}`)).fromCache, `${id}: read from its file, not kept by a full cache`)
      for (const kept of ['a', 'b', 'c']) assert.ok((await getCounted(server, `/notes/${kept}`)).fromCache, `${kept} stayed after ${id}'s first read`)
    }
    const second = await getCounted(server, '/notes/d')
    assert.equal([second.fromCache, second.json], [false, { id: 'd' }], 'a second read reads the file, and keeps it')
    assert.ok((await getCounted(server, '/notes/d')).fromCache, 'the third read is a hit')
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test('the files a full cache declined are remembered as many as it holds, then forgotten together', () => {
  const cache = new DocumentCache({ maxEntries: 2, maxBytes: 1000 })
  assert.ok(cache.admits('a', 10) && cache.admits('b', 10), 'an empty cache admits anything')
  cache.set('a', '{}', '"a"', version(1))
  cache.set('b', '{}', '"b"', version(2))
  assert.not.ok(cache.admits('c', 10), 'a first read into a full cache')
  assert.ok(cache.admits('c', 10), 'a second read')
  assert.not.ok(cache.admits('c', 10), 'taken once: asked again, it is a first read')
  assert.not.ok(cache.admits('d', 10))
  assert.not.ok(cache.admits('e', 10), 'd and e remembered: as many as the cache holds')
  assert.not.ok(cache.admits('f', 10), 'f forgot them all')
  assert.not.ok(cache.admits('d', 10), 'd was forgotten')
  cache.delete('a')
  assert.ok(cache.admits('g', 10), 'with room again, any file is kept')
})

test('the cache answers only for the version it was given, and each read gets its own copy', () => {
  const cache = new DocumentCache()
  cache.set('a', '{"list":[1]}', '"a"', version(1))
  assert.is(cache.get('a', { ...version(1), mtimeMs: 1001 }), undefined)
  cache.set('a', '{"list":[1]}', '"a"', version(1))
  const first = cache.get('a', version(1))!
  ;(first.doc.list as number[]).push(2)
  assert.equal(cache.get('a', version(1))!.doc, { list: [1] })
})

test('the bytes kept with a hot document are each form\'s own: one store answered plainly and in the json-server mode', async () => {
  const dir = await makeTempDir()
  const store = await FileStore.open(dir)
  const plain = await startServer({ store })
  const indented = await startServer({ store, jsonServer: true })
  try {
    await plain.request('PUT', '/notes/a', { body: { list: [1, 2], text: 'é' } })
    const compact = '{"id":"a","list":[1,2],"text":"é"}\n'
    const laidOut = `${JSON.stringify({ id: 'a', list: [1, 2], text: 'é' }, null, 2)}\n`
    // A late file-system event of the PUT may make one read a miss; most are hits, each form's after the other's.
    let hits = 0
    for (let round = 0; round < 4; round++) {
      for (const [server, text] of [[plain, compact], [indented, laidOut]] as const) {
        const answer = await getCounted(server, '/notes/a')
        assert.is(answer.text, text)
        assert.is(answer.headers['content-length'], String(Buffer.byteLength(text)))
        if (answer.fromCache) hits++
        const head = await server.request('HEAD', '/notes/a')
        assert.is(head.headers['content-length'], String(Buffer.byteLength(text)))
        assert.is(head.text, '')
      }
    }
    assert.ok(hits >= 4, `the document was answered from the cache (${hits} of 8 reads)`)
    // One too large to keep the bytes of is answered the same way each time.
    const large = { id: 'big', text: 'é'.repeat(20_000) }
    await plain.request('PUT', '/notes/big', { body: large })
    for (let round = 0; round < 2; round++) {
      assert.is((await plain.request('GET', '/notes/big')).text, `${JSON.stringify(large)}\n`)
      const answer = await indented.request('GET', '/notes/big')
      assert.is(answer.text, `${JSON.stringify(large, null, 2)}\n`)
      assert.is(answer.headers['content-length'], String(Buffer.byteLength(answer.text)))
    }
    writeFileSync(fileOf(dir, 'a'), JSON.stringify({ id: 'a', text: 'edited by a person' }))
    assert.is((await plain.request('GET', '/notes/a')).text, '{"id":"a","text":"edited by a person"}\n')
    assert.is((await indented.request('GET', '/notes/a')).text, `${JSON.stringify({ id: 'a', text: 'edited by a person' }, null, 2)}\n`)
  } finally {
    await plain.server.shutdown()
    await indented.server.shutdown()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test.run()
