import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startServerOnFolder, touchLater } from './helpers.ts'
import { DocumentCache } from '../lib/store/cache.ts'

// The file store keeps hot documents in memory; the files stay the truth (SPEC §11).

/** The file holding the document of `/notes/<id>` (plain ASCII segments keep their names). */
const fileOf = (dir: string, id: string) => join(dir, 'notes', id, '@.json')

// These tests look at the files, so they bring their own folder (a file store, whichever store the run tests).

test('a document file edited by hand in place is what the next GET returns', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/notes/a', { body: { text: 'written by the server' } })
    assert.equal((await server.request('GET', '/notes/a')).json, { id: 'a', text: 'written by the server' })
    writeFileSync(fileOf(server.dir, 'a'), JSON.stringify({ id: 'a', text: 'edited by a person', extra: true }))
    const answer = await server.request('GET', '/notes/a')
    assert.is(answer.status, 200)
    assert.equal(answer.json, { id: 'a', text: 'edited by a person', extra: true })
  } finally {
    await server.close()
  }
})

test('an edit that keeps the size is seen through the file modification time', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/notes/b', { body: { text: 'aaaa' } })
    const before = await server.request('GET', '/notes/b')
    const file = fileOf(server.dir, 'b')
    writeFileSync(file, readFileSync(file, 'utf8').replace('aaaa', 'bbbb'))
    touchLater(file)
    const after = await server.request('GET', '/notes/b')
    assert.equal(after.json, { id: 'b', text: 'bbbb' })
    assert.is.not(after.headers.etag, before.headers.etag)
  } finally {
    await server.close()
  }
})

test('a document saved the way editors do, a new file renamed over the old one, is seen', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/notes/c', { body: { text: 'old!' } })
    const file = fileOf(server.dir, 'c')
    // Same size and same mtime as the version the server read last: only the inode tells them apart.
    const sameTime = 1_700_000_000
    utimesSync(file, sameTime, sameTime)
    assert.equal((await server.request('GET', '/notes/c')).json, { id: 'c', text: 'old!' })
    const replacement = join(server.dir, 'notes', 'c', 'editor-swap')
    writeFileSync(replacement, readFileSync(file, 'utf8').replace('old!', 'new!'))
    utimesSync(replacement, sameTime, sameTime)
    renameSync(replacement, file)
    assert.equal((await server.request('GET', '/notes/c')).json, { id: 'c', text: 'new!' })
  } finally {
    await server.close()
  }
})

test('an ETag from before a hand edit no longer gets a 304', async () => {
  const server = await startServerOnFolder()
  try {
    const put = await server.request('PUT', '/notes/d', { body: { n: 1 } })
    const etag = String(put.headers.etag)
    assert.is((await server.request('GET', '/notes/d', { headers: { 'If-None-Match': etag } })).status, 304)
    writeFileSync(fileOf(server.dir, 'd'), JSON.stringify({ id: 'd', n: 22 }))
    const answer = await server.request('GET', '/notes/d', { headers: { 'If-None-Match': etag } })
    assert.is(answer.status, 200)
    assert.equal(answer.json, { id: 'd', n: 22 })
  } finally {
    await server.close()
  }
})

test('a PATCH after a hand edit merges into the edited document', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/notes/e', { body: { a: 1 } })
    await server.request('GET', '/notes/e')
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
    await server.request('PUT', '/notes/f', { body: { n: 1 } })
    await server.request('PUT', '/notes/f', { body: { n: 2 } })
    await server.request('GET', '/notes/f')
    rmSync(join(server.dir, 'notes', 'f'), { recursive: true })
    assert.is((await server.request('GET', '/notes/f')).status, 404)
    const put = await server.request('PUT', '/notes/f', { body: { n: 3 } })
    assert.is(put.status, 201)
    assert.equal((await server.request('GET', '/notes/f')).json, { id: 'f', n: 3 })
  } finally {
    await server.close()
  }
})

test('a document written by the server is read back at once, with the ETag its write answered', async () => {
  const server = await startServerOnFolder()
  try {
    for (let n = 0; n < 5; n++) {
      const put = await server.request('PUT', '/notes/g', { body: { n } })
      const get = await server.request('GET', '/notes/g')
      assert.equal(get.json, { id: 'g', n })
      assert.is(get.headers.etag, put.headers.etag)
    }
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

test('the cache answers only for the version it was given, and each read gets its own copy', () => {
  const cache = new DocumentCache()
  cache.set('a', '{"list":[1]}', '"a"', version(1))
  assert.is(cache.get('a', { ...version(1), mtimeMs: 1001 }), undefined)
  cache.set('a', '{"list":[1]}', '"a"', version(1))
  const first = cache.get('a', version(1))!
  ;(first.doc.list as number[]).push(2)
  assert.equal(cache.get('a', version(1))!.doc, { list: [1] })
})

test.run()
