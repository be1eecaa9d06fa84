import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { startServer, type Answer, type TestServer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'
import { rawExchange, type RawAnswer } from '../support/raw-http.ts'

// The rough edges of HTTP/1.1 that could change data by surprise: two Host
// headers (RFC 9112 §3.2), the absolute form of the request line (§3.2.2),
// compressed bodies (RFC 9110 §15.5.16), dot-segments sent as they are (RFC 3986 §5.2.4).

let api: TestServer

test.before(async () => {
  api = await startServer()
})

test.after(async () => {
  await api.close()
})

/** One raw request on its own connection, and its one answer in the shape the assertions take. */
async function raw(request: string | Buffer): Promise<Answer> {
  const exchange = await rawExchange(api.port, request)
  assert.is(exchange.malformed, undefined)
  assert.is(exchange.answers.length, 1, 'one answer')
  return asAnswer(exchange.answers[0])
}

function asAnswer(answer: RawAnswer): Answer {
  const text = answer.body.toString()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: answer.status, headers: answer.headers, text, json }
}

function putRequest(target: string, headers: string[], body = '{"v":1}'): string {
  return `PUT ${target} HTTP/1.1\r\n${headers.map((line) => line + '\r\n').join('')}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`
}

test('a request with two Host headers is 400 and stores nothing', async () => {
  for (const hosts of [['Host: localhost', 'Host: localhost'], ['Host: localhost', 'Host: evil.example'], ['Host: evil.example', 'host: 127.0.0.1']]) {
    assertProblem(await raw(putRequest('/two-hosts/doc', hosts)), 400, /more than one Host/)
  }
  assertProblem(await raw('GET /two-hosts HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\nConnection: close\r\n\r\n'), 400)
  assert.is((await api.request('GET', '/two-hosts')).status, 404)
})

test('a request line in absolute form is served as its path', async () => {
  const created = await raw(putRequest(`http://localhost:${api.port}/absolute/doc?ignored=1`, ['Host: localhost']))
  assert.is(created.status, 201)
  assert.is(created.headers.location, '/absolute/doc')
  const read = await raw(`GET http://127.0.0.1:${api.port}/absolute/doc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
  assert.is(read.status, 200)
  assert.equal(read.json, { id: 'doc', v: 1 })
  const children = await raw(`GET HTTP://LOCALHOST?_children HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
  assert.is(children.status, 200)
  assert.ok(children.json.includes('absolute'))
})

test('in absolute form the DNS-rebinding guard judges the URL\'s host, not the Host header', async () => {
  // RFC 9112 §3.2.2: the authority of an absolute-form target replaces Host.
  assertProblem(await raw(putRequest('http://evil.example/rebound/doc', ['Host: localhost'])), 403, /DNS rebinding/)
  assertProblem(await raw(putRequest(`http://evil.example:${api.port}/rebound/doc`, [`Host: 127.0.0.1:${api.port}`])), 403)
  assert.is((await api.request('GET', '/rebound/doc')).status, 404)
  assert.is((await raw(putRequest('http://localhost/rebound/doc', ['Host: evil.example']))).status, 201)
  // Other schemes, no host, or user information in the URL are refused.
  for (const target of ['ftp://localhost/rebound/doc', 'http:///rebound/doc', 'http://user@localhost/rebound/doc']) {
    assertProblem(await raw(putRequest(target, ['Host: localhost'])), 400)
  }
})

test('a compressed body is 415 naming its coding, with Accept-Encoding, and stores nothing', async () => {
  const json = Buffer.from('{"v":1}')
  for (const [coding, body] of [['gzip', gzipSync(json)], ['br', brotliCompressSync(json)], ['deflate, gzip', gzipSync(json)]] as const) {
    const answer = await api.request('PUT', '/compressed/doc', { body, headers: { 'content-type': 'application/json', 'content-encoding': coding } })
    assertProblem(answer, 415, new RegExp(`Content-Encoding "${coding}"`))
    assert.is(answer.headers['accept-encoding'], 'identity')
  }
  assert.is((await api.request('GET', '/compressed/doc')).status, 404)
  const plain = await api.request('PUT', '/compressed/doc', { body: json, headers: { 'content-type': 'application/json', 'content-encoding': 'identity' } })
  assert.is(plain.status, 201)
})

test('an unencoded . or .. segment is 400 and never a name; encoded, it is one', async () => {
  for (const target of ['/dots/./doc', '/dots/../doc', '/dots/doc/..', '/dots/.', '/..', '/./dots']) {
    assertProblem(await api.request('PUT', target, { body: { v: 1 } }), 400, /dot-segments/)
    assertProblem(await api.request('GET', target), 400)
    assertProblem(await api.request('DELETE', target), 400)
  }
  assert.is((await api.request('GET', '/dots')).status, 404)
  assert.is((await api.request('PUT', '/dots/%2E%2E', { body: { v: 2 } })).status, 201)
  assert.equal((await api.request('GET', '/dots?_children')).json, ['..'])
  // Dots inside a name are just characters.
  assert.is((await api.request('PUT', '/dots/.../a..b', { body: { v: 3 } })).status, 201)
})

test('a query parameter that is not UTF-8 once percent-decoded is 400 naming it, on listings and every other request', async () => {
  assert.is((await api.request('PUT', '/queries/doc', { body: { t: '\u00e9' } })).status, 201)
  assertProblem(await api.request('GET', '/queries?t=%ff'), 400, /query parameter "t" has a value that is not UTF-8/)
  assertProblem(await api.request('GET', '/queries?t=%ED%A0%80'), 400, /query parameter "t"/)
  assertProblem(await api.request('GET', '/queries?q=ok&title_like=%C3'), 400, /query parameter "title_like"/)
  assertProblem(await api.request('GET', '/queries?%ff=1'), 400, /query parameter name "%ff"/)
  assertProblem(await api.request('GET', '/queries?_sort=t&_order=%80'), 400, /query parameter "_order"/)
  assertProblem(await api.request('DELETE', '/queries/doc?x=%ff'), 400, /query parameter "x"/)
  assert.is((await api.request('GET', '/queries/doc')).status, 200)
  // The same value sent as UTF-8 is matched exactly.
  assert.equal((await api.request('GET', '/queries?t=%C3%A9')).json, [{ id: 'doc', t: '\u00e9' }])
  assert.equal((await api.request('GET', '/queries?t=caf%C3%A9+x')).json, [])
})

test.run()
