import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { request } from 'node:http'
import type { IncomingMessage, ClientRequest } from 'node:http'
import { openTestStore, startServer, wrapStore, type TestServer } from './helpers.ts'
import type { NodePath } from '../lib/store/store.ts'

interface ServerSentEvent {
  event: string
  data: any
}

interface EventStream {
  response: IncomingMessage
  /** The next event, waiting for it if need be (fails after two seconds). */
  next(): Promise<ServerSentEvent>
  close(): void
}

/** Opens an SSE stream the way EventSource does, and parses events as they arrive. */
function openStream(port: number, target: string): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const queue: ServerSentEvent[] = []
    const waiters: Array<(event: ServerSentEvent) => void> = []
    let buffer = ''
    const req: ClientRequest = request({ host: '127.0.0.1', port, path: target, headers: { Accept: 'text/event-stream' } }, (response) => {
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (event === undefined || data === undefined) continue
          const parsed = { event, data: JSON.parse(data) }
          const waiter = waiters.shift()
          if (waiter) waiter(parsed)
          else queue.push(parsed)
        }
      })
      resolve({
        response,
        next: () => {
          const queued = queue.shift()
          if (queued) return Promise.resolve(queued)
          return new Promise((resolveEvent, rejectEvent) => {
            const timer = setTimeout(() => rejectEvent(new Error('no event within 2 s')), 2000)
            waiters.push((event) => {
              clearTimeout(timer)
              resolveEvent(event)
            })
          })
        },
        close: () => req.destroy(),
      })
    })
    req.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error)
    })
    req.end()
  })
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
  assert.equal((await stream.next()).data, { path: '/user', data: null }) // no user yet: the node does not exist
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
    const stream = await openStream(watchedServer.port, '/watched/doc')
    await hold.reached
    // The stream's read has version 1 in hand; version 2 lands before it is sent.
    assert.is((await watchedServer.request('PUT', '/watched/doc', { body: { v: 2 } })).status, 200)
    hold.release()
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
