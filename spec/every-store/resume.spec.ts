import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { connect } from 'node:net'
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { makeTempDir, send, startServer, type TestServer } from '../support/helpers.ts'
import { runCli, startCli, stopAll } from '../support/process.ts'
import { openStream, withoutId, type ServerSentEvent } from '../support/event-stream.ts'

// Event ids and resuming (docs/http-api.md, "Live updates"): a client that drops and
// comes back gets what it missed, or is told that it must start again.

let server: TestServer
test.before.each(async () => {
  server = await startServer()
})
test.after.each(async () => {
  await server.close()
})

async function eventually(check: () => boolean, tries = 100): Promise<boolean> {
  for (let attempt = 0; attempt < tries; attempt++) {
    if (check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

/** Reads `count` events. */
async function take(stream: { next(): Promise<ServerSentEvent> }, count: number): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = []
  for (let index = 0; index < count; index++) events.push(await stream.next())
  return events
}

/** Asserts that no further event arrives within a short while. */
async function assertNoMoreEvents(stream: { next(timeoutMs?: number): Promise<ServerSentEvent> }): Promise<void> {
  const extra = await stream.next(300).catch(() => undefined)
  assert.is(extra, undefined, `no further event, got ${JSON.stringify(extra)}`)
}

test('every event carries an id that grows with each change, and the stream says how soon to come back', async () => {
  const stream = await openStream(server.port, '/notes')
  const value = await stream.next()
  assert.is(value.event, 'value')
  assert.match(value.id!, /^\d+$/)
  assert.is(stream.retry(), '1000')
  await server.request('PUT', '/notes/a', { body: {} })
  await server.request('PUT', '/elsewhere', { body: {} })
  await server.request('PATCH', '/notes/a', { body: { x: 1 } })
  const [put, patch] = await take(stream, 2)
  assert.is(Number(put.id), Number(value.id) + 1)
  assert.is(Number(patch.id), Number(value.id) + 3, 'the change elsewhere took an id too')
  stream.close()
})

test('a client that reconnects with Last-Event-ID gets every change it missed at or below its node, once and in order, then live ones', async () => {
  await server.request('PUT', '/notes/a', { body: { v: 1 } })
  const first = await openStream(server.port, '/notes')
  await first.next()
  await server.request('PUT', '/notes/b', { body: { v: 1 } })
  const seen = await first.next()
  first.close()
  await eventually(() => server.server.handler.openStreams === 0)
  // Meanwhile, away:
  await server.request('PATCH', '/notes/b', { body: { v: 2 } })
  await server.request('PUT', '/other/x', { body: {} })
  await server.request('PUT', '/notes/c/deep', { body: { v: 1 } })
  await server.request('DELETE', '/notes/a')
  await server.request('DELETE', '/')
    .then((answer) => assert.is(answer.status, 405)) // refused: no change, no id
  const again = await openStream(server.port, '/notes', { 'Last-Event-ID': seen.id! })
  const missed = await take(again, 3)
  assert.equal(missed.map(withoutId), [
    { event: 'patch', data: { path: '/notes/b', data: { v: 2 } } },
    { event: 'put', data: { path: '/notes/c/deep', data: { id: 'deep', v: 1 } } },
    { event: 'delete', data: { path: '/notes/a', data: { id: 'a', v: 1 } } },
  ])
  const ids = missed.map((event) => Number(event.id))
  assert.ok(ids[0] > Number(seen.id) && ids[0] < ids[1] && ids[1] < ids[2], `ids in order: ${ids}`)
  await server.request('PUT', '/notes/d', { body: {} })
  assert.equal(withoutId(await again.next()), { event: 'put', data: { path: '/notes/d', data: { id: 'd' } } })
  await assertNoMoreEvents(again)
  again.close()
})

test('?since= resumes like Last-Event-ID for clients that cannot set headers, and the header wins over it', async () => {
  const stream = await openStream(server.port, '/notes')
  const value = await stream.next()
  stream.close()
  await server.request('PUT', '/notes/a', { body: {} })
  await server.request('PUT', '/notes/b', { body: {} })
  const bySince = await openStream(server.port, `/notes?since=${value.id}`)
  assert.equal((await take(bySince, 2)).map((event) => event.data.path), ['/notes/a', '/notes/b'])
  await assertNoMoreEvents(bySince)
  const afterA = Number(value.id) + 1
  // EventSource keeps the URL it was opened with and sends the newer id in the header.
  const both = await openStream(server.port, `/notes?since=${value.id}`, { 'Last-Event-ID': String(afterA) })
  assert.equal((await take(both, 1)).map((event) => event.data.path), ['/notes/b'])
  await assertNoMoreEvents(both)
  bySince.close()
  both.close()
})

test('?_changes&since= answers the missed changes as JSON with the last id, and without since the value to start from', async () => {
  await server.request('PUT', '/notes/a', { body: { v: 1 } })
  const start = await server.request('GET', '/notes?_changes')
  assert.is(start.status, 200)
  assert.equal(start.json.value, [{ id: 'a', v: 1 }])
  assert.type(start.json.last, 'number')
  assert.is(start.json.gap, undefined)
  await server.request('PATCH', '/notes/a', { body: { v: 2 } })
  await server.request('PUT', '/elsewhere', { body: {} })
  await server.request('DELETE', '/notes/a')
  const polled = await server.request('GET', `/notes?_changes&since=${start.json.last}`)
  assert.is(polled.status, 200)
  assert.equal(polled.json.changes.map(({ id: _id, ...rest }: { id: number }) => rest), [
    { type: 'patch', path: '/notes/a', data: { v: 2 } },
    { type: 'delete', path: '/notes/a', data: { id: 'a', v: 2 } },
  ])
  assert.is(polled.json.changes[0].id, start.json.last + 1)
  assert.is(polled.json.last, start.json.last + 3)
  const nothingNew = await server.request('GET', `/notes?_changes&since=${polled.json.last}`)
  assert.equal(nothingNew.json, { last: polled.json.last, changes: [] })
  const malformed = await server.request('GET', '/notes?_changes&since=yesterday')
  assert.is(malformed.status, 400)
  assert.match(String(malformed.headers['content-type']), /^application\/problem\+json/)
  // The declared resources answer the feed too.
  const users = await server.request('GET', '/user?_changes')
  assert.equal(users.json, { last: polled.json.last, value: [] })
})

test('a client whose id is older than the window gets a gap event and the current value, never a silent gap', async () => {
  const small = await startServer({ changeWindow: 3 })
  try {
    const stream = await openStream(small.port, '/notes')
    const value = await stream.next()
    stream.close()
    for (const name of ['a', 'b', 'c', 'd']) await small.request('PUT', `/notes/${name}`, { body: {} })
    const late = await openStream(small.port, '/notes', { 'Last-Event-ID': value.id! })
    const gap = await late.next()
    assert.equal(gap, { event: 'gap', data: { path: '/notes', since: value.id } }, 'the gap carries no id')
    const fresh = await late.next()
    assert.is(fresh.event, 'value')
    assert.equal(fresh.data.data.map((doc: { id: string }) => doc.id), ['a', 'b', 'c', 'd'])
    assert.is(Number(fresh.id), Number(value.id) + 4)
    late.close()
    // Within the window it resumes as usual.
    const recent = await openStream(small.port, '/notes', { 'Last-Event-ID': String(Number(value.id) + 1) })
    assert.equal((await take(recent, 3)).map((event) => event.data.path), ['/notes/b', '/notes/c', '/notes/d'])
    recent.close()
    const polled = await small.request('GET', `/notes?_changes&since=${value.id}`)
    assert.is(polled.status, 200)
    assert.is(polled.json.gap, true)
    assert.is(polled.json.value.length, 4)
    assert.is(polled.json.last, Number(value.id) + 4)
  } finally {
    await small.close()
  }
})

test('an id the server never gave (from the future, or not a number) gets a gap and the value', async () => {
  const stream = await openStream(server.port, '/')
  const value = await stream.next()
  stream.close()
  for (const id of [String(Number(value.id) + 50), 'not-an-id']) {
    const resumed = await openStream(server.port, '/', { 'Last-Event-ID': id })
    assert.equal(await resumed.next(), { event: 'gap', data: { path: '/', since: id } })
    assert.is((await resumed.next()).event, 'value')
    resumed.close()
  }
})

test('an id from an earlier run of the server gets a gap and the value, since changes made meanwhile are unknown', async () => {
  const dir = await makeTempDir()
  try {
    const before = await startServer({ store: dir })
    await before.request('PUT', '/notes/a', { body: {} })
    const stream = await openStream(before.port, '/notes')
    const value = await stream.next()
    stream.close()
    await before.close(true)
    const after = await startServer({ store: dir })
    try {
      await after.request('PUT', '/notes/b', { body: {} })
      const resumed = await openStream(after.port, '/notes', { 'Last-Event-ID': value.id! })
      assert.is((await resumed.next()).event, 'gap')
      const fresh = await resumed.next()
      assert.is(fresh.event, 'value')
      assert.equal(fresh.data.data, [{ id: 'a' }, { id: 'b' }])
      assert.ok(Number(fresh.id) > Number(value.id), 'ids keep growing across restarts')
      resumed.close()
    } finally {
      await after.close(true)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('a client catching up on more than its stream buffer holds is paced by what it reads, not cut off', async () => {
  const paced = await startServer({ maxStreamBuffer: 64 * 1024, changeWindowBytes: 64 * 2 ** 20 })
  try {
    const stream = await openStream(paced.port, '/big')
    const value = await stream.next()
    stream.close()
    const text = 'y'.repeat(100 * 1024)
    for (let index = 0; index < 30; index++) await paced.request('PUT', `/big/${index}`, { body: { text } })
    const resumed = await openStream(paced.port, '/big', { 'Last-Event-ID': value.id! })
    const missed = await take(resumed, 30)
    assert.equal(missed.map((event) => event.data.path), Array.from({ length: 30 }, (_, index) => `/big/${index}`))
    await paced.request('PUT', '/big/live', { body: {} })
    assert.is((await resumed.next()).data.path, '/big/live', 'the stream is still open')
    resumed.close()
  } finally {
    await paced.close()
  }
})

/** The resident memory of a process, from /proc (Linux). */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024
}

const hasProc = existsSync('/proc/self/status')

;(hasProc ? test : test.skip)('a reader that stops reading is cut off past its buffer limit, and the server does not keep what it did not read', async () => {
  // The server runs in a process of its own, so its memory is measured alone.
  const dir = await makeTempDir()
  const cli = await startCli(['--port', '0', '--store', dir, '--quiet'])
  try {
    const doc = { text: 'x'.repeat(900 * 1024) }
    await send(cli.port, 'PUT', '/slow', { body: doc })
    // A client that asks for the stream and never reads a byte of it.
    const socket = connect(cli.port, '127.0.0.1')
    socket.pause()
    let closedByServer = false
    socket.on('close', () => (closedByServer = true))
    socket.on('error', () => {})
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write('GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n')
    await new Promise((resolve) => setTimeout(resolve, 200))
    const before = await residentBytes(cli.child.pid!)
    const writes = 250
    for (let index = 0; index < writes; index++) {
      const answer = await send(cli.port, 'PUT', '/slow', { body: { ...doc, index } })
      assert.is(answer.status, 200)
    }
    const grown = (await residentBytes(cli.child.pid!)) - before
    const written = writes * 900 * 1024
    // Kept unread, the events alone would be the written volume; the server holds a bounded part.
    assert.ok(grown < written, `RSS grew by ${(grown / 2 ** 20).toFixed(0)} MB for ${(written / 2 ** 20).toFixed(0)} MB written`)
    // Reading now drains what the connection still holds, then finds it closed by the server.
    let received = 0
    socket.on('data', (chunk: Buffer) => (received += chunk.length))
    socket.resume()
    assert.ok(await eventually(() => closedByServer, 250), `the server closed the stream (${received} bytes read after the storm)`)
    assert.ok(received < written / 4, `only what the connection held was left to read: ${received} bytes`)
    socket.destroy()
  } finally {
    await cli.stop()
    await rm(dir, { recursive: true, force: true })
  }
})

test('the command line sets the change window and the stream buffer, and refuses values that are no size or count', async () => {
  const dir = await makeTempDir()
  const cli = await startCli(['--port', '0', '--store', dir, '--quiet', '--change-window', '2', '--change-window-size', '1mb', '--max-stream-buffer', '1mb'])
  try {
    const start = await send(cli.port, 'GET', '/notes?_changes')
    for (const name of ['a', 'b', 'c']) await send(cli.port, 'PUT', `/notes/${name}`, { body: {} })
    assert.is((await send(cli.port, 'GET', `/notes?_changes&since=${start.json.last}`)).json.gap, true, 'three changes overflow a window of two')
    assert.is((await send(cli.port, 'GET', `/notes?_changes&since=${start.json.last + 1}`)).json.changes.length, 2)
  } finally {
    await cli.stop()
    await rm(dir, { recursive: true, force: true })
  }
  for (const args of [['--change-window', '0'], ['--change-window-size', 'lots'], ['--max-stream-buffer', '0']]) {
    const result = await runCli(args)
    assert.is(result.code, 2, args.join(' '))
    assert.match(result.stderr.split('\n')[0], `${args[0]} "${args[1]}" is not`, 'the first line names the flag and its value')
  }
})

if (!hasProc) console.log('skipped the slow-reader memory test: no /proc to read a process\'s memory from')

test.after(() => stopAll())

test.run()
