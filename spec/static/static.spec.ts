import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HttpError } from '../../lib/http-error.ts'
import { sendProblem, toHttpError } from '../../lib/http/problem.ts'
import { contentTypeFor } from '../../lib/static/mime.ts'
import { splitPath } from '../../lib/path.ts'
import { serveStatic } from '../../lib/static/static.ts'
import { requestAsIs, type ByteAnswer } from '../support/raw-http.ts'

// The tree: <base>/www is served; <base>/secret.txt and <base>/www-secret/ must never be.
const base = mkdtempSync(join(tmpdir(), 'restdir-static-'))
const www = join(base, 'www')
const SECRET = 'TOP-SECRET'

const indexHtml = '<!doctype html><title>home</title>'
const styleCss = 'body { color: teal }'
const appJs = 'console.log("app")'
const subIndexHtml = '<!doctype html><title>sub</title>'
/** A byte pattern with period 251, so any slice of it is recognizable. */
const patterned = (length: number) => Buffer.from(Array.from({ length }, (_, index) => index % 251))
const oneKib = patterned(1024)
const oneMib = patterned(1024 * 1024 + 123)

function buildTree(): void {
  mkdirSync(join(www, 'sub'), { recursive: true })
  mkdirSync(join(www, 'empty-folder'))
  mkdirSync(join(base, 'www-secret'))
  writeFileSync(join(base, 'secret.txt'), `${SECRET} beside www`)
  writeFileSync(join(base, 'www-secret', 'secret.txt'), `${SECRET} in the sibling folder`)
  writeFileSync(join(www, '.secret'), `${SECRET} dotfile`)
  writeFileSync(join(www, 'index.html'), indexHtml)
  writeFileSync(join(www, 'style.css'), styleCss)
  writeFileSync(join(www, 'app.js'), appJs)
  writeFileSync(join(www, 'one-kib.bin'), oneKib)
  writeFileSync(join(www, 'one-mib.bin'), oneMib)
  writeFileSync(join(www, 'eight-mib.bin'), patterned(8 * 1024 * 1024))
  writeFileSync(join(www, 'empty.txt'), '')
  writeFileSync(join(www, 'notes'), 'no extension')
  writeFileSync(join(www, 'logo.PNG'), 'not really a png')
  writeFileSync(join(www, 'sub', 'index.html'), subIndexHtml)
  writeFileSync(join(www, 'changing.txt'), 'version one')
  symlinkSync(join(base, 'secret.txt'), join(www, 'link-out.txt'))
  symlinkSync(join(base, 'www-secret'), join(www, 'link-sibling'))
  symlinkSync('.secret', join(www, 'link-dot.txt'))
  symlinkSync('style.css', join(www, 'alias.css'))
}

let server: Server
let port = 0
/** Faults the handler caught that were not HttpErrors: a clean run has none. */
const faults: unknown[] = []
/** Node's warnings about FileHandles it had to close on garbage collection, i.e. leaks GC hid. */
const descriptorsClosedByGc: string[] = []

type Answer = ByteAnswer

function request(path: string, method = 'GET', headers: Record<string, string> = {}): Promise<Answer> {
  return requestAsIs(port, path, method, headers)
}

/** Starts a download of `path` and hangs up as soon as the first bytes arrive. */
function abortAfterFirstChunk(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.once('data', () => {
        req.destroy()
        resolve()
      })
    })
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve() : reject(error)))
    req.end()
  })
}

/** This process's descriptors open on files of the test tree (Linux: /proc/self/fd holds one link per descriptor). */
function descriptorsIntoTree(): number {
  const realBase = realpathSync(base)
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(realBase)
    } catch {
      return false // closed while we looked
    }
  }).length
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Requests whose handler has not finished yet. */
let handling = 0

/** Waits until every handler has finished (so whatever it would log is logged), 5 s at most. */
async function handlersFinished(): Promise<void> {
  for (let waited = 0; handling > 0; waited += 5) {
    if (waited > 5000) assert.unreachable(`${handling} handlers still running after 5 s`)
    await sleep(5)
  }
}

test.before(async () => {
  buildTree()
  process.on('warning', (warning) => {
    if (/on garbage collection/.test(warning.message)) descriptorsClosedByGc.push(warning.message)
  })
  server = createServer(async (req, res) => {
    const head = req.method === 'HEAD'
    handling++
    try {
      const segments = splitPath(req.url ?? '/')
      if (await serveStatic(req, res, segments, www)) return
      sendProblem(res, new HttpError(404, 'No file has this path.'), head)
    } catch (error) {
      if (!(error instanceof HttpError)) faults.push(error)
      sendProblem(res, toHttpError(error), head)
    } finally {
      handling--
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})

test.after(async () => {
  await new Promise((resolve) => server.close(resolve))
  rmSync(base, { recursive: true, force: true })
})

// ─── Content and headers ────────────────────────────────────────────────────

test('the root path serves www/index.html as utf-8 HTML', async () => {
  const answer = await request('/')
  assert.is(answer.status, 200)
  assert.is(answer.headers['content-type'], 'text/html; charset=utf-8')
  assert.is(answer.body.toString(), indexHtml)
})

test('a folder path serves the folder index.html, with or without a trailing slash', async () => {
  for (const path of ['/sub', '/sub/']) {
    const answer = await request(path)
    assert.is(answer.status, 200, path)
    assert.is(answer.body.toString(), subIndexHtml, path)
  }
})

test('css and js files carry their text type with charset=utf-8 and their exact length', async () => {
  const css = await request('/style.css')
  assert.is(css.headers['content-type'], 'text/css; charset=utf-8')
  assert.is(css.headers['content-length'], String(styleCss.length))
  assert.is(css.body.toString(), styleCss)
  const js = await request('/app.js')
  assert.is(js.headers['content-type'], 'text/javascript; charset=utf-8')
  assert.is(js.headers['content-length'], String(appJs.length))
  assert.is(js.body.toString(), appJs)
})

test('an unknown or missing extension is application/octet-stream, and extensions match case-insensitively', async () => {
  assert.is((await request('/one-kib.bin')).headers['content-type'], 'application/octet-stream')
  assert.is((await request('/notes')).headers['content-type'], 'application/octet-stream')
  assert.is((await request('/logo.PNG')).headers['content-type'], 'image/png')
})

test('the content-type table covers the usual web formats', () => {
  const expected: Record<string, string> = {
    'a.html': 'text/html; charset=utf-8',
    'a.mjs': 'text/javascript; charset=utf-8',
    'a.json': 'application/json; charset=utf-8',
    'a.js.map': 'application/json; charset=utf-8',
    'a.svg': 'image/svg+xml; charset=utf-8',
    'a.txt': 'text/plain; charset=utf-8',
    'a.jpg': 'image/jpeg',
    'a.gif': 'image/gif',
    'a.webp': 'image/webp',
    'favicon.ico': 'image/x-icon',
    'a.woff2': 'font/woff2',
    'a.wasm': 'application/wasm',
    'a.constructor': 'application/octet-stream',
  }
  for (const [name, type] of Object.entries(expected)) assert.is(contentTypeFor(name), type, name)
})

test('a one-mebibyte file arrives whole and byte-exact', async () => {
  const answer = await request('/one-mib.bin')
  assert.is(answer.status, 200)
  assert.is(answer.headers['content-length'], String(oneMib.length))
  assert.ok(answer.body.equals(oneMib))
})

test('an empty file answers 200 with Content-Length 0', async () => {
  const answer = await request('/empty.txt')
  assert.is(answer.status, 200)
  assert.is(answer.headers['content-length'], '0')
  assert.is(answer.body.length, 0)
})

test('a file answer carries a strong ETag, Last-Modified, Accept-Ranges and Cache-Control: no-cache', async () => {
  const answer = await request('/one-kib.bin')
  const etag = answer.headers.etag ?? ''
  assert.match(etag, /^"[^"]+"$/, 'a strong, quoted entity-tag')
  assert.ok(!Number.isNaN(Date.parse(answer.headers['last-modified'] ?? '')))
  assert.match(answer.headers['last-modified'] ?? '', / GMT$/)
  assert.is(answer.headers['accept-ranges'], 'bytes')
  assert.is(answer.headers['cache-control'], 'no-cache')
  assert.is((await request('/one-kib.bin')).headers.etag, etag, 'stable while the file is unchanged')
})

test('the ETag changes when a file is rewritten, even at the same size', async () => {
  const path = join(www, 'changing.txt')
  const before = (await request('/changing.txt')).headers.etag
  writeFileSync(path, 'version two')
  utimesSync(path, new Date(), new Date(Date.now() + 5000))
  const after = await request('/changing.txt', 'GET', { 'If-None-Match': before ?? '' })
  assert.is.not(after.headers.etag, before)
  assert.is(after.status, 200, 'the old ETag no longer validates')
  assert.is(after.body.toString(), 'version two')
})

test('HEAD answers the same headers as GET and no body', async () => {
  const get = await request('/style.css')
  const head = await request('/style.css', 'HEAD')
  assert.is(head.status, 200)
  assert.is(head.body.length, 0)
  for (const name of ['content-type', 'content-length', 'etag', 'last-modified', 'accept-ranges', 'cache-control']) {
    assert.is(head.headers[name], get.headers[name], name)
  }
})

test('methods other than GET and HEAD are not served (the caller answers instead)', async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    const answer = await request('/style.css', method)
    assert.is(answer.status, 404, method)
    assert.is(answer.headers['content-type'], 'application/problem+json', method)
  }
})

test('a missing file or a folder without index.html falls through to the caller', async () => {
  for (const path of ['/missing.html', '/sub/missing.css', '/empty-folder', '/style.css/child']) {
    const answer = await request(path)
    assert.is(answer.status, 404, path)
    assert.is(answer.headers['content-type'], 'application/problem+json', path)
  }
})

test('a symlink that stays inside www is served', async () => {
  const answer = await request('/alias.css')
  assert.is(answer.status, 200)
  assert.is(answer.body.toString(), styleCss)
})

// ─── Conditional requests (RFC 9110 §13) ────────────────────────────────────

async function validatorsOf(path: string): Promise<{ etag: string; lastModified: string }> {
  const answer = await request(path, 'HEAD')
  return { etag: answer.headers.etag ?? '', lastModified: answer.headers['last-modified'] ?? '' }
}

test('If-None-Match with the current ETag answers 304 with validators and no body', async () => {
  const { etag, lastModified } = await validatorsOf('/style.css')
  const answer = await request('/style.css', 'GET', { 'If-None-Match': etag })
  assert.is(answer.status, 304)
  assert.is(answer.body.length, 0)
  assert.is(answer.headers.etag, etag)
  assert.is(answer.headers['last-modified'], lastModified)
  assert.is(answer.headers['cache-control'], 'no-cache')
})

test('If-None-Match uses weak comparison, accepts lists and matches * ', async () => {
  const { etag } = await validatorsOf('/style.css')
  for (const value of [`W/${etag}`, `"other", ${etag}`, `W/"other",W/${etag}`, '*']) {
    assert.is((await request('/style.css', 'GET', { 'If-None-Match': value })).status, 304, value)
  }
  assert.is((await request('/style.css', 'HEAD', { 'If-None-Match': etag })).status, 304, 'HEAD too')
})

test('If-None-Match with other ETags sends the file', async () => {
  const answer = await request('/style.css', 'GET', { 'If-None-Match': '"other", W/"another"' })
  assert.is(answer.status, 200)
  assert.is(answer.body.toString(), styleCss)
})

test('If-Modified-Since at or after Last-Modified answers 304', async () => {
  const { etag, lastModified } = await validatorsOf('/style.css')
  const later = new Date(Date.parse(lastModified) + 3600_000).toUTCString()
  for (const since of [lastModified, later]) {
    const answer = await request('/style.css', 'GET', { 'If-Modified-Since': since })
    assert.is(answer.status, 304, since)
    assert.is(answer.body.length, 0)
    assert.is(answer.headers.etag, etag)
    assert.is(answer.headers['last-modified'], lastModified)
  }
})

test('If-Modified-Since before Last-Modified, or not a date, sends the file', async () => {
  const { lastModified } = await validatorsOf('/style.css')
  const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString()
  for (const since of [earlier, 'not a date']) {
    assert.is((await request('/style.css', 'GET', { 'If-Modified-Since': since })).status, 200, since)
  }
})

test('If-None-Match decides alone when both conditional headers are sent', async () => {
  const { lastModified } = await validatorsOf('/style.css')
  const answer = await request('/style.css', 'GET', { 'If-None-Match': '"other"', 'If-Modified-Since': lastModified })
  assert.is(answer.status, 200)
})

// ─── Ranges (RFC 9110 §14) ──────────────────────────────────────────────────

async function rangeOf(range: string, extra: Record<string, string> = {}): Promise<Answer> {
  return request('/one-kib.bin', 'GET', { Range: range, ...extra })
}

test('bytes=0-9 answers 206 with the first ten bytes and their Content-Range', async () => {
  const answer = await rangeOf('bytes=0-9')
  assert.is(answer.status, 206)
  assert.is(answer.headers['content-range'], 'bytes 0-9/1024')
  assert.is(answer.headers['content-length'], '10')
  assert.ok(answer.body.equals(oneKib.subarray(0, 10)))
})

test('bytes=10- answers 206 with everything from byte 10', async () => {
  const answer = await rangeOf('bytes=10-')
  assert.is(answer.status, 206)
  assert.is(answer.headers['content-range'], 'bytes 10-1023/1024')
  assert.is(answer.headers['content-length'], '1014')
  assert.ok(answer.body.equals(oneKib.subarray(10)))
})

test('bytes=-5 answers 206 with the last five bytes', async () => {
  const answer = await rangeOf('bytes=-5')
  assert.is(answer.status, 206)
  assert.is(answer.headers['content-range'], 'bytes 1019-1023/1024')
  assert.ok(answer.body.equals(oneKib.subarray(1019)))
})

test('a range reaching past the end is clamped to the file', async () => {
  const tail = await rangeOf('bytes=1000-5000')
  assert.is(tail.headers['content-range'], 'bytes 1000-1023/1024')
  assert.ok(tail.body.equals(oneKib.subarray(1000)))
  const longSuffix = await rangeOf('bytes=-5000')
  assert.is(longSuffix.headers['content-range'], 'bytes 0-1023/1024')
  assert.ok(longSuffix.body.equals(oneKib))
})

test('a range deep inside a large file is streamed from its offset', async () => {
  const answer = await request('/one-mib.bin', 'GET', { Range: 'bytes=1000000-1000099' })
  assert.is(answer.status, 206)
  assert.ok(answer.body.equals(oneMib.subarray(1000000, 1000100)))
})

test('an unsatisfiable range answers 416 problem+json with Content-Range bytes */size', async () => {
  for (const range of ['bytes=1024-', 'bytes=5000-6000', 'bytes=-0']) {
    const answer = await rangeOf(range)
    assert.is(answer.status, 416, range)
    assert.is(answer.headers['content-range'], 'bytes */1024', range)
    assert.is(answer.headers['content-type'], 'application/problem+json')
    assert.is(JSON.parse(answer.body.toString()).status, 416)
  }
  assert.is((await request('/empty.txt', 'GET', { Range: 'bytes=0-' })).status, 416, 'no byte 0 in an empty file')
})

test('several ranges, another unit or a malformed Range are ignored and the whole file is sent', async () => {
  for (const range of ['bytes=0-1,5-6', 'items=0-5', 'bytes=abc', 'bytes=9-3', 'bytes=-', 'bytes 0-9']) {
    const answer = await rangeOf(range)
    assert.is(answer.status, 200, range)
    assert.is(answer.headers['content-range'], undefined, range)
    assert.ok(answer.body.equals(oneKib), range)
  }
})

test('HEAD ignores Range and describes the whole file', async () => {
  const answer = await request('/one-kib.bin', 'HEAD', { Range: 'bytes=0-9' })
  assert.is(answer.status, 200)
  assert.is(answer.headers['content-length'], '1024')
  assert.is(answer.body.length, 0)
})

test('If-Range with the current ETag or Last-Modified keeps the range', async () => {
  const { etag, lastModified } = await validatorsOf('/one-kib.bin')
  for (const ifRange of [etag, lastModified]) {
    const answer = await rangeOf('bytes=0-9', { 'If-Range': ifRange })
    assert.is(answer.status, 206, ifRange)
    assert.is(answer.body.length, 10)
  }
})

test('If-Range with a stale or weak validator sends the whole file instead', async () => {
  const { etag, lastModified } = await validatorsOf('/one-kib.bin')
  const stale = new Date(Date.parse(lastModified) - 60_000).toUTCString()
  for (const ifRange of ['"stale"', `W/${etag}`, stale]) {
    const answer = await rangeOf('bytes=0-9', { 'If-Range': ifRange })
    assert.is(answer.status, 200, ifRange)
    assert.ok(answer.body.equals(oneKib), ifRange)
  }
})

// ─── Path safety (docs/http-api.md, "Security"; CVE-2014-6394) ──────────────────────

const escapes = [
  '/../secret.txt',
  '/%2e%2e/secret.txt',
  '/%2E%2E/secret.txt',
  '/..%2fsecret.txt',
  '/%2e%2e%2fsecret.txt',
  '/..%5csecret.txt',
  '/..\\secret.txt',
  '/sub/../../secret.txt',
  '/sub/%2e%2e/%2e%2e/secret.txt',
  '/%2fetc%2fpasswd',
  '/%5c..%5csecret.txt',
  '/index.html%00.txt',
  '/..%2fsecret.txt%00.html',
  '/./index.html',
  '/../www-secret/secret.txt',
  '/..%2fwww-secret%2fsecret.txt',
  '/link-out.txt',
  '/link-sibling/secret.txt',
  '/.secret',
  '/%2esecret',
  '/link-dot.txt',
]

test('no traversal, encoded separator, NUL, dotfile or outward symlink escapes www', async () => {
  for (const path of escapes) {
    const answer = await request(path)
    assert.ok(answer.status >= 400 && answer.status < 500, `${path} answered ${answer.status}`)
    assert.is(answer.headers['content-type'], 'application/problem+json', path)
    assert.not.ok(answer.body.toString('latin1').includes(SECRET), `${path} leaked a secret`)
    assert.not.ok(answer.body.toString().includes(base), `${path} showed a file-system path`)
  }
})

test('a link into a sibling folder whose name starts with the root name is refused (www vs www-secret)', async () => {
  const answer = await request('/link-sibling/secret.txt')
  assert.is(answer.status, 404)
  const head = await request('/link-sibling/secret.txt', 'HEAD')
  assert.is(head.status, 404)
})

// ─── Robustness ─────────────────────────────────────────────────────────────

test('every answer closes its file: hang-ups mid-download, 206, 416, HEAD and 304 leave no descriptor open', async () => {
  if (process.platform !== 'linux') return
  for (let round = 0; round < 10; round++) await abortAfterFirstChunk('/eight-mib.bin')
  await request('/eight-mib.bin', 'GET', { Range: 'bytes=0-' })
  await request('/eight-mib.bin', 'GET', { Range: 'bytes=99999999-' })
  await request('/eight-mib.bin', 'HEAD')
  await request('/eight-mib.bin', 'GET', { 'If-None-Match': '*' })
  let open = descriptorsIntoTree()
  for (let waited = 0; open > 0 && waited < 2000; waited += 25) {
    await sleep(25)
    open = descriptorsIntoTree()
  }
  assert.is(open, 0, 'descriptors still open on served files')
  await sleep(25)
  assert.equal(descriptorsClosedByGc, [], 'descriptors left for the garbage collector to close')
})

test('a client hanging up is not logged as a fault, and the server keeps serving', async () => {
  await abortAfterFirstChunk('/eight-mib.bin')
  await handlersFinished()
  assert.equal(faults, [])
  assert.is((await request('/style.css')).status, 200)
})

test.run()
