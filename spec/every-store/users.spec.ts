import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, type Answer, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem, assertStrongEtag } from '../support/assertions.ts'

// Users (docs/http-api.md, "Users and playlists"): /user and /user/:user_id.

let api: TestServer

test.before(async () => {
  api = await startServer()
})
test.after(async () => {
  await api.close()
})

async function createUser(body: Record<string, unknown>): Promise<Answer & { id: string }> {
  const answer = await api.request('POST', '/user', { body })
  assert.is(answer.status, 201, answer.text)
  return Object.assign(answer, { id: answer.json.user_id as string })
}

test('GET /user on an empty store answers 200 with an empty array', async () => {
  assertJson(await api.request('GET', '/user'), 200, [])
})

test('POST /user answers 201 with Location, ETag and the new user with its generated user_id', async () => {
  const created = await api.request('POST', '/user', { body: { username: 'ada', name: 'Ada Lovelace' } })
  assertJson(created, 201)
  const userId = created.json.user_id
  assert.match(userId, /^[0-9a-z]{12}$/)
  assert.equal(created.json, { user_id: userId, username: 'ada', name: 'Ada Lovelace' })
  assert.is(created.headers.location, `/user/${userId}`)
  const etag = assertStrongEtag(created)
  const read = await api.request('GET', created.headers.location as string)
  assertJson(read, 200, created.json)
  assert.is(read.headers.etag, etag)
})

test('POST /user with a user_id in the body is 400: the service assigns it', async () => {
  assertProblem(await api.request('POST', '/user', { body: { user_id: 'mine', username: 'x1' } }), 400, /user_id/)
})

test('GET /user lists every user in creation order', async () => {
  const first = await createUser({ username: 'list-1' })
  const second = await createUser({ username: 'list-2' })
  const answer = await api.request('GET', '/user')
  assertJson(answer, 200)
  const ids = answer.json.map((user: { user_id: string }) => user.user_id)
  assert.ok(ids.indexOf(first.id) !== -1 && ids.indexOf(first.id) < ids.indexOf(second.id))
  assert.equal(answer.json.find((user: { user_id: string }) => user.user_id === second.id), second.json)
})

test('GET /user/:user_id answers the user, and 404 when there is none', async () => {
  const user = await createUser({ username: 'reader' })
  assertJson(await api.request('GET', `/user/${user.id}`), 200, user.json)
  assertProblem(await api.request('GET', '/user/nobody'), 404, /nobody/)
})

test('PUT /user/:user_id replaces the user and keeps its user_id', async () => {
  const user = await createUser({ username: 'putter', age: 30 })
  const replaced = await api.request('PUT', `/user/${user.id}`, { body: { username: 'putter', city: 'Oslo' } })
  assertJson(replaced, 200, { user_id: user.id, username: 'putter', city: 'Oslo' })
  assert.is.not(assertStrongEtag(replaced), user.headers.etag)
  assertJson(await api.request('GET', `/user/${user.id}`), 200, replaced.json)
})

test('PUT /user/:user_id of a user that does not exist is 404 and creates nothing', async () => {
  assertProblem(await api.request('PUT', '/user/ghost', { body: { username: 'ghost' } }), 404)
  assertProblem(await api.request('GET', '/user/ghost'), 404)
})

test('PATCH /user/:user_id merges (null removes a key, nested objects merge) and 404s for a missing user', async () => {
  const user = await createUser({ username: 'patcher', drop: 1, prefs: { theme: 'dark', lang: 'en' } })
  const patched = await api.request('PATCH', `/user/${user.id}`, { body: { drop: null, prefs: { lang: 'fr' }, age: 9 } })
  assertJson(patched, 200, { user_id: user.id, username: 'patcher', prefs: { theme: 'dark', lang: 'fr' }, age: 9 })
  assertStrongEtag(patched)
  assertJson(await api.request('GET', `/user/${user.id}`), 200, patched.json)
  assertProblem(await api.request('PATCH', '/user/ghost', { body: { a: 1 } }), 404)
})

test('user_id may be repeated in PUT and PATCH, never changed or removed (400, user unchanged)', async () => {
  const user = await createUser({ username: 'fixed-id' })
  assertJson(await api.request('PUT', `/user/${user.id}`, { body: { user_id: user.id, username: 'fixed-id', a: 1 } }), 200)
  assertJson(await api.request('PATCH', `/user/${user.id}`, { body: { user_id: user.id, b: 2 } }), 200)
  assertProblem(await api.request('PUT', `/user/${user.id}`, { body: { user_id: 'other' } }), 400, /user_id/)
  assertProblem(await api.request('PATCH', `/user/${user.id}`, { body: { user_id: 'other' } }), 400, /user_id/)
  assertProblem(await api.request('PATCH', `/user/${user.id}`, { body: { user_id: null } }), 400, /user_id/)
  assertJson(await api.request('GET', `/user/${user.id}`), 200, { user_id: user.id, username: 'fixed-id', a: 1, b: 2 })
})

test('DELETE /user/:user_id answers 200 with the deleted user, then 404', async () => {
  const user = await createUser({ username: 'leaver' })
  assertJson(await api.request('DELETE', `/user/${user.id}`), 200, user.json)
  assertProblem(await api.request('GET', `/user/${user.id}`), 404)
  assertProblem(await api.request('DELETE', `/user/${user.id}`), 404)
})

test('deleting a user takes its playlists and every generic node below it, and nothing else', async () => {
  const user = await createUser({ username: 'cascade' })
  const other = await createUser({ username: 'bystander' })
  const playlist = await api.request('POST', `/user/${user.id}/playlist`, { body: { name: 'p' } })
  assert.is(playlist.status, 201)
  assert.is((await api.request('PUT', `/user/${user.id}/permissions`, { body: { admin: true } })).status, 201)
  assert.is((await api.request('PUT', `/user/${user.id}/playlist/${playlist.json.playlist_id}/notes`, { body: {} })).status, 201)
  const otherList = await api.request('POST', `/user/${other.id}/playlist`, { body: { name: 'kept' } })

  assert.is((await api.request('DELETE', `/user/${user.id}`)).status, 200)
  assertProblem(await api.request('GET', `/user/${user.id}/playlist`), 404)
  assertProblem(await api.request('GET', `/user/${user.id}/playlist/${playlist.json.playlist_id}`), 404)
  assertProblem(await api.request('GET', `/user/${user.id}/permissions`), 404)
  assertProblem(await api.request('GET', `/user/${user.id}/playlist/${playlist.json.playlist_id}/notes`), 404)
  assertJson(await api.request('GET', `/user/${other.id}/playlist`), 200, [otherList.json])
})

test('a recreated user never sees the data of a deleted one', async () => {
  const user = await createUser({ username: 'phoenix' })
  await api.request('PUT', `/user/${user.id}/settings`, { body: { old: true } })
  await api.request('DELETE', `/user/${user.id}`)
  const again = await createUser({ username: 'phoenix' })
  assert.is.not(again.id, user.id)
  assertJson(await api.request('GET', `/user/${again.id}/playlist`), 200, [])
  assertProblem(await api.request('GET', `/user/${again.id}/settings`), 404)
})

// Usernames

test('a username must be a non-empty string (400 on POST, PUT and PATCH)', async () => {
  const user = await createUser({ username: 'valid-name' })
  for (const username of ['', '   ', 42, true, null, ['a'], { a: 1 }]) {
    assertProblem(await api.request('POST', '/user', { body: { username } }), 400, /username/)
    assertProblem(await api.request('PUT', `/user/${user.id}`, { body: { username } }), 400, /username/)
  }
  for (const username of ['', 42, ['a']]) {
    assertProblem(await api.request('PATCH', `/user/${user.id}`, { body: { username } }), 400, /username/)
  }
  assertJson(await api.request('GET', `/user/${user.id}`), 200, user.json)
})

test('a user without a username is allowed, and several of them do not conflict', async () => {
  const first = await createUser({ name: 'anonymous' })
  const second = await createUser({ name: 'anonymous' })
  assert.is.not(first.id, second.id)
})

test('a username in use is 409 on POST, and the store keeps one user with it', async () => {
  await createUser({ username: 'taken' })
  const answer = await api.request('POST', '/user', { body: { username: 'taken', other: 1 } })
  assertProblem(answer, 409, /taken/)
  const users = (await api.request('GET', '/user')).json as Array<{ username?: string }>
  assert.is(users.filter((user) => user.username === 'taken').length, 1)
})

test('taking another user\'s username is 409 on PUT and on PATCH; keeping one\'s own is fine', async () => {
  await createUser({ username: 'owner' })
  const other = await createUser({ username: 'someone' })
  assertProblem(await api.request('PUT', `/user/${other.id}`, { body: { username: 'owner' } }), 409, /owner/)
  assertProblem(await api.request('PATCH', `/user/${other.id}`, { body: { username: 'owner' } }), 409, /owner/)
  assertJson(await api.request('GET', `/user/${other.id}`), 200, other.json)
  assertJson(await api.request('PUT', `/user/${other.id}`, { body: { username: 'someone', v: 2 } }), 200)
  assertJson(await api.request('PATCH', `/user/${other.id}`, { body: { username: 'someone', v: 3 } }), 200)
})

test('usernames compare exactly: case and spacing make different names', async () => {
  await createUser({ username: 'Case' })
  await createUser({ username: 'case' })
  await createUser({ username: 'case ' })
})

test('a username is free again once its user is deleted or renamed', async () => {
  const gone = await createUser({ username: 'recycled' })
  await api.request('DELETE', `/user/${gone.id}`)
  const renamed = await createUser({ username: 'recycled' })
  await api.request('PATCH', `/user/${renamed.id}`, { body: { username: 'renamed' } })
  await createUser({ username: 'recycled' })
})

test('two racing POSTs with one username: exactly one 201 and one 409', async () => {
  for (let round = 0; round < 5; round++) {
    const username = `racer-${round}`
    const answers = await Promise.all([
      api.request('POST', '/user', { body: { username, side: 'a' } }),
      api.request('POST', '/user', { body: { username, side: 'b' } }),
    ])
    assert.equal(answers.map((answer) => answer.status).sort(), [201, 409])
    const users = (await api.request('GET', '/user')).json as Array<{ username?: string }>
    assert.is(users.filter((user) => user.username === username).length, 1)
  }
})

test('racing PATCHes that take one username from two users: exactly one wins', async () => {
  for (let round = 0; round < 5; round++) {
    const first = await createUser({ username: `patch-race-a${round}` })
    const second = await createUser({ username: `patch-race-b${round}` })
    const answers = await Promise.all([
      api.request('PATCH', `/user/${first.id}`, { body: { username: `prize${round}` } }),
      api.request('PATCH', `/user/${second.id}`, { body: { username: `prize${round}` } }),
    ])
    assert.equal(answers.map((answer) => answer.status).sort(), [200, 409])
    const users = (await api.request('GET', '/user')).json as Array<{ username?: string }>
    assert.is(users.filter((user) => user.username === `prize${round}`).length, 1)
  }
})

// Routing of the declared resource

test('/user answers POST and GET only: other methods are 405 with Allow, OPTIONS is 204 with Allow', async () => {
  for (const method of ['PUT', 'PATCH', 'DELETE']) {
    const answer = await api.request(method, '/user', { body: {} })
    assertProblem(answer, 405)
    assert.is(answer.headers.allow, 'POST, GET, HEAD, OPTIONS')
  }
  const options = await api.request('OPTIONS', '/user')
  assert.is(options.status, 204)
  assert.is(options.headers.allow, 'POST, GET, HEAD, OPTIONS')
  const one = await api.request('POST', '/user/someone', { body: {} })
  assertProblem(one, 405)
  assert.is(one.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS')
})

test('HEAD /user and HEAD /user/:user_id answer the GET headers without a body', async () => {
  const user = await createUser({ username: 'header' })
  for (const path of ['/user', `/user/${user.id}`]) {
    const get = await api.request('GET', path)
    const head = await api.request('HEAD', path)
    assert.is(head.status, 200)
    assert.is(head.text, '')
    assert.is(head.headers['content-length'], get.headers['content-length'])
    assert.is(head.headers.etag, get.headers.etag)
  }
})

test('/user/ with a trailing slash is /user', async () => {
  assertJson(await api.request('GET', '/user/'), 200)
  assert.is((await api.request('POST', '/user/', { body: {} })).status, 201)
})

// Generic nodes below a user

test('generic nodes below a user are documents: PUT, GET, PATCH, POST and DELETE work', async () => {
  const user = await createUser({ username: 'generic-owner' })
  const base = `/user/${user.id}/permissions`
  assertJson(await api.request('PUT', base, { body: { admin: false } }), 201, { id: 'permissions', admin: false })
  assertJson(await api.request('PATCH', base, { body: { admin: true } }), 200, { id: 'permissions', admin: true })
  const child = await api.request('POST', `/user/${user.id}/friends`, { body: { name: 'B' } })
  assert.is(child.status, 201)
  assert.is(child.headers.location, `/user/${user.id}/friends/${child.json.id}`)
  assertJson(await api.request('GET', `/user/${user.id}/friends`), 200, [child.json])
  assertJson(await api.request('DELETE', base), 200, { id: 'permissions', admin: true })
})

test('writing a generic node below a user that does not exist is 404 and stores nothing', async () => {
  assertProblem(await api.request('PUT', '/user/ghost/permissions', { body: { a: 1 } }), 404, /ghost/)
  assertProblem(await api.request('POST', '/user/ghost/friends', { body: { a: 1 } }), 404, /ghost/)
  assertProblem(await api.request('PUT', '/user/ghost/deep/er/node', { body: { a: 1 } }), 404, /ghost/)
  assertProblem(await api.request('PATCH', '/user/ghost/permissions', { body: { a: 1 } }), 404)
  assertProblem(await api.request('GET', '/user/ghost/permissions'), 404)
  assertProblem(await api.request('GET', '/user/ghost'), 404)
  const users = (await api.request('GET', '/user')).json as Array<{ user_id: string }>
  assert.not.ok(users.some((user) => user.user_id === 'ghost'))
})

test('writes below a user racing with its deletion never leave an orphan', async () => {
  for (let round = 0; round < 3; round++) {
    const user = await createUser({})
    const writes: Array<Promise<{ status: number }>> = []
    let removal: Promise<{ status: number }> | undefined
    // PUTs go on starting, a moment apart, before, during and after the DELETE.
    for (let index = 0; index < 12; index++) {
      if (index === 3) removal = api.request('DELETE', `/user/${user.id}`)
      writes.push(api.request('PUT', `/user/${user.id}/settings${index}`, { body: { round } }))
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    for (const write of await Promise.all(writes)) assert.ok(write.status === 201 || write.status === 404, `a write answered ${write.status}`)
    assert.is((await removal!).status, 200)
    for (let index = 0; index < 12; index++) assertProblem(await api.request('GET', `/user/${user.id}/settings${index}`), 404)
    assertProblem(await api.request('GET', `/user/${user.id}`), 404)
  }
})

test.run()
