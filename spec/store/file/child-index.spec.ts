import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { makeTempDir, startServer, startServerOnFolder, touchLater, wrapStore } from '../../support/helpers.ts'
import { FileStore } from '../../../lib/store/index.ts'
import { ChildIndexes } from '../../../lib/store/file/child-index.ts'
import { setTimeout } from 'node:timers/promises'

// The file store lists a folder's children from an index that follows its
// own writes and the folder's mtime, so a person's changes still show (docs/storage.md, "Where the data goes").

const ids = (answer: { json: Array<{ id: string }> }) => answer.json.map((doc) => doc.id)

// These tests look at the files, so they bring their own folder (a file store, whichever store the run tests).

test('a child folder a person adds shows in the next listing', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/notes/a', { body: { n: 1 } })
    await server.request('PUT', '/notes/c', { body: { n: 3 } })
    assert.equal(ids(await server.request('GET', '/notes')), ['a', 'c'])
    const notes = join(server.dir, 'notes')
    cpSync(join(notes, 'a'), join(notes, 'b'), { recursive: true })
    writeFileSync(join(notes, 'b', '@.json'), JSON.stringify({ id: 'b', n: 2 }))
    touchLater(notes)
    assert.equal(ids(await server.request('GET', '/notes')), ['a', 'b', 'c'])
    assert.equal((await server.request('GET', '/notes?_children')).json, ['a', 'b', 'c'])
  } finally {
    await server.close()
  }
})

test('a child folder a person removes is gone from the next listing', async () => {
  const server = await startServerOnFolder()
  try {
    for (const id of ['a', 'b', 'c']) await server.request('PUT', `/notes/${id}`, { body: {} })
    assert.equal(ids(await server.request('GET', '/notes')), ['a', 'b', 'c'])
    rmSync(join(server.dir, 'notes', 'b'), { recursive: true })
    touchLater(join(server.dir, 'notes'))
    assert.equal(ids(await server.request('GET', '/notes')), ['a', 'c'])
    assert.equal((await server.request('GET', '/notes?_children')).json, ['a', 'c'])
  } finally {
    await server.close()
  }
})

test('a document a person adds to a child that only had children shows at once', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/shelf/a', { body: {} })
    await server.request('PUT', '/shelf/b/sub', { body: {} })
    assert.equal(ids(await server.request('GET', '/shelf')), ['a'], 'a child without a document is left out')
    writeFileSync(join(server.dir, 'shelf', 'b', '@.json'), JSON.stringify({ id: 'b', byHand: true }))
    assert.equal((await server.request('GET', '/shelf')).json, [{ id: 'a' }, { id: 'b', byHand: true }])
  } finally {
    await server.close()
  }
})

test('a page counts and lists only the children holding a document, reading just the page', async () => {
  const dir = await makeTempDir()
  // The file store, with every document read below /shelf noted.
  const documentsRead: string[] = []
  const countingStore = wrapStore(await FileStore.open(dir), {
    after(operation, path) {
      if ((operation === 'read' || operation === 'readText') && path.length === 2 && path[0] === 'shelf') documentsRead.push(path[1])
    },
  })
  const server = await startServer({ store: countingStore })
  try {
    for (const id of ['a', 'b', 'c', 'd']) await server.request('PUT', `/shelf/${id}`, { body: { id } })
    await server.request('PUT', '/shelf/bb/sub', { body: {} })
    documentsRead.length = 0
    const page = await server.request('GET', '/shelf?_page=2&_limit=2')
    assert.equal(ids(page), ['c', 'd'])
    assert.is(page.headers['x-total-count'], '4')
    assert.equal(documentsRead.sort(), ['c', 'd'], 'the page read its own documents and no other')
    documentsRead.length = 0
    const window = await server.request('GET', '/shelf?_start=1&_limit=2')
    assert.equal(ids(window), ['b', 'c'], 'the child with only children takes no place in the window')
    assert.equal(documentsRead.sort(), ['b', 'c'], 'the window read its own documents and no other')
  } finally {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('listings follow the server\'s own creates, writes into children and removals', async () => {
  const server = await startServerOnFolder()
  try {
    const created: string[] = []
    for (let n = 0; n < 5; n++) created.push((await server.request('POST', '/posts', { body: { n } })).json.id)
    assert.equal(ids(await server.request('GET', '/posts')), created)
    await server.request('PUT', `/posts/${created[1]}/comments/x`, { body: {} })
    await server.request('PUT', '/posts/zz/comments/y', { body: {} })
    assert.equal(ids(await server.request('GET', '/posts')), created, 'a child with only children is not listed')
    await server.request('PUT', '/posts/zz', { body: {} })
    assert.equal(ids(await server.request('GET', '/posts')), [...created, 'zz'])
    await server.request('DELETE', `/posts/${created[0]}`)
    assert.equal(ids(await server.request('GET', '/posts')), [...created.slice(1), 'zz'])
  } finally {
    await server.close()
  }
})

test('a removal that empties its ancestors takes them out of their parents\' children', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/keep', { body: {} })
    await server.request('PUT', '/deep/er/node', { body: {} })
    assert.equal((await server.request('GET', '/?_children')).json, ['deep', 'keep'])
    assert.equal((await server.request('GET', '/deep?_children')).json, ['er'])
    await server.request('DELETE', '/deep/er/node')
    assert.equal((await server.request('GET', '/?_children')).json, ['keep'])
    assert.is((await server.request('GET', '/deep')).status, 404)
  } finally {
    await server.close()
  }
})

test('the file store names the children holding a document, and none for a node that does not exist', async () => {
  const dir = await makeTempDir()
  const store = await FileStore.open(dir)
  try {
    await store.write(['c', 'b'], {})
    await store.write(['c', 'a'], {})
    await store.write(['c', 'only-children', 'x'], {})
    assert.equal(await store.documentChildren(['c'], 0, undefined), { names: ['a', 'b'], total: 2 })
    assert.equal(await store.documentChildren(['c'], 1, 5), { names: ['b'], total: 2 })
    assert.equal(await store.children(['c']), ['a', 'b', 'only-children'])
    assert.is(await store.documentChildren(['nothing'], 0, undefined), undefined)
    mkdirSync(join(dir, 'empty'))
    assert.is(await store.documentChildren(['empty'], 0, undefined), undefined, 'an empty folder is no node')
    await store.remove(['c', 'a'])
    assert.equal(await store.documentChildren(['c'], 0, 10), { names: ['b'], total: 1 })
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

/** A store write as the file store makes one: a child folder with its document, after a random pause (so writes overlap). */
async function writeChild(indexes: ChildIndexes, folder: string, name: string): Promise<void> {
  await indexes.change([folder], async () => {
    await setTimeout(Math.random() * 5)
    mkdirSync(join(folder, name))
    await setTimeout(Math.random() * 5)
    writeFileSync(join(folder, name, '@.json'), '{}')
  }, () => [{ directory: folder, name, kind: 'document' }])
}

test('overlapping writes into a listed folder keep its index: read from disk once, it lists every write', async () => {
  const folder = await makeTempDir('restdir-index-')
  try {
    const indexes = new ChildIndexes()
    for (let n = 0; n < 20; n++) await writeChild(indexes, folder, `a${String(n).padStart(3, '0')}`)
    assert.is((await indexes.list(folder))?.names.length, 20)
    assert.is(indexes.builds, 1)
    // Each write moves the folder's mtime while others are in flight: none of them may make the index look stale.
    const writes = Array.from({ length: 200 }, (_, n) => writeChild(indexes, folder, `b${String(n).padStart(3, '0')}`))
    for (let round = 0; round < 20; round++) {
      await setTimeout(1)
      await indexes.list(folder)
    }
    await Promise.all(writes)
    const listed = await indexes.list(folder)
    assert.is(listed?.names.length, 220)
    assert.is(listed?.withoutDocument.size, 0)
    assert.is(indexes.builds, 1, 'no listing rebuilt the index')
    // Quiet again, the folder is the truth: a person's change is seen.
    mkdirSync(join(folder, 'c000'))
    writeFileSync(join(folder, 'c000', '@.json'), '{}')
    touchLater(folder)
    assert.is((await indexes.list(folder))?.names.length, 221)
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
})

test('an index built while writes run misses none of them, also those that land after it read the folder', async () => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const folder = await makeTempDir('restdir-index-')
    try {
      const indexes = new ChildIndexes()
      for (let n = 0; n < 3000; n++) mkdirSync(join(folder, `a${n}`))
      const writes = Array.from({ length: 100 }, (_, n) => writeChild(indexes, folder, `b${String(n).padStart(3, '0')}`))
      // The first listing builds the index (3000 children checked, with yields) while the writes land.
      const first = await indexes.list(folder)
      await Promise.all(writes)
      const names = new Set((await indexes.list(folder))?.names)
      for (let n = 0; n < 100; n++) assert.ok(names.has(`b${String(n).padStart(3, '0')}`), `b${n} listed (attempt ${attempt})`)
      assert.ok(first !== undefined)
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  }
})

test.run()
