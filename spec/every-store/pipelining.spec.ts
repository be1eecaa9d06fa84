import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { connect } from 'node:net'
import { startServer, type TestServer } from '../support/helpers.ts'
import { rawExchange, rawRequest, type RawAnswer } from '../support/raw-http.ts'

// RFC 9112 §9.3.2: requests pipelined on one connection take effect in the
// order they were sent; only safe ones in a row may run side by side.

let api: TestServer

test.before(async () => {
  api = await startServer()
})

test.after(async () => {
  await api.close()
})

/** Sends every request in one write on one connection; the last one closes it. */
async function pipelined(...requests: string[]): Promise<RawAnswer[]> {
  const exchange = await rawExchange(api.port, requests.join(''))
  assert.is(exchange.malformed, undefined)
  assert.is(exchange.timedOut, false)
  assert.is(exchange.answers.length, requests.length, 'one answer per request')
  return exchange.answers
}

function json(answer: RawAnswer): any {
  return JSON.parse(answer.body.toString())
}

test('a DELETE pipelined after a PUT deletes what the PUT wrote', async () => {
  for (let round = 0; round < 10; round++) {
    const [put, remove, get] = await pipelined(
      rawRequest('PUT', `/put-delete/doc${round}`, { body: { round } }),
      rawRequest('DELETE', `/put-delete/doc${round}`),
      rawRequest('GET', `/put-delete/doc${round}`, { close: true }),
    )
    assert.is(put.status, 201)
    assert.is(remove.status, 200, `round ${round}: the DELETE ran before the PUT`)
    assert.equal(json(remove), { id: `doc${round}`, round })
    assert.is(get.status, 404)
  }
  assert.is((await api.request('GET', '/put-delete')).status, 404)
})

test('a GET pipelined after a PUT sees the document', async () => {
  for (let round = 0; round < 10; round++) {
    const [put, get] = await pipelined(
      rawRequest('PUT', `/put-get/doc${round}`, { body: { round } }),
      rawRequest('GET', `/put-get/doc${round}`, { close: true }),
    )
    assert.is(put.status, 201)
    assert.is(get.status, 200, `round ${round}: the GET ran before the PUT`)
    assert.equal(json(get), { id: `doc${round}`, round })
  }
})

test('a GET pipelined after a DELETE no longer finds the document', async () => {
  for (let round = 0; round < 10; round++) {
    assert.is((await api.request('PUT', `/delete-get/doc${round}`, { body: { round } })).status, 201)
    const [remove, get] = await pipelined(rawRequest('DELETE', `/delete-get/doc${round}`), rawRequest('GET', `/delete-get/doc${round}`, { close: true }))
    assert.is(remove.status, 200)
    assert.is(get.status, 404, `round ${round}: the GET ran before the DELETE`)
  }
})

test('a GET pipelined after a POST reads the new document at its Location', async () => {
  // The new id is unknown when the GET is sent, so the GET asks for the collection.
  for (let round = 0; round < 10; round++) {
    const [post, list] = await pipelined(rawRequest('POST', `/post-get${round}`, { body: { round } }), rawRequest('GET', `/post-get${round}`, { close: true }))
    assert.is(post.status, 201)
    assert.is(list.status, 200, `round ${round}: the GET ran before the POST`)
    assert.equal(json(list), [json(post)])
    const location = post.headers.location
    const [read] = await pipelined(rawRequest('GET', location, { close: true }))
    assert.equal(json(read), json(post))
  }
})

test('reads pipelined in a row run side by side, and a write after them waits for all of them', async () => {
  const slow = await startServer({ delay: 400 })
  try {
    assert.is((await slow.request('PUT', '/reads/doc', { body: { v: 1 } })).status, 201)
    const started = performance.now()
    const exchange = await rawExchange(
      slow.port,
      [
        rawRequest('GET', '/reads/doc'),
        rawRequest('GET', '/reads/doc'),
        rawRequest('GET', '/reads/doc'),
        rawRequest('GET', '/reads/doc'),
        rawRequest('PUT', '/reads/doc', { body: { v: 2 }, close: true }),
      ].join(''),
    )
    const took = performance.now() - started
    assert.equal(exchange.answers.map((answer) => answer.status), [200, 200, 200, 200, 200])
    assert.ok(exchange.answers.slice(0, 4).every((answer) => json(answer).v === 1))
    // One after the other they would take 5 × 400 ms; the four reads together and then the write take about 800.
    assert.ok(took < 1600, `took ${took.toFixed(0)} ms`)
    assert.ok(took >= 790, `took ${took.toFixed(0)} ms: the write did not wait for the reads`)
  } finally {
    await slow.close()
  }
})

test('a request on one connection does not wait for another connection', async () => {
  const slow = await startServer({ delay: 600 })
  try {
    // A connection busy with a slow write, and another asking at the same time: waiting for it would take twice the delay.
    const busy = rawExchange(slow.port, rawRequest('PUT', '/other/doc', { body: { v: 1 }, close: true }))
    const started = performance.now()
    const [answer] = await pipelinedOn(slow.port, rawRequest('GET', '/other/nothing', { close: true }))
    assert.is(answer.status, 404)
    assert.ok(performance.now() - started < 1100)
    assert.is((await busy).answers[0].status, 201)
  } finally {
    await slow.close()
  }
})

async function pipelinedOn(port: number, request: string): Promise<RawAnswer[]> {
  return (await rawExchange(port, request)).answers
}

test('a write pipelined after an event stream on the same connection is still carried out', async () => {
  // Its answer waits behind the stream's, which never ends; the write itself does not wait.
  const socket = connect({ host: '127.0.0.1', port: api.port })
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(rawRequest('GET', '/after-stream', { headers: { Accept: 'text/event-stream' } }) + rawRequest('PUT', '/after-stream/doc', { body: { v: 1 } }))
  try {
    const deadline = Date.now() + 5000
    let status = 404
    while (status === 404 && Date.now() < deadline) {
      status = (await api.request('GET', '/after-stream/doc')).status
      if (status === 404) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.is(status, 200)
  } finally {
    socket.destroy()
  }
})

test.run()
