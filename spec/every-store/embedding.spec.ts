import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { rm } from 'node:fs/promises'
import * as restdir from '../../lib/index.ts'
import { createHandler, createServer, MemoryStore, Router, type Store, type StoredDoc, type NodePath, type Doc, type WriteConditions } from '../../lib/index.ts'
import { makeTempDir, openTestStore, send, type RequestOptions } from '../support/helpers.ts'
import { mountPathOf } from '../../lib/http/mount.ts'

// restdir embedded as a library (docs/library.md, "Using restdir as a library"): inside a plain node:http server,
// and as middleware in a Connect/Express-style chain written here, so the
// contract is proven without either framework.

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

/**
 * A Connect/Express-style app: `use(fn)` or `use('/mount', fn)`. A mounted
 * layer sees `req.url` with the mount path cut off, as both frameworks do;
 * `express: true` also sets `req.baseUrl`, as Express does.
 */
function miniApp(options: { express?: boolean } = {}) {
  const layers: { mount: string; handle: Middleware }[] = []
  const app = (req: IncomingMessage, res: ServerResponse) => {
    const request = req as IncomingMessage & { originalUrl?: string; baseUrl?: string }
    request.originalUrl ??= req.url
    const fullUrl = req.url ?? '/'
    let index = 0
    const next = (error?: unknown) => {
      req.url = fullUrl
      if (options.express) request.baseUrl = ''
      if (error) {
        res.statusCode = 500
        res.end('error passed to next')
        return
      }
      const layer = layers[index++]
      if (!layer) {
        res.statusCode = 404
        res.setHeader('Content-Type', 'text/plain')
        res.end('the app has nothing here')
        return
      }
      const path = fullUrl.split('?')[0]
      if (layer.mount !== '' && path !== layer.mount && !path.startsWith(layer.mount + '/')) return next()
      if (layer.mount !== '') {
        const rest = fullUrl.slice(layer.mount.length)
        req.url = rest.startsWith('/') ? rest : '/' + rest
        if (options.express) request.baseUrl = layer.mount
      }
      layer.handle(req, res, next)
    }
    next()
  }
  return {
    use(mountOrHandle: string | Middleware, handle?: Middleware) {
      if (typeof mountOrHandle === 'string') layers.push({ mount: mountOrHandle, handle: handle as Middleware })
      else layers.push({ mount: '', handle: mountOrHandle })
      return this
    },
    app,
  }
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

/** A www folder with one page, so static answers are predictable. */
async function makeWww(): Promise<string> {
  const www = await makeTempDir('restdir-www-')
  mkdirSync(join(www, 'docs'))
  writeFileSync(join(www, 'index.html'), '<!doctype html><title>home</title>')
  writeFileSync(join(www, 'docs', 'guide.txt'), 'a guide')
  return www
}

const library = suite('library')

library('the package exports what docs/library.md names', () => {
  for (const name of ['createServer', 'createHandler', 'FileStore', 'MemoryStore', 'Router', 'importDatabase', 'HttpError', 'encodeSegment', 'decodeFolderName']) {
    assert.type((restdir as Record<string, unknown>)[name], 'function', name)
  }
})

library('createHandler serves the whole API inside a plain node:http server', async () => {
  const { store, dispose } = await openTestStore()
  const handler = createHandler({ store, quiet: true })
  await handler.ready
  const server = http.createServer(handler)
  const port = await listen(server)
  try {
    const created = await send(port, 'POST', '/user', { body: { username: 'ada' } })
    assert.is(created.status, 201)
    assert.is(created.headers.location, `/user/${created.json.user_id}`)
    assert.is((await send(port, 'GET', `/user/${created.json.user_id}`)).json.username, 'ada')
    assert.is((await send(port, 'PUT', '/notes/n1', { body: { text: 'hi' } })).status, 201)
    const missing = await send(port, 'GET', '/nothing/here')
    assert.is(missing.status, 404)
    assert.is(missing.headers['content-type'], 'application/problem+json')
  } finally {
    await close(server)
    await handler.close()
    await dispose()
  }
})

library('createServer takes a Store object and answers from it', async () => {
  const store = new MemoryStore()
  const server = createServer({ store, quiet: true })
  await server.ready
  const port = await listen(server)
  try {
    assert.is((await send(port, 'PUT', '/shared/doc', { body: { n: 1 } })).status, 201)
    assert.equal((await store.read(['shared', 'doc']))?.doc, { id: 'doc', n: 1 })
    await store.write(['shared', 'other'], { id: 'other', n: 2 })
    assert.equal((await send(port, 'GET', '/shared')).json, [{ id: 'doc', n: 1 }, { id: 'other', n: 2 }])
  } finally {
    await server.shutdown()
  }
})

library('a custom Store is used for every read and write', async () => {
  /** docs/library.md's example: a store that counts reads and writes and keeps the data in a MemoryStore. */
  class CountingStore implements Store {
    reads = 0
    writes = 0
    readonly inner = new MemoryStore()
    read(path: NodePath): Promise<StoredDoc | undefined> { this.reads++; return this.inner.read(path) }
    children(path: NodePath) { return this.inner.children(path) }
    exists(path: NodePath) { return this.inner.exists(path) }
    write(path: NodePath, doc: Doc, conditions?: WriteConditions) { this.writes++; return this.inner.write(path, doc, conditions) }
    create(path: NodePath, doc: Doc, conditions?: WriteConditions) { this.writes++; return this.inner.create(path, doc, conditions) }
    remove(path: NodePath, conditions?: { expect?: string | null }) { return this.inner.remove(path, conditions) }
    close() { return this.inner.close() }
  }
  const store = new CountingStore()
  const server = createServer({ store, quiet: true })
  await server.ready
  const port = await listen(server)
  try {
    await send(port, 'POST', '/things', { body: { a: 1 } })
    await send(port, 'PUT', '/things/x', { body: { a: 2 } })
    assert.is(store.writes, 2)
    const readsBefore = store.reads
    assert.equal((await send(port, 'GET', '/things/x')).json, { id: 'x', a: 2 })
    assert.is(store.reads, readsBefore + 1, 'a GET of a document reads it from the store')
    assert.equal((await send(port, 'GET', '/things?_sort=a&_order=desc')).json.map((doc: { a: number }) => doc.a), [2, 1])
    assert.ok(store.reads >= readsBefore + 3, 'a listing reads each of its documents from the store')
    await store.inner.write(['things', 'x'], { id: 'x', a: 3 })
    assert.equal((await send(port, 'GET', '/things/x')).json, { id: 'x', a: 3 }, 'what the store holds is what a GET answers')
  } finally {
    await server.shutdown()
  }
})

library('Router matches patterns alone, without the rest of restdir', () => {
  const router = new Router<string>().add('GET', '/books/:id', 'readBook')
  const match = router.find('GET', '/books/42?x=1')
  assert.is(match?.handler, 'readBook')
  assert.is(match?.params.id, '42')
  assert.equal(router.find('DELETE', '/books/42')?.allow.sort(), ['GET', 'HEAD', 'OPTIONS'])
})

library.run()

const middleware = suite('middleware')

/** Starts a chain around restdir; `build` adds the layers. */
async function startChain(options: Parameters<typeof createHandler>[0], build: (app: ReturnType<typeof miniApp>, handler: ReturnType<typeof createHandler>) => void, express = false) {
  const opened = await openTestStore()
  const www = await makeWww()
  const handler = createHandler({ store: opened.store, www, quiet: true, ...options })
  await handler.ready
  const app = miniApp({ express })
  build(app, handler)
  const server = http.createServer(app.app)
  const port = await listen(server)
  return {
    port,
    request: (method: string, target: string, requestOptions?: RequestOptions) => send(port, method, target, requestOptions),
    async stop() {
      await close(server)
      await handler.close()
      await opened.dispose()
      await rm(www, { recursive: true, force: true })
    },
  }
}

for (const express of [false, true]) {
  const style = express ? 'Express' : 'Connect'

  middleware(`${style}: mounted at /data, restdir answers below it and its URLs carry the mount path`, async () => {
    const chain = await startChain({}, (app, handler) => app.use('/data', handler), express)
    try {
      const created = await chain.request('POST', '/data/user', { body: { username: 'ada' } })
      assert.is(created.status, 201)
      assert.is(created.headers.location, `/data/user/${created.json.user_id}`)
      assert.is((await chain.request('GET', created.headers.location as string)).json.username, 'ada')
      const note = await chain.request('POST', '/data/notes', { body: { text: 'x' } })
      assert.is(note.headers.location, `/data/notes/${note.json.id}`)
      for (let n = 0; n < 3; n++) await chain.request('PUT', `/data/pages/p${n}`, { body: {} })
      const page = await chain.request('GET', '/data/pages?_page=1&_limit=2')
      assert.match(String(page.headers.link), /^<http:\/\/127\.0\.0\.1:\d+\/data\/pages\?_page=1&_limit=2>; rel="first"/)
      assert.is((await chain.request('GET', '/data/')).headers['x-restdir-api'], '/data')
      assert.is((await chain.request('GET', '/data')).headers['x-restdir-api'], '/data')
      assert.is((await chain.request('GET', '/data?x=/y')).headers['x-restdir-api'], '/data')
      assert.is((await chain.request('GET', '/elsewhere')).text, 'the app has nothing here')
    } finally {
      await chain.stop()
    }
  })

  middleware(`${style}: with a prefix, URLs outside it that name no file go on to the next middleware`, async () => {
    const chain = await startChain({ prefix: '/api' }, (app, handler) => {
      app.use('/data', handler)
      app.use((req, res) => res.end(`next saw ${req.method} ${req.url}`))
    }, express)
    try {
      assert.is((await chain.request('GET', '/data/no-such-file.txt')).text, 'next saw GET /data/no-such-file.txt')
      assert.is((await chain.request('POST', '/data/user', { body: {} })).text, 'next saw POST /data/user')
      assert.is((await chain.request('GET', '/data/docs/guide.txt')).text, 'a guide')
      const page = await chain.request('GET', '/data/')
      assert.is(page.headers['x-restdir-api'], '/data/api')
      const created = await chain.request('POST', '/data/api/user', { body: { username: 'bo' } })
      assert.is(created.status, 201)
      assert.is(created.headers.location, `/data/api/user/${created.json.user_id}`)
    } finally {
      await chain.stop()
    }
  })
}

middleware('a read that finds nothing goes on to the next middleware; writes and errors are answered by restdir', async () => {
  const chain = await startChain({}, (app, handler) => {
    app.use(handler)
    app.use((req, res) => res.end(`fallback for ${req.url}`))
  })
  try {
    assert.is((await chain.request('GET', '/health')).text, 'fallback for /health')
    assert.is((await chain.request('HEAD', '/health')).status, 200)
    const created = await chain.request('PUT', '/health', { body: { ok: true } })
    assert.is(created.status, 201)
    assert.is((await chain.request('GET', '/health')).json.ok, true)
    const refused = await chain.request('PATCH', '/nothing', { body: { a: 1 } })
    assert.is(refused.status, 404)
    assert.is(refused.headers['content-type'], 'application/problem+json')
    const bad = await chain.request('GET', '/health?_limit=x')
    assert.is(bad.status, 200, 'a document ignores listing parameters')
    await chain.request('PUT', '/list/a', { body: {} })
    const badList = await chain.request('GET', '/list?_limit=x')
    assert.is(badList.status, 400)
    assert.is(badList.headers['content-type'], 'application/problem+json')
    assert.is((await chain.request('GET', '/index.html')).text, '<!doctype html><title>home</title>')
  } finally {
    await chain.stop()
  }
})

middleware('a body parsed by an earlier middleware (as express.json() does) is taken from req.body', async () => {
  const chain = await startChain({}, (app, handler) => {
    app.use((req, _res, next) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString()
        ;(req as IncomingMessage & { body?: unknown }).body = text === '' ? {} : JSON.parse(text)
        next()
      })
    })
    app.use(handler)
  })
  try {
    // fetch with a time limit: a handler that waited for the body a second time would never answer.
    const created = await fetch(`http://127.0.0.1:${chain.port}/notes`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'parsed before' }),
      signal: AbortSignal.timeout(5000),
    })
    assert.is(created.status, 201)
    assert.is(((await created.json()) as { text: string }).text, 'parsed before')
    const listBody = await chain.request('POST', '/notes', { body: [1, 2] })
    assert.is(listBody.status, 400)
    assert.match(listBody.json.detail, /JSON object/)
  } finally {
    await chain.stop()
  }
})

middleware('the mount path comes from Express\'s req.baseUrl first, else from what Connect cut off req.url', () => {
  const request = (fields: Record<string, string>) => fields as unknown as IncomingMessage
  assert.is(mountPathOf(request({ url: '/x', baseUrl: '/data', originalUrl: '/rewritten/x' })), '/data')
  assert.is(mountPathOf(request({ url: '/x?q=/a', originalUrl: '/data/x?q=/a' })), '/data')
  assert.is(mountPathOf(request({ url: '/', originalUrl: '/data/' })), '/data')
  assert.is(mountPathOf(request({ url: '/', originalUrl: '/data?q=1' })), '/data')
  assert.is(mountPathOf(request({ url: '/x', originalUrl: '/x' })), '')
  assert.is(mountPathOf(request({ url: '/x' })), '')
  assert.is(mountPathOf(request({ url: '/a', originalUrl: '/b' })), '', 'a rewritten URL names no mount')
})

middleware.run()
