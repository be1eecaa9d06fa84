import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryStore, type Store } from '../../lib/store/index.ts'
import { startServer, type TestServer } from '../support/helpers.ts'

// A store may leave out every optional ability of the Store interface (lib/store/store.ts); the
// data layer fills each in once (lib/store/full-store.ts). Served, such a store answers as one
// that has them all, and a batch, which needs the store's own one step, is refused clearly.

/** A store with the required methods only, over a MemoryStore. */
function bareStore(inner: MemoryStore): Store {
  return {
    read: (path) => inner.read(path),
    children: (path) => inner.children(path),
    exists: (path) => inner.exists(path),
    write: (path, doc, conditions) => inner.write(path, doc, conditions),
    create: (path, doc, conditions) => inner.create(path, doc, conditions),
    remove: (path, conditions) => inner.remove(path, conditions),
    close: () => inner.close(),
  }
}

/** A MemoryStore holding notes 1, 2, 3 and 10, and below /notes/9, which holds no document of its own, a draft: 9 is no member of the listing. */
async function notes(): Promise<MemoryStore> {
  const store = new MemoryStore()
  for (const id of [1, 2, 3, 10]) await store.write(['notes', String(id)], { id, title: `note ${id}`, rank: id % 3 })
  await store.write(['notes', '9', 'drafts', '1'], { id: '1' })
  return store
}

async function answers(server: TestServer): Promise<unknown[]> {
  const seen: unknown[] = []
  const ask = async (method: string, target: string, body?: unknown) => {
    const answer = await server.request(method, target, body === undefined ? {} : { body })
    // A new id of restdir's own is made from the clock: the two servers' differ.
    const json = answer.json === undefined ? undefined : JSON.parse(JSON.stringify(answer.json).replace(/"0[0-9a-z]{11}"/g, '"(new id)"'))
    seen.push([method, target, answer.status, answer.headers['x-total-count'], json])
  }
  await ask('POST', '/notes', { title: 'next' })
  await ask('GET', '/notes')
  await ask('GET', '/notes?_page=2&_limit=2')
  await ask('GET', '/notes?_sort=rank,-id')
  await ask('GET', '/notes/2')
  await ask('HEAD', '/notes/3')
  await ask('DELETE', '/notes/1')
  await ask('GET', '/notes?_page=1&_limit=10')
  return seen
}

test('a store with only the required methods answers as one with every ability, in the json-server mode too', async () => {
  for (const jsonServer of [false, true]) {
    const full = await startServer({ store: await notes(), jsonServer })
    const bare = await startServer({ store: bareStore(await notes()), jsonServer })
    try {
      const expected = await answers(full)
      assert.equal(await answers(bare), expected)
      // The json-server mode's next integer id is read from the names the store lists (lib/data/ids.ts).
      assert.equal(expected[0], ['POST', '/notes', 201, undefined, { id: jsonServer ? 11 : '(new id)', title: 'next' }])
      assert.equal((expected[2] as unknown[])[3], '5', 'the page counts the children holding a document')
    } finally {
      await Promise.all([full.close(), bare.close()])
    }
  }
})

test('a batch on a store without its own one step is refused with 501, and nothing is written', async () => {
  const server = await startServer({ store: bareStore(new MemoryStore()) })
  try {
    const answer = await server.request('POST', '/?_batch', { body: { requests: [{ method: 'PUT', path: '/notes/1', body: { title: 'a' } }] } })
    assert.is(answer.status, 501)
    assert.match(String((answer.json as { detail?: string }).detail), /cannot apply a batch as one step/)
    assert.is((await server.request('GET', '/notes/1')).status, 404)
  } finally {
    await server.close()
  }
})

test.run()
