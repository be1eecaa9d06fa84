import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { signToken } from '../../lib/auth/jwt.ts'
import { passwordClaim, PASSWORD_CLAIM } from '../../lib/resources/accounts.ts'
import { startServer, type TestServer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'
import { openStream, withoutId, type EventStream, type ServerSentEvent } from '../support/event-stream.ts'

// Event streams and `?_changes` under --auth on the declared families (docs/accounts.md, "The
// declared families" and "Event streams"): a user's own subtree is streamed, the users' collection
// tells each subscriber only its own record, another's subtree is a 403 unless the family's
// `access` lets the caller read it, no token is a 401, no event carries a password hash, and a
// stream ends with its token.

const SECRET = 'a given secret of at least thirty-two characters'
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
let names = 0

async function registered(server: TestServer): Promise<{ id: string; token: string; username: string }> {
  const username = `user-${++names}-${Math.random().toString(36).slice(2, 8)}`
  const answer = await server.request('POST', '/user', { body: { username, password: 'bestPassw0rd', city: 'Oslo' } })
  assert.is(answer.status, 201, answer.text)
  return { id: answer.json.user.user_id, token: answer.json.accessToken, username }
}

async function write(server: TestServer, method: string, target: string, token: string, body?: unknown): Promise<any> {
  const answer = await server.request(method, target, { headers: bearer(token), body })
  assert.ok(answer.status < 300, `${method} ${target}: ${answer.status} ${answer.text}`)
  return answer.json
}

/** The next event, with no hash anywhere in it. */
async function nextEvent(stream: EventStream): Promise<ServerSentEvent> {
  const event = await stream.next()
  assert.not.match(JSON.stringify(event.data), /password|\$2[abxy]?\$/)
  return event
}

/** The status a stream is answered with, read from its head (a stream let through would never end). */
async function streamStatus(server: TestServer, target: string, headers: Record<string, string> = {}): Promise<number> {
  const stream = await openStream(server.port, target, headers)
  stream.close()
  return stream.response.statusCode!
}

test('a user\'s stream of their own subtree is served, every event without the password hash; another\'s writes are not told', async () => {
  const api = await startServer({ auth: true })
  try {
    const ada = await registered(api)
    const bob = await registered(api)
    const stream = await openStream(api.port, `/user/${ada.id}`, bearer(ada.token))
    try {
      assert.is(stream.response.statusCode, 200)
      assert.equal(withoutId(await nextEvent(stream)), { event: 'value', data: { path: `/user/${ada.id}`, data: { user_id: ada.id, username: ada.username, city: 'Oslo' } } })
      // Bob's writes come first: were they told, they would be the next events.
      await write(api, 'PATCH', `/user/${bob.id}`, bob.token, { city: 'Bergen' })
      await write(api, 'POST', `/user/${bob.id}/playlist`, bob.token, { name: 'bob\'s' })
      await write(api, 'PATCH', `/user/${ada.id}`, ada.token, { city: 'Paris' })
      assert.equal(withoutId(await nextEvent(stream)), { event: 'patch', data: { path: `/user/${ada.id}`, data: { city: 'Paris' } } })
      const made = await write(api, 'POST', `/user/${ada.id}/playlist`, ada.token, { name: 'ada\'s' })
      assert.equal(withoutId(await nextEvent(stream)), { event: 'put', data: { path: `/user/${ada.id}/playlist/${made.playlist_id}`, data: made } })
      // A PUT of the user stores the kept hash: the event tells the user without it.
      await write(api, 'PUT', `/user/${ada.id}`, ada.token, { username: ada.username, city: 'Rome' })
      const put = await nextEvent(stream)
      assert.equal(withoutId(put), { event: 'put', data: { path: `/user/${ada.id}`, data: { user_id: ada.id, username: ada.username, city: 'Rome' } } })
      // ?_changes since the start tells the same, without the hash.
      const changes = await api.request('GET', `/user/${ada.id}?_changes&since=0`, { headers: bearer(ada.token) })
      assert.is(changes.status, 200, changes.text)
      assert.not.match(changes.text, /password|\$2[abxy]?\$/)
      assert.match(changes.text, /Rome/)
      assert.not.match(changes.text, /Bergen|bob's/)
    } finally {
      stream.close()
    }
    const playlists = await openStream(api.port, `/user/${ada.id}/playlist`, bearer(ada.token))
    try {
      assert.is(playlists.response.statusCode, 200)
      assert.is((await nextEvent(playlists)).event, 'value')
      await write(api, 'POST', `/user/${bob.id}/playlist`, bob.token, { name: 'bob\'s again' })
      const made = await write(api, 'POST', `/user/${ada.id}/playlist`, ada.token, { name: 'ada\'s again' })
      assert.equal(withoutId(await nextEvent(playlists)), { event: 'put', data: { path: `/user/${ada.id}/playlist/${made.playlist_id}`, data: made } })
    } finally {
      playlists.close()
    }
  } finally {
    await api.close()
  }
})

test('a stream of /user tells the caller only their own record\'s changes: not another\'s, not a registration', async () => {
  const api = await startServer({ auth: true })
  try {
    const ada = await registered(api)
    const bob = await registered(api)
    const stream = await openStream(api.port, '/user', bearer(ada.token))
    try {
      assert.is(stream.response.statusCode, 200)
      assert.equal(withoutId(await nextEvent(stream)), { event: 'value', data: { path: '/user', data: [{ user_id: ada.id, username: ada.username, city: 'Oslo' }] } })
      await write(api, 'PATCH', `/user/${bob.id}`, bob.token, { city: 'Bergen' })
      await registered(api)
      await write(api, 'PATCH', `/user/${bob.id}`, bob.token, { password: 'an0therPass' })
      await write(api, 'PATCH', `/user/${ada.id}`, ada.token, { city: 'Paris' })
      assert.equal(withoutId(await nextEvent(stream)), { event: 'patch', data: { path: `/user/${ada.id}`, data: { city: 'Paris' } } })
      const polled = await api.request('GET', '/user?_changes&since=0', { headers: bearer(ada.token) })
      assert.is(polled.status, 200, polled.text)
      assert.not.match(polled.text, /password|\$2[abxy]?\$|Bergen/)
      assert.match(polled.text, /Paris/)
    } finally {
      stream.close()
    }
  } finally {
    await api.close()
  }
})

test('another user\'s subtree is a 403, no token a 401, /user?_children a 403; an "access" that lets the caller read streams it, still without hashes', async () => {
  const api = await startServer({ auth: true })
  try {
    const ada = await registered(api)
    const bob = await registered(api)
    for (const target of [`/user/${ada.id}`, `/user/${ada.id}/playlist`]) {
      assert.is(await streamStatus(api, target, bearer(bob.token)), 403, target)
      assertProblem(await api.request('GET', `${target}?_changes`, { headers: bearer(bob.token) }), 403)
    }
    for (const target of ['/user', `/user/${ada.id}`, `/user/${ada.id}/playlist`]) {
      assert.is(await streamStatus(api, target), 401, target)
      assertProblem(await api.request('GET', `${target}?_changes`), 401)
    }
    assertProblem(await api.request('GET', '/user?_children', { headers: bearer(ada.token) }), 403, /names are not listed/)
  } finally {
    await api.close()
  }
  const resources = { user: { id: 'user_id', unique: ['username'], access: '640', children: { playlist: { id: 'playlist_id', arrays: ['songs'], access: '640' } } } }
  const shared = await startServer({ auth: true, resources })
  try {
    const ada = await registered(shared)
    const bob = await registered(shared)
    const stream = await openStream(shared.port, `/user/${ada.id}`, bearer(bob.token))
    try {
      assert.is(stream.response.statusCode, 200)
      assert.is((await nextEvent(stream)).event, 'value')
      await write(shared, 'PATCH', `/user/${ada.id}`, ada.token, { password: 'an0therPass' })
      assert.equal(withoutId(await nextEvent(stream)), { event: 'patch', data: { path: `/user/${ada.id}`, data: {} } })
    } finally {
      stream.close()
    }
    assert.is(await streamStatus(shared, `/user/${ada.id}`), 401)
  } finally {
    await shared.close()
  }
  // A user family others may read, whose playlists only their owner reads: another's stream would carry those.
  const narrower = { user: { id: 'user_id', unique: ['username'], access: '644', children: { playlist: { id: 'playlist_id', arrays: ['songs'] } } } }
  const guarded = await startServer({ auth: true, resources: narrower })
  try {
    const ada = await registered(guarded)
    const bob = await registered(guarded)
    assert.is((await guarded.request('GET', `/user/${ada.id}`, { headers: bearer(bob.token) })).status, 200)
    assert.is(await streamStatus(guarded, `/user/${ada.id}`, bearer(bob.token)), 403)
    assert.is(await streamStatus(guarded, `/user/${ada.id}`), 403)
    assert.is(await streamStatus(guarded, `/user/${ada.id}`, bearer(ada.token)), 200)
  } finally {
    await guarded.close()
  }
})

test('a stream ends when its token expires, or when its user changes their password; coming back with that token is a 401', async () => {
  const api = await startServer({ auth: true, authSecret: SECRET })
  try {
    const ada = await registered(api)
    const stored = await api.server.handler.documents!.read(['user', ada.id])
    // Two seconds, as `exp` counts whole seconds from an `iat` rounded down: at least one is left when the stream opens.
    const brief = signToken({ sub: ada.id }, Buffer.from(SECRET), { lifetimeSeconds: 2, claims: { [PASSWORD_CLAIM]: passwordClaim(Buffer.from(SECRET), stored?.doc.password) } })
    const outcome = (stream: EventStream, ms: number) => Promise.race([stream.ended.then(() => 'ended'), new Promise((resolve) => setTimeout(() => resolve('open'), ms))])
    const expiring = await openStream(api.port, `/user/${ada.id}`, bearer(brief))
    const lasting = await openStream(api.port, '/user', bearer(ada.token))
    try {
      assert.is(expiring.response.statusCode, 200)
      assert.is(lasting.response.statusCode, 200)
      assert.equal(await Promise.all([outcome(expiring, 4000), outcome(lasting, 0)]), ['ended', 'open'])
      assert.is(await streamStatus(api, `/user/${ada.id}`, bearer(brief)), 401)
      await write(api, 'PATCH', `/user/${ada.id}`, ada.token, { password: 'an0therPass' })
      assert.is(await outcome(lasting, 1500), 'ended')
    } finally {
      expiring.close()
      lasting.close()
    }
  } finally {
    await api.close()
  }
})

test.run()
