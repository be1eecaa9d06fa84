import { suite, test } from 'uvu'
import * as assert from 'uvu/assert'
import { racingStoreOptions, startServer, type Answer, type TestServer } from '../support/helpers.ts'
import { openStream } from '../support/event-stream.ts'

// docs/http-api.md, "Batches": POST /?_batch applies several writes all or none, on every store.

const batch = suite<{ server: TestServer }>('batches')

batch.before(async (context) => {
  context.server = await startServer(racingStoreOptions())
})
batch.after(async (context) => {
  await context.server.close()
})

type Request = { method: string; path: string; body?: unknown; headers?: Record<string, string> }

function send(server: TestServer, requests: Request[]): Promise<Answer> {
  return server.request('POST', '/?_batch', { body: { requests } })
}

/** The problem answer of a failed batch: its status, and the failed request's index. */
function assertFailedAt(answer: Answer, status: number, index: number): void {
  assert.is(answer.status, status, answer.text)
  assert.is(answer.headers['content-type'], 'application/problem+json')
  assert.is(answer.json.index, index, answer.text)
  assert.match(answer.json.detail, `Request ${index} of the batch`)
}

batch('a response carries the headers its request alone is answered with: Location, ETag and Content-Type', async ({ server }) => {
  const alone = await server.request('PUT', '/bh/alone', { body: { n: 1 } })
  const answer = await send(server, [{ method: 'PUT', path: '/bh/batched', body: { n: 1 } }])
  assert.is(answer.status, 200, answer.text)
  const [put] = answer.json.responses
  assert.is(put.status, alone.status)
  assert.equal(put.headers, { ETag: put.headers.ETag, Location: '/bh/batched', 'Content-Type': alone.headers['content-type'] })
  assert.is((await server.request('GET', '/bh/batched')).headers.etag, put.headers.ETag)
})

batch('each request is answered as it alone would be, and a later one sees what an earlier POST made through $N.id', async ({ server }) => {
  const answer = await send(server, [
    { method: 'POST', path: '/b1/orders', body: { item: 'lamp' } },
    { method: 'PATCH', path: '/b1/orders/$0.id', body: { paid: true } },
    { method: 'PUT', path: '/b1/links/first', body: { order: '$0.id' } },
    { method: 'DELETE', path: '/b1/links/first' },
  ])
  assert.is(answer.status, 200, answer.text)
  const [created, patched, put, deleted] = answer.json.responses
  assert.is(created.status, 201)
  const id = created.body.id
  assert.is(created.headers.Location, `/b1/orders/${id}`)
  assert.equal(patched.body, { id, item: 'lamp', paid: true })
  assert.equal(put.body, { id: 'first', order: id })
  assert.is(deleted.status, 200)
  const stored = await server.request('GET', `/b1/orders/${id}`)
  assert.equal(stored.json, { id, item: 'lamp', paid: true })
  assert.is(stored.headers.etag, patched.headers.ETag, 'the ETag answered inside the batch is the stored one')
  assert.is((await server.request('GET', '/b1/links/first')).status, 404)
})

batch('a failing request at any position stores nothing of its batch, and the answer names it by index', async ({ server }) => {
  const put = await server.request('PUT', '/b2/kept', { body: { n: 1 } })
  assert.is((await server.request('PUT', '/b2/gone', { body: { n: 0 } })).status, 201)
  const good: Request[] = [
    { method: 'PUT', path: '/b2/new', body: { n: 1 } },
    { method: 'PATCH', path: '/b2/kept', body: { n: 2 }, headers: { 'If-Match': String(put.headers.etag) } },
    { method: 'POST', path: '/b2/made', body: { n: 3 } },
    { method: 'DELETE', path: '/b2/gone' },
  ]
  const failures: [Request, number][] = [
    [{ method: 'PATCH', path: '/b2/kept', body: { n: 9 }, headers: { 'If-Match': '"stale"' } }, 412],
    [{ method: 'PATCH', path: '/b2/missing', body: { n: 9 } }, 404],
    [{ method: 'PUT', path: '/b2/odd', body: { id: 'other' } }, 400],
    [{ method: 'POST', path: '/user/nobody/playlist', body: { name: 'x' } }, 404],
  ]
  for (const [failing, status] of failures) {
    for (let position = 0; position <= good.length; position++) {
      const requests = [...good.slice(0, position), failing, ...good.slice(position)]
      assertFailedAt(await send(server, requests), status, position)
      assert.equal((await server.request('GET', '/b2/kept')).json, { id: 'kept', n: 1 }, `${failing.method} ${failing.path} at ${position}`)
      assert.is((await server.request('GET', '/b2/new')).status, 404)
      assert.is((await server.request('GET', '/b2/made')).status, 404)
      assert.is((await server.request('GET', '/b2/gone')).status, 200)
    }
  }
})

batch('declared rules hold inside a batch: a username taken by an earlier request of it is a 409, and a playlist needs its user', async ({ server }) => {
  const taken = await send(server, [
    { method: 'POST', path: '/user', body: { username: 'twin-b3' } },
    { method: 'POST', path: '/user', body: { username: 'twin-b3' } },
  ])
  assertFailedAt(taken, 409, 1)
  assert.is((await server.request('GET', '/user?username=twin-b3')).json.length, 0)
  const made = await send(server, [
    { method: 'POST', path: '/user', body: { username: 'owner-b3' } },
    { method: 'POST', path: '/user/$0.id/playlist', body: { name: 'mix' } },
  ])
  assert.is(made.status, 200, made.text)
  const user = made.json.responses[0].body.user_id
  assert.is((await server.request('GET', `/user/${user}/playlist`)).json.length, 1)
})

batch('a batch over the limit is a 413, a malformed one a 400, and a placeholder must name an earlier request that made something', async ({ server }) => {
  const many = Array.from({ length: 1001 }, (_, n) => ({ method: 'PUT', path: `/b4/n${n}`, body: {} }))
  assert.is((await send(server, many)).status, 413)
  assert.is((await server.request('GET', '/b4')).status, 404)
  assert.is((await server.request('POST', '/?_batch', { body: { requests: 'no' } })).status, 400)
  assertFailedAt(await send(server, [{ method: 'GET', path: '/b4/x' }]), 400, 0)
  assertFailedAt(await send(server, [{ method: 'PUT', path: '/b4/x', body: {}, headers: { Authorization: 'x' } }]), 400, 0)
  assertFailedAt(await send(server, [{ method: 'PUT', path: '/b4/$0.id', body: {} }]), 400, 0)
  assertFailedAt(await send(server, [{ method: 'DELETE', path: '/b4/none' }]), 404, 0)
})

batch('a batch of 1000 requests is applied whole', async ({ server }) => {
  const many = Array.from({ length: 1000 }, (_, n) => ({ method: 'PUT', path: `/b5/n${n}`, body: { n } }))
  const answer = await send(server, many)
  assert.is(answer.status, 200, answer.text.slice(0, 300))
  assert.is(answer.json.responses.length, 1000)
  assert.is((await server.request('GET', '/b5')).headers['x-total-count'], '1000')
})

batch('clients moving units between counters with If-Match conserve the total, and every acknowledged batch is applied once', async ({ server }) => {
  const counters = ['a', 'b', 'c']
  for (const name of counters) assert.is((await server.request('PUT', `/b6/counter/${name}`, { body: { n: 100 } })).status, 201)
  let acknowledged = 0
  let refused = 0
  const client = async (seed: number) => {
    for (let move = 0; move < 8; move++) {
      const from = counters[(seed + move) % 3]
      const to = counters[(seed + move + 1) % 3]
      for (;;) {
        const [source, target] = await Promise.all([server.request('GET', `/b6/counter/${from}`), server.request('GET', `/b6/counter/${to}`)])
        const answer = await send(server, [
          { method: 'PATCH', path: `/b6/counter/${from}`, body: { n: source.json.n - 1 }, headers: { 'If-Match': String(source.headers.etag) } },
          { method: 'PATCH', path: `/b6/counter/${to}`, body: { n: target.json.n + 1 }, headers: { 'If-Match': String(target.headers.etag) } },
          { method: 'POST', path: '/b6/moves', body: { from, to } },
        ])
        if (answer.status === 412) {
          refused++
          continue
        }
        assert.is(answer.status, 200, answer.text)
        acknowledged++
        break
      }
    }
  }
  await Promise.all([0, 1, 2, 3, 4].map(client))
  const moves = (await server.request('GET', '/b6/moves')).json as { from: string; to: string }[]
  assert.is(moves.length, acknowledged, 'one move recorded per acknowledged batch')
  let total = 0
  for (const name of counters) {
    const n = (await server.request('GET', `/b6/counter/${name}`)).json.n
    const expected = 100 - moves.filter((move) => move.from === name).length + moves.filter((move) => move.to === name).length
    assert.is(n, expected, `counter ${name} holds what the recorded moves say`)
    total += n
  }
  assert.is(total, 300)
  assert.ok(refused > 0, 'the clients did contend')
})

batch('an event stream sees a stored batch\'s changes together and in order, nothing of a failed one, and a resuming client gets them all', async ({ server }) => {
  const stream = await openStream(server.port, '/b7')
  const start = await stream.next()
  assert.is(start.event, 'value')
  const failed = await send(server, [
    { method: 'PUT', path: '/b7/x', body: { n: 1 } },
    { method: 'PATCH', path: '/b7/none', body: { n: 1 } },
  ])
  assert.is(failed.status, 404)
  const stored = await send(server, [
    { method: 'PUT', path: '/b7/y', body: { n: 2 } },
    { method: 'PATCH', path: '/b7/y', body: { n: 3 } },
    { method: 'DELETE', path: '/b7/y' },
  ])
  assert.is(stored.status, 200, stored.text)
  const events = [await stream.next(), await stream.next(), await stream.next()]
  stream.close()
  assert.equal(events.map((event) => [event.event, event.data.path]), [['put', '/b7/y'], ['patch', '/b7/y'], ['delete', '/b7/y']])
  const resumed = await openStream(server.port, '/b7', { 'Last-Event-ID': String(start.id) })
  const again = [await resumed.next(), await resumed.next(), await resumed.next()]
  resumed.close()
  assert.equal(again.map((event) => event.id), events.map((event) => event.id))
})

batch('once a reader has read one change of a batch, it reads every other one of it too', async ({ server }) => {
  const keys = Array.from({ length: 40 }, (_, key) => `k${String(key).padStart(2, '0')}`)
  const first = `/b9/${keys[0]}`
  const last = `/b9/${keys[keys.length - 1]}`
  let writing = true
  let reads = 0
  const torn: string[] = []
  const reader = async () => {
    while (writing) {
      // The batch writes the first key first: a store that places its documents one by one has the last one still old.
      const seen = (await server.request('GET', first)).json?.round ?? 0
      const then = (await server.request('GET', last)).json?.round ?? 0
      reads++
      if (then < seen) torn.push(`${first} at round ${seen}, then ${last} at round ${then}`)
    }
  }
  const readers = [reader(), reader(), reader()]
  for (let round = 1; round <= 12; round++) {
    const answer = await send(server, keys.map((key) => ({ method: 'PUT', path: `/b9/${key}`, body: { round } })))
    assert.is(answer.status, 200, answer.text.slice(0, 300))
  }
  writing = false
  await Promise.all(readers)
  assert.equal(torn, [], 'a read after a batch\'s change was read sees the rest of the batch')
  assert.ok(reads > 10, `only ${reads} reads ran beside the batches`)
})

batch('with --prefix /api a batch is POST /api?_batch, its paths are below the prefix, and its Locations carry it', async () => {
  const prefixed = await startServer({ prefix: '/api' })
  try {
    const requests = [{ method: 'POST', path: '/notes', body: { text: 'a' } }, { method: 'PATCH', path: '/notes/$0.id', body: { seen: true } }]
    assert.is((await prefixed.request('POST', '/?_batch', { body: { requests } })).status, 404)
    const answer = await prefixed.request('POST', '/api?_batch', { body: { requests } })
    assert.is(answer.status, 200, answer.text)
    const id = answer.json.responses[0].body.id
    assert.is(answer.json.responses[0].headers.Location, `/api/notes/${id}`)
    assert.equal((await prefixed.request('GET', `/api/notes/${id}`)).json, { id, text: 'a', seen: true })
  } finally {
    await prefixed.close()
  }
})

batch('a read-only server refuses a batch, and so does one with a token to a client without it', async () => {
  const readonly = await startServer({ readonly: true })
  try {
    assert.is((await readonly.request('POST', '/?_batch', { body: { requests: [{ method: 'PUT', path: '/r/x', body: {} }] } })).status, 405)
  } finally {
    await readonly.close()
  }
  const guarded = await startServer({ token: 'secret-token-b8' })
  try {
    const body = { requests: [{ method: 'PUT', path: '/r/x', body: {} }] }
    assert.is((await guarded.request('POST', '/?_batch', { body })).status, 401)
    assert.is((await guarded.request('GET', '/r/x')).status, 404)
    assert.is((await guarded.request('POST', '/?_batch', { body, headers: { Authorization: 'Bearer secret-token-b8' } })).status, 200)
  } finally {
    await guarded.close()
  }
})

batch('a JSON Patch inside a batch applies with the rest, and its failed test stores nothing of the batch', async ({ server }) => {
  assert.is((await server.request('PUT', '/bp/counter', { body: { n: 1, log: ['a'] } })).status, 201)
  const jsonPatch = { 'Content-Type': 'application/json-patch+json' }
  const applied = await send(server, [
    { method: 'PATCH', path: '/bp/counter', headers: jsonPatch, body: [{ op: 'test', path: '/n', value: 1 }, { op: 'replace', path: '/n', value: 2 }, { op: 'add', path: '/log/-', value: 'b' }] },
    { method: 'PUT', path: '/bp/other', body: { seen: 2 } },
  ])
  assert.is(applied.status, 200, applied.text)
  assert.equal(applied.json.responses[0].body, { id: 'counter', n: 2, log: ['a', 'b'] })
  const refused = await send(server, [
    { method: 'PUT', path: '/bp/third', body: { never: true } },
    { method: 'PATCH', path: '/bp/counter', headers: jsonPatch, body: [{ op: 'test', path: '/n', value: 1 }, { op: 'replace', path: '/n', value: 3 }] },
  ])
  assertFailedAt(refused, 409, 1)
  assert.equal((await server.request('GET', '/bp/counter')).json, { id: 'counter', n: 2, log: ['a', 'b'] })
  assert.is((await server.request('GET', '/bp/third')).status, 404, 'nothing of the refused batch is stored')
  assertFailedAt(await send(server, [{ method: 'PUT', path: '/bp/x', body: [1] }]), 400, 0)
})

batch('a __proto__ key in a body inside a batch is stored as plain data, as the same PUT alone stores it', async ({ server }) => {
  const body = '{"__proto__":{"polluted":"batch"},"nested":{"__proto__":{"deep":1}},"list":[{"__proto__":2}],"constructor":"c"}'
  const alone = await server.request('PUT', '/proto-batch/alone', { body, headers: { 'content-type': 'application/json' } })
  assert.is(alone.status, 201, alone.text)
  const text = `{"requests":[{"method":"PUT","path":"/proto-batch/batched","body":${body}},{"method":"POST","path":"/proto-batch","body":${body}}]}`
  const answer = await server.request('POST', '/?_batch', { body: text, headers: { 'content-type': 'application/json' } })
  assert.is(answer.status, 200, answer.text)
  const posted = answer.json.responses[1].body.id
  const expected = (id: string) => alone.text.replace('"id":"alone"', `"id":${JSON.stringify(id)}`)
  assert.is((await server.request('GET', '/proto-batch/batched')).text, expected('batched'))
  assert.is((await server.request('GET', `/proto-batch/${posted}`)).text, expected(posted))
  assert.ok(Object.hasOwn(answer.json.responses[0].body, '__proto__'), 'the batch answers the key too')
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

batch.run()

test('the documents a batch writes come to at most 16 times --max-body in all: past it the batch is a 413 naming the request, and nothing is stored', async () => {
  const server = await startServer({ maxBody: 64 * 1024 })
  try {
    // 20 documents of 60 000 characters, each within the 64 KiB body limit; PATCHing all of them stages 1.2 million characters, past 16 × 64 KiB.
    for (let index = 0; index < 20; index++) assert.is((await server.request('PUT', `/big/d${index}`, { body: { text: 'x'.repeat(60_000) } })).status, 201)
    const patches = (count: number) => Array.from({ length: count }, (_, index) => ({ method: 'PATCH', path: `/big/d${index}`, body: { n: 1 } }))
    const refused = await send(server, patches(20))
    assert.is(refused.status, 413, refused.text)
    assert.is(refused.json.index, 17, refused.text)
    assert.match(refused.json.detail, /16 times --max-body/)
    assert.equal((await server.request('GET', '/big/d0')).json, { id: 'd0', text: 'x'.repeat(60_000) }, 'nothing of the refused batch is stored')
    const accepted = await send(server, patches(10))
    assert.is(accepted.status, 200, accepted.text)
    assert.is((await server.request('GET', '/big/d9')).json.n, 1)
  } finally {
    await server.close()
  }
})

test.run()
