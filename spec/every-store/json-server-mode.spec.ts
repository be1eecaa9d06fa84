import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { jsonServerModeFor, type RestdirOptions } from '../../lib/options.ts'
import { startServer, startServerWithData, type TestServer } from '../support/helpers.ts'

// The json-server mode's own rules beyond json-server 0.17.4's tests
// (docs/json-server.md, "The json-server mode"): what it leaves alone, and races.

const db = {
  posts: [{ id: 1, title: 'one' }, { id: 2, title: 'two' }],
  comments: [{ id: 1, postId: 1, text: 'a' }, { id: 2, postId: 2, text: 'b' }],
}

async function withServer(options: RestdirOptions, run: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startServerWithData(db, options)
  try {
    await run(server)
  } finally {
    await server.close()
  }
}

const mode = suite('the json-server mode')

mode('is on by default for a db.json store only, and the option decides when given', () => {
  assert.is(jsonServerModeFor({}, 'db.json'), true)
  assert.is(jsonServerModeFor({}, '/data/DB.JSON'), true)
  assert.is(jsonServerModeFor({}, './store'), false)
  assert.is(jsonServerModeFor({}, undefined), false)
  assert.is(jsonServerModeFor({ jsonServer: false }, 'db.json'), false)
  assert.is(jsonServerModeFor({ jsonServer: true }, './store'), true)
})

mode('without the mode, a nested route is restdir\'s own nested node and ids are restdir\'s', () => withServer({}, async (server) => {
  assert.is((await server.request('GET', '/posts/1/comments')).status, 404)
  const created = await server.request('POST', '/posts', { body: { title: 'three' } })
  assert.is(created.status, 201)
  assert.type(created.json.id, 'string')
  assert.is((await server.request('GET', '/db')).status, 404)
}))

mode('concurrent POSTs to a collection of integer ids each get their own next integer', () => withServer({ jsonServer: true }, async (server) => {
  const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => server.request('POST', '/posts', { body: { title: `new ${index}` } })))
  assert.equal(answers.map((answer) => answer.status), Array(8).fill(201))
  assert.equal(answers.map((answer) => answer.json.id).sort((a, b) => a - b), [3, 4, 5, 6, 7, 8, 9, 10])
  assert.is((await server.request('GET', '/posts')).json.length, 10)
}))

mode('a POST may choose its id, once; a second POST of the same id is a 409', () => withServer({ jsonServer: true }, async (server) => {
  const first = await server.request('POST', '/posts', { body: { id: 'a1b2', title: 'chosen' } })
  assert.is(first.status, 201)
  assert.equal(first.json, { id: 'a1b2', title: 'chosen' })
  assert.is((await server.request('POST', '/posts', { body: { id: 'a1b2', title: 'again' } })).status, 409)
  assert.is((await server.request('GET', '/posts/a1b2')).json.title, 'chosen')
}))

mode('a nested route\'s foreign key reads as the plain filter does: left out while no document has the field, as json-server 0.17 leaves it', () => withServer({ jsonServer: true }, async (server) => {
  assert.equal((await server.request('GET', '/comments/1/replies')).status, 404)
  assert.is((await server.request('POST', '/replies', { body: { text: 'loose' } })).status, 201)
  assert.equal((await server.request('GET', '/comments/1/replies')).json, [{ text: 'loose', id: 1 }])
  assert.equal((await server.request('GET', '/replies?commentId=1')).json, [{ text: 'loose', id: 1 }], 'a plain filter on a field no document has is left out')
  assert.is((await server.request('POST', '/comments/2/replies', { body: { text: 'kept' } })).status, 201)
  assert.equal((await server.request('GET', '/comments/1/replies')).json, [], 'once a document has it, it filters')
  assert.equal((await server.request('GET', '/comments/2/replies')).json, [{ text: 'kept', commentId: '2', id: 2 }])
}))

mode('/user keeps its own rules: service-given user_id, no integer ids, no nested route or cascade over it', () => withServer({ jsonServer: true }, async (server) => {
  const user = await server.request('POST', '/user', { body: { username: 'ada' } })
  assert.is(user.status, 201)
  assert.type(user.json.user_id, 'string')
  assert.is(user.json.id, undefined)
  const playlist = await server.request('POST', `/user/${user.json.user_id}/playlist`, { body: { name: 'mix' } })
  assert.is(playlist.status, 201)
  assert.is(playlist.json.user_id, user.json.user_id)
  assert.is((await server.request('GET', '/posts')).json.length, 2)
  assert.is((await server.request('PUT', '/user/nobody', { body: { username: 'x' } })).status, 404)
}))

mode('DELETE cascades to the documents of every top-level collection that name the deleted one, and no further', () => withServer({ jsonServer: true }, async (server) => {
  assert.is((await server.request('PUT', '/likes', { body: {} })).status, 201) // a singular resource, untouched
  assert.is((await server.request('POST', '/notes', { body: { postId: 1 } })).status, 201)
  assert.is((await server.request('POST', '/notes', { body: { postId: 2 } })).status, 201)
  const deleted = await server.request('DELETE', '/posts/1')
  assert.is(deleted.status, 200)
  assert.equal(deleted.json, {})
  assert.equal((await server.request('GET', '/comments')).json.map((comment: { id: number }) => comment.id), [2])
  assert.equal((await server.request('GET', '/notes')).json.map((note: { postId: number }) => note.postId), [2])
  assert.is((await server.request('GET', '/likes')).status, 200)
}))

mode('a bad _delay is a 400 that says what it takes', () => withServer({ jsonServer: true }, async (server) => {
  const answer = await server.request('GET', '/posts?_delay=soon')
  assert.is(answer.status, 400)
  assert.match(answer.json.detail, /_delay must be a number of milliseconds/)
}))

mode('on a store other than a db.json, a write makes the name it needs: an empty store takes its first collection and singular resource', async () => {
  const server = await startServer({ jsonServer: true })
  try {
    const created = await server.request('POST', '/newthings', { body: { title: 'x' } })
    assert.is(created.status, 201, created.text)
    assert.equal(created.json, { title: 'x', id: 1 })
    assert.is((await server.request('PUT', '/newthing', { body: { name: 'y' } })).status, 201)
    assert.equal((await server.request('GET', '/newthings')).json, [{ title: 'x', id: 1 }])
    assert.equal((await server.request('GET', '/newthing')).json, { name: 'y' })
  } finally {
    await server.close()
  }
})

mode.run()
