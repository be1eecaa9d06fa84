import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, type Answer, type TestServer } from '../support/helpers.ts'

// react-admin's json-server data provider (ra-data-json-server), replayed
// request by request. Its query strings come from query-string's stringify:
// keys sorted, arrays as repeated keys, nested filters flattened to `a.b`.
// Each check is something the provider reads from the answer.

/** What ra-core's fetchJson sends: JSON in and out. */
const headers = { Accept: 'application/json', Origin: 'http://localhost:5173' }
const jsonHeaders = { ...headers, 'Content-Type': 'application/json' }

let server: TestServer

async function seed(): Promise<void> {
  server = await startServer()
  for (let number = 1; number <= 12; number++) {
    const post = { title: `Post ${number}`, views: (number * 37) % 100, author: { name: number % 3 === 0 ? 'Ada' : 'Bo' } }
    assert.is((await server.request('PUT', `/posts/${number}`, { body: post })).status, 201)
  }
  for (const [id, postId, body] of [['c1', '1', 'first!'], ['c2', '2', 'meh'], ['c3', '1', 'lorem ipsum'], ['c4', 1, 'numbers too']] as const) {
    assert.is((await server.request('PUT', `/comments/${id}`, { body: { postId, body } })).status, 201)
  }
}

/** What the provider does with a list answer: it refuses one without X-Total-Count. */
function listResult(answer: Answer): { data: { id: string }[]; total: number } {
  assert.is(answer.status, 200)
  const total = answer.headers['x-total-count']
  assert.type(total, 'string', 'X-Total-Count is present')
  const exposed = String(answer.headers['access-control-expose-headers']).toLowerCase()
  assert.ok(exposed.includes('x-total-count'), 'a cross-origin admin can read X-Total-Count')
  assert.ok(Array.isArray(answer.json))
  return { data: answer.json, total: parseInt(String(total).split('/').pop() as string, 10) }
}

test.before(seed)
test.after(() => server.close())

test('getList: a sorted page and the total', async () => {
  // getList('posts', { pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'ASC' }, filter: {} })
  const first = listResult(await server.request('GET', '/posts?_end=10&_order=ASC&_sort=id&_start=0', { headers }))
  assert.is(first.total, 12)
  assert.equal(first.data.map((post) => post.id), ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'])
  // page 2 of 5, by views descending
  const second = listResult(await server.request('GET', '/posts?_end=10&_order=DESC&_sort=views&_start=5', { headers }))
  assert.is(second.total, 12)
  const views = second.data.map((post) => (post as unknown as { views: number }).views)
  assert.equal(views, [...views].sort((a, b) => b - a))
  assert.is(second.data.length, 5)
})

test('getList: the search box (q) and a nested filter, with the total of what matched', async () => {
  // filter: { q: 'post 1' }
  const searched = listResult(await server.request('GET', '/posts?_end=10&_order=ASC&_sort=id&_start=0&q=post%201', { headers }))
  assert.equal(searched.data.map((post) => post.id), ['1', '10', '11', '12'])
  assert.is(searched.total, 4)
  // filter: { author: { name: 'Ada' } }, flattened by fetchUtils.flattenObject
  const byAuthor = listResult(await server.request('GET', '/posts?_end=2&_order=ASC&_sort=id&_start=0&author.name=Ada', { headers }))
  assert.equal(byAuthor.data.map((post) => post.id), ['3', '6'])
  assert.is(byAuthor.total, 4)
})

test('getOne: the record, with its id', async () => {
  const answer = await server.request('GET', '/posts/7', { headers })
  assert.is(answer.status, 200)
  assert.is(answer.json.id, '7')
  assert.is(answer.json.title, 'Post 7')
})

test('getMany: repeated id= keys give exactly those records', async () => {
  // getMany('posts', { ids: ['2', '11', '404'] }); the provider does not rely on their order.
  const answer = await server.request('GET', '/posts?id=2&id=11&id=404', { headers })
  assert.is(answer.status, 200)
  assert.equal(answer.json.map((post: { id: string }) => post.id).sort(), ['11', '2'])
})

test('getManyReference: the records pointing at one record, paged, with the total', async () => {
  // getManyReference('comments', { target: 'postId', id: '1', pagination: { page: 1, perPage: 25 }, sort: { field: 'id', order: 'DESC' }, filter: {} })
  const result = listResult(await server.request('GET', '/comments?_end=25&_order=DESC&_sort=id&_start=0&postId=1', { headers }))
  assert.equal(result.data.map((comment) => comment.id), ['c4', 'c3', 'c1'])
  assert.is(result.total, 3)
})

test('create: the answer carries the new id, and the record is there', async () => {
  const answer = await server.request('POST', '/posts', { headers: jsonHeaders, body: JSON.stringify({ title: 'Fresh', views: 0 }) })
  assert.is(answer.status, 201)
  // The provider answers { ...params.data, id: json.id }.
  assert.type(answer.json.id, 'string')
  assert.ok(answer.json.id.length > 0)
  const read = await server.request('GET', `/posts/${answer.json.id}`, { headers })
  assert.equal(read.json, { id: answer.json.id, title: 'Fresh', views: 0 })
  const list = listResult(await server.request('GET', '/posts?_end=10&_order=ASC&_sort=id&_start=0', { headers }))
  assert.is(list.total, 13)
})

test('update: PUT with the whole record, id included, answers the record', async () => {
  const record = { id: '3', title: 'Changed', views: 1, author: { name: 'Ada' } }
  const answer = await server.request('PUT', '/posts/3', { headers: jsonHeaders, body: JSON.stringify(record) })
  assert.is(answer.status, 200)
  assert.equal(answer.json, record)
})

test('updateMany and deleteMany read the id of each answer', async () => {
  const updated = await Promise.all(['4', '5'].map((id) =>
    server.request('PUT', `/posts/${id}`, { headers: jsonHeaders, body: JSON.stringify({ title: 'Bulk' }) })))
  assert.equal(updated.map((answer) => [answer.status, answer.json.id]), [[200, '4'], [200, '5']])
  const deleted = await Promise.all(['4', '5'].map((id) => server.request('DELETE', `/posts/${id}`, { headers })))
  assert.equal(deleted.map((answer) => [answer.status, answer.json.id]), [[200, '4'], [200, '5']])
})

test('delete: the answer is the deleted record, with its id, and it is gone', async () => {
  const answer = await server.request('DELETE', '/posts/3', { headers })
  assert.is(answer.status, 200)
  assert.is(answer.json.id, '3')
  assert.is(answer.json.title, 'Changed')
  assert.is((await server.request('GET', '/posts/3', { headers })).status, 404)
  const many = await server.request('GET', '/posts?id=3&id=6', { headers })
  assert.equal(many.json.map((post: { id: string }) => post.id), ['6'])
})

test.run()
