import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { connect, type Socket } from 'node:net'
import { request as httpRequest } from 'node:http'
import { rm } from 'node:fs/promises'
import { makeTempDir, send, startServerOnFolder, type TestServer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'
import { runCli, startCli } from '../support/process.ts'

// docs/http-api.md, "Security", and docs/cli.md, "The command line": every limit a flag with a default, and a clear answer past it:
// body size 413, path and segment length 414, path depth 414, JSON nesting 400,
// header and request time-outs (408, connection closed), event streams capped (503).

function nested(depth: number): string {
  return '{"a":' + '['.repeat(depth - 1) + ']'.repeat(depth - 1) + '}'
}

// ---------------------------------------------------------------- sizes

const sizes = suite<{ server: TestServer }>('size limits')

sizes.before(async (context) => {
  context.server = await startServerOnFolder({ maxBody: 1000, maxPathLength: 200, maxSegmentLength: 40, maxPathDepth: 5, maxJsonDepth: 6 })
})
sizes.after(async (context) => {
  await context.server.close()
})

sizes('a body up to the limit is taken; one byte over is 413 and nothing is stored', async ({ server }) => {
  const fits = JSON.stringify({ fill: 'x'.repeat(1000 - 11) })
  assert.is(Buffer.byteLength(fits), 1000)
  assert.is((await server.request('PUT', '/size/fits', { body: fits, headers: { 'content-type': 'application/json' } })).status, 201)
  const over = JSON.stringify({ fill: 'x'.repeat(1000 - 10) })
  const answer = await server.request('PUT', '/size/over', { body: over, headers: { 'content-type': 'application/json' } })
  assertProblem(answer, 413, /1000 bytes/)
  assert.is((await server.request('GET', '/size/over')).status, 404)
})

sizes('a body without Content-Length is counted as it streams, and reading stops at the limit', async ({ server }) => {
  // 64 MiB offered in chunks; the server answers 413 long before, and the client stops sending.
  const chunk = Buffer.alloc(64 * 1024, 0x61)
  const result = await new Promise<{ status: number; sent: number; text: string }>((resolve, reject) => {
    let sent = 0
    let answered = false
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/streamed/doc', headers: { 'content-type': 'application/json' }, agent: false })
    req.on('response', (res) => {
      answered = true
      let text = ''
      res.on('data', (data: Buffer) => (text += data))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, sent, text }))
      res.on('error', reject)
    })
    req.on('error', (error) => (answered ? undefined : reject(error)))
    const pump = () => {
      while (!answered && sent < 64 * 1024 * 1024) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      if (!answered) req.end()
    }
    req.write('{"fill":"')
    pump()
  })
  assert.is(result.status, 413)
  assert.ok(result.sent < 64 * 1024 * 1024, 'the server answered before the client had sent everything')
  assert.is((await server.request('GET', '/streamed')).status, 404)
})

sizes('a path over the length limit is 414', async ({ server }) => {
  const fits = '/' + Array.from({ length: 5 }, () => 'p'.repeat(39)).join('/')
  assert.is(fits.length, 200)
  assert.is((await server.request('PUT', fits, { body: {} })).status, 201)
  assertProblem(await server.request('GET', '/' + 'a'.repeat(200)), 414, /longer than 200 characters/)
})

sizes('a segment over its length limit is 414, also when percent-encoded', async ({ server }) => {
  assert.is((await server.request('PUT', '/size/' + 's'.repeat(40), { body: {} })).status, 201)
  assertProblem(await server.request('PUT', '/size/' + 's'.repeat(41), { body: {} }), 414, /segment is longer than 40/)
  assertProblem(await server.request('GET', '/size/' + '%41'.repeat(14)), 414)
})

sizes('a path deeper than the limit is 414', async ({ server }) => {
  assert.is((await server.request('PUT', '/a/b/c/d/e', { body: {} })).status, 201)
  assertProblem(await server.request('PUT', '/a/b/c/d/e/f', { body: {} }), 414, /deeper than 5 segments/)
  assertProblem(await server.request('GET', '/a/b/c/d/e/f'), 414)
})

sizes('a POST whose new document would be deeper than the limit is 414, and nothing is created', async ({ server }) => {
  assertProblem(await server.request('POST', '/deep/b/c/d/e', { body: { lost: true } }), 414, /deeper than 5 segments/)
  assert.is((await server.request('GET', '/deep/b/c/d/e')).status, 404)
  assert.is((await server.request('GET', '/deep?_children')).status, 404)
  const created = await server.request('POST', '/deep/b/c/d', { body: { kept: true } })
  assert.is(created.status, 201)
  assert.is((await server.request('GET', created.headers.location as string)).status, 200)
})

sizes('POST to any collection, users and playlists included, is 414 when the new URL would break a limit', async () => {
  const deep = await startServerOnFolder({ prefix: '/a/b/c/d', maxPathDepth: 5 })
  const prefix = '/' + 'p'.repeat(60)
  const long = await startServerOnFolder({ prefix, maxPathLength: 100 })
  try {
    assertProblem(await deep.request('POST', '/a/b/c/d/user', { body: { username: 'ada' } }), 414, /deeper than 5 segments/)
    assert.equal((await deep.request('GET', '/a/b/c/d/user')).json, [])

    // A new document's path is 13 characters ("/" and a 12-character id) longer than its parent's.
    const tooLong = `${prefix}/notes/${'n'.repeat(100 - 13 - prefix.length - 7 + 1)}`
    assert.is(tooLong.length, 88)
    assertProblem(await long.request('POST', tooLong, { body: {} }), 414, /longer than 100 characters/)
    assert.is((await long.request('GET', `${prefix}/notes?_children`)).status, 404)
    const created = await long.request('POST', tooLong.slice(0, -1), { body: {} })
    assert.is(created.status, 201)
    assert.is((created.headers.location as string).length, 100)
    assert.is((await long.request('GET', created.headers.location as string)).status, 200)

    const user = await long.request('POST', `${prefix}/user`, { body: { username: 'ada' } })
    assert.is(user.status, 201)
    const playlists = `${user.headers.location}/playlist`
    assert.is(playlists.length, 88)
    assertProblem(await long.request('POST', playlists, { body: { name: 'lost' } }), 414, /longer than 100 characters/)
    assert.equal((await long.request('GET', playlists)).json, [])
  } finally {
    await deep.close()
    await long.close()
  }
})

sizes('at the default limits, a POST to a 32-segment path or an 8180-character one is 414', async () => {
  const server = await startServerOnFolder()
  try {
    const deepest = '/d'.repeat(32)
    assertProblem(await server.request('POST', deepest, { body: {} }), 414, /deeper than 32 segments/)
    const longest = '/' + Array.from({ length: 8 }, () => 'l'.repeat(1021)).join('/') + '/' + 'l'.repeat(8180 - 8 * 1022 - 1)
    assert.is(longest.length, 8180)
    assertProblem(await server.request('POST', longest, { body: {} }), 414, /longer than 8192 characters/)
    assert.equal((await server.request('GET', '/?_children')).json, [])
    const created = await server.request('POST', deepest.slice(0, -2), { body: {} })
    assert.is(created.status, 201)
    assert.is((await server.request('GET', created.headers.location as string)).status, 200)
    assert.is((await server.request('DELETE', created.headers.location as string)).status, 200)
  } finally {
    await server.close()
  }
})

sizes('JSON nested deeper than the limit is 400 and says where; strings do not count', async ({ server }) => {
  assert.is((await server.request('PUT', '/size/deep', { body: nested(6), headers: { 'content-type': 'application/json' } })).status, 201)
  const answer = await server.request('PUT', '/size/deep', { body: nested(7), headers: { 'content-type': 'application/json' } })
  assertProblem(answer, 400, /deeper than 6 levels \(at line 1, column/)
  const brackets = JSON.stringify({ text: '[[[[[[[[[[{{{{{{{{{{' })
  assert.is((await server.request('PUT', '/size/brackets', { body: brackets, headers: { 'content-type': 'application/json' } })).status, 201)
  const deepButSmall = await server.request('PATCH', '/size/deep', { body: '{"a":' + '['.repeat(900), headers: { 'content-type': 'application/json' } })
  assertProblem(deepButSmall, 400)
  assert.equal((await server.request('GET', '/size/deep')).json, { id: 'deep', ...JSON.parse(nested(6)) })
})

sizes('request headers over 16 KiB are refused with 431 and the server keeps serving', async ({ server }) => {
  const answer = await rawExchange(server.port, `GET /size HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`)
  assert.match(answer, /^HTTP\/1\.1 431 /)
  assert.is((await server.request('GET', '/size/fits')).status, 200)
})

sizes.run()

// ---------------------------------------------------------------- time-outs

const timeouts = suite<{ server: TestServer }>('time-outs')

timeouts.before(async (context) => {
  context.server = await startServerOnFolder({ headersTimeout: 1500, requestTimeout: 2000 })
})
timeouts.after(async (context) => {
  await context.server.close()
})

timeouts('slow-loris clients sending one byte a second are cut off while other clients keep being served', async ({ server }) => {
  const headerSend = `PUT /loris/headers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`
  const bodySend = JSON.stringify({ slowly: 'x'.repeat(100) })
  const bodyHead = `PUT /loris/body HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${bodySend.length}\r\n\r\n`
  const lorises = [
    ...Array.from({ length: 50 }, () => slowClient(server.port, '', headerSend)),
    ...Array.from({ length: 50 }, () => slowClient(server.port, bodyHead, bodySend)),
    ...Array.from({ length: 20 }, () => slowClient(server.port, '', '')), // connects and never says a word
  ]
  let served = 0
  let stillOpen = lorises.length
  const allCut = Promise.all(lorises.map((loris) => loris.closed.then(() => stillOpen--)))
  // While the slow clients hold their connections, the others are answered as usual.
  const giveUp = Date.now() + 10_000
  while (stillOpen > 0 && Date.now() < giveUp) {
    const answer = await server.request('PUT', `/loris/ok${served}`, { body: { n: served } })
    assert.is(answer.status, 201)
    served++
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  for (const loris of lorises) loris.destroy()
  assert.is(stillOpen, 0, `${stillOpen} slow clients were still connected after 10 s`)
  const results = await allCut.then(() => Promise.all(lorises.map((loris) => loris.closed)))
  assert.ok(served >= 3, `served ${served} requests meanwhile`)
  for (const result of results) {
    assert.ok(result.sentAll === false, 'cut off before it finished sending')
    assert.ok(result.answer === '' || /^HTTP\/1\.1 408 /.test(result.answer), result.answer.slice(0, 80))
  }
  assert.ok(results.some((result) => /^HTTP\/1\.1 408 /.test(result.answer)), 'the cut-off is announced with 408')
  assert.is((await server.request('GET', '/loris/headers')).status, 404)
  assert.is((await server.request('GET', '/loris/body')).status, 404)
})

timeouts('an event stream outlives the request time-out and keeps delivering changes', async () => {
  const server = await startServerOnFolder({ headersTimeout: 300, requestTimeout: 500 })
  const stream = await openStream(server.port, '/live')
  try {
    // The time-outs are at work on this server: a client that says nothing is cut off.
    const cut = await within(5000, slowClient(server.port, '', '').closed)
    assert.is(cut.sentAll, false)
    assert.ok(cut.answer === '' || /^HTTP\/1\.1 408 /.test(cut.answer), cut.answer.slice(0, 80))
    await new Promise((resolve) => setTimeout(resolve, 600)) // the stream is now well past both
    await server.request('PUT', '/live/doc', { body: { still: 'here' } })
    await stream.waitFor(/event: put\ndata: \{"path":"\/live\/doc","data":\{"id":"doc","still":"here"\}\}/)
  } finally {
    stream.close()
    await server.close()
  }
})

timeouts.run()

// ---------------------------------------------------------------- event streams

const streams = suite('the event-stream cap')

streams('past the cap a new stream is 503 with Retry-After; closing one makes room', async () => {
  const server = await startServerOnFolder({ maxStreams: 3 })
  const open = await Promise.all([openStream(server.port, '/a'), openStream(server.port, '/b'), openStream(server.port, '/c')])
  try {
    const refused = await within(5000, server.request('GET', '/d', { headers: { accept: 'text/event-stream' } }))
    assertProblem(refused, 503, /Too many event streams are open \(the limit is 3\)/)
    assert.ok(Number(refused.headers['retry-after']) > 0)
    assert.is((await server.request('PUT', '/d/doc', { body: {} })).status, 201, 'plain requests are not counted')

    open.shift()!.close()
    const admitted = await retry(async () => {
      const stream = await openStream(server.port, '/d')
      open.push(stream)
      return stream
    })
    await admitted.waitFor(/event: value/)
  } finally {
    for (const stream of open) stream.close()
    await server.close()
  }
})

streams.run()

// ---------------------------------------------------------------- flags

const flags = suite('limit flags')

flags('the command line sets every limit', async () => {
  const store = await makeTempDir()
  const cli = await startCli([
    '--port', '0', '--store', store, '--quiet',
    '--max-body', '1kb', '--max-path', '100', '--max-segment', '20', '--max-depth', '3',
    '--max-json-depth', '3', '--max-streams', '1', '--header-timeout', '500ms', '--request-timeout', '1s',
  ])
  try {
    const json = { 'content-type': 'application/json' }
    assertProblem(await send(cli.port, 'PUT', '/f/big', { body: JSON.stringify({ x: 'y'.repeat(1024) }), headers: json }), 413)
    assert.is((await send(cli.port, 'PUT', '/f/small', { body: JSON.stringify({ x: 'y'.repeat(1000) }), headers: json })).status, 201)
    assertProblem(await send(cli.port, 'GET', '/f/' + 'p/'.repeat(49)), 414)
    assertProblem(await send(cli.port, 'GET', '/f/' + 's'.repeat(21)), 414)
    assertProblem(await send(cli.port, 'GET', '/f/g/h/i'), 414)
    assertProblem(await send(cli.port, 'PUT', '/f/deep', { body: '{"a":[[[]]]}', headers: json }), 400)
    const stream = await openStream(cli.port, '/f')
    try {
      assertProblem(await within(5000, send(cli.port, 'GET', '/f', { headers: { accept: 'text/event-stream' } })), 503)
    } finally {
      stream.close()
    }
    const idle = await within(5000, slowClient(cli.port, '', '').closed)
    assert.is(idle.sentAll, false)
    assert.ok(idle.answer === '' || /^HTTP\/1\.1 408 /.test(idle.answer), idle.answer.slice(0, 80))
  } finally {
    await cli.stop()
    await rm(store, { recursive: true, force: true })
  }
})

flags('a bad limit flag says what is wrong and exits with status 2', async () => {
  const cases = [['--request-timeout', 'soon'], ['--max-streams', '0']]
  const results = await Promise.all(cases.map((args) => runCli(['--port', '0', '--store', '/nonexistent/never-made', ...args])))
  results.forEach((result, index) => {
    assert.is(result.code, 2, cases[index].join(' '))
    assert.ok(result.stderr.includes(cases[index][0]), result.stderr)
    assert.match(result.stderr, /\nrestdir --help for every option\n$/)
  })
})

flags.run()

// ---------------------------------------------------------------- helpers

/** Sends `head` at once, then `trickle` one byte a second; resolves when the server closes the connection. */
function slowClient(port: number, head: string, trickle: string): { closed: Promise<{ answer: string; sentAll: boolean }>; destroy(): void } {
  const socket = connect({ host: '127.0.0.1', port })
  let answer = ''
  let index = 0
  let timer: NodeJS.Timeout | undefined
  socket.on('data', (data) => (answer += data))
  socket.on('connect', () => {
    if (head) socket.write(head)
    if (!trickle) return
    timer = setInterval(() => {
      if (index < trickle.length) socket.write(trickle[index++])
    }, 1000)
  })
  const closed = new Promise<{ answer: string; sentAll: boolean }>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer)
      resolve({ answer, sentAll: trickle.length > 0 && index >= trickle.length })
    })
    socket.on('error', () => {})
  })
  return { closed, destroy: () => socket.destroy() }
}

function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: '127.0.0.1', port }, () => socket.end(text))
    let answer = ''
    socket.on('data', (data) => (answer += data))
    socket.on('close', () => resolve(answer))
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve(answer) : reject(error)))
  })
}

interface OpenStream {
  waitFor(pattern: RegExp): Promise<void>
  close(): void
}

/** Opens an event stream; rejects with the answer when the server refuses it. */
function openStream(port: number, target: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: target, headers: { accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        return reject(new Error(`stream refused: ${res.statusCode}`))
      }
      let text = ''
      const waiters: Array<() => void> = []
      res.on('data', (data: Buffer) => {
        text += data
        for (const check of [...waiters]) check()
      })
      res.on('error', () => {})
      resolve({
        waitFor: (pattern) =>
          new Promise<void>((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`no ${pattern} in:\n${text}`)), 5000)
            const check = () => {
              if (!pattern.test(text)) return
              clearTimeout(timer)
              waiters.splice(waiters.indexOf(check), 1)
              done()
            }
            waiters.push(check)
            check()
          }),
        close: () => req.destroy(),
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/** The promise's value, or a failure when it takes longer than `ms` (a stream that was let in never ends). */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Tries a few times: a closed stream leaves the server's count a moment after the client lets go. */
async function retry<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt()
    } catch (error) {
      if (tries === 20) throw error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}
