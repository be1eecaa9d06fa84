import { suite, test } from 'uvu'
import * as assert from 'uvu/assert'
import { request as httpRequest } from 'node:http'
import { rm } from 'node:fs/promises'
import { makeTempDir, startServerOnFolder } from './support/helpers.ts'
import { startCli } from './support/process.ts'
import { canonical, seeded, seedFrom } from './support/random.ts'
import { rawExchange, type RawAnswer, type RawExchange } from './support/raw-http.ts'
import {
  StoreModel, isLoopbackHostHeader, mergedDocument, originAllowedByDefault,
  newChildFits, preconditionsHold, readBodyModel, sameJson, splitPathModel, withId, withoutId, type Doc,
} from './support/fuzz-model.ts'
import { Generator, describe, pipelinedSequence, toBytes, type FuzzRequest } from './support/fuzz-generator.ts'

// docs/http-api.md, "Requests and errors" and "Security": bad input always gets a clear error answer, never a crash,
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

/** Sends one request, checks its answer against the prediction and the error rules, and updates the model. */
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

/** docs/http-api.md, "Requests and errors": no 5xx; errors are problem+json naming their status; JSON answers parse; nothing internal leaks. */
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

/** What the server must answer, from docs/http-api.md ("The HTTP API", "Security"), in the order those checks happen. */
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

  // Writes read their body first (docs/http-api.md, "Requests and errors").
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

  if (method === 'POST' && !newChildFits(request.rawPath)) return { statuses: [414] }
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

/** An event stream: its first event is the node's current value (docs/http-api.md, "Live updates"). */
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
  const refused = splitPathModel(request.rawPath)
  if ('status' in refused) return result.status === refused.status ? undefined : `an event stream on a path that should be ${refused.status} answered ${result.status}`
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
    // Dot-segments are spelled %2E, as a Location spells them: sent as they are, they would be refused.
    const encoded = segments.map((segment) => (segment === '.' || segment === '..' ? segment.replaceAll('.', '%2E') : encodeURIComponent(segment)))
    const exchange = await rawExchange(port, httpText('GET', '/' + encoded.join('/') + query, [], undefined))
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

// ---------------------------------------------------------------- pipelined sequences on one connection

// RFC 9112 §9.3.2: several requests sent in one write on one connection must
// take effect in the order they were sent. Each sequence mixes writes and reads
// of a few nodes (If-Match included, with tags that earlier requests of the same
// sequence make stale); every answer is predicted from the model as it stands
// after the answers before it, so a request that ran early or late shows.

const PIPELINED_SEQUENCES = Math.max(20, Math.round(REQUESTS / 25))

test(`${PIPELINED_SEQUENCES} seeded sequences pipelined on one connection take effect in the order they were sent (seed ${SEED})`, async () => {
  const random = seeded(SEED ^ 0x9e3779b9)
  const server = await startServerOnFolder()
  const model = new StoreModel()
  const failures: string[] = []
  let requests = 0
  try {
    for (let index = 0; index < PIPELINED_SEQUENCES && failures.length === 0; index++) {
      const sequence = pipelinedSequence(random, model, server.port)
      requests += sequence.length
      const failure = await runPipelined(server.port, sequence, model)
      if (failure) failures.push(`sequence ${index + 1}: ${failure}\n    ${sequence.map(describe).join('\n    ')}`)
    }
    assert.equal(failures, [], `seed ${SEED}`)
    await verifyStore(server.port, model, failures)
    assert.equal(failures, [], `seed ${SEED}, final comparison`)
  } finally {
    await server.close()
  }
  console.log(`\n  fuzz: ${PIPELINED_SEQUENCES} pipelined sequences (${requests} requests) took effect in order; ${model.size} documents agree with the model; seed ${SEED}`)
})

/** Sends the whole sequence in one write, the last request closing the connection, and checks each answer in turn. */
async function runPipelined(port: number, sequence: FuzzRequest[], model: StoreModel): Promise<string | undefined> {
  const bytes = Buffer.concat(sequence.map((request, index) => toBytes(request, index === sequence.length - 1)))
  const exchange = await rawExchange(port, bytes)
  if (exchange.malformed) return `a malformed answer: ${exchange.malformed}`
  if (exchange.timedOut) return 'the server kept the connection open'
  if (exchange.answers.length !== sequence.length) return `${exchange.answers.length} answers to ${sequence.length} requests`
  for (const [index, request] of sequence.entries()) {
    const answer = exchange.answers[index]
    const problem = wellFormed(answer, request.method)
    if (problem) return `request ${index + 1}: ${answer.status}: ${problem}`
    const prediction = predict(request, model)
    if (!prediction.statuses.includes(answer.status)) {
      return `request ${index + 1} (${request.method}): expected ${prediction.statuses.join(' or ')}, got ${answer.status} ${answer.body.toString().slice(0, 200)}`
    }
    const mismatch = prediction.check?.(answer)
    if (mismatch) return `request ${index + 1} (${request.method}): ${mismatch}`
    if (answer.status < 300) prediction.apply?.(answer)
  }
  return undefined
}

test.run()
