import { suite, test } from 'uvu'
import * as assert from 'uvu/assert'
import { request as httpRequest } from 'node:http'
import { rm } from 'node:fs/promises'
import { makeTempDir, startServerOnFolder } from './helpers.ts'
import { startCli } from './process.ts'
import { canonical, seeded, seedFrom, type Random } from './random.ts'
import { rawExchange, type RawAnswer, type RawExchange } from './raw-http.ts'
import {
  MAX_BODY, MAX_JSON_DEPTH, StoreModel, isLoopbackHostHeader, mergedDocument, originAllowedByDefault,
  preconditionsHold, readBodyModel, sameJson, splitPathModel, withId, withoutId, type Doc,
} from './fuzz-model.ts'

// SPEC §5, §8, §12: bad input always gets a clear error answer, never a crash,
// never a lost or half-written document. A seeded generator sends valid and
// hostile requests (random methods, paths with encoded dots and slashes, huge
// and tiny bodies, wrong content types, broken JSON and UTF-8, odd headers,
// requests the HTTP parser refuses) to the command-line server, byte for byte.
// Every answer must be well-formed, never 5xx, and exactly what the test's own
// model of the store predicts; at the end, and again after a restart, the
// store must hold exactly what the model holds.
//
// Longer runs: FUZZ_REQUESTS=100000 node spec/run.mjs fuzz
// Replay a run: FUZZ_SEED=<the seed it printed> FUZZ_REQUESTS=<n> node spec/run.mjs fuzz

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2500)
const SEED = seedFrom('FUZZ_SEED')

// ---------------------------------------------------------------- hostile requests, one by one

const hostile = suite('hostile requests the HTTP layer meets first')

hostile('CONNECT is refused with a problem answer, not a silent close', async () => {
  const server = await startServerOnFolder()
  try {
    const exchange = await rawExchange(server.port, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n')
    assertProblemAnswer(exchange, 405)
  } finally {
    await server.close()
  }
})

hostile('an expectation other than 100-continue is 417 with a problem answer, and nothing is stored', async () => {
  const server = await startServerOnFolder()
  try {
    const exchange = await rawExchange(server.port, httpText('PUT', '/expect/doc', ['Expect: teapot', 'Content-Type: application/json'], '{}'))
    assertProblemAnswer(exchange, 417)
    assert.is((await server.request('GET', '/expect/doc')).status, 404)
    const continued = await rawExchange(server.port, httpText('PUT', '/expect/doc', ['Expect: 100-continue', 'Content-Type: application/json'], '{}'))
    assert.is(continued.answers[0]?.status, 201)
  } finally {
    await server.close()
  }
})

hostile('an HTTP/1.1 request without Host is 400 with a problem answer; HTTP/1.0 may omit it', async () => {
  const server = await startServerOnFolder()
  try {
    assertProblemAnswer(await rawExchange(server.port, 'GET / HTTP/1.1\r\nConnection: close\r\n\r\n'), 400)
    const old = await rawExchange(server.port, 'GET /?_children HTTP/1.0\r\n\r\n')
    assert.is(old.answers[0]?.status, 200)
  } finally {
    await server.close()
  }
})

hostile('a broken chunk in a body being read is answered at once, not after the request time-out', async () => {
  const server = await startServerOnFolder({ requestTimeout: 60_000, headersTimeout: 60_000 })
  try {
    const broken = 'PUT /chunks/doc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n'
    const exchange = await rawExchange(server.port, broken, { waitMs: 5000 })
    assert.is(exchange.timedOut, false, 'the server answered and closed without waiting for the client')
    assertProblemAnswer(exchange, 400)
    assert.is((await server.request('GET', '/chunks/doc')).status, 404)
  } finally {
    await server.close()
  }
})

hostile('Content-Length with Transfer-Encoding, or two Content-Lengths, is 400 and stores nothing (request smuggling)', async () => {
  const server = await startServerOnFolder()
  try {
    for (const framing of [['Content-Length: 2', 'Transfer-Encoding: chunked'], ['Content-Length: 2', 'Content-Length: 3']]) {
      const text = `PUT /smuggle/doc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framing.join('\r\n')}\r\nConnection: close\r\n\r\n{}`
      assertProblemAnswer(await rawExchange(server.port, text), 400)
    }
    assert.is((await server.request('GET', '/smuggle/doc')).status, 404)
  } finally {
    await server.close()
  }
})

hostile('a fragment sent raw takes no part in the path or the query', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/frag/one', { body: { a: 1 } })
    await server.request('PUT', '/frag/two', { body: { a: 2 } })
    for (const target of ['/frag?#a=1', '/frag#?a=1', '/frag?a=1#x'] as const) {
      const exchange = await rawExchange(server.port, httpText('GET', target, [], undefined))
      const ids = (JSON.parse(exchange.answers[0].body.toString()) as Doc[]).map((doc) => doc.id)
      assert.equal(ids, target.endsWith('#x') ? ['one'] : ['one', 'two'], target)
    }
  } finally {
    await server.close()
  }
})

hostile.run()

function assertProblemAnswer(exchange: RawExchange, status: number): void {
  assert.is(exchange.malformed, undefined)
  const answer = exchange.answers[0]
  assert.ok(answer, 'an answer came back')
  assert.is(answer.status, status, answer.body.toString())
  assert.is(wellFormed(answer, 'GET'), undefined)
}

// ---------------------------------------------------------------- the seeded fuzz run

/** A request as the generator builds it, before it becomes bytes. */
interface FuzzRequest {
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

interface Prediction {
  statuses: number[]
  /** The server may reset the connection instead of answering (a 413 whose body it stopped reading). */
  mayReset?: boolean
  /** Checks what came back beyond the status; returns what is wrong. */
  check?: (answer: RawAnswer) => string | undefined
  /** Applies a successful answer to the model. */
  apply?: (answer: RawAnswer) => void
}

const figures = {
  requests: 0, hostile: 0, byCategory: new Map<string, number>(), statuses: new Map<number, number>(),
  writesApplied: 0, resets: 0, nodesVerified: 0,
}

test(`${REQUESTS} seeded random requests, valid and hostile, get well-formed answers that agree with a model of the store (seed ${SEED})`, async () => {
  const random = seeded(SEED)
  const store = await makeTempDir('restdir-fuzz-')
  const args = ['--port', '0', '--store', store, '--quiet', '--max-body', '64kb', '--request-timeout', '2s', '--header-timeout', '2s']
  let server = await startCli(args)
  const model = new StoreModel()
  const generator = new Generator(random, model)
  const failures: string[] = []
  let died: string | undefined
  server.exited.then((exit) => (died = `the server exited (${exit.code ?? exit.signal})`))
  try {
    for (let index = 0; index < REQUESTS && failures.length < 5 && !died; index++) {
      const request = generator.next(server.port)
      const failure = await runOne(server.port, request, model)
      if (failure) failures.push(`request ${index + 1} (${request.category}): ${describe(request)}\n    ${failure}`)
    }
    assert.is(died, undefined)
    assert.equal(failures, [], `seed ${SEED}`)

    await verifyStore(server.port, model, failures)
    assert.equal(failures, [], `seed ${SEED}, final comparison`)
    assert.equal(await server.stop(), { code: 0, signal: null }, 'a graceful stop')
    assert.is(server.stderr(), '', 'no fault was logged')

    server = await startCli(args)
    await verifyStore(server.port, model, failures)
    assert.equal(failures, [], `seed ${SEED}, after a restart`)
    assert.is(server.stderr(), '')
  } finally {
    await server.stop()
    await rm(store, { recursive: true, force: true })
  }
  const categories = [...figures.byCategory].sort((a, b) => b[1] - a[1]).map(([name, count]) => `${name} ${count}`).join(', ')
  const statuses = [...figures.statuses].sort((a, b) => a[0] - b[0]).map(([status, count]) => `${status}×${count}`).join(' ')
  console.log(
    `\n  fuzz: ${figures.requests} requests (${figures.hostile} hostile), no 5xx, no malformed answer, the server never died; ` +
      `${figures.writesApplied} writes applied, ${figures.resets} refused bodies cut short by a reset; ${model.size} documents and ${figures.nodesVerified} node checks agree with the model, ` +
      `before and after a restart; seed ${SEED}\n  statuses: ${statuses}\n  categories: ${categories}`,
  )
})

/** Sends one request, checks its answer against the prediction and SPEC §8, and updates the model. */
async function runOne(port: number, request: FuzzRequest, model: StoreModel): Promise<string | undefined> {
  figures.requests++
  if (request.hostile) figures.hostile++
  figures.byCategory.set(request.category, (figures.byCategory.get(request.category) ?? 0) + 1)

  if (request.headers.some(([name, value]) => name === 'Accept' && value === 'text/event-stream')) return checkEventStream(port, request, model)
  const prediction = request.raw ? { statuses: request.raw.statuses } : predict(request, model)
  const exchange = await rawExchange(port, request.raw ? request.raw.bytes : toBytes(request), {
    head: request.method === 'HEAD',
    waitMs: request.framing === 'declared-larger' ? 8000 : 10_000,
  })
  if (exchange.malformed) return `a malformed answer: ${exchange.malformed}`
  if (exchange.timedOut) return 'no answer: the server kept the connection open'
  const answer = exchange.answers[0]
  if (!answer) {
    if (exchange.reset && prediction.mayReset) {
      figures.resets++
      return undefined
    }
    return `no answer at all (${exchange.reset ? 'reset' : 'closed'})`
  }
  for (const each of exchange.answers) {
    figures.statuses.set(each.status, (figures.statuses.get(each.status) ?? 0) + 1)
    const problem = wellFormed(each, request.method)
    if (problem) return `${each.status}: ${problem}`
  }
  if (!prediction.statuses.includes(answer.status)) {
    return `expected ${prediction.statuses.join(' or ')}, got ${answer.status} ${answer.body.toString().slice(0, 300)}`
  }
  const problem = prediction.check?.(answer)
  if (problem) return problem
  if (answer.status < 300) prediction.apply?.(answer)
  return undefined
}

/** SPEC §8: no 5xx; errors are problem+json naming their status; JSON answers parse; nothing internal leaks. */
function wellFormed(answer: RawAnswer, method: string): string | undefined {
  if (answer.status >= 500) return `a server error: ${answer.body.toString().slice(0, 300)}`
  const type = answer.headers['content-type']
  const text = answer.body.toString('utf8')
  if (answer.status >= 400) {
    if (type !== 'application/problem+json') return `an error answer of type ${type}`
    if (method === 'HEAD') return undefined
    let problem: { type?: unknown; title?: unknown; status?: unknown; detail?: unknown }
    try {
      problem = JSON.parse(text)
    } catch {
      return `a problem answer that is not JSON: ${text.slice(0, 200)}`
    }
    if (problem.status !== answer.status || typeof problem.title !== 'string' || typeof problem.type !== 'string' || typeof problem.detail !== 'string') {
      return `an incomplete problem: ${text.slice(0, 300)}`
    }
    if (/\bat .+\.(ts|js):\d+|\/tmp\/|\/work\/|node:internal/.test(problem.detail)) return `a detail that leaks internals: ${problem.detail}`
    return undefined
  }
  if (answer.body.length > 0) {
    if (type !== 'application/json; charset=utf-8') return `a body of type ${type}`
    try {
      JSON.parse(text)
    } catch {
      return `a JSON answer that does not parse: ${text.slice(0, 200)}`
    }
  }
  return undefined
}

/** What the server must answer, from SPEC §2, §3, §5, §9 and §12, in the order those checks happen. */
function predict(request: FuzzRequest, model: StoreModel): Prediction {
  const { method } = request
  const header = (name: string) => request.headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1]
  const expect = header('Expect')
  // Node reads any Expect that names 100-continue as that one (RFC 9110 §10.1.1 knows no other).
  if (expect !== undefined && !/(?:^|\W)100-continue(?:$|\W)/i.test(expect)) return { statuses: [417] }
  // A body that never arrives whole: cut off by the request time-out (the generator makes these valid otherwise).
  if (request.framing === 'declared-larger') return { statuses: [408] }
  const path = splitPathModel(request.rawPath)
  if ('status' in path) return { statuses: [path.status] }
  if (request.host === undefined) return { statuses: [400] }
  if (!isLoopbackHostHeader(request.host)) return { statuses: [403] }
  const origin = header('Origin')
  const writes = !['GET', 'HEAD', 'OPTIONS'].includes(method)
  const preflight = method === 'OPTIONS' && origin !== undefined && header('Access-Control-Request-Method') !== undefined
  if (origin !== undefined && !originAllowedByDefault(origin, request.host) && (preflight || writes)) return { statuses: [403] }
  if (preflight) return { statuses: [204], check: (answer) => (answer.headers['access-control-allow-origin'] === origin ? undefined : 'no Access-Control-Allow-Origin') }

  const segments = path.segments
  const id = segments[segments.length - 1]
  const allowed = segments.length === 0 ? ['GET', 'HEAD', 'POST', 'OPTIONS'] : ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
  if (method === 'OPTIONS') return { statuses: [204], check: (answer) => (answer.headers.allow === allowed.join(', ') ? undefined : `Allow: ${answer.headers.allow}`) }
  if (!allowed.includes(method)) return { statuses: [405], check: (answer) => (answer.headers.allow ? undefined : 'a 405 without Allow') }
  const current = model.get(segments)
  const ifMatch = header('If-Match')
  const ifNoneMatch = header('If-None-Match')

  if (method === 'GET' || method === 'HEAD') return predictRead(request, model, segments, method)

  // Writes read their body first (SPEC §5).
  if (method === 'DELETE') {
    const conditional = ifMatch !== undefined || ifNoneMatch !== undefined
    if (conditional && !current && !model.exists(segments)) return { statuses: [404] }
    if (conditional && !preconditionsHold(current, ifMatch, ifNoneMatch)) return { statuses: [412] }
    if (!model.exists(segments)) return { statuses: [404] }
    return {
      statuses: [current ? 200 : 204],
      check: (answer) => (current && !sameJson(parse(answer), current.doc) ? `deleted ${answer.body.toString().slice(0, 200)}` : undefined),
      apply: () => {
        model.remove(segments)
        figures.writesApplied++
      },
    }
  }

  const declared = request.framing === 'declared-huge' ? 10 ** 12 : undefined
  const effective = request.framing === 'declared-smaller' ? request.body.subarray(0, request.body.length >> 1) : request.body
  const read = readBodyModel(request.contentType, effective, declared)
  if ('status' in read) return { statuses: [read.status], mayReset: read.status === 413 }
  const body = read.body

  if (method === 'POST') {
    if (Object.hasOwn(body, 'id')) return { statuses: [400] }
    return {
      statuses: [201],
      check: (answer) => {
        const doc = parse(answer) as Doc
        const newId = String(doc?.id)
        if (!/^[0-9a-z]{12}$/.test(newId)) return `a generated id ${newId}`
        if (model.get([...segments, newId])) return `a generated id ${newId} that was taken`
        if (!sameJson(doc, withId(newId, body))) return `created ${answer.body.toString().slice(0, 200)}`
        if (!answer.headers.location?.endsWith('/' + newId) || !answer.headers.etag) return 'no Location or ETag'
        return undefined
      },
      apply: (answer) => {
        const doc = parse(answer) as Doc
        model.set([...segments, String(doc.id)], doc, answer.headers.etag)
        figures.writesApplied++
      },
    }
  }

  if (Object.hasOwn(body, 'id') && body.id !== id) return { statuses: [400] }
  let next: Doc
  if (method === 'PATCH') {
    if (!current) return { statuses: [404] }
    next = mergedDocument(id, current.doc, body)
  } else next = withId(id, withoutId(body))
  if (!preconditionsHold(current, ifMatch, ifNoneMatch)) return { statuses: [412] }
  return {
    statuses: [method === 'PUT' && !current ? 201 : 200],
    check: (answer) => {
      if (!sameJson(parse(answer), next)) return `stored ${answer.body.toString().slice(0, 200)}, expected ${canonical(next).slice(0, 200)}`
      if (!answer.headers.etag) return 'no ETag'
      return undefined
    },
    apply: (answer) => {
      model.set(segments, next, answer.headers.etag)
      figures.writesApplied++
    },
  }
}

function predictRead(request: FuzzRequest, model: StoreModel, segments: string[], method: string): Prediction {
  const current = model.get(segments)
  const ifNoneMatch = request.headers.find(([name]) => name === 'If-None-Match')?.[1]
  const body = (answer: RawAnswer) => (method === 'HEAD' ? undefined : parse(answer))
  if (request.query.includes('_children')) {
    if (!model.exists(segments) && segments.length > 0) return { statuses: [404] }
    const names = model.childNames(segments)
    return { statuses: [200], check: (answer) => (method === 'GET' && !sameJson(body(answer), names) ? `children ${answer.body.toString().slice(0, 300)}, expected ${canonical(names).slice(0, 300)}` : undefined) }
  }
  if (current) {
    if (ifNoneMatch !== undefined && !preconditionsHold(current, undefined, ifNoneMatch)) {
      return { statuses: [304], check: (answer) => (answer.headers.etag === current.etag ? undefined : `304 with ETag ${answer.headers.etag}`) }
    }
    return {
      statuses: [200],
      check: (answer) => {
        if (answer.headers.etag !== current.etag) return `ETag ${answer.headers.etag}, expected ${current.etag}`
        if (method === 'GET' && !sameJson(body(answer), current.doc)) return `read ${answer.body.toString().slice(0, 200)}, expected ${canonical(current.doc).slice(0, 200)}`
        return undefined
      },
    }
  }
  if (model.exists(segments) || segments.length === 0) {
    const docs = model.collection(segments)
    return {
      statuses: [200],
      check: (answer) => {
        if (answer.headers['x-total-count'] !== String(docs.length)) return `X-Total-Count ${answer.headers['x-total-count']}, expected ${docs.length}`
        if (method === 'GET' && !sameJson(body(answer), docs)) return `listed ${answer.body.toString().slice(0, 300)}, expected ${canonical(docs).slice(0, 300)}`
        return undefined
      },
    }
  }
  return { statuses: [404] }
}

/** An event stream: its first event is the node's current value (SPEC §10). */
async function checkEventStream(port: number, request: FuzzRequest, model: StoreModel): Promise<string | undefined> {
  const headers = Object.fromEntries(request.headers.filter(([name]) => name !== 'Connection'))
  const result = await new Promise<{ status: number; type?: string; first: string } | string>((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: request.rawPath + request.query, headers: { ...headers, Host: request.host! }, agent: false })
    const timer = setTimeout(() => {
      req.destroy()
      resolve('no first event within 5 s')
    }, 5000)
    req.on('response', (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => {
        text += chunk
        if (text.includes('\n\n') || res.statusCode !== 200) {
          clearTimeout(timer)
          req.destroy()
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], first: text })
        }
      })
    })
    req.on('error', () => {})
    req.end()
  })
  figures.statuses.set(200, (figures.statuses.get(200) ?? 0) + 1)
  if (typeof result === 'string') return result
  if (result.status !== 200 || result.type !== 'text/event-stream; charset=utf-8') return `an event stream answered ${result.status} ${result.type}`
  const event = /^(?:(?:retry|id): .*\n)*event: value\ndata: (.*)\n\n/.exec(result.first)
  if (!event) return `a first event ${JSON.stringify(result.first.slice(0, 200))}`
  const path = splitPathModel(request.rawPath)
  if ('status' in path) return `an event stream on a path that should be ${path.status}`
  const stored = model.get(path.segments)
  const expected = stored ? stored.doc : model.exists(path.segments) ? model.collection(path.segments) : null
  const data = (JSON.parse(event[1]) as { data: unknown }).data
  return sameJson(data, expected) ? undefined : `an event stream began with ${event[1].slice(0, 200)}, expected ${canonical(expected).slice(0, 200)}`
}

/** After the run, and after a restart: the server holds exactly the model's nodes and documents. */
async function verifyStore(port: number, model: StoreModel, failures: string[]): Promise<void> {
  const get = async (segments: string[], query = '') => {
    const exchange = await rawExchange(port, httpText('GET', '/' + segments.map(encodeURIComponent).join('/') + query, [], undefined))
    return exchange.answers[0]
  }
  const rootNames = await get([], '?_children')
  if (!rootNames || !sameJson(parse(rootNames), model.childNames([]))) failures.push(`the root holds ${rootNames?.body.toString().slice(0, 300)}`)
  const walk = async (segments: string[]): Promise<void> => {
    figures.nodesVerified++
    const names = await get(segments, '?_children')
    if (names?.status !== 200 || !sameJson(parse(names), model.childNames(segments))) {
      failures.push(`${segments.join('/')} has children ${names?.body.toString().slice(0, 300)}, expected ${canonical(model.childNames(segments))}`)
      return
    }
    const answer = await get(segments)
    const stored = model.get(segments)
    const expected = stored ? stored.doc : model.collection(segments)
    if (answer?.status !== 200 || !sameJson(parse(answer), expected)) {
      failures.push(`${segments.join('/')} holds ${answer?.status} ${answer?.body.toString().slice(0, 200)}, expected ${canonical(expected).slice(0, 200)}`)
    } else if (stored && answer.headers.etag !== stored.etag) failures.push(`${segments.join('/')} has ETag ${answer.headers.etag}, expected ${stored.etag}`)
    for (const name of model.childNames(segments)) await walk([...segments, name])
  }
  for (const name of model.childNames([])) await walk([name])
}

// ---------------------------------------------------------------- the generator

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
const KEYS = ['a', 'b', 'name', 'title', 'n', 'list', 'nested', '__proto__', 'constructor', 'toString', 'é', '😀', '', ' ', 'a.b', 'valueOf']

class Generator {
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
      ['absolute-form target', `GET http://127.0.0.1:${port}${target} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [400]],
      ['asterisk target', `OPTIONS * HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [400]],
      ['control character in the path', Buffer.concat([Buffer.from(`GET ${target}`), Buffer.from([random.pick([0x00, 0x01, 0x7f, 0x1b])]), Buffer.from(` HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)]), [400]],
      ['raw non-ASCII in the path', Buffer.concat([Buffer.from(`GET ${target}`), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from(` HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)]), [400, 404, 200]],
      ['space in the path', `GET /fz/a b HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, [400]],
      ['no Host', `GET ${target} HTTP/1.1\r\nConnection: close\r\n\r\n`, [400]],
      ['two Hosts', `GET ${target} HTTP/1.1\r\n${host}Host: evil.example\r\nConnection: close\r\n\r\n`, [400, 403, 404, 200]],
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
    request.raw = { bytes: Buffer.from(bytes as string), statuses }
    // One in a few hundred: a body that never comes whole, for the request time-out (it takes 2 s).
    if (random.chance(0.004)) {
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

function toBytes(request: FuzzRequest): Buffer {
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
  lines.push('Connection: close')
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), payload])
}

function httpText(method: string, target: string, headers: string[], body: string | undefined): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...headers]
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  lines.push('Connection: close')
  return lines.join('\r\n') + '\r\n\r\n' + (body ?? '')
}

function parse(answer: RawAnswer): unknown {
  try {
    return JSON.parse(answer.body.toString('utf8'))
  } catch {
    return undefined
  }
}

function describe(request: FuzzRequest): string {
  if (request.raw) return JSON.stringify(request.raw.bytes.subarray(0, 160).toString('latin1'))
  const headers = request.headers.map(([name, value]) => `${name}: ${value.slice(0, 60)}`).join('; ')
  return `${request.method} ${request.rawPath.slice(0, 120)}${request.query} host=${request.host} type=${request.contentType} framing=${request.framing} ${headers} body=${JSON.stringify(request.body.subarray(0, 160).toString('latin1'))}`
}

test.run()
