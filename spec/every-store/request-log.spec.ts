import { test } from 'uvu'
import * as assert from 'uvu/assert'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHandler, type RestdirHandler } from '../../lib/index.ts'
import { openTestStore, send } from '../support/helpers.ts'

// One log line per request (docs/cli.md, "The command line"), with the path as the
// client sent it, also under a host app's mount path; none for a request
// restdir handed on with next(), which the host app answers and logs.

interface Mounted {
  port: number
  lines: string[]
  /** Waits until `count` lines are logged (a line is written once the answer is sent). */
  logged(count: number): Promise<void>
  close(): Promise<void>
}

/**
 * restdir mounted at `/data` by a host app, as Express does (`req.url` cut,
 * `originalUrl` and, with `express`, `baseUrl` set), or as Connect does
 * (`originalUrl` only). What restdir hands on gets the app's own 404.
 */
async function mounted(options: { express: boolean; prefix?: string }): Promise<Mounted> {
  const { store, dispose } = await openTestStore()
  const lines: string[] = []
  const handler: RestdirHandler = createHandler({ store, prefix: options.prefix, log: (line) => lines.push(line) })
  await handler.ready
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const request = req as IncomingMessage & { originalUrl?: string; baseUrl?: string }
    const fullUrl = req.url ?? '/'
    const appNotFound = () => {
      req.url = fullUrl
      res.writeHead(404, { 'content-type': 'text/plain' }).end('the app has nothing here')
    }
    if (!fullUrl.startsWith('/data/') && fullUrl !== '/data') return appNotFound()
    request.originalUrl = fullUrl
    if (options.express) request.baseUrl = '/data'
    req.url = fullUrl.slice('/data'.length) || '/'
    if (req.url[0] === '?') req.url = '/' + req.url
    handler(req, res, appNotFound)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    lines,
    async logged(count) {
      for (let waited = 0; lines.length < count && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await handler.close()
      await dispose()
    },
  }
}

for (const express of [true, false]) {
  const framework = express ? 'Express' : 'Connect'
  test(`under ${framework}, a log line shows the path as the client sent it, mount path included`, async () => {
    const app = await mounted({ express })
    try {
      assert.is((await send(app.port, 'PUT', '/data/notes/a?x=1', { body: { v: 1 } })).status, 201)
      assert.is((await send(app.port, 'GET', '/data/notes/a')).status, 200)
      await app.logged(2)
      assert.is(app.lines.length, 2, app.lines.join(' | '))
      assert.match(app.lines[0], /^PUT \/data\/notes\/a\?x=1 201 \d+\.\dms$/)
      assert.match(app.lines[1], /^GET \/data\/notes\/a 200 /)
    } finally {
      await app.close()
    }
  })

  test(`under ${framework}, a request handed on with next() leaves no log line`, async () => {
    const app = await mounted({ express, prefix: '/api' })
    try {
      // Outside the prefix: not restdir's. Inside it, a read that finds nothing: the app's too.
      const outside = await send(app.port, 'GET', '/data/elsewhere')
      assert.is(outside.status, 404)
      assert.is(outside.text, 'the app has nothing here')
      const missing = await send(app.port, 'GET', '/data/api/nothing/here')
      assert.is(missing.text, 'the app has nothing here')
      assert.is((await send(app.port, 'DELETE', '/data/api/nothing')).status, 404)
      await app.logged(1)
      // Let any late line arrive before counting.
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(app.lines.map((line) => line.replace(/ [\d.]+ms$/, '')), ['DELETE /data/api/nothing 404'])
    } finally {
      await app.close()
    }
  })
}

test.run()
