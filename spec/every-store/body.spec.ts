import { test } from 'uvu'
import * as assert from 'uvu/assert'
import net from 'node:net'
import { makeTempDir, startServer, type Answer, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem } from '../support/assertions.ts'
import { FileStore } from '../../lib/store/index.ts'
import type { Store } from '../../lib/store/store.ts'

// Request bodies and error answers (docs/http-api.md, "Requests and errors").

const LIMIT = 1024
let api: TestServer
/** A server with a 1 KiB body limit, for the 413 tests. */
let small: TestServer

test.before(async () => {
  api = await startServer()
  small = await startServer({ maxBody: LIMIT })
})
test.after(async () => {
  await api.close()
  await small.close()
})

const jsonType = { 'content-type': 'application/json' }

/** No stack trace, no file-system path and no module name ever reaches a client (docs/http-api.md, "Requests and errors"). */
function assertNothingInternal(answer: Answer, ...dirs: string[]): void {
  for (const dir of dirs) assert.not.ok(answer.text.includes(dir), `the answer shows the folder ${dir}: ${answer.text}`)
  assert.not.match(answer.text, /\bat .+:\d+:\d+/, 'a stack frame')
  assert.not.match(answer.text, /\n\s+at /, 'a stack frame')
  assert.not.match(answer.text, /(\/|\\)(tmp|home|work|usr|var|Users)(\/|\\)/, 'a file-system path')
  assert.not.match(answer.text, /\.(ts|js|mjs)\b/, 'a source file name')
  assert.not.match(answer.text, /node:internal|node_modules/, 'a module name')
}

// Content types

test('application/json with a charset, +json types and any letter case are read as JSON', async () => {
  for (const [index, type] of ['application/json; charset=utf-8', 'application/vnd.api+json', 'Application/JSON', 'application/merge-patch+json'].entries()) {
    const answer = await api.request('PUT', `/types/t${index}`, { body: JSON.stringify({ type }), headers: { 'content-type': type } })
    assertJson(answer, 201, { id: `t${index}`, type })
  }
})

test('a form body (application/x-www-form-urlencoded) becomes an object of strings, the last repeated field winning', async () => {
  const headers = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }
  const body = 'name=Ada+Lovelace&age=36&city=%C3%89vry&tag=a&tag=b&empty='
  const expected = { name: 'Ada Lovelace', age: '36', city: '\u00c9vry', tag: 'b', empty: '' }
  assertJson(await api.request('PUT', '/forms/one', { body, headers }), 201, { id: 'one', ...expected })
  const posted = await api.request('POST', '/forms', { body, headers })
  assertJson(posted, 201, { id: posted.json.id, ...expected })
  assertJson(await api.request('PATCH', '/forms/one', { body: 'age=37', headers }), 200, { id: 'one', ...expected, age: '37' })
  const user = await api.request('POST', '/user', { body: 'username=form-user', headers })
  assertJson(user, 201, { user_id: user.json.user_id, username: 'form-user' })
})

test('any other content type is 415, and a body with no Content-Type is 415 too', async () => {
  for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/jsonx', 'json']) {
    assertProblem(await api.request('PUT', '/types/refused', { body: '{"a":1}', headers: { 'content-type': type } }), 415, /application\/json/)
  }
  assertProblem(await api.request('PUT', '/types/refused', { body: '{"a":1}' }), 415, /Content-Type/)
  assertProblem(await api.request('POST', '/types', { body: '{"a":1}' }), 415)
  assertProblem(await api.request('GET', '/types/refused'), 404)
})

test('JSON sent as a form (curl -d without a Content-Type) is 415 saying to send application/json, and nothing is stored or changed', async () => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  assertJson(await api.request('PUT', '/curl-notes/kept', { body: { text: 'before' } }), 201)
  const cases: Array<[string, string, string]> = [
    ['POST', '/curl-notes', '{"text":"hi"}'],
    ['POST', '/curl-notes', '  {"text":"a=b&c=d"}'],
    ['PUT', '/curl-notes/new', '{"text":"hi"}'],
    ['PATCH', '/curl-notes/kept', '{"text":"after"}'],
    ['POST', '/curl-notes', '[{"text":"hi"}]'],
  ]
  for (const [method, target, body] of cases) {
    const answer = await api.request(method, target, { body, headers: form })
    assertProblem(answer, 415, /JSON but its Content-Type says a form.*"Content-Type: application\/json"/)
  }
  assertJson(await api.request('GET', '/curl-notes'), 200, [{ id: 'kept', text: 'before' }])
  // A real form's braces come percent-encoded, and are read as the form they are.
  assertJson(await api.request('PUT', '/curl-notes/form', { body: 'text=%7Bhi%7D', headers: form }), 201, { id: 'form', text: '{hi}' })
})

// Empty and non-object bodies

test('an empty body counts as {} on PUT, POST and PATCH, with or without a Content-Type', async () => {
  assertJson(await api.request('PUT', '/empty/a'), 201, { id: 'a' })
  assertJson(await api.request('PUT', '/empty/b', { body: '', headers: jsonType }), 201, { id: 'b' })
  const posted = await api.request('POST', '/empty', { body: '' })
  assertJson(posted, 201, { id: posted.json.id })
  await api.request('PUT', '/empty/c', { body: { kept: true } })
  assertJson(await api.request('PATCH', '/empty/c', { body: '', headers: jsonType }), 200, { id: 'c', kept: true })
  assertJson(await api.request('POST', '/user'), 201)
})

test('a JSON body that is not an object is 400 and stores nothing', async () => {
  for (const text of ['[]', '[{"a":1}]', '"text"', '42', 'null', 'true']) {
    assertProblem(await api.request('PUT', '/scalars/x', { body: text, headers: jsonType }), 400, /JSON object/)
    assertProblem(await api.request('POST', '/scalars', { body: text, headers: jsonType }), 400, /JSON object/)
    assertProblem(await api.request('POST', '/user', { body: text, headers: jsonType }), 400, /JSON object/)
  }
  assertProblem(await api.request('GET', '/scalars'), 404)
})

// Invalid JSON and UTF-8

test('invalid JSON is 400 whose detail gives the line, column and offset of the fault', async () => {
  const cases: Array<[string, RegExp]> = [
    ['{"a": 1,\n  "b": }', /line 2, column 8 \(offset 16\).*value/],
    ['{"a": 1,}', /line 1, column 9 \(offset 8\)/],
    ['{\n\n  "a" 1\n}', /line 3, column 7/],
    ["{'a': 1}", /line 1, column 2/],
    ['{"a": "unterminated', /line 1, column 20.*closing quote/],
    ['{"a": 1} trailing', /line 1, column 10.*end of the body/],
    ['{"a": tru}', /line 1, column 10.*"true"/],
    ['{"a": "tab\there"}', /line 1, column 11.*control character/],
    ['   ', /value, but the body ended/],
  ]
  for (const [text, where] of cases) {
    const answer = await api.request('PUT', '/invalid/json', { body: text, headers: jsonType })
    assertProblem(answer, 400, /not valid JSON/)
    assert.match(answer.json.detail, where, `${JSON.stringify(text)}: ${answer.json.detail}`)
  }
  assertProblem(await api.request('GET', '/invalid/json'), 404)
})

test('invalid UTF-8 is 400 whose detail gives the offset of the first bad byte, in JSON and in forms', async () => {
  const cases: Array<[Buffer, number]> = [
    [Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff]), Buffer.from('"}')]), 6],
    [Buffer.concat([Buffer.from('{"ab":"\u00e9'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]), 9],
    [Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), 6],
    [Buffer.concat([Buffer.from('{"a":"x"}'), Buffer.from([0xe2, 0x82])]), 9],
  ]
  for (const [bytes, offset] of cases) {
    const answer = await api.request('PUT', '/invalid/utf8', { body: bytes, headers: jsonType })
    assertProblem(answer, 400, new RegExp(`UTF-8.*offset ${offset}\\b`))
  }
  const form = Buffer.concat([Buffer.from('a=b&c='), Buffer.from([0xfe])])
  const answer = await api.request('PUT', '/invalid/utf8', { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  assertProblem(answer, 400, /UTF-8.*offset 6\b/)
  assertProblem(await api.request('GET', '/invalid/utf8'), 404)
})

test('a form field that is not UTF-8 once percent-decoded is 400 naming it, and nothing is stored or changed', async () => {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' }
  const cases: Array<[string, RegExp]> = [
    ['a=%ff&b=%ED%A0%80', /form field "a" has a value that is not UTF-8/],
    ['a=ok&b=%ED%A0%80', /form field "b" has a value that is not UTF-8.*%ED%A0%80/],
    ['a=ok&b=%C3', /form field "b"/],
    ['a=ok&b=caf%C3%A9+%C0%AF', /form field "b"/],
    ['%ff=1', /form field name "%ff" is not UTF-8/],
    ['a+%FE=1', /form field name "a\+%FE"/],
  ]
  for (const [body, detail] of cases) {
    assertProblem(await api.request('PUT', '/strict-forms/bad', { body, headers }), 400, detail)
    assertProblem(await api.request('POST', '/strict-forms', { body, headers }), 400, detail)
  }
  assertProblem(await api.request('GET', '/strict-forms/bad'), 404)
  assertProblem(await api.request('GET', '/strict-forms'), 404)
  assertJson(await api.request('PUT', '/strict-forms/kept', { body: 'a=%C3%A9', headers }), 201, { id: 'kept', a: '\u00e9' })
  assertProblem(await api.request('PATCH', '/strict-forms/kept', { body: 'a=%ff', headers }), 400, /form field "a"/)
  assertJson(await api.request('GET', '/strict-forms/kept'), 200, { id: 'kept', a: '\u00e9' })
  // A "%" that starts no escape is kept as it is, as browsers and the URL Standard do.
  assertJson(await api.request('PUT', '/strict-forms/percent', { body: 'a=100%&b=%zz', headers }), 201, { id: 'percent', a: '100%', b: '%zz' })
})

test('text that is valid UTF-8 in every plane is stored and returned byte for byte', async () => {
  const text = 'caf\u00e9 \u4e2d\u6587 \u{1f3b5} \u0000 \u2028 "quoted" \\ back'
  assertJson(await api.request('PUT', '/unicode/doc', { body: { text } }), 201, { id: 'doc', text })
  assertJson(await api.request('GET', '/unicode/doc'), 200, { id: 'doc', text })
})

// Nesting depth

/** `{"a":{"a":...{"a":1}...}}` with `depth` objects. */
function nested(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{"a":1' + '}'.repeat(depth)
}

test('JSON nested 64 levels deep is accepted, 65 levels is 400 that says where', async () => {
  assertJson(await api.request('PUT', '/deep/ok', { body: nested(64), headers: jsonType }), 201)
  const answer = await api.request('PUT', '/deep/no', { body: nested(65), headers: jsonType })
  assertProblem(answer, 400, /deeper than 64.*line 1, column \d+/)
  const arrays = '{"a":' + '['.repeat(64) + ']'.repeat(64) + '}'
  assertProblem(await api.request('PUT', '/deep/no', { body: arrays, headers: jsonType }), 400, /deeper than 64/)
  assertProblem(await api.request('GET', '/deep/no'), 404)
})

test('brackets inside strings do not count as nesting', async () => {
  const text = JSON.stringify({ a: '{'.repeat(500) + '[\\"'.repeat(100) })
  assertJson(await api.request('PUT', '/deep/strings', { body: text, headers: jsonType }), 201, { id: 'strings', ...JSON.parse(text) })
})

test('a body nested 200 000 levels deep is a 400, never a crash, and the server keeps serving', async () => {
  const text = '{"a":' + '['.repeat(200_000) + ']'.repeat(200_000) + '}'
  assertProblem(await api.request('PUT', '/deep/huge', { body: text, headers: jsonType }), 400, /deeper than 64/)
  assertProblem(await api.request('PATCH', '/deep/ok', { body: text, headers: jsonType }), 400, /deeper than 64/)
  assertJson(await api.request('GET', '/deep/ok'), 200)
})

// Size limit

test('a body of exactly the limit is accepted and one byte more is 413 with Connection: close', async () => {
  const exact = `{"a":"${'x'.repeat(LIMIT - 8)}"}`
  assert.is(exact.length, LIMIT)
  assertJson(await small.request('PUT', '/size/exact', { body: exact, headers: jsonType }), 201)
  const over = `{"a":"${'x'.repeat(LIMIT - 7)}"}`
  const answer = await small.request('PUT', '/size/over', { body: over, headers: jsonType })
  assertProblem(answer, 413, new RegExp(`limit of ${LIMIT} bytes; .*--max-body`))
  assert.is(answer.headers.connection, 'close')
  assertProblem(await small.request('GET', '/size/over'), 404)
})

test('the default limit is 1 MiB', async () => {
  const over = `{"a":"${'x'.repeat(1024 * 1024)}"}`
  assertProblem(await api.request('PUT', '/size/big', { body: over, headers: jsonType }), 413, /1048576 bytes/)
  const under = `{"a":"${'x'.repeat(1024 * 1024 - 100)}"}`
  assert.is((await api.request('PUT', '/size/big', { body: under, headers: jsonType })).status, 201)
})

test('a chunked body with no Content-Length is 413 once it passes the limit', async () => {
  const reply = await rawExchange(small.port, [
    'PUT /size/chunked HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    chunk(`{"a":"${'x'.repeat(600)}`),
    chunk(`${'x'.repeat(600)}"}`),
    '0\r\n\r\n',
  ])
  assert.match(reply, /^HTTP\/1\.1 413 /)
  assert.match(reply, /\r\ncontent-type: application\/problem\+json\r\n/i)
  assertProblem(await small.request('GET', '/size/chunked'), 404)
})

test('a Content-Length above the limit is 413 at once, before any body arrives', async () => {
  const socket = net.connect(small.port, '127.0.0.1')
  const reply = collect(socket)
  socket.write(`PUT /size/declared HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n{"a":`)
  // The body never comes: only an answer given without waiting for it ends this exchange.
  const answer = await reply
  assert.match(answer, /^HTTP\/1\.1 413 /)
})

test('a Content-Length shorter than the body: only the declared bytes are the body, the rest is refused and the connection closed', async () => {
  const body = `{"a":"${'x'.repeat(4 * LIMIT)}"}`
  const reply = await rawExchange(small.port, [
    `PUT /size/short HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 6\r\n\r\n${body}`,
  ])
  // The six declared bytes get their own answer first; what follows them is not a request.
  const answers = reply.split(/(?=HTTP\/1\.1 \d{3} )/)
  assert.is(answers.length, 2, reply)
  assert.match(answers[0], /^HTTP\/1\.1 400 [^]*not valid JSON/)
  assert.match(answers[1], /^HTTP\/1\.1 400 [^]*application\/problem\+json[^]*not valid HTTP/)
  assertProblem(await small.request('GET', '/size/short'), 404)
})

test('past the limit the server stops reading: an endless body gets its connection closed, and the server stays healthy', async () => {
  const socket = net.connect(small.port, '127.0.0.1')
  const reply = collect(socket)
  let closed = false
  socket.on('close', () => (closed = true))
  socket.write('PUT /size/endless HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n')
  const piece = chunk('x'.repeat(64 * 1024))
  const ceiling = 256 * 1024 * 1024
  let sent = 0
  while (!closed && sent < ceiling) {
    if (!socket.write(piece)) {
      await new Promise<void>((resolve) => {
        socket.once('drain', resolve)
        socket.once('close', resolve)
      })
    }
    sent += piece.length
  }
  const answer = await reply
  assert.ok(closed && sent < ceiling, `the server read ${sent} bytes without closing`)
  // Whatever reached the client before the close is the 413 (a reset may swallow it).
  if (answer !== '') assert.match(answer, /^HTTP\/1\.1 413 /)
  assertJson(await small.request('PUT', '/size/after', { body: { fine: true } }), 201)
  assertProblem(await small.request('GET', '/size/endless'), 404)
})

// Prototype keys

test('__proto__, constructor and prototype keys are stored as plain data through PUT and GET', async () => {
  const text = '{"__proto__":{"polluted":"put"},"constructor":{"prototype":{"polluted":"put"}},"prototype":{"polluted":"put"},"toString":"x"}'
  const expected = `{"id":"p1",${text.slice(1)}\n`
  const put = await api.request('PUT', '/proto/p1', { body: text, headers: jsonType })
  assert.is(put.status, 201)
  assert.is(put.text, expected)
  const read = await api.request('GET', '/proto/p1')
  assert.is(read.text, expected)
  assert.ok(Object.hasOwn(read.json, '__proto__'))
  assert.is(Object.getPrototypeOf(read.json), Object.prototype)
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

test('__proto__ keys merge as plain data through PATCH, also when nested', async () => {
  await api.request('PUT', '/proto/p2', { body: { a: 1 } })
  const first = await api.request('PATCH', '/proto/p2', {
    body: '{"__proto__":{"polluted":"patch"},"constructor":{"prototype":{"polluted":"patch"}},"nested":{"__proto__":{"polluted":"deep"}}}',
    headers: jsonType,
  })
  assert.is(first.status, 200)
  assert.is(first.text, '{"id":"p2","a":1,"__proto__":{"polluted":"patch"},"constructor":{"prototype":{"polluted":"patch"}},"nested":{"__proto__":{"polluted":"deep"}}}\n')
  const second = await api.request('PATCH', '/proto/p2', {
    body: '{"__proto__":{"more":1},"constructor":null,"nested":{"__proto__":null}}',
    headers: jsonType,
  })
  assert.is(second.text, '{"id":"p2","a":1,"__proto__":{"polluted":"patch","more":1},"nested":{}}\n')
  assert.is((await api.request('GET', '/proto/p2')).text, second.text)
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

test('__proto__ keys arrive as plain data from form bodies, POST, users and playlists', async () => {
  const form = await api.request('PUT', '/proto/form', {
    body: '__proto__=x&constructor=y&prototype=z',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  assert.is(form.text, '{"id":"form","__proto__":"x","constructor":"y","prototype":"z"}\n')
  const posted = await api.request('POST', '/proto', { body: '{"__proto__":{"polluted":"post"}}', headers: jsonType })
  assert.is(posted.text, `{"id":"${posted.json.id}","__proto__":{"polluted":"post"}}\n`)
  const user = await api.request('POST', '/user', { body: '{"__proto__":{"username":"admin","polluted":"user"}}', headers: jsonType })
  assert.is(user.status, 201)
  assert.is(user.text, `{"user_id":"${user.json.user_id}","__proto__":{"username":"admin","polluted":"user"}}\n`)
  const playlist = await api.request('POST', `/user/${user.json.user_id}/playlist`, { body: '{"__proto__":{"songs":"not an array"}}', headers: jsonType })
  assert.is(playlist.status, 201)
  assert.equal(playlist.json.songs, [])
  assert.is(({} as Record<string, unknown>).polluted, undefined)
  assert.is(({} as Record<string, unknown>).username, undefined)
  assert.is(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false)
})

test('__proto__ and constructor as URL segments are ordinary nodes', async () => {
  assertJson(await api.request('PUT', '/__proto__/constructor', { body: { v: 1 } }), 201, { id: 'constructor', v: 1 })
  assertJson(await api.request('GET', '/__proto__'), 200, [{ id: 'constructor', v: 1 }])
  assertProblem(await api.request('GET', '/user/__proto__'), 404)
  assertProblem(await api.request('GET', '/proto/toString'), 404)
})

// Every error is problem+json and shows nothing internal

test('every kind of error answer is problem+json with type, title, status and detail, and nothing internal', async () => {
  await api.request('PUT', '/errors/doc', { body: { v: 1 } })
  const user = await api.request('POST', '/user', { body: { username: 'error-taken' } })
  const cases: Array<[number, Promise<Answer>]> = [
    [400, api.request('PUT', '/errors/x', { body: '{bad', headers: jsonType })],
    [400, api.request('PUT', '/errors/x', { body: '[1]', headers: jsonType })],
    [400, api.request('PUT', '/errors/x', { body: Buffer.from([0x7b, 0xff]), headers: jsonType })],
    [400, api.request('PUT', '/errors/x', { body: nested(100), headers: jsonType })],
    [400, api.request('PUT', '/errors/x', { body: { id: 'y' } })],
    [400, api.request('GET', '/errors/%E0%A4%A')],
    [400, api.request('GET', '/errors//x')],
    [404, api.request('GET', '/errors/missing')],
    [404, api.request('DELETE', '/errors/missing')],
    [404, api.request('GET', '/user/missing')],
    [404, api.request('POST', '/user/missing/playlist', { body: {} })],
    [405, api.request('DELETE', '/')],
    [405, api.request('PUT', '/user', { body: {} })],
    [409, api.request('POST', '/user', { body: { username: 'error-taken' } })],
    [412, api.request('PUT', '/errors/doc', { body: {}, headers: { 'if-match': '"stale"' } })],
    [412, api.request('PUT', '/errors/doc', { body: {}, headers: { 'if-none-match': '*' } })],
    [413, small.request('PUT', '/errors/x', { body: 'x'.repeat(LIMIT + 1), headers: jsonType })],
    [414, api.request('GET', '/' + 'x'.repeat(5000))],
    [415, api.request('PUT', '/errors/x', { body: 'a', headers: { 'content-type': 'text/plain' } })],
  ]
  for (const [status, pending] of cases) {
    const answer = await pending
    assertProblem(answer, status)
    assertNothingInternal(answer, api.dir, small.dir, process.cwd())
  }
  assert.is(user.status, 201)
})

test('requests the HTTP parser refuses are answered with problem+json too, and the connection closed', async () => {
  const cases: Array<[string, number, RegExp]> = [
    ['GET /x HTTP/1.1\r\nBad Header\r\n\r\n', 400, /not valid HTTP/],
    ['NOT A REQUEST\r\n\r\n', 400, /not valid HTTP/],
    [`GET /x HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, /headers are larger/],
  ]
  for (const [request, status, detail] of cases) {
    const reply = await rawExchange(api.port, [request])
    const [head, body] = reply.split('\r\n\r\n')
    assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `))
    assert.match(head, /\r\nContent-Type: application\/problem\+json\r\n/i)
    assert.match(head, /\r\nConnection: close/i)
    const problem = JSON.parse(body)
    assert.equal(Object.keys(problem).sort(), ['detail', 'status', 'title', 'type'])
    assert.is(problem.status, status)
    assert.match(problem.detail, detail)
    assert.not.ok(body.includes('aaaa'), 'the answer does not echo the request')
  }
  assertJson(await api.request('GET', '/user'), 200)
})

test('an error answer to HEAD has the problem headers and no body', async () => {
  const answer = await api.request('HEAD', '/errors/missing')
  assert.is(answer.status, 404)
  assert.is(answer.headers['content-type'], 'application/problem+json')
  assert.is(answer.text, '')
})

test('an unexpected fault is a 500 that shows no path or stack, is logged, and the server keeps serving', async () => {
  const broken = await startServer({ store: await failingStore() })
  const logged: unknown[][] = []
  const consoleError = console.error
  console.error = (...args: unknown[]) => logged.push(args)
  try {
    const answer = await broken.request('PUT', '/fault/x', { body: { v: 1 } })
    assertProblem(answer, 500, /unexpected/)
    assertNothingInternal(answer, broken.dir)
    const posted = await broken.request('POST', '/fault', { body: { v: 1 } })
    assertProblem(posted, 500)
    assertNothingInternal(posted, broken.dir)
  } finally {
    console.error = consoleError
  }
  assert.is(logged.length, 2)
  assert.match(String(logged[0][0]), /EACCES/)
  assertProblem(await broken.request('GET', '/fault/x'), 404)
  await broken.close()
})

/** A real file store whose writes fail the way a full or read-only disk does, with a path in the message. */
async function failingStore(): Promise<Store> {
  const inner = await FileStore.open(await makeTempDir(), { sync: false })
  const fail = async (): Promise<never> => {
    const error = new Error(`EACCES: permission denied, open '${process.cwd()}/store/fault/@.json'`) as NodeJS.ErrnoException
    error.code = 'EACCES'
    throw error
  }
  return {
    read: (path) => inner.read(path),
    children: (path) => inner.children(path),
    exists: (path) => inner.exists(path),
    write: fail,
    create: fail,
    remove: (path) => inner.remove(path),
    close: () => inner.close(),
  }
}

// Raw HTTP, for what a well-behaved client would not send

function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`
}

/**
 * Everything the server sends on a socket until the server closes it: the
 * client never closes first, so this resolves only when the server does, and
 * rejects after 5 s when it keeps the connection open.
 */
function collect(socket: net.Socket): Promise<string> {
  const reply = new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the server kept the connection open; it sent: ${Buffer.concat(chunks).toString('latin1').slice(0, 200)}`))
    }, 5000)
    socket.on('data', (data: Buffer) => chunks.push(data))
    socket.on('error', () => {}) // a reset after the answer is the server closing: reported by 'close'
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(Buffer.concat(chunks).toString('latin1'))
    })
  })
  reply.catch(() => {}) // awaited later by the test; never an unhandled rejection meanwhile
  return reply
}

/** Writes the pieces in order on a fresh connection and returns what the server answers before closing it. */
async function rawExchange(port: number, pieces: string[]): Promise<string> {
  const socket = net.connect(port, '127.0.0.1')
  const reply = collect(socket)
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  for (const piece of pieces) {
    if (socket.destroyed) break
    socket.write(piece)
    await new Promise((resolve) => setImmediate(resolve))
  }
  return reply
}

test.run()
