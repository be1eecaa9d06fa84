import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { rm } from 'node:fs/promises'
import { importDatabase, readDatabaseFile } from '../../lib/data/import.ts'
import { makeTempDir, openTestStore, startServer } from '../support/helpers.ts'
import { createServer } from '../../lib/server.ts'
import type { AddressInfo } from 'node:net'
import { send } from '../support/helpers.ts'
import type { Store } from '../../lib/store/store.ts'

// Coming from json-server: its db.json loads into a store (`--import`), and
// `--delay` slows data answers to show a front end's loading states.

const db = {
  posts: [
    { id: 1, title: 'json-server', author: 'typicode', tags: ['a'] },
    { id: 2, title: 'restdir', author: { name: 'Ada' } },
    { id: 'slug-id', title: 'string ids stay' },
    { title: 'no id: a new one is made' },
  ],
  comments: [{ id: 1, body: 'some comment', postId: 1 }],
  profile: { name: 'typicode' },
}

/** Serves a store over HTTP for a moment, to see what a client sees. */
async function serve<T>(store: Store, use: (port: number) => Promise<T>): Promise<T> {
  const server = createServer({ store, quiet: true })
  await server.ready
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    return await use((server.address() as AddressInfo).port)
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

test('each top-level array becomes a collection and each object a document, ids kept as URL segments and numeric ids as numbers', async () => {
  const { store, dispose } = await openTestStore()
  try {
    assert.equal(await importDatabase(store, db), { collections: 2, documents: 6, empty: [] })
    await serve(store, async (port) => {
      assert.equal((await send(port, 'GET', '/posts/1')).json, { id: 1, title: 'json-server', author: 'typicode', tags: ['a'] })
      assert.equal((await send(port, 'GET', '/posts/slug-id')).json, { id: 'slug-id', title: 'string ids stay' })
      assert.equal((await send(port, 'GET', '/comments?postId=1')).json, [{ id: 1, body: 'some comment', postId: 1 }])
      assert.equal((await send(port, 'GET', '/profile')).json, { id: 'profile', name: 'typicode' })
      const posts = (await send(port, 'GET', '/posts?_sort=id')).json as { id: string | number; title: string }[]
      assert.is(posts.length, 4)
      assert.equal(posts.slice(0, 2).map((post) => post.id), [1, 2], 'numeric ids sort as numbers')
      assert.ok(posts.some((post) => post.id === 'slug-id'))
      const made = posts.find((post) => post.title === 'no id: a new one is made')
      assert.match(String(made?.id), /^[0-9a-z]{12}$/)
    })
  } finally {
    await dispose()
  }
})

test('an import that would overwrite documents is refused whole, unless forced', async () => {
  const { store, dispose } = await openTestStore()
  try {
    await store.write(['posts', '2'], { id: '2', title: 'mine' })
    try {
      await importDatabase(store, db)
      assert.unreachable('the import should be refused')
    } catch (error) {
      assert.match((error as Error).message, /nothing was written:\n  1 document exists already \(\/posts\/2\)/)
    }
    assert.is(await store.read(['posts', '1']), undefined, 'nothing was written')
    assert.equal((await store.read(['posts', '2']))?.doc, { id: '2', title: 'mine' })
    await importDatabase(store, db, { force: true })
    assert.equal((await store.read(['posts', '2']))?.doc, { id: 2, title: 'restdir', author: { name: 'Ada' } })
  } finally {
    await dispose()
  }
})

test('a database that cannot be imported is refused before anything is written, with the reason', async () => {
  const { store, dispose } = await openTestStore()
  try {
    const cases: [unknown, RegExp][] = [
      [[1, 2], /is a JSON object whose keys name collections/],
      [{ count: 3 }, /count: holds a number; only arrays \(collections\) and objects \(documents\)/],
      [{ posts: [{ id: 1 }, 'text'] }, /posts\[1\]: is a string; each item of a collection must be an object/],
      [{ posts: [{ id: 1 }, { id: '1' }] }, /posts\[1\]\.id: repeats the id "1" of posts\[0\]/],
      [{ posts: [{ id: { nested: true } }] }, /posts\[0\]\.id: is a object; an id must be a string or a number/],
      [{ posts: [{ id: '' }] }, /posts\[0\]\.id: the id "" is empty/],
      [{ '': [] }, /the key "" is empty/],
      [{ posts: [{ id: 'x'.repeat(2000) }] }, /longer than a URL segment may be/],
    ]
    for (const [database, reason] of cases) {
      try {
        await importDatabase(store, database)
        assert.unreachable(`${JSON.stringify(database).slice(0, 60)} should be refused`)
      } catch (error) {
        assert.match((error as Error).message, reason)
      }
    }
    assert.is(await store.children([]), undefined, 'the store is still empty')
  } finally {
    await dispose()
  }
})

test('keys such as __proto__ in an imported document stay plain data', async () => {
  const { store, dispose } = await openTestStore()
  try {
    await importDatabase(store, JSON.parse('{"things": [{"id": 1, "__proto__": {"polluted": true}}]}'))
    const stored = await store.read(['things', '1'])
    assert.is(Object.getPrototypeOf(stored?.doc), Object.prototype)
    assert.equal(JSON.parse(JSON.stringify(stored?.doc)), JSON.parse('{"id": 1, "__proto__": {"polluted": true}}'))
    assert.is(({} as Record<string, unknown>).polluted, undefined)
  } finally {
    await dispose()
  }
})

test('readDatabaseFile reads a db.json (a byte-order mark too) and names the file when it is not JSON', async () => {
  const dir = await makeTempDir()
  try {
    writeFileSync(join(dir, 'db.json'), '\uFEFF{"posts": []}')
    assert.equal(await readDatabaseFile(join(dir, 'db.json')), { posts: [] })
    writeFileSync(join(dir, 'bad.json'), '{"posts": [}')
    try {
      await readDatabaseFile(join(dir, 'bad.json'))
      assert.unreachable()
    } catch (error) {
      assert.match((error as Error).message, /bad\.json is not valid JSON/)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('--delay holds back every data answer by at least the delay, declared and generic alike', async () => {
  const server = await startServer({ delay: 150 })
  try {
    // A lower bound only: a slow machine makes answers later, never earlier.
    for (const [method, target] of [['GET', '/user'], ['POST', '/notes'], ['GET', '/notes']] as const) {
      const started = performance.now()
      const answer = await server.request(method, target, method === 'POST' ? { body: {} } : {})
      assert.ok(answer.status < 300, `${method} ${target}`)
      assert.ok(performance.now() - started >= 145, `${method} ${target} waited`)
    }
  } finally {
    await server.close()
  }
})

test.run()
