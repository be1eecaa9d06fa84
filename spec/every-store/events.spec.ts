import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openTestStore, startServer, wrapStore, type TestServer } from '../support/helpers.ts'
import type { NodePath } from '../../lib/store/store.ts'
import { openStream as openWithIds, withoutId, type EventStream } from '../support/event-stream.ts'

/** The stream, with each event's id left out (spec/every-store/resume.spec.ts is about ids). */
async function openStream(port: number, target: string): Promise<EventStream> {
  const stream = await openWithIds(port, target)
  return { ...stream, next: async (timeoutMs?: number) => withoutId(await stream.next(timeoutMs)) }
}

async function eventually(check: () => boolean): Promise<boolean> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

let server: TestServer
test.before.each(async () => {
  server = await startServer()
})
test.after.each(async () => {
  await server.close()
})

test('a GET asking for text/event-stream gets an SSE stream that starts with the current value', async () => {
  await server.request('PUT', '/notes/first', { body: { text: 'hi' } })
  const stream = await openStream(server.port, '/notes/first')
  assert.is(stream.response.statusCode, 200)
  assert.match(String(stream.response.headers['content-type']), /^text\/event-stream/)
  assert.is(stream.response.headers['cache-control'], 'no-cache')
  const first = await stream.next()
  assert.equal(first, { event: 'value', data: { path: '/notes/first', data: { id: 'first', text: 'hi' } } })
  stream.close()
})

test('the first value of a collection is its documents, and of a missing node null', async () => {
  await server.request('PUT', '/notes/a', { body: { n: 1 } })
  await server.request('PUT', '/notes/b', { body: { n: 2 } })
  const collection = await openStream(server.port, '/notes')
  assert.equal((await collection.next()).data.data, [{ id: 'a', n: 1 }, { id: 'b', n: 2 }])
  const missing = await openStream(server.port, '/nothing/here')
  assert.equal(await missing.next(), { event: 'value', data: { path: '/nothing/here', data: null } })
  collection.close()
  missing.close()
})

test('the first value is exactly what a GET of the same URL and query answers', async () => {
  await server.request('PUT', '/items/a', { body: { a: 1 } })
  await server.request('PUT', '/items/b', { body: { a: 3 } })
  await server.request('PUT', '/items/c', { body: { a: 2 } })
  const user = await server.request('POST', '/user', { body: { username: 'ada' } })
  const targets = [
    '/items?_sort=-a&_limit=1', '/items?a_gte=2&_sort=a', '/items?_page=2&_limit=2', '/items?_start=1', '/items/b',
    `/user/${user.json.user_id}/playlist`, '/user?username=nobody',
  ]
  for (const target of targets) {
    const answer = await server.request('GET', target)
    assert.is(answer.status, 200, target)
    const stream = await openStream(server.port, target)
    assert.equal((await stream.next()).data.data, answer.json, target)
    stream.close()
  }
  await server.request('DELETE', `/user/${user.json.user_id}`)
  const empty = await openStream(server.port, '/user')
  assert.equal((await empty.next()).data.data, (await server.request('GET', '/user')).json)
  assert.equal((await server.request('GET', '/user')).json, [])
  empty.close()
})

test('a stream with a malformed listing query is refused as a GET of it is, and opens nothing', async () => {
  await server.request('PUT', '/items/a', { body: { a: 1 } })
  const stream = await openStream(server.port, '/items?_limit=ten')
  assert.is(stream.response.statusCode, 400)
  const answer = { headers: stream.response.headers }
  assert.match(String(answer.headers['content-type']), /^application\/problem\+json/)
  assert.is(server.server.handler.openStreams, 0)
  stream.close()
})

test('each stream is logged once, when it closes, with its path, duration and events sent', async () => {
  const lines: string[] = []
  const logged = await startServer({ quiet: false, log: (line) => lines.push(line) })
  try {
    const stream = await openStream(logged.port, '/notes?_sort=id')
    await stream.next()
    await logged.request('PUT', '/notes/a', { body: {} })
    await stream.next()
    stream.close()
    assert.ok(await eventually(() => lines.some((line) => line.startsWith('GET /notes'))), 'the stream was logged')
    const ended = await openStream(logged.port, '/ended')
    await ended.next()
    await logged.server.shutdown()
    const streamLines = lines.filter((line) => line.startsWith('GET '))
    assert.is(streamLines.length, 2, streamLines.join('\n'))
    assert.match(streamLines[0], /^GET \/notes\?_sort=id 200 \d+(\.\d+)?ms stream, 2 events$/)
    assert.match(streamLines[1], /^GET \/ended 200 \d+(\.\d+)?ms stream, 1 event$/)
  } finally {
    await logged.server.shutdown().catch(() => {})
  }
})

test('put, patch and delete below the watched node arrive in order with their path and data', async () => {
  const stream = await openStream(server.port, '/projects')
  await stream.next()
  await server.request('PUT', '/projects/p1/tasks/t1', { body: { title: 'write', done: false } })
  await server.request('PATCH', '/projects/p1/tasks/t1', { body: { done: true } })
  await server.request('DELETE', '/projects/p1/tasks/t1')
  assert.equal(await stream.next(), { event: 'put', data: { path: '/projects/p1/tasks/t1', data: { id: 't1', title: 'write', done: false } } })
  assert.equal(await stream.next(), { event: 'patch', data: { path: '/projects/p1/tasks/t1', data: { done: true } } })
  assert.equal(await stream.next(), { event: 'delete', data: { path: '/projects/p1/tasks/t1', data: { id: 't1', title: 'write', done: true } } })
  stream.close()
})

test('a POST is reported as a put of the new document, and declared resources stream too', async () => {
  const stream = await openStream(server.port, '/user')
  assert.equal((await stream.next()).data, { path: '/user', data: [] }) // no user yet: as GET /user answers
  const created = await server.request('POST', '/user', { body: { username: 'ada' } })
  const event = await stream.next()
  assert.is(event.event, 'put')
  assert.is(event.data.path, `/user/${created.json.user_id}`)
  assert.equal(event.data.data, created.json)
  stream.close()
})

test('changes elsewhere are not sent, but deleting an ancestor of the watched node is', async () => {
  await server.request('PUT', '/a/b/c', { body: {} })
  const stream = await openStream(server.port, '/a/b/c')
  await stream.next()
  await server.request('PUT', '/a/other', { body: { x: 1 } })
  await server.request('PUT', '/z', { body: { x: 1 } })
  await server.request('DELETE', '/a')
  assert.equal(await stream.next(), { event: 'delete', data: { path: '/a', data: null } })
  stream.close()
})

test('encoded segments are reported percent-encoded in event paths', async () => {
  const stream = await openStream(server.port, '/')
  await stream.next()
  await server.request('PUT', '/dir/a%2Fb%20c', { body: {} })
  assert.is((await stream.next()).data.path, '/dir/a%2Fb%20c')
  stream.close()
})

test('a client that disconnects leaves no listener and no open stream behind', async () => {
  const handler = server.server.handler
  const baseline = handler.documents!.listenerCount
  const streams = await Promise.all([1, 2, 3].map(() => openStream(server.port, '/watched')))
  for (const stream of streams) await stream.next()
  assert.is(handler.documents!.listenerCount, baseline + 3)
  assert.is(handler.openStreams, 3)
  for (const stream of streams) stream.close()
  assert.ok(await eventually(() => handler.documents!.listenerCount === baseline && handler.openStreams === 0), 'listeners were left behind')
  const write = await server.request('PUT', '/watched', { body: { still: 'fine' } })
  assert.is(write.status, 201)
})

/**
 * Store hooks that, once armed, keep the answer of the next read of `watched`
 * until released, as a slow disk does: `reached` settles once that read has the document.
 */
function holdNextRead(watched: NodePath) {
  let armed = false
  let reached!: () => void
  let release!: () => void
  const reachedRead = new Promise<void>((resolve) => (reached = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  const hooks = {
    async after(operation: string, path: NodePath) {
      if (!armed || (operation !== 'read' && operation !== 'readText') || path.join('/') !== watched.join('/')) return
      armed = false
      reached()
      await released
    },
  }
  return { hooks, arm: () => (armed = true), reached: reachedRead, release }
}

test('a change made while the stream reads the first value is sent after it, not lost', async () => {
  const opened = await openTestStore()
  const hold = holdNextRead(['watched', 'doc'])
  const watchedServer = await startServer({ store: wrapStore(opened.store, hold.hooks) })
  try {
    await watchedServer.request('PUT', '/watched/doc', { body: { v: 1 } })
    hold.arm()
    // The stream answers once it has the value, so its headers come after the held read.
    const opening = openStream(watchedServer.port, '/watched/doc')
    await hold.reached
    // The stream's read has version 1 in hand; version 2 lands before it is sent.
    assert.is((await watchedServer.request('PUT', '/watched/doc', { body: { v: 2 } })).status, 200)
    hold.release()
    const stream = await opening
    assert.equal(await stream.next(), { event: 'value', data: { path: '/watched/doc', data: { id: 'doc', v: 1 } } })
    await watchedServer.request('PUT', '/watched/doc', { body: { v: 3 } })
    assert.equal(await stream.next(), { event: 'put', data: { path: '/watched/doc', data: { id: 'doc', v: 2 } } })
    assert.equal(await stream.next(), { event: 'put', data: { path: '/watched/doc', data: { id: 'doc', v: 3 } } })
    stream.close()
  } finally {
    await watchedServer.close()
    await opened.dispose()
  }
})

test('shutting the server down ends open streams', async () => {
  const stream = await openStream(server.port, '/')
  await stream.next()
  const ended = new Promise<void>((resolve) => stream.response.on('end', resolve))
  await server.server.shutdown()
  await ended
  server = await startServer() // after.each closes a server
})

test.run()
