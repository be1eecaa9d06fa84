import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { racingStoreOptions, startServer, type TestServer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'
import { rawExchange, rawRequest } from '../support/raw-http.ts'
import { MemoryStore } from '../../lib/store/index.ts'

// docs/http-api.md, "Versions and conditional requests" (RFC 9110 §13): strong ETags on every document answer, conditional reads (304),
// optimistic locking with If-Match (412), create-only PUT with If-None-Match: *,
// and writes to one node serialized so that no read-modify-write is ever lost.

const conditional = suite<{ server: TestServer }>('conditional requests')

conditional.before(async (context) => {
  context.server = await startServer(racingStoreOptions())
})
conditional.after(async (context) => {
  await context.server.close()
})

const STRONG_ETAG = /^"[^"]+"$/

/** The document and ETag as a fresh GET sees them. */
async function current(server: TestServer, target: string): Promise<{ status: number; etag: unknown; doc: unknown }> {
  const answer = await server.request('GET', target)
  return { status: answer.status, etag: answer.headers.etag, doc: answer.json }
}

conditional('every document answer carries a strong ETag, the one a later GET gives', async ({ server }) => {
  const created = await server.request('PUT', '/cond/tagged', { body: { v: 1 } })
  assert.is(created.status, 201)
  assert.match(String(created.headers.etag), STRONG_ETAG)
  assert.is((await current(server, '/cond/tagged')).etag, created.headers.etag)

  const replaced = await server.request('PUT', '/cond/tagged', { body: { v: 2 } })
  assert.is(replaced.status, 200)
  assert.match(String(replaced.headers.etag), STRONG_ETAG)
  assert.is.not(replaced.headers.etag, created.headers.etag, 'a changed document gets a new ETag')
  assert.is((await current(server, '/cond/tagged')).etag, replaced.headers.etag)

  const patched = await server.request('PATCH', '/cond/tagged', { body: { w: true } })
  assert.is(patched.status, 200)
  assert.is.not(patched.headers.etag, replaced.headers.etag)
  assert.is((await current(server, '/cond/tagged')).etag, patched.headers.etag)

  const posted = await server.request('POST', '/cond/posts', { body: { text: 'hi' } })
  assert.is(posted.status, 201)
  assert.match(String(posted.headers.etag), STRONG_ETAG)
  assert.is((await current(server, String(posted.headers.location))).etag, posted.headers.etag)

  const head = await server.request('HEAD', '/cond/tagged')
  assert.is(head.headers.etag, patched.headers.etag, 'HEAD carries the same ETag as GET')
})

conditional('an unchanged document keeps its ETag: rewriting the same content is the same version', async ({ server }) => {
  const first = await server.request('PUT', '/cond/same', { body: { a: 1 } })
  const second = await server.request('PUT', '/cond/same', { body: { a: 1 } })
  assert.is(second.headers.etag, first.headers.etag)
})

conditional('users and playlists answer every write with the ETag of what was stored', async ({ server }) => {
  const user = await server.request('POST', '/user', { body: { name: 'Ada' } })
  assert.is(user.status, 201)
  const userUrl = String(user.headers.location)
  assert.is((await current(server, userUrl)).etag, user.headers.etag)

  const put = await server.request('PUT', userUrl, { body: { name: 'Ada King' } })
  assert.is(put.status, 200)
  assert.is((await current(server, userUrl)).etag, put.headers.etag)
  const patch = await server.request('PATCH', userUrl, { body: { title: 'Countess' } })
  assert.is(patch.status, 200)
  assert.is((await current(server, userUrl)).etag, patch.headers.etag)

  const playlist = await server.request('POST', `${userUrl}/playlist`, { body: { name: 'Focus' } })
  assert.is(playlist.status, 201)
  const playlistUrl = String(playlist.headers.location)
  assert.is((await current(server, playlistUrl)).etag, playlist.headers.etag)
  const playlistPut = await server.request('PUT', playlistUrl, { body: { name: 'Calm', songs: ['a'] } })
  assert.is((await current(server, playlistUrl)).etag, playlistPut.headers.etag)
  const playlistPatch = await server.request('PATCH', playlistUrl, { body: { songs: ['a', 'b'] } })
  assert.is((await current(server, playlistUrl)).etag, playlistPatch.headers.etag)
})

conditional('GET with a matching If-None-Match answers 304 with the ETag and no body', async ({ server }) => {
  const stored = await server.request('PUT', '/cond/cached', { body: { big: 'x'.repeat(1000) } })
  const etag = String(stored.headers.etag)
  for (const header of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
    const answer = await server.request('GET', '/cond/cached', { headers: { 'If-None-Match': header } })
    assert.is(answer.status, 304, `If-None-Match: ${header}`)
    assert.is(answer.headers.etag, etag, '304 carries the ETag (RFC 9110 §15.4.5)')
    assert.is(answer.text, '')
  }
  const head = await server.request('HEAD', '/cond/cached', { headers: { 'If-None-Match': etag } })
  assert.is(head.status, 304)
  assert.is(head.headers.etag, etag)
})

conditional('GET with a stale If-None-Match answers 200 with the current document', async ({ server }) => {
  const old = await server.request('PUT', '/cond/fresh', { body: { v: 1 } })
  const now = await server.request('PUT', '/cond/fresh', { body: { v: 2 } })
  const answer = await server.request('GET', '/cond/fresh', { headers: { 'If-None-Match': String(old.headers.etag) } })
  assert.is(answer.status, 200)
  assert.is(answer.headers.etag, now.headers.etag)
  assert.equal(answer.json, { id: 'fresh', v: 2 })
})

conditional('PUT, PATCH and DELETE with a stale If-Match are 412 and change nothing', async ({ server }) => {
  const old = await server.request('PUT', '/cond/locked', { body: { v: 1 } })
  const now = await server.request('PUT', '/cond/locked', { body: { v: 2 } })
  const stale = { 'If-Match': String(old.headers.etag) }

  assertProblem(await server.request('PUT', '/cond/locked', { body: { v: 3 }, headers: stale }), 412)
  assertProblem(await server.request('PATCH', '/cond/locked', { body: { v: 4 }, headers: stale }), 412)
  assertProblem(await server.request('DELETE', '/cond/locked', { headers: stale }), 412)
  assertProblem(await server.request('PUT', '/cond/locked', { body: { v: 5 }, headers: { 'If-Match': '"made-up", "also-wrong"' } }), 412)

  const after = await current(server, '/cond/locked')
  assert.equal(after, { status: 200, etag: now.headers.etag, doc: { id: 'locked', v: 2 } })
})

conditional('an If-Match pasted with typographic characters is quoted in the 412 as sent, and bytes that are not UTF-8 as \\xNN', async ({ server }) => {
  const stored = await server.request('PUT', '/cond/pasted', { body: { v: 1 } })
  const pasted = '\u201ckT3\u2026\u201d'
  const request = rawRequest('PUT', '/cond/pasted', { body: { v: 2 }, headers: { 'If-Match': pasted }, close: true })
  const typographic = (await rawExchange(server.port, Buffer.from(request, 'utf8'))).answers[0]
  assert.is(typographic.status, 412)
  const detail = JSON.parse(typographic.body.toString('utf8')).detail as string
  assert.ok(detail.startsWith(`If-Match ${pasted} does not match the current version`), detail)
  const notUtf8 = Buffer.from(rawRequest('PUT', '/cond/pasted', { body: { v: 3 }, headers: { 'If-Match': '"kT3\u00ff"' }, close: true }), 'latin1')
  const escaped = (await rawExchange(server.port, notUtf8)).answers[0]
  assert.is(escaped.status, 412)
  assert.ok((JSON.parse(escaped.body.toString('utf8')).detail as string).startsWith('If-Match "kT3\\xff" does not match'), escaped.body.toString())
  assert.equal(await current(server, '/cond/pasted'), { status: 200, etag: stored.headers.etag, doc: { id: 'pasted', v: 1 } })
})

conditional('a weak tag never satisfies If-Match, which compares strongly (RFC 9110 §8.8.3.2)', async ({ server }) => {
  const stored = await server.request('PUT', '/cond/weak', { body: { v: 1 } })
  const answer = await server.request('PUT', '/cond/weak', { body: { v: 2 }, headers: { 'If-Match': `W/${stored.headers.etag}` } })
  assertProblem(answer, 412)
  assert.equal((await current(server, '/cond/weak')).doc, { id: 'weak', v: 1 })
})

conditional('PUT, PATCH and DELETE with the current If-Match succeed', async ({ server }) => {
  let etag = String((await server.request('PUT', '/cond/ok', { body: { v: 1 } })).headers.etag)
  const put = await server.request('PUT', '/cond/ok', { body: { v: 2 }, headers: { 'If-Match': etag } })
  assert.is(put.status, 200)
  etag = String(put.headers.etag)
  const patch = await server.request('PATCH', '/cond/ok', { body: { w: 1 }, headers: { 'If-Match': `"nope", ${etag}` } })
  assert.is(patch.status, 200)
  assert.equal(patch.json, { id: 'ok', v: 2, w: 1 })
  const star = await server.request('PATCH', '/cond/ok', { body: { x: 1 }, headers: { 'If-Match': '*' } })
  assert.is(star.status, 200)
  const remove = await server.request('DELETE', '/cond/ok', { headers: { 'If-Match': String(star.headers.etag) } })
  assert.is(remove.status, 200)
  assert.is((await current(server, '/cond/ok')).status, 404)
})

conditional('If-Match on a node without a document: PUT is 412 and creates nothing', async ({ server }) => {
  for (const header of ['*', '"anything"']) {
    assertProblem(await server.request('PUT', '/cond/absent', { body: { v: 1 }, headers: { 'If-Match': header } }), 412)
    assert.is((await current(server, '/cond/absent')).status, 404)
  }
})

conditional('a request that would fail anyway keeps its own answer whatever its preconditions (RFC 9110 §13.2.1)', async ({ server }) => {
  assertProblem(await server.request('PATCH', '/cond/never', { body: { v: 1 }, headers: { 'If-Match': '"x"' } }), 404)
  assertProblem(await server.request('DELETE', '/cond/never', { headers: { 'If-Match': '"x"' } }), 404)
  assertProblem(await server.request('PUT', '/user/nobody', { body: {}, headers: { 'If-Match': '"x"' } }), 404)
  await server.request('POST', '/user', { body: { username: 'taken-name' } })
  const other = await server.request('POST', '/user', { body: { username: 'free-name' } })
  const clash = await server.request('PATCH', String(other.headers.location), {
    body: { username: 'taken-name' },
    headers: { 'If-Match': '"stale"' },
  })
  assertProblem(clash, 409)
})

conditional('If-Match on DELETE of a node with children but no document is 412 and removes nothing', async ({ server }) => {
  await server.request('PUT', '/cond/folder/child', { body: { v: 1 } })
  assertProblem(await server.request('DELETE', '/cond/folder', { headers: { 'If-Match': '*' } }), 412)
  assert.is((await current(server, '/cond/folder/child')).status, 200)
})

conditional('If-None-Match: * makes PUT create only: 201 when absent, 412 and unchanged when present', async ({ server }) => {
  const createOnly = { 'If-None-Match': '*' }
  const first = await server.request('PUT', '/cond/once', { body: { v: 1 }, headers: createOnly })
  assert.is(first.status, 201)
  assert.is(first.headers.location, '/cond/once')
  const second = await server.request('PUT', '/cond/once', { body: { v: 2 }, headers: createOnly })
  assertProblem(second, 412)
  assert.equal(await current(server, '/cond/once'), { status: 200, etag: first.headers.etag, doc: { id: 'once', v: 1 } })
})

conditional('If-None-Match with the current ETag on PUT is 412 (RFC 9110 §13.1.2)', async ({ server }) => {
  const stored = await server.request('PUT', '/cond/inm', { body: { v: 1 } })
  assertProblem(await server.request('PUT', '/cond/inm', { body: { v: 2 }, headers: { 'If-None-Match': String(stored.headers.etag) } }), 412)
  const other = await server.request('PUT', '/cond/inm', { body: { v: 3 }, headers: { 'If-None-Match': '"something-else"' } })
  assert.is(other.status, 200)
})

conditional('stale If-Match on users and playlists is 412 and leaves them as they were', async ({ server }) => {
  const user = await server.request('POST', '/user', { body: { name: 'Grace' } })
  const userUrl = String(user.headers.location)
  const stale = { 'If-Match': String(user.headers.etag) }
  const changed = await server.request('PATCH', userUrl, { body: { name: 'Grace Hopper' } })
  assertProblem(await server.request('PUT', userUrl, { body: { name: 'x' }, headers: stale }), 412)
  assertProblem(await server.request('PATCH', userUrl, { body: { name: 'y' }, headers: stale }), 412)
  assertProblem(await server.request('DELETE', userUrl, { headers: stale }), 412)
  assert.equal((await current(server, userUrl)).doc, changed.json)

  const playlist = await server.request('POST', `${userUrl}/playlist`, { body: { songs: [1] } })
  const playlistUrl = String(playlist.headers.location)
  await server.request('PATCH', playlistUrl, { body: { songs: [1, 2] } })
  const staleList = { 'If-Match': String(playlist.headers.etag) }
  assertProblem(await server.request('PUT', playlistUrl, { body: { songs: [] }, headers: staleList }), 412)
  assertProblem(await server.request('PATCH', playlistUrl, { body: { songs: [] }, headers: staleList }), 412)
  assertProblem(await server.request('DELETE', playlistUrl, { headers: staleList }), 412)
  assert.equal(((await current(server, playlistUrl)).doc as { songs: unknown }).songs, [1, 2])
})

conditional('optimistic locking: of many writers holding one ETag, exactly one wins', async ({ server }) => {
  const base = await server.request('PUT', '/cond/race', { body: { winner: null } })
  const writers = 24
  const answers = await Promise.all(
    Array.from({ length: writers }, (_, index) =>
      server.request('PUT', '/cond/race', { body: { winner: index }, headers: { 'If-Match': String(base.headers.etag) } }),
    ),
  )
  const winners = answers.filter((answer) => answer.status === 200)
  assert.is(winners.length, 1, `statuses: ${answers.map((answer) => answer.status).join(' ')}`)
  for (const answer of answers) if (answer.status !== 200) assertProblem(answer, 412)
  assert.equal(await current(server, '/cond/race'), { status: 200, etag: winners[0].headers.etag, doc: winners[0].json })
})

conditional('concurrent PATCHes to one node all land: no read-modify-write is lost', async ({ server }) => {
  await server.request('PUT', '/cond/counter', { body: {} })
  const writers = 40
  const answers = await Promise.all(
    Array.from({ length: writers }, (_, index) => server.request('PATCH', '/cond/counter', { body: { [`k${index}`]: index } })),
  )
  assert.ok(answers.every((answer) => answer.status === 200))
  const doc = (await current(server, '/cond/counter')).doc as Record<string, unknown>
  for (let index = 0; index < writers; index++) assert.is(doc[`k${index}`], index, `k${index} was lost`)
})

conditional('concurrent PATCHes to one user all land too', async ({ server }) => {
  const user = await server.request('POST', '/user', { body: {} })
  const userUrl = String(user.headers.location)
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, index) => server.request('PATCH', userUrl, { body: { [`f${index}`]: true } })),
  )
  assert.ok(answers.every((answer) => answer.status === 200))
  const doc = (await current(server, userUrl)).doc as Record<string, unknown>
  for (let index = 0; index < 20; index++) assert.is(doc[`f${index}`], true, `f${index} was lost`)
})

conditional('concurrent claims of one username: exactly one user gets it, the others 409', async ({ server }) => {
  const users = await Promise.all(Array.from({ length: 12 }, () => server.request('POST', '/user', { body: {} })))
  const claims = await Promise.all(
    users.map((user, index) =>
      index % 2 === 0
        ? server.request('PATCH', String(user.headers.location), { body: { username: 'highlander' } })
        : server.request('PUT', String(user.headers.location), { body: { username: 'highlander' } }),
    ),
  )
  const created = await Promise.all(Array.from({ length: 6 }, () => server.request('POST', '/user', { body: { username: 'highlander' } })))
  const all = [...claims, ...created]
  assert.is(all.filter((answer) => answer.status === 200 || answer.status === 201).length, 1, all.map((a) => a.status).join(' '))
  for (const answer of all) if (answer.status >= 300) assertProblem(answer, 409)
  const holders = ((await server.request('GET', '/user')).json as Array<{ username?: string }>).filter((user) => user.username === 'highlander')
  assert.is(holders.length, 1)
})

conditional('concurrent POSTs to one collection create as many distinct documents', async ({ server }) => {
  const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => server.request('POST', '/cond/many', { body: { index } })))
  assert.ok(answers.every((answer) => answer.status === 201))
  const ids = new Set(answers.map((answer) => answer.json.id))
  assert.is(ids.size, 50)
  const listed = (await server.request('GET', '/cond/many')).json as Array<{ index: number }>
  assert.equal(listed.map((doc) => doc.index).sort((a, b) => a - b), Array.from({ length: 50 }, (_, index) => index))
})

conditional('concurrent PUTs to one node leave exactly one of the writes, whole', async ({ server }) => {
  const payloads = Array.from({ length: 30 }, (_, index) => ({ writer: index, fill: String(index).repeat(2000) }))
  const answers = await Promise.all(payloads.map((body) => server.request('PUT', '/cond/torn', { body })))
  assert.ok(answers.every((answer) => answer.status === 200 || answer.status === 201))
  assert.is(answers.filter((answer) => answer.status === 201).length, 1, 'exactly one PUT created the document')
  const after = await current(server, '/cond/torn')
  const doc = after.doc as { writer: number; fill: string }
  assert.equal(doc, { id: 'torn', ...payloads[doc.writer] })
  assert.ok(answers.some((answer) => answer.headers.etag === after.etag))
})

conditional.run()

const subtrees = suite('a subtree DELETE and other writes')

subtrees('a DELETE of a subtree holds up no write outside it: a PUT elsewhere answers while the removal runs', async () => {
  // The store's removal waits, once under way, until the PUT has answered (or three seconds, if the PUT waits for it).
  let removing!: () => void
  const underWay = new Promise<void>((resolve) => (removing = resolve))
  let putAnswered!: () => void
  const answered = new Promise<void>((resolve) => (putAnswered = resolve))
  const pause = async (operation: 'write' | 'remove') => {
    if (operation !== 'remove') return
    removing()
    await Promise.race([answered, new Promise((resolve) => setTimeout(resolve, 3000))])
  }
  const server = await startServer({ store: new MemoryStore({ pause }) })
  try {
    for (let index = 0; index < 20; index++) await server.request('PUT', `/big/${index}/leaf`, { body: { index } })
    const order: string[] = []
    const deletion = server.request('DELETE', '/big').then((answer) => {
      order.push('DELETE')
      return answer
    })
    await underWay
    const put = await server.request('PUT', '/elsewhere/note', { body: { text: 'written meanwhile' } })
    order.push('PUT')
    putAnswered()
    assert.is(put.status, 201)
    assert.is((await deletion).status, 204)
    assert.equal(order, ['PUT', 'DELETE'])
    assert.is((await server.request('GET', '/big/3/leaf')).status, 404)
    assert.is((await server.request('GET', '/elsewhere/note')).status, 200)
  } finally {
    await server.close()
  }
})

subtrees.run()
