import type { Random } from './random.ts'
import { MAX_BODY, MAX_JSON_DEPTH, StoreModel, splitPathModel, type Doc } from './fuzz-model.ts'

// The fuzz test's request generator: from a seeded random source and the model
// of the store, valid and hostile requests (paths, methods, headers, bodies,
// parser-level garbage, numbers at a double's edges) and pipelined sequences.
// The same seed gives the same requests, so a failing run can be replayed.

/** A request as the generator builds it, before it becomes bytes. */
export interface FuzzRequest {
  category: string
  hostile: boolean
  method: string
  rawPath: string
  query: string
  host?: string
  headers: Array<[string, string]>
  contentType?: string
  body: Buffer
  framing: 'length' | 'chunked' | 'none' | 'declared-smaller' | 'declared-larger' | 'declared-huge'
  /** A request built byte by byte (parser-level garbage): any status in `statuses`, and no change. */
  raw?: { bytes: Buffer; statuses: number[] }
}

/** Raw segments and what they decode to: dots, slashes, backslashes, NUL, case, Unicode, reserved and store-internal names. */
const SEGMENTS: Array<[string, string]> = [
  ['a', 'a'], ['B', 'B'], ['b', 'b'], ['Ab', 'Ab'], ['%2e%2e', '..'], ['..', '..'], ['.', '.'], ['%2E', '.'], ['...', '...'],
  ['a%2Fb', 'a/b'], ['%2F', '/'], ['%5C', '\\'], ['%5c..%5c', '\\..\\'], ['%00', '\u0000'], ['%0A', '\n'], ['%20', ' '],
  ['CON', 'CON'], ['con', 'con'], ['nul.txt', 'nul.txt'], ['COM1', 'COM1'], ['%C3%A9', 'é'], ['e%CC%81', 'e\u0301'],
  ['%F0%9F%98%80', '😀'], ['%E4%B8%AD', '中'], ['@lock', '@lock'], ['%40.json', '@.json'], ['@tmp-1-2', '@tmp-1-2'],
  ['@trash-x', '@trash-x'], ['@name', '@name'], ['%25', '%'], ['+', '+'], ["~!$&'()*,;=:", "~!$&'()*,;=:"],
  ['__proto__', '__proto__'], ['constructor', 'constructor'], ['%E2%80%AE', '\u202e'], ['%EF%BB%BF', '\ufeff'],
  ['x'.repeat(300), 'x'.repeat(300)], ['%41'.repeat(300), 'A'.repeat(300)], ['y'.repeat(1024), 'y'.repeat(1024)],
]
const MALFORMED_SEGMENTS = ['%', '%zz', '%C3%28', '%ED%A0%80', '%C0%AF', '%E0%80%AF', '%FF', 'ok%', 'z'.repeat(1025)]
const ODD_METHODS = ['TRACE', 'PROPFIND', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'PURGE', 'SEARCH', 'REPORT', 'LINK', 'QUERY', 'M-SEARCH']
const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json', 'application/vnd.api+json', ' application/json ', 'application/json;charset=latin1']
const OTHER_TYPES = ['text/plain', 'text/json', 'application/xml', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/x-json', '*/*', 'application', '']
/** Numbers at the edges of what a double holds: some kept exactly, some not (docs/http-api.md, "Requests and errors"). */
const EXTREME_NUMBERS = [
  '1e400', '-1e400', '1e-400', '12345678901234567890', '9007199254740993', '9007199254740992', '-0', '-0.0', '0',
  '0.1', '1.50', '1e2', '1.5e300', '0.30000000000000001', '5e-324', '4e-324', '1.7976931348623157e308',
  '1.7976931348623159e308', '123456789012345678', '1E21', '0e-999', '100000000000000000000', '2.2250738585072014e-308', '-12.5e-3',
]
const KEYS = ['a', 'b', 'name', 'title', 'n', 'list', 'nested', '__proto__', 'constructor', 'toString', 'é', '😀', '', ' ', 'a.b', 'valueOf']

export class Generator {
  private readonly random: Random
  private readonly model: StoreModel
  /** The segments the run writes under /fz most: a few at a time, so documents meet again; they change every 250 requests. */
  private active: Array<[string, string]>
  private count = 0

  constructor(random: Random, model: StoreModel) {
    this.random = random
    this.model = model
    this.active = Array.from({ length: 8 }, () => random.pick(SEGMENTS))
  }

  next(port: number): FuzzRequest {
    if (++this.count % 250 === 0) this.active = Array.from({ length: 8 }, () => this.random.pick(SEGMENTS))
    if (this.random.chance(0.06)) return this.extremeNumbers(port)
    const roll = this.random.next()
    if (roll < 0.5) return this.valid(port)
    if (roll < 0.85) return this.hostileStructured(port)
    return this.hostileRaw(port)
  }

  /** A well-meant request on the nodes the run knows, sometimes with harmless odd decorations. */
  private valid(port: number): FuzzRequest {
    const { random } = this
    const [rawPath, segments] = this.path()
    let method = random.pick(['GET', 'GET', 'HEAD', 'PUT', 'PUT', 'PATCH', 'PATCH', 'POST', 'DELETE', 'OPTIONS'])
    // Deleting /fz empties the whole run's store: keep that rare, so documents live long enough to meet again.
    if (method === 'DELETE' && segments.length === 1 && random.chance(0.9)) method = 'GET'
    const request = this.base('valid', false, method, rawPath, port)
    const id = segments[segments.length - 1]
    if (method === 'PUT' || method === 'PATCH' || method === 'POST') {
      const value = this.object(3, method === 'PATCH')
      if (method !== 'POST' && random.chance(0.1)) value.id = id
      this.setJsonBody(request, value)
    }
    this.decorate(request, segments)
    return request
  }

  private hostileStructured(port: number): FuzzRequest {
    const { random } = this
    const [rawPath, segments] = this.path()
    const method = random.pick(['PUT', 'PATCH', 'POST'])
    const request = this.base('', true, method, rawPath, port)
    const kind = random.int(16)
    switch (kind) {
      case 0: {
        request.category = 'broken JSON'
        const text = JSON.stringify(this.object(3, false))
        const cut = random.int(text.length)
        const broken = random.pick([
          text.slice(0, cut),
          text.slice(0, cut) + random.pick(['}', ']', ',', '"', ':', '\\', 'x', '\u0000', '\t', 'NaN', '//']) + text.slice(cut),
          text.replace(/"/g, "'"),
          text.replace('}', ',}'),
          '{"a":1,}', '{a:1}', '{"a":NaN}', '{"a":Infinity}', '{"a":01}', '{"a":"\\x41"}', '{"a":"\\u12"}', '{"a" 1}', '{}{}', '{"a":1}x', ' ', '\ufeff{}', '{"a":"\u0001"}', '{"a":.5}', '{"a":-}', '{"a":1e}',
        ])
        this.setBody(request, random.pick(JSON_TYPES), Buffer.from(broken))
        break
      }
      case 1: {
        request.category = 'broken UTF-8'
        const text = Buffer.from(JSON.stringify({ text: random.text(random.int(40)) }))
        const bad = random.pick([[0xff], [0xc3], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]])
        const at = Math.min(text.length - 2, 9 + random.int(Math.max(1, text.length - 11)))
        this.setBody(request, random.pick([...JSON_TYPES, 'application/x-www-form-urlencoded']), Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at)]))
        break
      }
      case 2:
        request.category = 'wrong content type'
        this.setBody(request, random.pick(OTHER_TYPES), Buffer.from(random.chance(0.2) ? '' : JSON.stringify(this.object(2, false))))
        break
      case 3:
        request.category = 'missing content type'
        this.setBody(request, undefined, Buffer.from(random.chance(0.3) ? '' : '{"a":1}'))
        break
      case 4:
        request.category = 'not an object'
        this.setBody(request, random.pick(JSON_TYPES), Buffer.from(random.pick(['[]', '[{}]', '"text"', '1', '-0.5e3', 'null', 'true', 'false', '""'])))
        break
      case 5: {
        request.category = 'huge body'
        const size = random.pick([MAX_BODY - 20, MAX_BODY, MAX_BODY + 1, MAX_BODY + random.int(150_000)])
        const filler = size - 10
        this.setBody(request, 'application/json', Buffer.from(`{"f":"${'z'.repeat(Math.max(0, filler))}"}`))
        if (random.chance(0.3)) request.framing = 'chunked'
        break
      }
      case 6:
        request.category = 'declared huge Content-Length'
        this.setBody(request, 'application/json', Buffer.from('{}'))
        request.framing = 'declared-huge'
        break
      case 7: {
        request.category = 'deep nesting'
        const depth = random.pick([MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 500, 5000])
        this.setBody(request, 'application/json', Buffer.from('{"d":' + '['.repeat(depth - 1) + ']'.repeat(random.chance(0.8) ? depth - 1 : 0) + '}'))
        break
      }
      case 8:
        request.category = 'tiny body'
        this.setBody(request, random.pick(JSON_TYPES), Buffer.from(random.pick(['', '{}', ' {} ', '\n{}\n', '{ }', '\r\n'])))
        break
      case 9: {
        request.category = 'id that disagrees'
        const value = this.object(2, false)
        value.id = random.pick(['other', 1, null, segments[segments.length - 1] + 'x', true])
        this.setJsonBody(request, value)
        break
      }
      case 10: {
        request.category = 'form body'
        const pairs = Array.from({ length: random.int(4) }, () => `${encodeURIComponent(random.pick(KEYS))}=${encodeURIComponent(random.text(random.int(10)))}`)
        this.setBody(request, random.pick(['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=UTF-8']), Buffer.from(pairs.join('&')))
        break
      }
      case 11: {
        request.category = 'bad or odd path'
        request.method = random.pick(['GET', 'PUT', 'DELETE', 'PATCH'])
        const odd = random.pick([
          '/fz/' + random.pick(MALFORMED_SEGMENTS),
          '/fz//' + this.active[0][0],
          '/fz/' + Array.from({ length: 33 }, () => 'd').join('/'),
          '/fz/' + Array.from({ length: 9 }, () => 'w'.repeat(1000)).join('/'),
          '/fz/' + random.pick(SEGMENTS)[0] + '/',
          // A query filters a collection: GETs get only those that change nothing (a fragment never counts).
          '/fz/' + random.pick(SEGMENTS)[0] + '?' + random.pick(request.method === 'GET' ? ['', '_children', '#frag', '#a=1'] : ['', 'a=1', '_children', '%zz', '#frag']),
        ])
        const queryAt = odd.indexOf('?')
        request.rawPath = queryAt === -1 ? odd : odd.slice(0, queryAt)
        request.query = queryAt === -1 ? '' : odd.slice(queryAt)
        if (request.method === 'GET' || request.method === 'DELETE') request.body = Buffer.alloc(0)
        else this.setJsonBody(request, this.object(1, false))
        break
      }
      case 12:
        request.category = 'odd method'
        request.method = random.pick(ODD_METHODS)
        if (random.chance(0.5)) this.setJsonBody(request, { a: 1 })
        break
      case 13:
        request.category = 'foreign Host or Origin'
        this.setJsonBody(request, this.object(1, false))
        if (random.chance(0.5)) request.host = random.pick(['evil.example', `evil.example:${port}`, '192.168.0.9', 'localhost.evil.example', '[2001:db8::1]'])
        else request.headers.push(['Origin', random.pick(['https://evil.example', 'null', 'http://192.168.0.9:3000', 'file://', 'http://localhost.evil.example'])])
        if (random.chance(0.3)) {
          request.method = 'OPTIONS'
          request.headers.push(['Access-Control-Request-Method', 'PUT'])
        }
        break
      case 14: {
        request.category = 'stale or odd precondition'
        request.method = random.pick(['PUT', 'PATCH', 'DELETE'])
        this.setJsonBody(request, this.object(1, request.method === 'PATCH'))
        const existing = this.model.get(segments)
        request.headers.push(random.pick([
          ['If-Match', '"not-the-etag"'], ['If-Match', `W/${existing?.etag ?? '"x"'}`], ['If-Match', '*'], ['If-Match', existing?.etag ?? '"x"'],
          ['If-None-Match', '*'], ['If-None-Match', existing?.etag ?? '"x"'], ['If-Match', 'garbage, "x"'],
        ] as Array<[string, string]>))
        break
      }
      default:
        request.category = 'odd Expect'
        request.headers.push(['Expect', random.pick(['teapot', '100-continue-please', '200-ok', '100-continued'])])
        this.setJsonBody(request, { a: 1 })
    }
    return request
  }

  /** Requests the HTTP parser or the server's edges see first, built byte by byte; none may change anything. */
  private hostileRaw(port: number): FuzzRequest {
    const { random } = this
    const host = `Host: 127.0.0.1:${port}\r\n`
    const target = '/fz/' + this.active[random.int(this.active.length)][0]
    const cases: Array<[string, string | Buffer, number[]]> = [
      ['garbage request line', random.text(random.between(1, 40), 'ABCXYZ /:.\t%?#') + '\r\n\r\n', [400]],
      ['lower-case method', `get ${target} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [400]],
      ['unknown method', `FROBNICATE ${target} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [400]],
      ['odd HTTP version', `GET ${target} HTTP/${random.pick(['2.0', '0.9', '1.2', '9.9', 'x'])}\r\n${host}Connection: close\r\n\r\n`, [400, 200, 404]],
      ['absolute-form target', `GET http://127.0.0.1:${port}${target} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [200, 404]],
      ['asterisk target', `OPTIONS * HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [400]],
      ['control character in the path', Buffer.concat([Buffer.from(`GET ${target}`), Buffer.from([random.pick([0x00, 0x01, 0x7f, 0x1b])]), Buffer.from(` HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)]), [400]],
      ['raw non-ASCII in the path', Buffer.concat([Buffer.from(`GET ${target}`), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from(` HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)]), [400, 404, 200]],
      ['space in the path', `GET /fz/a b HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [400]],
      ['no Host', `GET ${target} HTTP/1.1\r\nConnection: close\r\n\r\n`, [400]],
      ['two Hosts', `GET ${target} HTTP/1.1\r\n${host}Host: evil.example\r\nConnection: close\r\n\r\n`, [400]],
      ['header name with a space', `GET ${target} HTTP/1.1\r\n${host}Bad Header: x\r\nConnection: close\r\n\r\n`, [400]],
      ['NUL in a header value', `GET ${target} HTTP/1.1\r\n${host}X-Junk: a\u0000b\r\nConnection: close\r\n\r\n`, [400]],
      ['folded header', `GET ${target} HTTP/1.1\r\n${host}X-Junk: a\r\n  folded\r\nConnection: close\r\n\r\n`, [400]],
      ['bare LF line ends', `GET ${target} HTTP/1.1\n${host.trim()}\nConnection: close\n\n`, [400, 404, 200]],
      ['huge header', `GET ${target} HTTP/1.1\r\n${host}X-Big: ${'h'.repeat(random.between(17_000, 40_000))}\r\nConnection: close\r\n\r\n`, [431]],
      ['thousands of headers', `GET ${target} HTTP/1.1\r\n${host}${'X-N: 1\r\n'.repeat(3000)}Connection: close\r\n\r\n`, [431, 200, 404]],
      ['negative Content-Length', `PUT ${target} HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: -1\r\nConnection: close\r\n\r\n{}`, [400]],
      ['Content-Length that is not a number', `PUT ${target} HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 2x\r\nConnection: close\r\n\r\n{}`, [400]],
      ['two Content-Lengths', `PUT ${target} HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 4\r\nConnection: close\r\n\r\n{}`, [400]],
      ['Content-Length and chunked', `PUT ${target} HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, [400]],
      ['unknown transfer coding', `PUT ${target} HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n{}`, [400]],
      ['broken chunk', `PUT ${target} HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${random.pick(['zz\r\n{}\r\n0\r\n\r\n', '2\r\n{}XX0\r\n\r\n', '-1\r\n', '2;' + 'e'.repeat(20_000) + '\r\n{}\r\n0\r\n\r\n'])}`, [400, 413]],
      ['CONNECT', `CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n`, [405]],
      ['HTTP/1.0 without Host', `GET ${target} HTTP/1.0\r\n\r\n`, [200, 404]],
      ['pipelined reads', `GET ${target} HTTP/1.1\r\n${host}\r\nGET ${target}?_children HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [200, 404]],
    ]
    const [category, bytes, statuses] = random.pick(cases)
    const request = this.base(category, true, 'GET', target, port)
    // A target the server serves (200, 404) may be one whose path it refuses (a raw dot-segment).
    const refused = splitPathModel(target)
    request.raw = { bytes: Buffer.from(bytes as string), statuses: 'status' in refused && statuses.includes(404) ? [...statuses, refused.status] : statuses }
    // One in a few hundred: a body that never comes whole, for the request time-out (it takes 2 s).
    if (random.chance(0.004) && !('status' in refused)) {
      request.category = 'body shorter than declared'
      request.raw = undefined
      request.method = 'PUT'
      this.setJsonBody(request, { slow: true })
      request.framing = 'declared-larger'
    } else if (random.chance(0.05)) {
      request.category = 'body longer than declared'
      request.raw = undefined
      request.method = random.pick(['PUT', 'POST'])
      this.setJsonBody(request, this.object(2, false))
      request.framing = 'declared-smaller'
    }
    return request
  }

  // ---------------------------------------------------------------- extreme numbers and repeated keys
  // Bodies whose numbers a double may not carry, or whose objects repeat a key: the model
  // (keptExactly in fuzz-model.ts) expects a 400 for each of those, and the exact value otherwise.

  private extremeNumbers(port: number): FuzzRequest {
    const { random } = this
    const [rawPath] = this.path()
    const request = this.base('extreme numbers or repeated keys', true, random.pick(['PUT', 'PATCH', 'POST']), rawPath, port)
    const members = Array.from({ length: random.between(1, 4) }, () => this.extremeMember(2))
    if (random.chance(0.3)) members.push(random.pick(members)) // the same key again, at the top
    this.setBody(request, random.pick(JSON_TYPES), Buffer.from(`{${members.join(random.pick([',', ', ', ',\n  ']))}}`))
    return request
  }

  private extremeMember(depth: number): string {
    const { random } = this
    const key = JSON.stringify(random.pick(KEYS))
    const roll = random.int(depth > 0 ? 5 : 3)
    if (roll <= 1) return `${key}:${random.pick(EXTREME_NUMBERS)}`
    if (roll === 2) return `${key}:${JSON.stringify(this.value(0, false))}`
    if (roll === 3) return `${key}:[${Array.from({ length: random.int(3) }, () => random.pick(EXTREME_NUMBERS)).join(',')}]`
    const inner = Array.from({ length: random.between(1, 3) }, () => this.extremeMember(depth - 1))
    if (random.chance(0.3)) inner.push(inner[0]) // a key repeated in a nested object
    return `${key}:{${inner.join(',')}}`
  }

  private base(category: string, hostile: boolean, method: string, rawPath: string, port: number): FuzzRequest {
    return { category, hostile, method, rawPath, query: '', host: `127.0.0.1:${port}`, headers: [], body: Buffer.alloc(0), framing: 'none' }
  }

  /** A path under /fz: a known node, or one made of the run's segments, one to three levels deep. */
  private path(): [string, string[]] {
    const { random } = this
    const known = this.model.all().filter((stored) => stored.segments[0] === 'fz')
    if (known.length > 0 && random.chance(0.5)) {
      const segments = random.pick(known).segments
      const alternative = random.chance(0.2) // percent-encode every byte: the same node
      const raw = segments.map((segment) =>
        alternative && segment.length < 200 ? [...Buffer.from(segment)].map((byte) => '%' + byte.toString(16).padStart(2, '0')).join('') : encodeURIComponent(segment),
      )
      return ['/' + raw.join('/'), segments]
    }
    const depth = random.pick([1, 2, 2, 2, 2, 3, 3, 3])
    const chosen = Array.from({ length: depth - 1 }, () => (random.chance(0.75) ? random.pick(this.active) : random.pick(SEGMENTS)))
    return ['/fz' + chosen.map(([raw]) => '/' + raw).join(''), ['fz', ...chosen.map(([, decoded]) => decoded)]]
  }

  private decorate(request: FuzzRequest, segments: string[]): void {
    const { random } = this
    const existing = this.model.get(segments)
    if (random.chance(0.15) && existing) {
      const conditional: Array<[string, string]> =
        request.method === 'GET' || request.method === 'HEAD'
          ? [['If-None-Match', existing.etag], ['If-None-Match', `W/${existing.etag}`], ['If-None-Match', '"old"']]
          : [['If-Match', existing.etag], ['If-Match', `"x", ${existing.etag}`], ['If-None-Match', '"old"']]
      request.headers.push(random.pick(conditional))
    }
    if (random.chance(0.1)) request.headers.push(['Origin', random.pick(['http://localhost:5173', 'http://127.0.0.1:8080', 'https://localhost'])])
    if (random.chance(0.1)) request.host = random.pick(['localhost', `LOCALHOST:${request.host!.split(':')[1]}`, 'app.localhost', '[::1]:80', '127.1.2.3'])
    if (random.chance(0.2)) {
      request.headers.push(random.pick([
        ['Accept', '*/*'], ['Accept-Encoding', 'gzip, br'], ['Range', 'bytes=0-1'], ['Cookie', 'a=b'], ['Authorization', 'Bearer nothing'],
        ['X-Junk', random.text(30, 'abc!#$%&*+-.^_`|~ ')], ['Expect', '100-continue'], ['Cache-Control', 'no-cache'], ['Upgrade', 'h2c'],
        ['Upgrade', 'websocket'], ['Content-Encoding', 'identity'], ['Accept', 'application/json;q=0.9'],
      ] as Array<[string, string]>))
    }
    if ((request.method === 'GET' || request.method === 'HEAD') && random.chance(0.08)) request.query = '?_children'
    else if (existing && request.method === 'GET' && random.chance(0.05)) request.query = random.pick(['?a=1', '?_sort=x&_page=0', '?%zz', '?_limit=-1'])
    if (request.method === 'GET' && random.chance(0.02)) {
      request.headers = [['Accept', 'text/event-stream']]
      request.query = ''
    }
    if (request.body.length > 0 && random.chance(0.15)) request.framing = 'chunked'
  }

  private setJsonBody(request: FuzzRequest, value: unknown): void {
    const { random } = this
    let text = JSON.stringify(value, null, random.pick([undefined, undefined, 0, 2, '\t']))
    // Non-ASCII only ever sits inside strings: escaping it keeps the same JSON.
    if (random.chance(0.2)) text = text.replace(/[\u0080-\uffff]/g, (char) => '\\u' + char.charCodeAt(0).toString(16).padStart(4, '0'))
    this.setBody(request, random.pick(JSON_TYPES), Buffer.from(text))
  }

  private setBody(request: FuzzRequest, contentType: string | undefined, body: Buffer): void {
    request.contentType = contentType
    request.body = body
    request.framing = 'length'
  }

  /** A random JSON object; for a PATCH, some values are null (remove the key). */
  private object(depth: number, patch: boolean): Doc {
    const { random } = this
    const doc: Doc = {}
    for (let count = random.int(5); count > 0; count--) {
      Object.defineProperty(doc, random.pick(KEYS), { value: this.value(depth - 1, patch), enumerable: true, writable: true, configurable: true })
    }
    return doc
  }

  private value(depth: number, patch: boolean): unknown {
    const { random } = this
    const roll = random.int(depth > 0 ? 10 : 7)
    if (roll === 0) return patch && random.chance(0.6) ? null : random.chance(0.5)
    if (roll === 1) return random.pick([0, -1, 1.5, 1e21, -0, 2 ** 53 + 1, 1e-7])
    if (roll === 2) return null
    if (roll <= 5) return random.text(random.int(random.chance(0.05) ? 3000 : 20))
    if (roll === 6) return random.pick(['', '\u0000', '\ud83d\ude00', '"\\', '</script>'])
    if (roll <= 8) return Array.from({ length: random.int(4) }, () => this.value(depth - 1, false))
    return this.object(depth, patch)
  }
}

/** The request's bytes; `close` (the default) asks the server to close the connection after answering. */
export function toBytes(request: FuzzRequest, close = true): Buffer {
  const lines = [`${request.method} ${request.rawPath}${request.query} HTTP/1.1`]
  if (request.host !== undefined) lines.push(`Host: ${request.host}`)
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`)
  if (request.contentType !== undefined) lines.push(`Content-Type: ${request.contentType}`)
  const body = request.body
  let payload = body
  switch (request.framing) {
    case 'length':
      lines.push(`Content-Length: ${body.length}`)
      break
    case 'declared-smaller':
      lines.push(`Content-Length: ${body.length >> 1}`)
      break
    case 'declared-larger':
      lines.push(`Content-Length: ${body.length + 10}`)
      break
    case 'declared-huge':
      lines.push('Content-Length: 1000000000000')
      break
    case 'chunked': {
      lines.push('Transfer-Encoding: chunked')
      const parts: Buffer[] = []
      for (let offset = 0; offset < body.length; ) {
        const size = Math.min(body.length - offset, 1 + ((offset * 7919) % 4096))
        parts.push(Buffer.from(size.toString(16) + '\r\n'), body.subarray(offset, offset + size), Buffer.from('\r\n'))
        offset += size
      }
      parts.push(Buffer.from('0\r\n\r\n'))
      payload = Buffer.concat(parts)
      break
    }
  }
  if (close) lines.push('Connection: close')
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), payload])
}

/** A short account of a request, for a failure message. */
export function describe(request: FuzzRequest): string {
  if (request.raw) return JSON.stringify(request.raw.bytes.subarray(0, 160).toString('latin1'))
  const headers = request.headers.map(([name, value]) => `${name}: ${value.slice(0, 60)}`).join('; ')
  return `${request.method} ${request.rawPath.slice(0, 120)}${request.query} host=${request.host} type=${request.contentType} framing=${request.framing} ${headers} body=${JSON.stringify(request.body.subarray(0, 160).toString('latin1'))}`
}

// ---------------------------------------------------------------- pipelined sequences on one connection

/** Two to eight valid requests on a handful of nodes under /pipe, reads and writes mixed. */
export function pipelinedSequence(random: Random, model: StoreModel, port: number): FuzzRequest[] {
  const nodes = [['pipe', 'a'], ['pipe', 'a', 'b'], ['pipe', 'c'], ['pipe', 'c', 'd'], ['pipe']]
  return Array.from({ length: random.between(2, 8) }, () => {
    const segments = random.pick(nodes)
    const method = segments.length === 1 ? random.pick(['POST', 'GET']) : random.pick(['PUT', 'PUT', 'PATCH', 'DELETE', 'POST', 'GET', 'GET'])
    const request: FuzzRequest = {
      category: 'pipelined', hostile: false, method, rawPath: '/' + segments.join('/'), query: '', host: `127.0.0.1:${port}`, headers: [], body: Buffer.alloc(0), framing: 'none',
    }
    if (method === 'GET' && random.chance(0.2)) request.query = '?_children'
    if (method === 'PUT' || method === 'PATCH' || method === 'POST') {
      request.contentType = 'application/json'
      request.body = Buffer.from(JSON.stringify({ [random.pick(['n', 'title', 'list'])]: random.pick([random.int(1000), random.text(6), null, [1, 2]]) }))
      request.framing = random.chance(0.2) ? 'chunked' : 'length'
    }
    // A tag read now may be stale by the time the request runs: the model, advanced in order, says which.
    const known = model.get(segments)
    if (method !== 'GET' && method !== 'POST' && known && random.chance(0.3)) request.headers.push(['If-Match', known.etag])
    return request
  })
}
