import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { JsonFileStore } from '../../lib/store/index.ts'
import { FullStore } from '../../lib/store/full-store.ts'
import type { Store } from '../../lib/store/store.ts'
import { nextIntegerId } from '../../lib/data/ids.ts'
import { makeTempDir, wrapStore } from '../support/helpers.ts'

// The next integer id json-server 0.17 gives in a db.json's collection (lib/data/ids.ts), and what it
// costs: every name counts, but where the last item tells, no list of every name is made (docs/speed.md).

const folders: string[] = []
const stores: Store[] = []
test.after.each(async () => {
  for (const store of stores.splice(0)) await store.close()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

/** A db.json of `posts` opened as its store, with each listing of every name it is asked for counted. */
async function openPosts(posts: Array<Record<string, unknown>>) {
  const folder = await makeTempDir('restdir-ids-')
  folders.push(folder)
  const file = join(folder, 'db.json')
  await writeFile(file, JSON.stringify({ posts }, null, 2))
  const inner = await JsonFileStore.open(file, { log: () => {} })
  stores.push(inner)
  const counted = { whole: 0 }
  const store: Store = {
    ...wrapStore(inner, {}),
    fileOrder: inner.fileOrder,
    documentChildren: (path, start, end) => {
      if (end === undefined) counted.whole++
      return inner.documentChildren(path, start, end)
    },
  }
  return { store: new FullStore(store), counted }
}

const numbered = (count: number, id: (n: number) => unknown) => Array.from({ length: count }, (_, n) => ({ id: id(n + 1), title: `post ${n + 1}` }))

test('a collection whose last item has an id that is no integer takes no integer id, and no list of every name is made', async () => {
  const { store, counted } = await openPosts([...numbered(1000, String), { id: 'k3x9q2w1', title: 'made by restdir' }])
  assert.is(store.fileOrder, true)
  assert.is(await nextIntegerId(store, ['posts']), undefined)
  assert.is(counted.whole, 0, 'the names were listed whole')
})

test('where every name is an integer, each counts: the greatest anywhere in the file, not the last', async () => {
  const posts = numbered(1000, Number)
  posts.push(posts.splice(499, 1)[0], { id: 7000, title: 'in the middle' })
  posts.reverse()
  const { store, counted } = await openPosts(posts)
  assert.is(await nextIntegerId(store, ['posts']), 7001)
  assert.is(counted.whole, 1)
})

test('an id that is no integer anywhere but last still keeps integer ids away', async () => {
  const { store } = await openPosts([{ id: 'first', title: 'a' }, ...numbered(50, Number)])
  assert.is(await nextIntegerId(store, ['posts']), undefined)
})

test('an item without an id is passed over, last or not, as json-server passes over it', async () => {
  const { store } = await openPosts([...numbered(5, Number), { title: 'no id' }])
  assert.is(await nextIntegerId(store, ['posts']), 6)
})

test.run()
