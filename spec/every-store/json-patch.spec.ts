import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { collectGarbage, racingStoreOptions, startServer, type Answer, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem } from '../support/assertions.ts'

// JSON Patch (RFC 6902) on every PATCH-able URL (docs/http-api.md, "PATCH"):
// `Content-Type: application/json-patch+json`, applied atomically to the
// document as stored, under the rules any write keeps.

const JSON_PATCH = { 'content-type': 'application/json-patch+json' }
const ACCEPT_PATCH = 'application/merge-patch+json, application/json-patch+json'

let api: TestServer
let jsonServer: TestServer

test.before(async () => {
  api = await startServer(racingStoreOptions())
  jsonServer = await startServer({ jsonServer: true })
})
test.after(async () => {
  await api.close()
  await jsonServer.close()
})

function jsonPatch(target: string, operations: unknown, headers: Record<string, string> = {}, server = api): Promise<Answer> {
  return server.request('PATCH', target, { body: JSON.stringify(operations), headers: { ...JSON_PATCH, ...headers } })
}

async function put(target: string, doc: unknown): Promise<Answer> {
  const answer = await api.request('PUT', target, { body: doc })
  assert.ok(answer.status === 200 || answer.status === 201, answer.text)
  return answer
}

/** Asserts that the document at `target` is still `before`, to its ETag. */
async function assertUnchanged(target: string, before: Answer): Promise<void> {
  const now = await api.request('GET', target)
  assert.equal(now.json, before.json)
  assert.is(now.headers.etag, before.headers.etag)
}

test('add puts a member and an array element in place, and the answer is the stored document with its new ETag', async () => {
  const before = await put('/jp/add', { title: 'a', tags: ['x', 'z'] })
  const answer = await jsonPatch('/jp/add', [{ op: 'add', path: '/author', value: 'ada' }, { op: 'add', path: '/tags/1', value: 'y' }])
  assertJson(answer, 200, { id: 'add', title: 'a', tags: ['x', 'y', 'z'], author: 'ada' })
  assert.is.not(answer.headers.etag, before.headers.etag)
  const read = await api.request('GET', '/jp/add')
  assert.equal(read.json, answer.json)
  assert.is(read.headers.etag, answer.headers.etag)
})

test('remove takes a member and an array element away', async () => {
  await put('/jp/remove', { title: 'a', draft: true, tags: ['x', 'y'] })
  assertJson(await jsonPatch('/jp/remove', [{ op: 'remove', path: '/draft' }, { op: 'remove', path: '/tags/0' }]), 200, { id: 'remove', title: 'a', tags: ['y'] })
})

test('replace changes a value where it is', async () => {
  await put('/jp/replace', { title: 'a', n: 1 })
  const answer = await jsonPatch('/jp/replace', [{ op: 'replace', path: '/title', value: { nested: [1] } }])
  assertJson(answer, 200, { id: 'replace', title: { nested: [1] }, n: 1 })
  assert.equal(Object.keys(answer.json), ['id', 'title', 'n'])
})

test('move takes a value from one place to another', async () => {
  await put('/jp/move', { draft: { body: 'text' }, published: {} })
  assertJson(await jsonPatch('/jp/move', [{ op: 'move', from: '/draft/body', path: '/published/body' }]), 200, { id: 'move', draft: {}, published: { body: 'text' } })
})

test('copy duplicates a value', async () => {
  await put('/jp/copy', { original: { a: [1, 2] } })
  assertJson(await jsonPatch('/jp/copy', [{ op: 'copy', from: '/original', path: '/backup' }]), 200, { id: 'copy', original: { a: [1, 2] }, backup: { a: [1, 2] } })
})

test('test that holds lets the operations after it apply', async () => {
  await put('/jp/test', { version: 3, title: 'a' })
  assertJson(await jsonPatch('/jp/test', [{ op: 'test', path: '/version', value: 3 }, { op: 'replace', path: '/title', value: 'b' }]), 200, { id: 'test', version: 3, title: 'b' })
})

test('a failing test is 409 naming the operation, and the document is unchanged', async () => {
  const before = await put('/jp/test-fails', { version: 3, title: 'a' })
  const answer = await jsonPatch('/jp/test-fails', [{ op: 'replace', path: '/title', value: 'b' }, { op: 'test', path: '/version', value: 2 }])
  assertProblem(answer, 409, /Operation 1 \("test"\): the value at "\/version" is not 2/)
  await assertUnchanged('/jp/test-fails', before)
})

test('a patch whose third operation fails leaves the document as it was: none of its operations apply', async () => {
  const before = await put('/jp/atomic', { a: 1, list: [1] })
  const answer = await jsonPatch('/jp/atomic', [
    { op: 'add', path: '/b', value: 2 },
    { op: 'remove', path: '/list/0' },
    { op: 'replace', path: '/missing', value: 3 },
  ])
  assertProblem(answer, 400, /Operation 2 \("replace"\): "path" "\/missing" names nothing/)
  await assertUnchanged('/jp/atomic', before)
})

test('a malformed patch is 400 naming the operation by index and op, and nothing changes', async () => {
  const before = await put('/jp/malformed', { a: { b: 1 } })
  const cases: Array<[unknown, RegExp]> = [
    [[{ op: 'test', path: '/a/b', value: 1 }, { op: 'rename', path: '/a' }], /Operation 1 \("rename"\): "op" must be one of add, remove, replace, move, copy, test/],
    [[{ op: 'remove', path: 'a/b' }], /Operation 0 \("remove"\): "path" "a\/b" is not a JSON Pointer/],
    [[{ op: 'remove', path: '/a/~2' }], /Operation 0 \("remove"\): "path" "\/a\/~2" is not a JSON Pointer/],
    [[{ op: 'add', path: '/x/y', value: 1 }], /Operation 0 \("add"\): "path" "\/x" names nothing/],
    [[{ op: 'add', path: '/c' }], /Operation 0 \("add"\): it has no "value"/],
    [[{ op: 'copy', path: '/c' }], /Operation 0 \("copy"\): it has no "from"/],
    [[{ op: 'move', from: '/nothing', path: '/c' }], /Operation 0 \("move"\): "from" "\/nothing" names nothing/],
    [{ op: 'add', path: '/c', value: 1 }, /a JSON Patch is an array of operations, not a object/],
    [[{ path: '/c' }], /Operation 0: it has no "op" string/],
  ]
  for (const [operations, detail] of cases) assertProblem(await jsonPatch('/jp/malformed', operations), 400, detail)
  await assertUnchanged('/jp/malformed', before)
})

test('a patch must leave a JSON object: replacing the whole document by an array is 400', async () => {
  const before = await put('/jp/whole', { a: 1 })
  assertProblem(await jsonPatch('/jp/whole', [{ op: 'replace', path: '', value: [1] }]), 400, /would leave an array; a document is a JSON object/)
  await assertUnchanged('/jp/whole', before)
  assertJson(await jsonPatch('/jp/whole', [{ op: 'replace', path: '', value: { b: 2 } }]), 200, { id: 'whole', b: 2 })
})

test('a patch cannot change a document\'s id: it follows the URL', async () => {
  const before = await put('/jp/ids', { a: 1 })
  assertProblem(await jsonPatch('/jp/ids', [{ op: 'replace', path: '/id', value: 'other' }]), 400, /differs from the URL's last segment "ids"/)
  await assertUnchanged('/jp/ids', before)
  // Left out, the id is the URL's again, as in a PUT.
  assertJson(await jsonPatch('/jp/ids', [{ op: 'remove', path: '/id' }]), 200, { id: 'ids', a: 1 })
})

test('a PATCH of another media type is 415 with Accept-Patch naming both patch types', async () => {
  await put('/jp/type', { a: 1 })
  const answer = await api.request('PATCH', '/jp/type', { body: 'a=2', headers: { 'content-type': 'text/plain' } })
  assertProblem(answer, 415, /application\/merge-patch\+json .*application\/json-patch\+json/)
  assert.is(answer.headers['accept-patch'], ACCEPT_PATCH)
  const untyped = await api.request('PATCH', '/jp/type', { body: '{"a":2}' })
  assertProblem(untyped, 415, /no Content-Type/)
  assert.is(untyped.headers['accept-patch'], ACCEPT_PATCH)
})

test('OPTIONS of a patchable resource lists Accept-Patch; the root, which takes no PATCH, does not', async () => {
  const user = await api.request('POST', '/user', { body: {} })
  const playlist = await api.request('POST', `${user.headers.location}/playlist`, { body: {} })
  for (const target of ['/jp/anything', String(user.headers.location), String(playlist.headers.location)]) {
    const answer = await api.request('OPTIONS', target)
    assert.is(answer.status, 204, target)
    assert.match(String(answer.headers.allow), /PATCH/)
    assert.is(answer.headers['accept-patch'], ACCEPT_PATCH, target)
  }
  const root = await api.request('OPTIONS', '/')
  assert.is(root.status, 204)
  assert.is(root.headers['accept-patch'], undefined)
})

test('If-Match holds for a JSON Patch: another version is 412 and nothing changes, the current one applies', async () => {
  const before = await put('/jp/if-match', { n: 1 })
  assertProblem(await jsonPatch('/jp/if-match', [{ op: 'replace', path: '/n', value: 2 }], { 'if-match': '"not-the-version"' }), 412)
  await assertUnchanged('/jp/if-match', before)
  assertJson(await jsonPatch('/jp/if-match', [{ op: 'replace', path: '/n', value: 2 }], { 'if-match': String(before.headers.etag) }), 200, { id: 'if-match', n: 2 })
})

test('concurrent JSON Patches to one document all land: each applies to the document as stored', async () => {
  await put('/jp/counter', { list: [] })
  const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => jsonPatch('/jp/counter', [{ op: 'add', path: '/list/-', value: index }])))
  assert.ok(answers.every((answer) => answer.status === 200), answers.map((answer) => answer.status).join(' '))
  const list = (await api.request('GET', '/jp/counter')).json.list as number[]
  assert.equal([...list].sort((a, b) => a - b), Array.from({ length: 20 }, (_, index) => index))
})

test('a "__proto__" key a patch adds is stored as plain data', async () => {
  await put('/jp/proto', {})
  const answer = await jsonPatch('/jp/proto', [{ op: 'add', path: '/__proto__', value: { admin: true } }, { op: 'copy', from: '/__proto__', path: '/copy' }])
  assertJson(answer, 200)
  assert.is(answer.text, '{"id":"proto","__proto__":{"admin":true},"copy":{"admin":true}}\n')
  assert.is((await api.request('GET', '/jp/proto')).text, answer.text)
})

test('a value a patch would not store exactly as sent is refused, as in any body', async () => {
  const before = await put('/jp/exact', { n: 1 })
  const answer = await api.request('PATCH', '/jp/exact', { body: '[{"op":"replace","path":"/n","value":0.30000000000000001}]', headers: JSON_PATCH })
  assertProblem(answer, 400, /would not be stored exactly as sent/)
  await assertUnchanged('/jp/exact', before)
})

test('a user\'s username stays unique through a JSON Patch, and its user_id cannot change', async () => {
  await api.request('POST', '/user', { body: { username: 'jp-taken' } })
  const user = await api.request('POST', '/user', { body: { username: 'jp-mine' } })
  const url = String(user.headers.location)
  assertProblem(await jsonPatch(url, [{ op: 'replace', path: '/username', value: 'jp-taken' }]), 409, /username "jp-taken" is taken/)
  assertProblem(await jsonPatch(url, [{ op: 'replace', path: '/username', value: '' }]), 400, /username/)
  assertProblem(await jsonPatch(url, [{ op: 'replace', path: '/user_id', value: 'someone' }]), 400, /user_id cannot be changed/)
  assertJson(await api.request('GET', url), 200, user.json)
  assertJson(await jsonPatch(url, [{ op: 'replace', path: '/username', value: 'jp-free' }]), 200, { user_id: user.json.user_id, username: 'jp-free' })
})

test('a playlist\'s songs stay an array through a JSON Patch', async () => {
  const user = await api.request('POST', '/user', { body: {} })
  const playlist = await api.request('POST', `${user.headers.location}/playlist`, { body: { songs: ['a'] } })
  const url = String(playlist.headers.location)
  assertProblem(await jsonPatch(url, [{ op: 'replace', path: '/songs', value: 'b' }]), 400, /songs/)
  assertProblem(await jsonPatch(url, [{ op: 'replace', path: '/playlist_id', value: 'other' }]), 400, /playlist_id cannot be changed/)
  assertJson(await api.request('GET', url), 200, playlist.json)
  const answer = await jsonPatch(url, [{ op: 'add', path: '/songs/-', value: { title: 'b' } }])
  assertJson(answer, 200, { ...playlist.json, songs: ['a', { title: 'b' }] })
})

test('the json-server mode\'s PATCH takes a JSON Patch too, keeping the member\'s id (an operation on it is set aside, as the mode sets aside an id in any body)', async () => {
  const created = await jsonServer.request('POST', '/posts', { body: { title: 'a', tags: [] } })
  assert.is(created.status, 201)
  const url = String(created.headers.location)
  const answer = await jsonPatch(url, [{ op: 'add', path: '/tags/-', value: 'x' }, { op: 'remove', path: '/title' }], {}, jsonServer)
  assertJson(answer, 200, { id: created.json.id, tags: ['x'] })
  assertProblem(await jsonPatch(url, [{ op: 'test', path: '/tags', value: [] }], {}, jsonServer), 409)
  assertJson(await jsonPatch(url, [{ op: 'replace', path: '/id', value: 99 }, { op: 'add', path: '/tags/-', value: 'y' }], {}, jsonServer), 200, { id: created.json.id, tags: ['x', 'y'] })
  assertJson(await jsonServer.request('GET', url), 200, { id: created.json.id, tags: ['x', 'y'] })
})

/** Megabytes the process holds now, after a collection. */
function residentMegabytes(): number {
  collectGarbage()
  return process.memoryUsage().rss / 1024 / 1024
}

test('copies that would make a document larger than --max-body are a 413 before they are made: 100 copies of a 900 KB string, 11 of the whole document', async () => {
  const before = await put('/jp/amplified', { t: 'x'.repeat(900_000) })
  const resident = residentMegabytes()
  const copies = Array.from({ length: 100 }, (_, index) => ({ op: 'copy', from: '/t', path: `/c${index}` }))
  const refused = await jsonPatch('/jp/amplified', copies)
  assertProblem(refused, 413, /^The JSON Patch would make the document too large \(--max-body\), so nothing was changed\. Operation 0 \("copy"\): the document would become larger than 1048576 characters of JSON/)
  await assertUnchanged('/jp/amplified', before)
  // Each whole-document copy doubles it: 11 of them, 2 048 times the document.
  const wholeBefore = await put('/jp/doubled', { t: 'x'.repeat(300_000), list: Array.from({ length: 1000 }, (_, index) => ({ index })) })
  const doublings = Array.from({ length: 11 }, (_, index) => ({ op: 'copy', from: '', path: `/copy${index}` }))
  assertProblem(await jsonPatch('/jp/doubled', doublings), 413, /Operation 1 \("copy"\): the document would become larger/)
  await assertUnchanged('/jp/doubled', wholeBefore)
  // A fixed figure: the copies made, each a new string in the stored text, took hundreds of megabytes.
  const grown = residentMegabytes() - resident
  assert.ok(grown < 150, `the process grew by ${grown.toFixed(0)} MB`)
  // What fits is copied.
  assertJson(await jsonPatch('/jp/doubled', [{ op: 'copy', from: '/list/0', path: '/first' }]), 200)
})

test('inside a batch, a JSON Patch that would make a document larger than --max-body is the batch\'s 413, and nothing is stored', async () => {
  const before = await put('/jp/batched', { t: 'y'.repeat(900_000) })
  const copies = Array.from({ length: 100 }, (_, index) => ({ op: 'copy', from: '/t', path: `/c${index}` }))
  const answer = await api.request('POST', '/?_batch', { body: { requests: [
    { method: 'PUT', path: '/jp/batched-other', body: { a: 1 } },
    { method: 'PATCH', path: '/jp/batched', body: copies, headers: JSON_PATCH },
  ] } })
  assert.is(answer.status, 413, answer.text)
  assert.is(answer.json.index, 1)
  assert.match(answer.json.detail, /Request 1 of the batch \(PATCH \/jp\/batched\) failed, so nothing of the batch was stored: The JSON Patch would make the document too large/)
  await assertUnchanged('/jp/batched', before)
  assert.is((await api.request('GET', '/jp/batched-other')).status, 404)
})

/**
 * Sends a small GET one after another while `work` runs, and answers the
 * slowest of them: a request that holds the event loop makes one wait for all of it.
 */
async function slowestGetDuring(work: Promise<Answer>): Promise<{ answer: Answer; slowest: number; count: number }> {
  let answer: Answer | undefined
  const running = work.then((done) => (answer = done))
  const waits: number[] = []
  while (answer === undefined) {
    const sent = performance.now()
    assert.is((await api.request('GET', '/jp/small')).status, 200)
    waits.push(performance.now() - sent)
  }
  await running
  return { answer, slowest: Math.max(...waits), count: waits.length }
}

test('a JSON Patch of many operations on a big array holds no one: a small GET meanwhile is answered within a second', async () => {
  await put('/jp/small', { a: 1 })
  await put('/jp/big-array', { a: Array.from({ length: 200_000 }, () => 0) })
  // 3 000 moves from the front to the back: each shifts the whole array twice (600 of them held the server for a second).
  const moves = Array.from({ length: 3000 }, () => ({ op: 'move', from: '/a/0', path: '/a/-' }))
  const moved = await slowestGetDuring(jsonPatch('/jp/big-array', moves))
  assertJson(moved.answer, 200)
  assert.is(moved.answer.json.a.length, 200_000)
  // 30 000 removals from the front, each shifting what is left (15 000 of them held the server for most of a second).
  const removals = Array.from({ length: 30_000 }, () => ({ op: 'remove', path: '/a/0' }))
  const removed = await slowestGetDuring(jsonPatch('/jp/big-array', removals))
  assertJson(removed.answer, 200)
  assert.is(removed.answer.json.a.length, 170_000)
  console.log(`  moves: ${moved.count} GETs, the slowest ${moved.slowest.toFixed(0)} ms; removals: ${removed.count} GETs, the slowest ${removed.slowest.toFixed(0)} ms`)
  // A fixed figure, not a share of the patch's time: applied in one step, either patch holds every GET for seconds.
  assert.ok(moved.slowest < 1000, `a GET waited ${moved.slowest.toFixed(0)} ms during the moves`)
  assert.ok(removed.slowest < 1000, `a GET waited ${removed.slowest.toFixed(0)} ms during the removals`)
})

test('a merge patch still merges, under either JSON type', async () => {
  await put('/jp/merge', { a: { b: 1, c: 2 } })
  assertJson(await api.request('PATCH', '/jp/merge', { body: { a: { c: null } }, headers: { 'content-type': 'application/merge-patch+json' } }), 200, { id: 'merge', a: { b: 1 } })
  assertJson(await api.request('PATCH', '/jp/merge', { body: { d: 1 } }), 200, { id: 'merge', a: { b: 1 }, d: 1 })
})

test.run()
