import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem } from '../support/assertions.ts'

// `_embed`, `_expand` and `_dependent` over restdir's two kinds of relation
// (docs/http-api.md, "Listing queries"): children at nested URLs, and json-server's
// `postId`-style foreign keys between sibling collections.

const relations = suite<{ server: TestServer; userId: string }>('relations', { server: undefined as unknown as TestServer, userId: '' })

relations.before(async (context) => {
  const server = (context.server = await startServer())
  const put = async (path: string, body: object) => assert.ok((await server.request('PUT', path, { body })).status < 300, path)
  await put('/posts/p1', { title: 'first' })
  await put('/posts/p2', { title: 'second' })
  await put('/comments/c1', { text: 'on p1', postId: 'p1' })
  await put('/comments/c2', { text: 'on p2', postId: 'p2' })
  await put('/comments/c3', { text: 'on p1 again', postId: 'p1' })
  await put('/comments/c4', { text: 'on nothing', postId: 'gone' })
  // A child at a nested URL joins the same relation.
  await put('/posts/p2/comments/n1', { text: 'nested under p2' })
  const user = await server.request('POST', '/user', { body: { username: 'ada' } })
  context.userId = user.json.user_id
  for (const name of ['road', 'night']) await server.request('POST', `/user/${context.userId}/playlist`, { body: { name } })
})

relations.after(async ({ server }) => {
  await server.close()
})

const texts = (docs: { text: string }[]) => docs.map((doc) => doc.text)

relations('_embed joins the children a foreign key names and those at nested URLs', async ({ server }) => {
  const answer = await server.request('GET', '/posts?_embed=comments')
  assertJson(answer, 200)
  assert.equal(answer.json.map((post: { id: string }) => post.id), ['p1', 'p2'])
  assert.equal(texts(answer.json[0].comments), ['on p1', 'on p1 again'])
  assert.equal(texts(answer.json[1].comments), ['nested under p2', 'on p2'])
  assert.equal(answer.headers['x-total-count'], '2')
  const one = await server.request('GET', '/posts/p1?_embed=comments')
  assertJson(one, 200)
  assert.equal(texts(one.json.comments), ['on p1', 'on p1 again'])
  assert.is(one.headers.etag, undefined, 'an answer with joined documents is not the stored document')
})

relations('_expand (0.17) and a singular _embed (1.0) join the document a foreign key points at', async ({ server }) => {
  for (const query of ['_expand=post', '_embed=post']) {
    const answer = await server.request('GET', `/comments?${query}`)
    assertJson(answer, 200)
    assert.equal(answer.json[0], { id: 'c1', text: 'on p1', postId: 'p1', post: { id: 'p1', title: 'first' } }, query)
    assert.equal(answer.json[1].post, { id: 'p2', title: 'second' }, query)
    // A foreign key to nothing leaves the key out, as json-server does.
    assert.not.ok('post' in answer.json[3], query)
  }
})

relations("on the declared resources: a user's playlists embed from their nested URL, and a playlist expands to its user", async ({ server, userId }) => {
  const users = await server.request('GET', '/user?_embed=playlist')
  assertJson(users, 200)
  assert.equal(users.json[0].playlist.map((playlist: { name: string }) => playlist.name).sort(), ['night', 'road'])
  const playlists = await server.request('GET', `/user/${userId}/playlist?_expand=user`)
  assertJson(playlists, 200)
  assert.equal(playlists.json.map((playlist: { user: unknown }) => playlist.user), [
    { user_id: userId, username: 'ada' },
    { user_id: userId, username: 'ada' },
  ])
  // json-server 1.0's spelling: a singular _embed.
  assert.equal((await server.request('GET', `/user/${userId}/playlist?_embed=user`)).json, playlists.json)
  const user = await server.request('GET', `/user/${userId}?_embed=playlist`)
  assertJson(user, 200)
  assert.equal(user.json.playlist.length, 2)
  const playlist = await server.request('GET', `/user/${userId}/playlist/${playlists.json[0].playlist_id}?_expand=user`)
  assertJson(playlist, 200)
  assert.equal(playlist.json.user, { user_id: userId, username: 'ada' })
  assertProblem(await server.request('GET', `/user/${userId}?_embedd=playlist`), 400, /"_embedd"/)
})

relations('joined relations go with filters, sorting and pages, and only into the documents answered', async ({ server }) => {
  const page = await server.request('GET', '/comments?_sort=-text&_embed=post&_page=1&_per_page=2&postId:ne=gone')
  assertJson(page, 200)
  assert.equal(page.json.items, 3)
  assert.equal(page.json.data.map((comment: { id: string; post: { id: string } }) => [comment.id, comment.post.id]), [['c2', 'p2'], ['c3', 'p1']])
})

relations('a relation name restdir cannot follow is a 400', async ({ server }) => {
  assertProblem(await server.request('GET', '/posts?_embed='), 400, /_embed names no collection/)
  assertProblem(await server.request('GET', '/posts?_expand=a.b'), 400, /one level/)
})

relations.run()

const dependents = suite('DELETE with _dependent')

dependents('DELETE …?_dependent= racing DELETEs of the same dependents answers 200, and every dependent is gone', async () => {
  const server = await startServer()
  try {
    for (let round = 0; round < 5; round++) {
      await server.request('PUT', '/posts/1', { body: { title: 'one' } })
      const ids = Array.from({ length: 30 }, (_, index) => `c${index}`)
      for (const id of ids) await server.request('PUT', `/comments/${id}`, { body: { postId: 1 } })
      // Another client deletes the same comments meanwhile: one removed by it is gone already, never a failure.
      const [cascade, ...deletes] = await Promise.all([
        server.request('DELETE', '/posts/1?_dependent=comments'),
        ...ids.map((id) => server.request('DELETE', `/comments/${id}`)),
      ])
      assert.is(cascade.status, 200, JSON.stringify(cascade.json))
      for (const answer of deletes) assert.ok(answer.status === 200 || answer.status === 404, `DELETE answered ${answer.status}`)
      assert.is((await server.request('GET', '/comments')).status, 404)
    }
  } finally {
    await server.close()
  }
})

dependents('DELETE …?_dependent= removes the documents whose foreign key names the deleted one, and leaves the rest', async () => {
  const server = await startServer()
  try {
    for (const [path, body] of [
      ['/posts/1', { title: 'one' }],
      ['/posts/2', { title: 'two' }],
      ['/comments/a', { postId: 1 }],
      ['/comments/b', { postId: '2' }],
      ['/comments/c', { postId: '1' }],
      ['/likes/x', { postId: '1' }],
      ['/likes/y', { postId: '1' }],
    ] as const) {
      await server.request('PUT', path, { body })
    }
    assertJson(await server.request('DELETE', '/posts/1?_dependent=comments'), 200, { id: '1', title: 'one' })
    assert.equal((await server.request('GET', '/comments')).json.map((comment: { id: string }) => comment.id), ['b'])
    // Only the collections named go.
    assert.equal((await server.request('GET', '/likes')).json.length, 2)
    assert.is((await server.request('GET', '/posts/2')).status, 200)
    assertProblem(await server.request('DELETE', '/posts/2?_dependent=a/b'), 400, /_dependent must name a sibling collection/)
    assertProblem(await server.request('DELETE', '/posts/2?_dependents=comments'), 400, /"_dependents" for DELETE; the one it takes is _dependent/)
    assert.is((await server.request('DELETE', '/posts/2/nothing?_children')).status, 404, 'a known parameter is no typo')
    assert.is((await server.request('GET', '/posts/2')).status, 200, 'a refused DELETE deletes nothing')
    assertProblem(await server.request('DELETE', '/posts/9?_dependent=comments'), 404)
    assert.equal((await server.request('GET', '/comments')).json.length, 1)
  } finally {
    await server.close()
  }
})

dependents.run()
