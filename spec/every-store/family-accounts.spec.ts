import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, type TestServer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'

// `--auth` on the declared families (docs/accounts.md, "The declared families"): the seed's users
// are the accounts (POST /user registers, POST /login logs in), each user owns their subtree, a
// family's `access` says otherwise, `--token` is the administrator's key, and no answer carries a
// password hash.

const ADMIN = 'the-administrators-own-key'
let api: TestServer

test.before(async () => {
  api = await startServer({ auth: true, token: ADMIN })
})
test.after(async () => {
  await api.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const admin = bearer(ADMIN)
let names = 0

async function registered(server: TestServer, password = 'bestPassw0rd'): Promise<{ id: string; token: string; username: string }> {
  const username = `user-${++names}-${Math.random().toString(36).slice(2, 8)}`
  const answer = await server.request('POST', '/user', { body: { username, password, city: 'Oslo' } })
  assert.is(answer.status, 201, answer.text)
  return { id: answer.json.user.user_id, token: answer.json.accessToken, username }
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'))
}

test('POST /user registers: 201 { accessToken, user } without the password, Location the user; the token names the user_id; POST /login answers the same', async () => {
  const username = `ada-${Math.random().toString(36).slice(2, 8)}`
  const answer = await api.request('POST', '/user', { body: { username, password: 'bestPassw0rd', name: 'Ada' } })
  assert.is(answer.status, 201, answer.text)
  const { user, accessToken } = answer.json
  assert.equal(user, { user_id: user.user_id, username, name: 'Ada' })
  assert.is(answer.headers.location, `/user/${user.user_id}`)
  assert.is(claimsOf(accessToken).sub, user.user_id)
  const login = await api.request('POST', '/login', { body: { username, password: 'bestPassw0rd' } })
  assert.is(login.status, 200, login.text)
  assert.equal(login.json.user, user)
  assert.is(claimsOf(login.json.accessToken).sub, user.user_id)
  const own = await api.request('GET', `/user/${user.user_id}`, { headers: bearer(login.json.accessToken) })
  assert.is(own.status, 200, own.text)
  assert.equal(own.json, user)
})

test('the password is stored as a bcrypt hash, never answered: not in GET, a listing, a PUT or a batch answer, to the user or the administrator', async () => {
  const ada = await registered(api)
  const stored = await api.server.handler.documents!.read(['user', ada.id])
  assert.match(String(stored?.doc.password), /^\$2a\$10\$/)
  const answers = [
    await api.request('GET', `/user/${ada.id}`, { headers: bearer(ada.token) }),
    await api.request('GET', '/user', { headers: bearer(ada.token) }),
    await api.request('GET', '/user', { headers: admin }),
    await api.request('GET', `/user/${ada.id}`, { headers: admin }),
    await api.request('PATCH', `/user/${ada.id}`, { headers: bearer(ada.token), body: { city: 'Paris' } }),
    await api.request('POST', '/?_batch', { headers: bearer(ada.token), body: { requests: [{ method: 'PATCH', path: `/user/${ada.id}`, body: { city: 'Lima' } }] } }),
  ]
  for (const answer of answers) {
    assert.is(answer.status, 200, answer.text)
    assert.not.match(answer.text, /password|\$2a\$/, answer.text)
  }
  // A PUT without a password keeps the stored one: the user still logs in.
  const put = await api.request('PUT', `/user/${ada.id}`, { headers: bearer(ada.token), body: { username: ada.username, city: 'Rome' } })
  assert.is(put.status, 200, put.text)
  assert.not.match(put.text, /password/)
  assert.is((await api.request('POST', '/login', { body: { username: ada.username, password: 'bestPassw0rd' } })).status, 200)
})

test('a user reads and writes only their own subtree: another user gets 403, no token 401 with WWW-Authenticate', async () => {
  const ada = await registered(api)
  const bob = await registered(api)
  const made = await api.request('POST', `/user/${ada.id}/playlist`, { headers: bearer(ada.token), body: { name: 'mine', songs: ['a'] } })
  assert.is(made.status, 201, made.text)
  const playlist = `/user/${ada.id}/playlist/${made.json.playlist_id}`
  assert.is((await api.request('GET', playlist, { headers: bearer(ada.token) })).status, 200)
  assert.is((await api.request('GET', `/user/${ada.id}/playlist`, { headers: bearer(ada.token) })).json.length, 1)
  assert.is((await api.request('PATCH', playlist, { headers: bearer(ada.token), body: { name: 'still mine' } })).status, 200)
  for (const [method, path, body] of [['GET', playlist], ['GET', `/user/${ada.id}/playlist`], ['GET', `/user/${ada.id}`], ['HEAD', `/user/${ada.id}`], ['PATCH', playlist, { name: 'taken' }], ['DELETE', playlist], ['POST', `/user/${ada.id}/playlist`, { name: 'x' }], ['PUT', `/user/${ada.id}`, { username: 'x' }], ['DELETE', `/user/${ada.id}`], ['PUT', `/user/${ada.id}/notes/1`, { text: 'x' }]] as const) {
    const answer = await api.request(method, path, { headers: bearer(bob.token), body })
    assert.is(answer.status, 403, `${method} ${path}: ${answer.text}`)
    const anonymous = await api.request(method, path, { body })
    assert.is(anonymous.status, 401, `${method} ${path}: ${anonymous.text}`)
    assert.match(String(anonymous.headers['www-authenticate']), /^Bearer realm="restdir"/)
  }
  assert.is((await api.request('GET', playlist, { headers: bearer(ada.token) })).json.name, 'still mine')
  // The list of users answers the caller alone, and counts only them.
  const listed = await api.request('GET', '/user', { headers: bearer(bob.token) })
  assert.is(listed.status, 200, listed.text)
  assert.equal(listed.json.map((user: { user_id: string }) => user.user_id), [bob.id])
  const paged = await api.request('GET', '/user?_page=1&_limit=10', { headers: bearer(bob.token) })
  assert.equal(paged.json.map((user: { user_id: string }) => user.user_id), [bob.id])
  assert.is(paged.headers['x-total-count'], '1')
  // Outside the users' subtrees, only the administrator.
  assertProblem(await api.request('GET', '/?_children', { headers: bearer(bob.token) }), 403)
  assertProblem(await api.request('PUT', '/elsewhere/1', { headers: bearer(bob.token), body: { a: 1 } }), 403)
})

test('a token is refused once its user changed their password (hashed as it is stored) or was deleted', async () => {
  const ada = await registered(api)
  const changed = await api.request('PATCH', `/user/${ada.id}`, { headers: bearer(ada.token), body: { password: 'an0therPass' } })
  assert.is(changed.status, 200, changed.text)
  assert.match(String((await api.server.handler.documents!.read(['user', ada.id]))?.doc.password), /^\$2a\$10\$/)
  assertProblem(await api.request('GET', `/user/${ada.id}`, { headers: bearer(ada.token) }), 401, /password changed/)
  const login = await api.request('POST', '/login', { body: { username: ada.username, password: 'an0therPass' } })
  assert.is(login.status, 200, login.text)
  assert.is((await api.request('DELETE', `/user/${ada.id}`, { headers: bearer(login.json.accessToken) })).status, 200)
  assertProblem(await api.request('GET', `/user/${ada.id}`, { headers: bearer(login.json.accessToken) }), 401, /no longer exists/)
})

test('registration and login refuse what they cannot take; logins are slowed after five failures (429 with Retry-After)', async () => {
  assertProblem(await api.request('POST', '/user', { body: { username: 'nopass' } }), 400, /Username and password are required/)
  assertProblem(await api.request('POST', '/user', { body: { username: 'short', password: 'abc' } }), 400, /too short/)
  assertProblem(await api.request('POST', '/login', { body: { username: 'nobody-at-all', password: 'whatever' } }), 400, /Cannot find user/)
  const ada = await registered(api)
  for (let attempt = 0; attempt < 4; attempt++) assertProblem(await api.request('POST', '/login', { body: { username: ada.username, password: 'wrong-one' } }), 400, /Incorrect password/)
  const refused = await api.request('POST', '/login', { body: { username: ada.username, password: 'bestPassw0rd' } })
  assertProblem(refused, 429)
  assert.ok(Number(refused.headers['retry-after']) > 0)
})

test('two registrations of one username at once make one account; the other is 409', async () => {
  const username = `twin-${Math.random().toString(36).slice(2, 8)}`
  const answers = await Promise.all([0, 1, 2].map(() => api.request('POST', '/user', { body: { username, password: 'bestPassw0rd' } })))
  assert.equal(answers.map((answer) => answer.status).sort(), [201, 409, 409], answers.map((answer) => answer.text).join('\n'))
  const everyone = await api.request('GET', '/user', { headers: admin })
  assert.is(everyone.json.filter((user: { username: string }) => user.username === username).length, 1)
})

test('--token is the administrator\'s key: it reads and writes every subtree and the root; a user\'s token is not it', async () => {
  const ada = await registered(api)
  const bob = await registered(api)
  const everyone = await api.request('GET', '/user', { headers: admin })
  assert.ok(everyone.json.some((user: { user_id: string }) => user.user_id === ada.id) && everyone.json.some((user: { user_id: string }) => user.user_id === bob.id))
  assert.is((await api.request('POST', `/user/${ada.id}/playlist`, { headers: admin, body: { name: 'given' } })).status, 201)
  assert.is((await api.request('PUT', '/elsewhere/1', { headers: admin, body: { a: 1 } })).status, 201)
  assert.is((await api.request('GET', '/?_children', { headers: admin })).status, 200)
  // Without a fixture the reset is off; the administrator is let as far as that, a user is not.
  assertProblem(await api.request('POST', '/?_reset', { headers: admin }), 404, /Resetting is off/)
  assertProblem(await api.request('POST', '/?_reset', { headers: bearer(ada.token) }), 403, /administrator/)
  assertProblem(await api.request('GET', `/user/${ada.id}`, { headers: bearer(`${ADMIN}x`) }), 401)
})

test('a batch is checked request by request as its caller: one refused request refuses the batch, and nothing of it is stored', async () => {
  const ada = await registered(api)
  const bob = await registered(api)
  const answer = await api.request('POST', '/?_batch', { headers: bearer(bob.token), body: { requests: [
    { method: 'POST', path: `/user/${bob.id}/playlist`, body: { name: 'bob\'s' } },
    { method: 'POST', path: `/user/${ada.id}/playlist`, body: { name: 'planted' } },
  ] } })
  assert.is(answer.status, 403, answer.text)
  assert.equal((await api.request('GET', `/user/${bob.id}/playlist`, { headers: bearer(bob.token) })).json, [])
  assert.equal((await api.request('GET', `/user/${ada.id}/playlist`, { headers: bearer(ada.token) })).json, [])
})

test('a family\'s "access" widens it: "640" lets every signed-in user read playlists, their owner alone write them', async () => {
  const resources = { user: { id: 'user_id', unique: ['username'], children: { playlist: { id: 'playlist_id', arrays: ['songs'], access: '640' } } } }
  const server = await startServer({ auth: true, resources })
  try {
    const ada = await registered(server)
    const bob = await registered(server)
    const made = await server.request('POST', `/user/${ada.id}/playlist`, { headers: bearer(ada.token), body: { name: 'shared' } })
    assert.is(made.status, 201, made.text)
    const playlist = `/user/${ada.id}/playlist/${made.json.playlist_id}`
    assert.is((await server.request('GET', playlist, { headers: bearer(bob.token) })).status, 200)
    assert.is((await server.request('GET', `/user/${ada.id}/playlist`, { headers: bearer(bob.token) })).json.length, 1)
    assertProblem(await server.request('GET', playlist), 401)
    assertProblem(await server.request('PATCH', playlist, { headers: bearer(bob.token), body: { name: 'mine now' } }), 403)
    // The user itself keeps the seed's rule, and a join cannot reach it round that rule.
    assertProblem(await server.request('GET', `/user/${ada.id}`, { headers: bearer(bob.token) }), 403)
    assertProblem(await server.request('GET', `/user/${ada.id}/playlist?_expand=user`, { headers: bearer(bob.token) }), 403, /_expand/)
    assertProblem(await server.request('GET', `/user/${ada.id}/playlist?_embed=songs`, { headers: bearer(bob.token) }), 403, /_embed/)
    const own = await server.request('GET', '/user?_embed=playlist', { headers: bearer(ada.token) })
    assert.is(own.status, 200, own.text)
    assert.equal(own.json.map((user: { user_id: string; playlist: { name: string }[] }) => [user.user_id, user.playlist.map((list) => list.name)]), [[ada.id, ['shared']]])
    assert.not.match(own.text, /password/)
    // Without --token there is no administrator: the root is nobody's.
    assertProblem(await server.request('GET', '/?_children', { headers: bearer(ada.token) }), 403)
  } finally {
    await server.close()
  }
})

test('an "access" that is not one of json-server-auth\'s guards stops the start, saying where and what is allowed', async () => {
  for (const access of ['601', 600, '6400', 'rw']) {
    const resources = { user: { id: 'user_id', unique: ['username'], access: access as string } }
    await startServer({ auth: true, resources }).then(
      (server) => (server.close(), assert.unreachable(`access ${JSON.stringify(access)} was taken`)),
      (error: Error) => assert.match(error.message, /\$\.user\.access: must be one of json-server-auth's three digits/),
    )
  }
  await startServer({ auth: true, resources: { team: { id: 'team_id' } } }).then(
    (server) => (server.close(), assert.unreachable('a declaration without a family of usernames was taken')),
    (error: Error) => assert.match(error.message, /unique field is "username"/),
  )
})

test.run()
