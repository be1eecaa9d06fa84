import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rm } from 'node:fs/promises'
import { makeTempDir, startServer } from '../support/helpers.ts'
import { startCli, stopAll } from '../support/process.ts'

// `--readonly` is the same everywhere (docs/http-api.md, "Security"): what the server
// offers (OPTIONS, Allow, the banner) lists only what it answers.

test.after(() => stopAll())

const targets = ['/', '/user', '/user/u1', '/user/u1/playlist', '/user/u1/playlist/p1', '/notes', '/notes/a/b']

test('a read-only server answers OPTIONS with GET, HEAD, OPTIONS on declared routes, generic nodes and the root', async () => {
  const server = await startServer({ readonly: true })
  try {
    for (const target of targets) {
      const answer = await server.request('OPTIONS', target)
      assert.is(answer.status, 204, target)
      assert.is(answer.headers.allow, 'GET, HEAD, OPTIONS', target)
    }
    const refused = await server.request('PUT', '/notes/a', { body: {} })
    assert.is(refused.status, 405)
    assert.is(refused.headers.allow, 'GET, HEAD, OPTIONS')
  } finally {
    await server.close()
  }
})

test('a server that writes still offers its write methods on OPTIONS', async () => {
  const server = await startServer()
  try {
    assert.match(String((await server.request('OPTIONS', '/user')).headers.allow), /POST/)
    assert.match(String((await server.request('OPTIONS', '/notes/a')).headers.allow), /PUT.*PATCH.*DELETE/)
  } finally {
    await server.close()
  }
})

test('the read-only banner says so and lists no write route', async () => {
  const dir = await makeTempDir()
  const cli = await startCli(['--port', '0', '--readonly', '--quiet', '--store', dir])
  try {
    const banner = cli.stdout()
    assert.match(banner, /read-only \(--readonly\)/)
    const routes = banner.slice(banner.indexOf('routes:\n'), banner.indexOf('Press Ctrl+C'))
    assert.not.match(routes, /\b(POST|PUT|PATCH|DELETE)\b/, routes)
    for (const route of ['/user\n', '/user/:user_id\n', '/user/:user_id/playlist/:playlist_id\n', 'any other URL']) assert.ok(routes.includes(route), `still lists ${route.trim()}`)
  } finally {
    await cli.stop()
    await rm(dir, { recursive: true, force: true })
  }
})

test.run()
