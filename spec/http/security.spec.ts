import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import http from 'node:http'
import { networkInterfaces } from 'node:os'
import { connect, type AddressInfo } from 'node:net'
import { rm } from 'node:fs/promises'
import { createHandler } from '../../lib/handler.ts'
import { makeTempDir, send, startServer, startServerOnFolder } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'
import { startCli } from '../support/process.ts'
import { MemoryStore } from '../../lib/store/index.ts'

// docs/http-api.md, "Security": loopback by default, the DNS-rebinding Host check, CORS for
// loopback origins only unless widened, a Bearer token on writes, read-only mode.

const WRITES: Array<[string, string, unknown]> = [
  ['POST', '/guarded', { a: 1 }],
  ['PUT', '/guarded/doc', { a: 2 }],
  ['PATCH', '/guarded/doc', { a: 3 }],
  ['DELETE', '/guarded/doc', undefined],
]

// ---------------------------------------------------------------- binding and Host

const binding = suite('binding and the Host check')

binding('the command line binds 127.0.0.1 by default and takes its token from RESTDIR_TOKEN', async () => {
  const store = await makeTempDir()
  const cli = await startCli(['--port', '0', '--store', store, '--quiet'], { env: { RESTDIR_TOKEN: 'from-the-environment' } })
  try {
    assert.match(cli.stdout(), /listening on http:\/\/127\.0\.0\.1:\d+\//)
    // No other interface answers: a machine with an external address must not reach it.
    const external = Object.values(networkInterfaces()).flat().find((info) => info && info.family === 'IPv4' && !info.internal)
    if (external) assert.is(await canConnect(external.address, cli.port), false, `reachable on ${external.address}`)
    // Any machine: Linux answers all of 127/8 locally, so a server on 0.0.0.0 would take 127.0.0.2 too.
    if (process.platform === 'linux') assert.is(await canConnect('127.0.0.2', cli.port), false, 'reachable on 127.0.0.2')
    assert.is(await canConnect('127.0.0.1', cli.port), true)

    assertProblem(await send(cli.port, 'PUT', '/env/doc', { body: { v: 1 } }), 401)
    const allowed = await send(cli.port, 'PUT', '/env/doc', { body: { v: 1 }, headers: { authorization: 'Bearer from-the-environment' } })
    assert.is(allowed.status, 201)
  } finally {
    await cli.stop()
    await rm(store, { recursive: true, force: true })
  }
})

binding('while bound to loopback, a request addressed to another host name is 403 (DNS rebinding)', async () => {
  const server = await startServerOnFolder()
  try {
    for (const host of ['evil.example', `evil.example:${server.port}`, `192.168.1.20:${server.port}`, 'localhost.evil.example', '[2001:db8::1]:80']) {
      assertProblem(await server.request('GET', '/', { headers: { host } }), 403, /DNS rebinding/)
      assertProblem(await server.request('PUT', '/rebind/doc', { body: { v: 1 }, headers: { host } }), 403)
      assertProblem(await server.request('GET', '/rebind', { headers: { host, accept: 'text/event-stream' } }), 403)
    }
    assert.is((await server.request('GET', '/rebind/doc')).status, 404, 'the refused PUT stored nothing')
  } finally {
    await server.close()
  }
})

binding('while bound to loopback, loopback host names are served', async () => {
  const server = await startServerOnFolder()
  try {
    const { port } = server
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `app.localhost:${port}`, `127.0.0.2:${port}`, 'localhost']) {
      const answer = await server.request('PUT', '/named/doc', { body: { host }, headers: { host } })
      assert.ok(answer.status === 200 || answer.status === 201, `${host}: ${answer.status}`)
    }
  } finally {
    await server.close()
  }
})

binding('bound to every interface, any host name is served: exposing the server was asked for', async () => {
  const server = await startServerOnFolder({}, '0.0.0.0')
  try {
    const answer = await server.request('PUT', '/exposed/doc', { body: { v: 1 }, headers: { host: 'data.example.org' } })
    assert.is(answer.status, 201)
  } finally {
    await server.close()
  }
})

binding('createHandler in another server judges each request by its connection, unless told the bound address', async () => {
  const dir = await makeTempDir()
  const guessing = createHandler({ store: dir, quiet: true })
  await guessing.ready
  const host = http.createServer((req, res) => guessing(req, res))
  await new Promise<void>((resolve) => host.listen(0, '0.0.0.0', resolve))
  const port = (host.address() as AddressInfo).port
  try {
    // Over loopback, the request is held to a loopback name, as a rebinding attack would arrive.
    assertProblem(await send(port, 'GET', '/', { headers: { host: 'evil.example' } }), 403)
    assert.is((await send(port, 'PUT', '/mw/doc', { body: { v: 1 }, headers: { host: `localhost:${port}` } })).status, 201)
  } finally {
    await new Promise((resolve) => host.close(resolve))
    await guessing.close()
  }

  const told = createHandler({ store: dir, quiet: true, host: '0.0.0.0' })
  await told.ready
  const exposed = http.createServer((req, res) => told(req, res))
  await new Promise<void>((resolve) => exposed.listen(0, '0.0.0.0', resolve))
  const exposedPort = (exposed.address() as AddressInfo).port
  try {
    const answer = await send(exposedPort, 'GET', '/mw/doc', { headers: { host: 'data.example.org' } })
    assert.is(answer.status, 200)
  } finally {
    await new Promise((resolve) => exposed.close(resolve))
    await told.close()
    await rm(dir, { recursive: true, force: true })
  }
})

binding.run()

// ---------------------------------------------------------------- CORS

const cors = suite('CORS')

cors('a loopback origin gets CORS headers, with credentials and the headers a page needs exposed', async () => {
  const server = await startServerOnFolder()
  try {
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:8080', 'https://localhost', 'http://[::1]:3000']) {
      const answer = await server.request('POST', '/cors/items', { body: { origin }, headers: { origin } })
      assert.is(answer.status, 201)
      assert.is(answer.headers['access-control-allow-origin'], origin)
      assert.is(answer.headers['access-control-allow-credentials'], 'true', 'a page that sends its cookies reads the answer')
      const exposed = String(answer.headers['access-control-expose-headers']).split(/\s*,\s*/)
      for (const name of ['X-Total-Count', 'Link', 'Location', 'ETag']) assert.ok(exposed.includes(name), `${name} exposed`)
      assert.match(String(answer.headers.vary), /Origin/)
    }
  } finally {
    await server.close()
  }
})

cors('every kind of answer to an allowed origin carries the CORS headers, and none goes without Vary', async () => {
  const server = await startServerOnFolder()
  const origin = 'http://localhost:5173'
  const withCors = (answer: { status: number; headers: http.IncomingHttpHeaders }, what: string) => {
    assert.is(answer.headers['access-control-allow-origin'], origin, what)
    assert.match(String(answer.headers['access-control-expose-headers']), /ETag/, what)
    assert.match(String(answer.headers.vary), /Origin/, what)
  }
  try {
    const created = await server.request('PUT', '/kinds/doc', { body: { v: 1 }, headers: { origin } })
    withCors(created, 'a write')
    const read = await server.request('GET', '/kinds/doc', { headers: { origin } })
    withCors(read, 'a document')
    withCors(await server.request('GET', '/kinds/doc', { headers: { origin, 'if-none-match': String(read.headers.etag) } }), 'a 304')
    withCors(await server.request('GET', '/kinds', { headers: { origin } }), 'a collection')
    withCors(await server.request('GET', '/kinds/none', { headers: { origin } }), 'a 404')
    withCors(await server.request('OPTIONS', '/kinds/doc', { headers: { origin } }), 'an OPTIONS without preflight')
    withCors(await server.request('DELETE', '/kinds/doc', { headers: { origin } }), 'a 204')
    withCors(await server.request('GET', '/', { headers: { origin } }), 'a static file')
    const stream = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: server.port, path: '/kinds', headers: { origin, accept: 'text/event-stream' } }, resolve)
      req.on('error', reject)
      req.end()
    })
    withCors({ status: stream.statusCode ?? 0, headers: stream.headers }, 'an event stream')
    stream.destroy()

    // Without an Origin there is nothing to allow, but caches must still keep origins apart.
    const plain = await server.request('GET', '/kinds', {})
    assert.is(plain.headers['access-control-allow-origin'], undefined)
    assert.is(plain.headers['access-control-expose-headers'], undefined)
    assert.match(String(plain.headers.vary), /Origin/)
  } finally {
    await server.close()
  }
})

cors('another origin may read without CORS headers, so its page never sees the answer', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/public/doc', { body: { v: 1 } })
    const answer = await server.request('GET', '/public/doc', { headers: { origin: 'https://evil.example' } })
    assert.is(answer.status, 200)
    assert.is(answer.headers['access-control-allow-origin'], undefined)
    assert.match(String(answer.headers.vary), /Origin/, 'caches keep answers for different origins apart')
  } finally {
    await server.close()
  }
})

cors('another origin cannot write, not even with a form a browser sends without asking (CSRF)', async () => {
  const server = await startServerOnFolder()
  try {
    const form = await server.request('POST', '/user', {
      body: 'username=mallory',
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
    })
    assertProblem(form, 403, /--cors/)
    assert.is(form.headers['access-control-allow-origin'], undefined)
    for (const [method, target, body] of WRITES) {
      assertProblem(await server.request(method, target, { body, headers: { origin: 'null' } }), 403)
    }
    assert.equal((await server.request('GET', '/user')).json, [])
    assert.is((await server.request('GET', '/guarded')).status, 404)
  } finally {
    await server.close()
  }
})

cors('the playground keeps working: a page served by the server writes to its own origin', async () => {
  const server = await startServerOnFolder({}, '0.0.0.0')
  const { port } = server
  try {
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const answer = await send(port, 'POST', '/user', { body: {}, headers: { origin, host: new URL(origin).host } })
      assert.is(answer.status, 201, origin)
    }
    // Reached by a LAN address when exposed, the page's own origin is still its own.
    const lan = await send(port, 'POST', '/user', { body: {}, headers: { origin: `http://192.168.1.20:${port}`, host: `192.168.1.20:${port}` } })
    assert.is(lan.status, 201)
  } finally {
    await server.close()
  }
})

cors('a preflight from an allowed origin is answered 204 before routing', async () => {
  const server = await startServerOnFolder()
  try {
    const origin = 'http://localhost:5173'
    for (const [method, target] of [['PUT', '/anything/at/all'], ['PATCH', '/user/nobody'], ['DELETE', '/user/nobody/playlist/none'], ['POST', '/']]) {
      const answer = await server.request('OPTIONS', target, {
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type, if-match, authorization' },
      })
      assert.is(answer.status, 204, `${method} ${target}`)
      assert.is(answer.headers['access-control-allow-origin'], origin)
      assert.ok(String(answer.headers['access-control-allow-methods']).split(/\s*,\s*/).includes(method))
      assert.is(answer.headers['access-control-allow-headers'], 'content-type, if-match, authorization')
      assert.ok(Number(answer.headers['access-control-max-age']) > 0)
      assert.match(String(answer.headers.vary), /Access-Control-Request-Method/)
      assert.is(answer.text, '')
    }
    // A plain OPTIONS (no Access-Control-Request-Method) is the API's own: 204 with Allow.
    const plain = await server.request('OPTIONS', '/user', { headers: { origin } })
    assert.is(plain.status, 204)
    assert.is(plain.headers.allow, 'POST, GET, HEAD, OPTIONS')
    assert.is(plain.headers['access-control-allow-methods'], undefined)
  } finally {
    await server.close()
  }
})

cors('a preflight from another origin is 403 without CORS headers', async () => {
  const server = await startServerOnFolder()
  try {
    const answer = await server.request('OPTIONS', '/user', {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    })
    assertProblem(answer, 403)
    assert.is(answer.headers['access-control-allow-origin'], undefined)
    assert.is(answer.headers['access-control-allow-methods'], undefined)
  } finally {
    await server.close()
  }
})

cors('--cors with a list widens CORS to exactly those origins', async () => {
  const server = await startServerOnFolder({ cors: 'https://a.example, https://b.example:8443' })
  try {
    for (const origin of ['https://a.example', 'https://b.example:8443', 'http://localhost:3000']) {
      const answer = await server.request('PUT', '/wide/doc', { body: {}, headers: { origin } })
      assert.ok(answer.status < 300, `${origin}: ${answer.status}`)
      assert.is(answer.headers['access-control-allow-origin'], origin)
    }
    for (const origin of ['https://c.example', 'http://a.example', 'https://b.example']) {
      assertProblem(await server.request('PUT', '/wide/doc', { body: {}, headers: { origin } }), 403)
    }
  } finally {
    await server.close()
  }
})

cors("--cors '*' lets every origin in, each echoed with credentials, never the literal * beside them", async () => {
  const server = await startServerOnFolder({ cors: '*' })
  try {
    const answer = await server.request('POST', '/open', { body: {}, headers: { origin: 'https://anyone.example' } })
    assert.is(answer.status, 201)
    assert.is(answer.headers['access-control-allow-origin'], 'https://anyone.example')
    assert.is(answer.headers['access-control-allow-credentials'], 'true')
    assert.match(String(answer.headers.vary), /Origin/)
    const preflight = await server.request('OPTIONS', '/open', { headers: { origin: 'null', 'access-control-request-method': 'DELETE' } })
    assert.is(preflight.status, 204)
    assert.is(preflight.headers['access-control-allow-origin'], 'null')
    assert.is(preflight.headers['access-control-allow-credentials'], 'true')
  } finally {
    await server.close()
  }
})

cors('an origin that is not one is refused when the server starts', () => {
  assert.throws(() => createHandler({ store: new MemoryStore(), cors: 'not an origin' }), /not an origin/)
  assert.throws(() => createHandler({ store: new MemoryStore(), cors: 'ftp://files.example' }), /http/)
})

cors('--cors \'*\' with writes open to anyone warns at start-up; with a token, --readonly or a list it does not', async () => {
  const store = await makeTempDir()
  const warning = /warning: --cors '\*' lets every web page you visit write/
  try {
    for (const [args, warns] of [
      [['--cors', '*'], true],
      [['--cors', 'https://a.example,*'], true],
      [['--cors', '*', '--readonly'], false],
      [['--cors', '*', '--token', 'secret'], false],
      [['--cors', 'https://a.example'], false],
    ] as const) {
      const cli = await startCli(['--port', '0', '--store', store, '--quiet', ...args])
      await cli.stop() // its output is whole once it has exited
      assert.is(warning.test(cli.stderr()), warns, `${args.join(' ')}: ${cli.stderr()}`)
    }
  } finally {
    await rm(store, { recursive: true, force: true })
  }
})

cors.run()

// ---------------------------------------------------------------- token

const token = suite('the write token')
const SECRET = 's3cret-token'

token('without the token every write is 401 with WWW-Authenticate, and nothing changes', async () => {
  const server = await startServerOnFolder({ token: SECRET })
  try {
    await server.request('PUT', '/guarded/doc', { body: { a: 0 }, headers: { authorization: `Bearer ${SECRET}` } })
    for (const [method, target, body] of WRITES) {
      const missing = await server.request(method, target, { body })
      assertProblem(missing, 401, /Authorization: Bearer/)
      assert.is(missing.headers['www-authenticate'], 'Bearer realm="restdir"')
      for (const authorization of ['Bearer wrong', `Bearer ${SECRET}x`, 'Bearer s', `Basic ${Buffer.from(`u:${SECRET}`).toString('base64')}`, SECRET]) {
        const wrong = await server.request(method, target, { body, headers: { authorization } })
        assertProblem(wrong, 401)
        assert.match(String(wrong.headers['www-authenticate']), /^Bearer realm="restdir"/)
        assert.not.match(wrong.text, SECRET, 'the answer never reveals the token')
      }
    }
    const answer = await server.request('GET', '/guarded')
    assert.equal(answer.json, [{ id: 'doc', a: 0 }])
  } finally {
    await server.close()
  }
})

token('a wrong token is reported as invalid_token (RFC 6750 §3.1)', async () => {
  const server = await startServerOnFolder({ token: SECRET })
  try {
    const answer = await server.request('POST', '/guarded', { body: {}, headers: { authorization: 'Bearer nope' } })
    assert.is(answer.headers['www-authenticate'], 'Bearer realm="restdir", error="invalid_token"')
  } finally {
    await server.close()
  }
})

token('with the token every write goes through; reads and preflights never need it', async () => {
  const server = await startServerOnFolder({ token: SECRET })
  try {
    for (const [method, target, body] of WRITES) {
      const scheme = method === 'PATCH' ? 'bearer' : 'Bearer' // the scheme is case-insensitive (RFC 9110 §11.1)
      const answer = await server.request(method, target, { body, headers: { authorization: `${scheme} ${SECRET}` } })
      assert.ok(answer.status < 300, `${method} ${target}: ${answer.status} ${answer.text}`)
    }
    assert.is((await server.request('GET', '/guarded')).status, 200)
    assert.is((await server.request('HEAD', '/guarded')).status, 200)
    const preflight = await server.request('OPTIONS', '/guarded', {
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    })
    assert.is(preflight.status, 204)
  } finally {
    await server.close()
  }
})

token('a 401 to an allowed origin carries CORS headers, so the page can read why', async () => {
  const server = await startServerOnFolder({ token: SECRET })
  try {
    const answer = await server.request('POST', '/guarded', { body: {}, headers: { origin: 'http://localhost:5173' } })
    assertProblem(answer, 401)
    assert.is(answer.headers['access-control-allow-origin'], 'http://localhost:5173')
  } finally {
    await server.close()
  }
})

token.run()

// ---------------------------------------------------------------- read-only

const readonly = suite('read-only mode')

readonly('--readonly refuses every write with 405 and Allow, even with the token', async () => {
  const dir = await makeTempDir()
  const writable = await startServer({ store: dir })
  await writable.request('PUT', '/guarded/doc', { body: { a: 1 } })
  await writable.close(true)
  const server = await startServer({ store: dir, readonly: true, token: SECRET })
  try {
    for (const [method, target, body] of [...WRITES, ['POST', '/user', {}] as [string, string, unknown]]) {
      const answer = await server.request(method, target, { body, headers: { authorization: `Bearer ${SECRET}` } })
      assertProblem(answer, 405, /read-only/)
      assert.is(answer.headers.allow, 'GET, HEAD, OPTIONS')
    }
    assert.equal((await server.request('GET', '/guarded/doc')).json, { id: 'doc', a: 1 })
    const preflight = await server.request('OPTIONS', '/guarded', { headers: { origin: 'http://localhost:1', 'access-control-request-method': 'PUT' } })
    assert.is(preflight.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS')
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
})

readonly.run()

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port })
    socket.setTimeout(2000, () => {
      socket.destroy()
      resolve(false)
    })
    socket.on('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.on('error', () => resolve(false))
  })
}
