import { test } from 'uvu'
import * as assert from 'uvu/assert'
import jsonServerProvider from 'ra-data-json-server'
import simpleRest from '@refinedev/simple-rest'
import { startPair, type Pair } from '../../support/side-by-side.ts'

// react-admin's `ra-data-json-server` and refine's `@refinedev/simple-rest`,
// the json-server data providers, run as they ship (with Node's fetch and
// refine's own axios) against json-server 0.17.4 and against `restdir db.json`
// on two copies of one db.json: every call must give the same result, and the
// files must hold the same data afterwards.

const blog = () => ({
  posts: Array.from({ length: 12 }, (_, index) => ({
    id: index + 1,
    title: `${index % 3 === 0 ? 'Hello' : 'Post'} ${index + 1}`,
    views: ((index + 1) * 37) % 100,
    authorId: (index % 2) + 1,
  })),
  comments: [
    { id: 1, postId: 1, body: 'first!' },
    { id: 2, postId: 2, body: 'meh' },
    { id: 3, postId: 1, body: 'lorem ipsum' },
  ],
  authors: [
    { id: 1, name: 'Ada' },
    { id: 2, name: 'Bo' },
  ],
  tags: [] as unknown[],
  drafts: [{ id: 1, title: 'only one' }],
})

let pair: Pair
test.before(async () => {
  pair = await startPair(JSON.stringify(blog(), null, 2), { jsonServer: { how: 'module' } })
})
test.after(() => pair.close())

const urls = () => [`http://127.0.0.1:${pair.jsonServer.port}`, `http://127.0.0.1:${pair.restdir.port}`] as const

/** Runs one call against both servers (json-server first) and compares what the provider returns. */
async function same<T>(what: string, call: (apiUrl: string) => Promise<T>): Promise<T> {
  const [theirUrl, ourUrl] = urls()
  const theirs = await call(theirUrl)
  const ours = await call(ourUrl)
  assert.equal(ours, theirs, what)
  return ours
}

/** react-admin's getList parameters. */
function list(page: number, perPage: number, field: string, order: 'ASC' | 'DESC', filter: Record<string, unknown> = {}) {
  return { pagination: { page, perPage }, sort: { field, order }, filter }
}

test('react-admin (ra-data-json-server): getList with pages, sorting and filters, getOne, getMany, getManyReference, create, update, delete', async () => {
  const provider = (apiUrl: string) => jsonServerProvider(apiUrl)
  const lists = [
    list(1, 5, 'id', 'ASC', {}),
    list(2, 5, 'views', 'DESC', {}),
    list(3, 5, 'title', 'ASC', {}),
    list(1, 10, 'id', 'ASC', { authorId: 2 }),
    list(1, 10, 'id', 'DESC', { q: 'hello' }),
    list(1, 10, 'id', 'ASC', { title_like: '^hello' }),
    list(1, 10, 'id', 'ASC', { views_gte: 40, views_lte: 80 }),
    list(1, 10, 'id', 'ASC', { id: [2, 4, 6] }),
  ]
  for (const params of lists) {
    const result = await same(`getList ${JSON.stringify(params)}`, (apiUrl) => provider(apiUrl).getList('posts', params))
    assert.ok(result.data.length > 0, JSON.stringify(params))
  }
  const page = await same('getList', (apiUrl) => provider(apiUrl).getList('posts', lists[0]))
  assert.is(page.total, 12)
  await same('getOne', (apiUrl) => provider(apiUrl).getOne('posts', { id: 3 }))
  await same('getMany', (apiUrl) => provider(apiUrl).getMany('posts', { ids: [1, 5, 9] }))
  await same('getManyReference', (apiUrl) =>
    provider(apiUrl).getManyReference('comments', { target: 'postId', id: 1, pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'ASC' }, filter: {} }),
  )
  const created = await same('create', (apiUrl) => provider(apiUrl).create('posts', { data: { title: 'New one', views: 1, authorId: 1 } }))
  assert.is(created.data.id, 13)
  await same('update', (apiUrl) => provider(apiUrl).update('posts', { id: 13, data: { id: 13, title: 'Renamed', views: 2, authorId: 2 }, previousData: created.data }))
  await same('updateMany', (apiUrl) => provider(apiUrl).updateMany('posts', { ids: [1, 2], data: { views: 0 } }))
  await same('delete', (apiUrl) => provider(apiUrl).delete('posts', { id: 2, previousData: { id: 2 } }))
  await same('deleteMany', (apiUrl) => provider(apiUrl).deleteMany('comments', { ids: [3] }))
  await same('getList after the writes', (apiUrl) => provider(apiUrl).getList('posts', list(1, 20, 'id', 'ASC', {})))
  assert.equal(pair.restdir.data(), pair.jsonServer.data())
})

test('refine (@refinedev/simple-rest): getList with pages, sorters and filters, getOne, getMany, create, update, deleteOne', async () => {
  const provider = (apiUrl: string) => simpleRest(apiUrl)
  const lists = [
    { pagination: { currentPage: 1, pageSize: 5 } },
    { pagination: { currentPage: 2, pageSize: 5 }, sorters: [{ field: 'views', order: 'desc' as const }] },
    { pagination: { currentPage: 1, pageSize: 10 }, sorters: [{ field: 'authorId', order: 'asc' as const }, { field: 'views', order: 'desc' as const }] },
    { filters: [{ field: 'authorId', operator: 'eq' as const, value: 1 }] },
    { filters: [{ field: 'title', operator: 'contains' as const, value: 'hello' }] },
    { filters: [{ field: 'views', operator: 'gte' as const, value: 50 }, { field: 'authorId', operator: 'ne' as const, value: 2 }] },
    { filters: [{ field: 'q', operator: 'eq' as const, value: 'post 1' }] },
  ]
  for (const params of lists) {
    const result = await same(`getList ${JSON.stringify(params)}`, (apiUrl) => provider(apiUrl).getList({ resource: 'posts', ...params }))
    assert.ok(result.data.length > 0, JSON.stringify(params))
  }
  await same('getOne', (apiUrl) => provider(apiUrl).getOne({ resource: 'posts', id: 4 }))
  await same('getMany', (apiUrl) => provider(apiUrl).getMany!({ resource: 'posts', ids: [4, 7] }))
  const created = await same('create', (apiUrl) => provider(apiUrl).create({ resource: 'authors', variables: { name: 'Cy' } }))
  assert.is(created.data.id, 3)
  await same('update', (apiUrl) => provider(apiUrl).update({ resource: 'authors', id: 3, variables: { name: 'Cyd', id: 99 } }))
  await same('deleteOne', (apiUrl) => provider(apiUrl).deleteOne({ resource: 'authors', id: 1 }))
  await same('getList after the writes', (apiUrl) => provider(apiUrl).getList({ resource: 'authors' }))
  await same('getList of posts after the cascade', (apiUrl) => provider(apiUrl).getList({ resource: 'posts', pagination: { currentPage: 1, pageSize: 20 } }))
  assert.equal(pair.restdir.data(), pair.jsonServer.data())
})

test('both providers list an empty collection, and one whose last item was deleted, as an empty list (total 0)', async () => {
  const admin = (apiUrl: string) => jsonServerProvider(apiUrl)
  const refine = (apiUrl: string) => simpleRest(apiUrl)
  const check = async (resource: string) => {
    const adminList = await same(`react-admin getList ${resource}`, (apiUrl) => admin(apiUrl).getList(resource, list(1, 10, 'id', 'ASC', {})))
    assert.equal(adminList, { data: [], total: 0 }, resource)
    const filtered = await same(`react-admin getList ${resource}, filtered and sorted`, (apiUrl) => admin(apiUrl).getList(resource, list(2, 5, 'title', 'DESC', { q: 'x' })))
    assert.equal(filtered.data, [], resource)
    const refineList = await same(`refine getList ${resource}`, (apiUrl) => refine(apiUrl).getList({ resource, pagination: { currentPage: 1, pageSize: 10 } }))
    assert.equal(refineList, { data: [], total: 0 }, resource)
  }
  await check('tags')
  await same('delete the last draft', (apiUrl) => admin(apiUrl).delete('drafts', { id: 1, previousData: { id: 1 } }))
  await check('drafts')
  assert.equal(pair.restdir.data(), pair.jsonServer.data())
})

test.run()
