import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, type TestServer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'

// The seed's permissions under `--auth` on the declared families (docs/accounts.md, "The grants"):
// /user/:user_id/permissions holds that user's grants, each letting another user (or every
// signed-in user) read, or read and write, the user's subtree or one collection in it; only that
// user writes them, and nothing else widens access.

const ADMIN = 'the-administrators-own-key'
let api: TestServer

test.before(async () => {
  api = await startServer({ auth: true, token: ADMIN })
})
test.after(async () => {
  await api.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
let names = 0

async function registered(): Promise<{ id: string; token: string }> {
  const username = `grant-${++names}-${Math.random().toString(36).slice(2, 8)}`
  const answer = await api.request('POST', '/user', { body: { username, password: 'bestPassw0rd' } })
  assert.is(answer.status, 201, answer.text)
  return { id: answer.json.user.user_id, token: answer.json.accessToken }
}

async function granted(owner: { id: string; token: string }, grant: Record<string, unknown>): Promise<string> {
  const answer = await api.request('POST', `/user/${owner.id}/permissions`, { headers: bearer(owner.token), body: grant })
  assert.is(answer.status, 201, answer.text)
  return String(answer.headers.location)
}

async function playlistOf(owner: { id: string; token: string }): Promise<string> {
  const made = await api.request('POST', `/user/${owner.id}/playlist`, { headers: bearer(owner.token), body: { name: 'mine', songs: ['a'] } })
  assert.is(made.status, 201, made.text)
  return `/user/${owner.id}/playlist/${made.json.playlist_id}`
}

test('a read grant lets its grantee read the subtree (a listing included) and not write it; deleting the grant closes it again', async () => {
  const ada = await registered()
  const bob = await registered()
  const carol = await registered()
  const playlist = await playlistOf(ada)
  assertProblem(await api.request('GET', playlist, { headers: bearer(bob.token) }), 403)
  const grant = await granted(ada, { to: bob.id, may: 'read' })
  const read = await api.request('GET', playlist, { headers: bearer(bob.token) })
  assert.is(read.status, 200, read.text)
  assert.is(read.json.name, 'mine')
  const listing = await api.request('GET', `/user/${ada.id}/playlist`, { headers: bearer(bob.token) })
  assert.is(listing.status, 200, listing.text)
  assert.equal(listing.json.map((list: { name: string }) => list.name), ['mine'])
  const user = await api.request('GET', `/user/${ada.id}`, { headers: bearer(bob.token) })
  assert.is(user.status, 200, user.text)
  assert.not.match(user.text, /password|\$2a\$/)
  // Read is not write; and the grant is Bob's, not Carol's.
  assertProblem(await api.request('PATCH', playlist, { headers: bearer(bob.token), body: { name: 'taken' } }), 403)
  assertProblem(await api.request('POST', `/user/${ada.id}/playlist`, { headers: bearer(bob.token), body: { name: 'planted' } }), 403)
  assertProblem(await api.request('DELETE', playlist, { headers: bearer(bob.token) }), 403)
  assertProblem(await api.request('GET', playlist, { headers: bearer(carol.token) }), 403)
  assertProblem(await api.request('GET', playlist), 401)
  assert.is((await api.request('DELETE', grant, { headers: bearer(ada.token) })).status, 200)
  assertProblem(await api.request('GET', playlist, { headers: bearer(bob.token) }), 403)
})

test('a write grant lets its grantee write the subtree, never the user\'s own record (its password) nor the grants; "*" lets every signed-in user', async () => {
  const ada = await registered()
  const bob = await registered()
  const playlist = await playlistOf(ada)
  await granted(ada, { to: bob.id, may: 'write' })
  const patched = await api.request('PATCH', playlist, { headers: bearer(bob.token), body: { name: 'ours' } })
  assert.is(patched.status, 200, patched.text)
  assert.is((await api.request('POST', `/user/${ada.id}/playlist`, { headers: bearer(bob.token), body: { name: 'added' } })).status, 201)
  assertProblem(await api.request('PATCH', `/user/${ada.id}`, { headers: bearer(bob.token), body: { password: 'st0lenPass' } }), 403)
  assertProblem(await api.request('DELETE', `/user/${ada.id}`, { headers: bearer(bob.token) }), 403)
  assertProblem(await api.request('GET', `/user/${ada.id}/permissions`, { headers: bearer(bob.token) }), 403)
  assertProblem(await api.request('POST', `/user/${ada.id}/permissions`, { headers: bearer(bob.token), body: { to: bob.id, may: 'write' } }), 403)
  // Every signed-in user, by "*": not the public.
  const carol = await registered()
  const dave = await registered()
  const carols = await playlistOf(carol)
  assertProblem(await api.request('GET', carols, { headers: bearer(dave.token) }), 403)
  await granted(carol, { to: '*', may: 'read' })
  assert.is((await api.request('GET', carols, { headers: bearer(dave.token) })).status, 200)
  assert.is((await api.request('GET', carols, { headers: bearer(bob.token) })).status, 200)
  assertProblem(await api.request('GET', carols), 401)
  assertProblem(await api.request('PUT', carols, { headers: bearer(dave.token), body: { name: 'x' } }), 403)
})

test('a grant for one collection opens that one and no other', async () => {
  const ada = await registered()
  const bob = await registered()
  const playlist = await playlistOf(ada)
  assert.is((await api.request('PUT', `/user/${ada.id}/notes/1`, { headers: bearer(ada.token), body: { text: 'private' } })).status, 201)
  await granted(ada, { to: bob.id, may: 'write', path: 'playlist' })
  assert.is((await api.request('GET', playlist, { headers: bearer(bob.token) })).status, 200)
  assert.is((await api.request('PATCH', playlist, { headers: bearer(bob.token), body: { name: 'edited' } })).status, 200)
  assertProblem(await api.request('GET', `/user/${ada.id}/notes/1`, { headers: bearer(bob.token) }), 403)
  assertProblem(await api.request('PUT', `/user/${ada.id}/notes/2`, { headers: bearer(bob.token), body: { text: 'x' } }), 403)
  assertProblem(await api.request('GET', `/user/${ada.id}`, { headers: bearer(bob.token) }), 403)
})

test('only the granting user (or the administrator) writes their grants, and a bad grant is a 400 problem', async () => {
  const ada = await registered()
  const bob = await registered()
  const grant = await granted(ada, { to: bob.id, may: 'read' })
  assertProblem(await api.request('PUT', grant, { headers: bearer(bob.token), body: { to: bob.id, may: 'write' } }), 403, /written by that user alone/)
  assertProblem(await api.request('DELETE', grant, { headers: bearer(bob.token) }), 403)
  assertProblem(await api.request('POST', `/user/${ada.id}/permissions`, { body: { to: '*', may: 'write' } }), 401)
  assert.is((await api.request('GET', grant, { headers: bearer(ada.token) })).json.may, 'read')
  for (const bad of [{ to: bob.id }, { to: '', may: 'read' }, { to: bob.id, may: 'admin' }, { to: bob.id, may: 'read', path: 'a/b' }, { to: bob.id, may: 'read', path: 'permissions' }, { to: bob.id, may: 'read', also: 1 }]) {
    assertProblem(await api.request('POST', `/user/${ada.id}/permissions`, { headers: bearer(ada.token), body: bad }), 400, /Not a grant/)
  }
  assertProblem(await api.request('PATCH', grant, { headers: bearer(ada.token), body: { may: 'write' } }), 400, /replaced whole/)
  assertProblem(await api.request('POST', `/user/${ada.id}/permissions`, { headers: bearer(ADMIN), body: { to: 7 } }), 400, /Not a grant/)
  const replaced = await api.request('PUT', grant, { headers: bearer(ADMIN), body: { to: bob.id, may: 'write', path: 'playlist' } })
  assert.is(replaced.status, 200, replaced.text)
  // A grant read, changed and sent back whole (its id included) is taken.
  const read = await api.request('GET', grant, { headers: bearer(ada.token) })
  const again = await api.request('PUT', grant, { headers: bearer(ada.token), body: { ...read.json, may: 'read' } })
  assert.is(again.status, 200, again.text)
  assert.is((await api.request('GET', grant, { headers: bearer(ada.token) })).json.may, 'read')
})

test('a family whose "access" lets every signed-in user write still lets only the user write their grants', async () => {
  const resources = { user: { id: 'user_id', unique: ['username'], access: '660', children: { playlist: { id: 'playlist_id', arrays: ['songs'] } } } }
  const server = await startServer({ auth: true, resources })
  try {
    const [ada, bob] = await Promise.all([0, 1].map(async (index) => {
      const answer = await server.request('POST', '/user', { body: { username: `open-${index}`, password: 'bestPassw0rd' } })
      assert.is(answer.status, 201, answer.text)
      return { id: answer.json.user.user_id, token: answer.json.accessToken }
    }))
    assert.is((await server.request('PUT', `/user/${ada.id}/notes/1`, { headers: bearer(bob.token), body: { text: 'the family lets him' } })).status, 201)
    assertProblem(await server.request('POST', `/user/${ada.id}/permissions`, { headers: bearer(bob.token), body: { to: bob.id, may: 'write' } }), 403, /written by that user alone/)
    assert.is((await server.request('POST', `/user/${ada.id}/permissions`, { headers: bearer(ada.token), body: { to: bob.id, may: 'read' } })).status, 201)
  } finally {
    await server.close()
  }
})

test.run()
