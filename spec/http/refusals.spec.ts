import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { connect } from 'node:net'
import { request as httpRequest } from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { send, startServerOnFolder, type Answer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'
import { parseAnswers, rawExchange, rawRequest } from '../support/raw-http.ts'
import { startCli, stopAll, type RunningCli } from '../support/process.ts'

// Refusals a client actually reads (docs/http-api.md, "Requests and errors"): a 413 for an upload still
// arriving is followed by a lingering close (RFC 9112 §9.6), not a reset that can swallow it; a
// client that waits for `100 Continue` hears the refusal instead; and a request is judged on all
// of its headers or refused.

const MiB = 1024 * 1024
/**
 * The server runs in a process of its own, as it does for real clients: in the
 * test's own process, its close and the client's read take turns on one event
 * loop, and the reset that loses an answer hardly ever wins the race.
 */
let api: RunningCli & { request(method: string, target: string): Promise<Answer> }
let storeDir: string

test.before(async () => {
  storeDir = await mkdtemp(path.join(tmpdir(), 'restdir-refusals-'))
  const cli = await startCli(['--port', '0', '--quiet', '--store', storeDir]) // the default body limit, 1 MiB
  api = { ...cli, request: (method, target) => send(cli.port, method, target) }
})
test.after(async () => {
  await stopAll()
  await rm(storeDir, { recursive: true, force: true })
})

interface UploadResult {
  /** The status of the answer the client read, if it read one. */
  status?: number
  /** An error met before the answer was read (EPIPE, ECONNRESET). */
  error?: string
}

/** A PUT through node's HTTP client, its body written whole at once (Content-Length) or in 64 KiB chunks (chunked). */
function upload(port: number, target: string, body: Buffer, framing: 'length' | 'chunked'): Promise<UploadResult> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (framing === 'length') headers['content-length'] = String(body.length)
    const req = httpRequest({ host: '127.0.0.1', port, method: 'PUT', path: target, headers, agent: false })
    req.on('response', (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode }))
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ status: res.statusCode, error: error.code }))
    })
    // After the answer has been read, the end of the connection is no failure.
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }))
    if (framing === 'length') return void req.end(body)
    let offset = 0
    const pump = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + 64 * 1024)
        offset += piece.length
        if (!req.write(piece)) return void req.once('drain', pump)
      }
      req.end()
    }
    pump()
  })
}

function summary(results: UploadResult[]): string {
  const counts = new Map<string, number>()
  for (const result of results) {
    const key = result.status === undefined ? `no answer (${result.error})` : `${result.status}${result.error ? ` then ${result.error}` : ''}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([key, count]) => `${count} × ${key}`).join(', ')
}

test('fifty 5 MB uploads at once, each over the body limit, all read their 413: none is reset first', async () => {
  const body = Buffer.alloc(5 * 1000 * 1000, 0x61)
  for (let round = 0; round < 2; round++) {
    const results = await Promise.all(Array.from({ length: 50 }, (_, index) => upload(api.port, `/uploads/u${round}-${index}`, body, 'length')))
    assert.ok(results.every((result) => result.status === 413), `round ${round}: ${summary(results)}`)
  }
  assert.is((await api.request('GET', '/uploads?_children')).status, 404)
})

test('chunked uploads over the body limit read their 413 too', async () => {
  const body = Buffer.alloc(4 * MiB, 0x61)
  const results = await Promise.all(Array.from({ length: 30 }, (_, index) => upload(api.port, `/chunked/u${index}`, body, 'chunked')))
  assert.ok(results.every((result) => result.status === 413), summary(results))
  assert.is((await api.request('GET', '/chunked?_children')).status, 404)
})

test('a refused upload that never ends is cut off within bounds, after its 413', async () => {
  // A client that ignores the server's half-close and sends on.
  const socket = connect({ port: api.port, host: '127.0.0.1', allowHalfOpen: true })
  const received: Buffer[] = []
  let closed = false
  socket.on('data', (data: Buffer) => received.push(data))
  socket.on('error', () => {})
  socket.on('close', () => (closed = true))
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write('PUT /endless/doc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n')
  const piece = Buffer.from(`10000\r\n${'x'.repeat(0x10000)}\r\n`)
  const started = Date.now()
  let sent = 0
  while (!closed && Date.now() - started < 20_000) {
    if (!socket.write(piece)) await new Promise((resolve) => { socket.once('drain', resolve); socket.once('close', resolve) })
    sent += piece.length
  }
  assert.ok(closed, 'the server closed the connection')
  assert.ok(sent < 256 * MiB, `the server read ${sent} bytes before closing`)
  assert.ok(Date.now() - started < 10_000, `closed after ${Date.now() - started} ms`)
  // Past a bound the close may reset the connection, and a client still sending can lose the answer then.
  const { answers } = parseAnswers(Buffer.concat(received), false)
  if (answers.length > 0) assert.is(answers[0].status, 413)
})

test('a refused upload that stalls is closed after at most 5 seconds, not at the request time-out', async () => {
  const socket = connect({ port: api.port, host: '127.0.0.1', allowHalfOpen: true })
  const received: Buffer[] = []
  socket.on('data', (data: Buffer) => received.push(data))
  socket.on('error', () => {})
  const closed = new Promise((resolve) => socket.on('close', resolve))
  socket.write(`PUT /stalled/doc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * MiB}\r\n\r\n{"a":`)
  const started = Date.now()
  const trickle = setInterval(() => socket.write('x'), 200)
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 15_000))])
  clearInterval(trickle)
  socket.destroy()
  const took = Date.now() - started
  assert.ok(took >= 4000 && took < 7000, `closed after ${took} ms`)
  assert.is(parseAnswers(Buffer.concat(received), false).answers[0]?.status, 413)
})

test('a client that sends Expect: 100-continue with a Content-Length over the limit gets the 413 and never a 100', async () => {
  const head = `PUT /expect/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * MiB}\r\nExpect: 100-continue\r\n\r\n`
  const exchange = await rawExchange(api.port, head, { waitMs: 5000 })
  assert.is(exchange.timedOut, false, 'the server answered without waiting for the body')
  assert.is(exchange.reset, false)
  assert.is(exchange.answers.length, 1)
  assert.is(exchange.answers[0].status, 413)
  assert.is(exchange.answers[0].headers.connection, 'close')
  // parseAnswers skips 1xx answers; the raw bytes must hold none.
  const raw = await rawBytes(api.port, head)
  assert.not.match(raw, /^HTTP\/1\.1 100/m)
  assert.match(raw, /^HTTP\/1\.1 413 /)
  assert.is((await api.request('GET', '/expect/big')).status, 404)
})

test('a refusal decided before the body is read goes without a 100; a body that is taken gets its 100 first', async () => {
  const refused = await rawBytes(api.port, 'PUT /expect/gz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n')
  assert.match(refused, /^HTTP\/1\.1 415 /)
  assert.not.match(refused, /100 Continue/)

  const body = '{"v":1}'
  const socket = connect(api.port, '127.0.0.1')
  let text = ''
  socket.on('data', (data: Buffer) => (text += data.toString('latin1')))
  const closed = new Promise((resolve) => socket.on('close', resolve))
  socket.write(`PUT /expect/fits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`)
  await until(() => text.includes('\r\n\r\n'), 5000)
  assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\n$/)
  socket.write(body)
  await closed
  assert.match(text, /HTTP\/1\.1 201 /)
  assert.is((await api.request('GET', '/expect/fits')).json.v, 1)
})

test('a request pipelined after a refused upload is not carried out', async () => {
  const small = await startServerOnFolder({ maxBody: 1024 })
  try {
    assert.is((await small.request('PUT', '/kept/doc', { body: { v: 1 } })).status, 201)
    const tooBig = rawRequest('PUT', '/kept/other', { body: { fill: 'x'.repeat(2048) } })
    const exchange = await rawExchange(small.port, tooBig + rawRequest('DELETE', '/kept/doc', { close: true }))
    assert.is(exchange.answers.length, 1)
    assert.is(exchange.answers[0].status, 413)
    assert.is((await small.request('GET', '/kept/doc')).status, 200)
  } finally {
    await small.close()
  }
})

/** A PUT with `count` header lines after its own, then a second Host. */
function manyHeaders(target: string, count: number, secondHost: string): string {
  let head = `PUT ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 7\r\nConnection: close\r\n`
  for (let index = 0; index < count; index++) head += `a:${index % 10}\r\n`
  return `${head}Host: ${secondHost}\r\n\r\n{"v":1}`
}

test('a second Host after 2,100 header lines is refused, however many lines come before it', async () => {
  for (const count of [1100, 2100, 3000]) {
    const exchange = await rawExchange(api.port, manyHeaders(`/headers/h${count}`, count, 'evil.example'))
    assert.is(exchange.answers.length, 1)
    const answer = exchange.answers[0]
    assertProblem({ status: answer.status, headers: answer.headers, text: answer.body.toString(), json: JSON.parse(answer.body.toString()) }, 431, /header lines/)
    assert.is((await api.request('GET', `/headers/h${count}`)).status, 404)
  }
  // Far fewer lines are read as usual, and a second Host among them is still a 400.
  const few = await rawExchange(api.port, manyHeaders('/headers/few', 900, 'evil.example'))
  assert.is(few.answers[0].status, 400)
  assert.match(few.answers[0].body.toString(), /more than one Host/)
  assert.is((await api.request('GET', '/headers/few')).status, 404)
})

/** Everything the server sends for `request` until it closes, as text; the client never closes first. */
function rawBytes(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    const timer = setTimeout(() => socket.destroy(), 5000)
    socket.on('connect', () => socket.write(request))
    socket.on('data', (data: Buffer) => (text += data.toString('latin1')))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(text)
    })
  })
}

async function until(condition: () => boolean, ms: number): Promise<void> {
  const giveUp = Date.now() + ms
  while (!condition()) {
    if (Date.now() > giveUp) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

test.run()
