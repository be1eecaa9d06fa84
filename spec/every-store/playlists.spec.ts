import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem, assertStrongEtag } from '../support/assertions.ts'

// Playlists (docs/http-api.md, "Users and playlists"): /user/:user_id/playlist and /user/:user_id/playlist/:playlist_id.

let api: TestServer

test.before(async () => {
  api = await startServer()
})
test.after(async () => {
  await api.close()
})

async function newUser(): Promise<string> {
  const answer = await api.request('POST', '/user', { body: {} })
  assert.is(answer.status, 201)
  return answer.json.user_id
}

async function newPlaylist(userId: string, body: Record<string, unknown> = {}): Promise<{ id: string; doc: any; etag: string }> {
  const answer = await api.request('POST', `/user/${userId}/playlist`, { body })
  assert.is(answer.status, 201, answer.text)
  return { id: answer.json.playlist_id, doc: answer.json, etag: assertStrongEtag(answer) }
}

const songs = [
  { title: 'Clair de lune', artist: 'Debussy' },
  'a plain string',
  42,
  null,
  ['nested', { deep: true }],
  { title: 'Clair de lune', artist: 'Debussy' },
]

test('POST answers 201 with Location, ETag and the playlist with its ids and songs in order', async () => {
  const userId = await newUser()
  const created = await api.request('POST', `/user/${userId}/playlist`, { body: { name: 'Focus', songs } })
  assertJson(created, 201)
  const playlistId = created.json.playlist_id
  assert.match(playlistId, /^[0-9a-z]{12}$/)
  assert.equal(created.json, { playlist_id: playlistId, user_id: userId, name: 'Focus', songs })
  assert.is(created.headers.location, `/user/${userId}/playlist/${playlistId}`)
  const etag = assertStrongEtag(created)
  const read = await api.request('GET', created.headers.location as string)
  assertJson(read, 200, created.json)
  assert.is(read.headers.etag, etag)
})

test('songs default to an empty list', async () => {
  const userId = await newUser()
  const { doc } = await newPlaylist(userId, { name: 'empty' })
  assert.equal(doc.songs, [])
  assertJson(await api.request('GET', `/user/${userId}/playlist/${doc.playlist_id}`), 200, doc)
})

test('songs that are not an array are 400 on POST, PUT and PATCH, and nothing changes', async () => {
  const userId = await newUser()
  const { id, doc } = await newPlaylist(userId, { songs: ['kept'] })
  for (const bad of ['a string', 3, { a: 1 }, true, null]) {
    assertProblem(await api.request('POST', `/user/${userId}/playlist`, { body: { songs: bad } }), 400, /songs/)
    assertProblem(await api.request('PUT', `/user/${userId}/playlist/${id}`, { body: { songs: bad } }), 400, /songs/)
  }
  for (const bad of ['a string', 3, { a: 1 }, true]) {
    assertProblem(await api.request('PATCH', `/user/${userId}/playlist/${id}`, { body: { songs: bad } }), 400, /songs/)
  }
  assertJson(await api.request('GET', `/user/${userId}/playlist/${id}`), 200, doc)
  assertJson(await api.request('GET', `/user/${userId}/playlist`), 200, [doc])
})

test('GET of the playlists lists the user\'s playlists in creation order, [] when it has none', async () => {
  const userId = await newUser()
  assertJson(await api.request('GET', `/user/${userId}/playlist`), 200, [])
  const first = await newPlaylist(userId, { name: 'one' })
  const second = await newPlaylist(userId, { name: 'two' })
  const other = await newUser()
  await newPlaylist(other, { name: 'not mine' })
  assertJson(await api.request('GET', `/user/${userId}/playlist`), 200, [first.doc, second.doc])
})

test('?_children names the children of a user and of a playlist, as on any node (the playground\'s tree opens them)', async () => {
  const userId = await newUser()
  const playlist = await newPlaylist(userId, { name: 'Tree' })
  assertJson(await api.request('GET', `/user/${userId}?_children`), 200, ['playlist'])
  assertJson(await api.request('GET', `/user/${userId}/playlist/${playlist.id}?_children`), 200, [])
  await api.request('PUT', `/user/${userId}/playlist/${playlist.id}/notes`, { body: { text: 'below a playlist' } })
  assertJson(await api.request('GET', `/user/${userId}/playlist/${playlist.id}?_children`), 200, ['notes'])
  assertProblem(await api.request('GET', '/user/nobody?_children'), 404)
})

test('GET of a playlist that does not exist is 404', async () => {
  const userId = await newUser()
  assertProblem(await api.request('GET', `/user/${userId}/playlist/none`), 404, /none/)
})

test('PUT replaces the playlist and its songs, keeps its ids, and answers 200', async () => {
  const userId = await newUser()
  const { id, etag } = await newPlaylist(userId, { name: 'old', songs: ['a', 'b'], extra: 1 })
  const replaced = await api.request('PUT', `/user/${userId}/playlist/${id}`, { body: { name: 'new', songs: ['c', 'b', 'a'] } })
  assertJson(replaced, 200, { playlist_id: id, user_id: userId, name: 'new', songs: ['c', 'b', 'a'] })
  assert.is.not(assertStrongEtag(replaced), etag)
  assertJson(await api.request('GET', `/user/${userId}/playlist/${id}`), 200, replaced.json)
})

test('PUT without songs leaves the playlist with an empty list', async () => {
  const userId = await newUser()
  const { id } = await newPlaylist(userId, { songs: ['a'] })
  assertJson(await api.request('PUT', `/user/${userId}/playlist/${id}`, { body: { name: 'n' } }), 200, {
    playlist_id: id,
    user_id: userId,
    name: 'n',
    songs: [],
  })
})

test('PUT of a playlist that does not exist is 404 and creates nothing', async () => {
  const userId = await newUser()
  assertProblem(await api.request('PUT', `/user/${userId}/playlist/nope`, { body: { songs: [] } }), 404)
  assertJson(await api.request('GET', `/user/${userId}/playlist`), 200, [])
})

test('PATCH merges the playlist; songs are replaced as a whole, and null songs reset them to []', async () => {
  const userId = await newUser()
  const { id } = await newPlaylist(userId, { name: 'p', meta: { mood: 'calm', year: 1 }, songs: ['a', 'b'] })
  const patched = await api.request('PATCH', `/user/${userId}/playlist/${id}`, { body: { meta: { year: null, tempo: 'slow' }, songs: ['z'] } })
  assertJson(patched, 200, { playlist_id: id, user_id: userId, name: 'p', meta: { mood: 'calm', tempo: 'slow' }, songs: ['z'] })
  assertStrongEtag(patched)
  assertJson(await api.request('GET', `/user/${userId}/playlist/${id}`), 200, patched.json)
  const reset = await api.request('PATCH', `/user/${userId}/playlist/${id}`, { body: { songs: null } })
  assertJson(reset, 200, { ...patched.json, songs: [] })
})

test('PATCH of a playlist that does not exist is 404', async () => {
  const userId = await newUser()
  assertProblem(await api.request('PATCH', `/user/${userId}/playlist/nope`, { body: { name: 'x' } }), 404)
})

test('playlist_id and user_id may be repeated but never changed (400 on POST, PUT and PATCH)', async () => {
  const userId = await newUser()
  const other = await newUser()
  const { id, doc } = await newPlaylist(userId, { user_id: userId, name: 'mine' })
  assert.is(doc.user_id, userId)
  const path = `/user/${userId}/playlist/${id}`
  assertProblem(await api.request('POST', `/user/${userId}/playlist`, { body: { playlist_id: 'chosen' } }), 400, /playlist_id/)
  assertProblem(await api.request('POST', `/user/${userId}/playlist`, { body: { user_id: other } }), 400, /user_id/)
  assertProblem(await api.request('PUT', path, { body: { playlist_id: 'other' } }), 400, /playlist_id/)
  assertProblem(await api.request('PUT', path, { body: { user_id: other } }), 400, /user_id/)
  assertProblem(await api.request('PATCH', path, { body: { playlist_id: 'other' } }), 400, /playlist_id/)
  assertProblem(await api.request('PATCH', path, { body: { user_id: other } }), 400, /user_id/)
  assertProblem(await api.request('PATCH', path, { body: { user_id: null } }), 400, /user_id/)
  assertProblem(await api.request('PATCH', path, { body: { playlist_id: null } }), 400, /playlist_id/)
  assertJson(await api.request('PUT', path, { body: { playlist_id: id, user_id: userId, name: 'same' } }), 200)
  assertJson(await api.request('PATCH', path, { body: { playlist_id: id, user_id: userId, v: 2 } }), 200, {
    playlist_id: id,
    user_id: userId,
    name: 'same',
    songs: [],
    v: 2,
  })
  assertJson(await api.request('GET', `/user/${other}/playlist`), 200, [])
})

test('DELETE answers 200 with the deleted playlist, takes nodes below it, and then 404', async () => {
  const userId = await newUser()
  const { id, doc } = await newPlaylist(userId, { songs: ['x'] })
  const kept = await newPlaylist(userId, { name: 'kept' })
  assert.is((await api.request('PUT', `/user/${userId}/playlist/${id}/cover`, { body: { url: 'c.png' } })).status, 201)
  assertJson(await api.request('DELETE', `/user/${userId}/playlist/${id}`), 200, doc)
  assertProblem(await api.request('GET', `/user/${userId}/playlist/${id}`), 404)
  assertProblem(await api.request('GET', `/user/${userId}/playlist/${id}/cover`), 404)
  assertProblem(await api.request('DELETE', `/user/${userId}/playlist/${id}`), 404)
  assertJson(await api.request('GET', `/user/${userId}/playlist`), 200, [kept.doc])
  assert.is((await api.request('GET', `/user/${userId}`)).status, 200)
})

test('every playlist route is 404 when the user does not exist, and nothing is stored', async () => {
  const base = '/user/ghost/playlist'
  assertProblem(await api.request('POST', base, { body: { name: 'x' } }), 404, /ghost/)
  assertProblem(await api.request('GET', base), 404, /ghost/)
  assertProblem(await api.request('GET', `${base}/p1`), 404)
  assertProblem(await api.request('PUT', `${base}/p1`, { body: { songs: [] } }), 404)
  assertProblem(await api.request('PATCH', `${base}/p1`, { body: { songs: [] } }), 404)
  assertProblem(await api.request('DELETE', `${base}/p1`), 404)
  assertProblem(await api.request('GET', '/user/ghost'), 404)
})

test('a playlist of one user is not reachable through another user', async () => {
  const owner = await newUser()
  const stranger = await newUser()
  const { id } = await newPlaylist(owner, { name: 'private' })
  assertProblem(await api.request('GET', `/user/${stranger}/playlist/${id}`), 404)
  assertProblem(await api.request('PUT', `/user/${stranger}/playlist/${id}`, { body: {} }), 404)
  assertProblem(await api.request('PATCH', `/user/${stranger}/playlist/${id}`, { body: {} }), 404)
  assertProblem(await api.request('DELETE', `/user/${stranger}/playlist/${id}`), 404)
  assert.is((await api.request('GET', `/user/${owner}/playlist/${id}`)).status, 200)
})

test('generic nodes below a playlist need the playlist: writing under a missing one is 404', async () => {
  const userId = await newUser()
  assertProblem(await api.request('PUT', `/user/${userId}/playlist/none/cover`, { body: {} }), 404, /playlist/)
  assertProblem(await api.request('POST', `/user/${userId}/playlist/none/comments`, { body: {} }), 404, /playlist/)
  const { id } = await newPlaylist(userId)
  const comment = await api.request('POST', `/user/${userId}/playlist/${id}/comments`, { body: { text: 'nice' } })
  assert.is(comment.status, 201)
  assert.is(comment.headers.location, `/user/${userId}/playlist/${id}/comments/${comment.json.id}`)
})

test('the playlist collection answers POST and GET; a playlist answers GET, PUT, PATCH, DELETE; others are 405', async () => {
  const userId = await newUser()
  const { id } = await newPlaylist(userId)
  const onCollection = await api.request('PUT', `/user/${userId}/playlist`, { body: {} })
  assertProblem(onCollection, 405)
  assert.is(onCollection.headers.allow, 'POST, GET, HEAD, OPTIONS')
  const onPlaylist = await api.request('POST', `/user/${userId}/playlist/${id}`, { body: {} })
  assertProblem(onPlaylist, 405)
  assert.is(onPlaylist.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS')
  const options = await api.request('OPTIONS', `/user/${userId}/playlist/${id}`)
  assert.is(options.status, 204)
  assert.is(options.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS')
})

test('concurrent POSTs to one user create as many distinct playlists', async () => {
  const userId = await newUser()
  const answers = await Promise.all(Array.from({ length: 20 }, (_, index) =>
    api.request('POST', `/user/${userId}/playlist`, { body: { index } })))
  assert.ok(answers.every((answer) => answer.status === 201))
  const ids = new Set(answers.map((answer) => answer.json.playlist_id))
  assert.is(ids.size, 20)
  const listed = (await api.request('GET', `/user/${userId}/playlist`)).json as Array<{ index: number }>
  assert.equal(listed.map((doc) => doc.index).sort((a, b) => a - b), [...Array(20).keys()])
})

test('playlists created while their user is deleted leave no orphan: each lands first and goes with it, or is 404', async () => {
  for (let round = 0; round < 3; round++) {
    const userId = await newUser()
    const posts: Array<Promise<{ status: number; json: any }>> = []
    let removal: Promise<{ status: number }> | undefined
    // POSTs go on starting, a moment apart, before, during and after the DELETE.
    for (let index = 0; index < 20; index++) {
      if (index === 6) removal = api.request('DELETE', `/user/${userId}`)
      posts.push(api.request('POST', `/user/${userId}/playlist`, { body: { index } }))
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    const answers = await Promise.all(posts)
    assert.is((await removal!).status, 200)
    for (const answer of answers) {
      assert.ok(answer.status === 201 || answer.status === 404, `a POST answered ${answer.status}`)
      if (answer.status === 201) assertProblem(await api.request('GET', `/user/${userId}/playlist/${answer.json.playlist_id}`), 404)
    }
    assertProblem(await api.request('GET', `/user/${userId}?_children`), 404)
  }
})

test.run()
