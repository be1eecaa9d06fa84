import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { linkSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HttpError } from '../../lib/http-error.ts'
import { sendProblem, toHttpError } from '../../lib/http/problem.ts'
import { splitPath } from '../../lib/path.ts'
import { StaticFiles } from '../../lib/static/static.ts'
import { createHandler } from '../../lib/handler.ts'
import { startServerOnFolder } from '../support/helpers.ts'
import { requestAsIs, type ByteAnswer } from '../support/raw-http.ts'

// What a served file leaves behind (docs/speed.md, "Speed"): answers kept in memory, kept
// right by a watch on the www folder, within bounds. The tree: <base>/www is served,
// <base>/secret.txt must never be; <base>/outside holds hard links into www.
const base = mkdtempSync(join(tmpdir(), 'restdir-static-cache-'))
const www = join(base, 'www')
const SECRET = 'TOP-SECRET'

/** A byte pattern with period 251, so any slice of it is recognizable. */
const patterned = (length: number, shift = 0) => Buffer.from(Array.from({ length }, (_, index) => (index + shift) % 251))
// Over the default 1 MiB a file whose bytes are kept: only its place and version are.
const large = patterned(1100 * 1024)

type Answer = ByteAnswer

interface Served {
  files: StaticFiles
  request(path: string, method?: string, headers?: Record<string, string>): Promise<Answer>
  close(): Promise<void>
}

const servers: Served[] = []

/** A bare node:http server answering from `files`, a 404 problem when it has no file. */
async function serve(files: StaticFiles): Promise<Served> {
  const server: Server = createServer(async (req, res) => {
    try {
      if (await files.serve(req, res, splitPath(req.url ?? '/'))) return
      sendProblem(res, new HttpError(404, 'No file has this path.'), req.method === 'HEAD')
    } catch (error) {
      sendProblem(res, toHttpError(error), req.method === 'HEAD')
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const served: Served = {
    files,
    request: (path, method = 'GET', headers = {}) => requestAsIs(port, path, method, headers),
    close: async () => {
      files.close()
      await new Promise((resolve) => server.close(resolve))
    },
  }
  servers.push(served)
  return served
}

/** Trusts what it keeps for a minute, so only the watch can make a change show within these tests' bounds. */
const watchOnly = () => serve(new StaticFiles(www, { trustMs: 60_000 }))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Asks for `path` until `done` holds of the answer, 5 s at most (a watch's
 * event comes through the event loop), and checks every answer on the way.
 */
async function until(served: Served, path: string, done: (answer: Answer) => boolean, check: (answer: Answer) => void = () => {}): Promise<Answer> {
  const started = Date.now()
  for (;;) {
    const answer = await served.request(path)
    check(answer)
    if (done(answer)) return answer
    if (Date.now() - started > 5000) assert.unreachable(`${path} still answered ${answer.status} ${answer.body.toString('latin1').slice(0, 60)} after 5 s`)
    await sleep(20)
  }
}

/** Sets a file's mtime clearly apart from its last one, so no version check could miss the change. */
function touchLater(path: string, seconds: number): void {
  const when = new Date(Date.now() + seconds * 1000)
  utimesSync(path, when, when)
}

test.before(() => {
  mkdirSync(join(www, 'deep', 'er'), { recursive: true })
  mkdirSync(join(base, 'outside'))
  writeFileSync(join(base, 'secret.txt'), `${SECRET} beside www`)
})

test.after(async () => {
  for (const served of servers) await served.close()
  rmSync(base, { recursive: true, force: true })
})

test('a file served before is answered again from memory, with no look at the disk', async () => {
  writeFileSync(join(www, 'kept.txt'), 'kept')
  const served = await watchOnly()
  assert.is((await served.request('/kept.txt')).body.toString(), 'kept')
  const before = served.files.stats()!
  const again = await served.request('/kept.txt')
  assert.is(again.status, 200)
  assert.is(again.body.toString(), 'kept')
  assert.equal(served.files.stats(), before, 'no lookup and no open for the second answer')
})

test('a script of a few hundred KiB is kept too: its second answer reads nothing', async () => {
  const script = patterned(300 * 1024, 3)
  writeFileSync(join(www, 'bundle.js'), script)
  const served = await watchOnly()
  assert.ok((await served.request('/bundle.js')).body.equals(script))
  const before = served.files.stats()!
  assert.ok(before.bytes >= script.length, 'its bytes are held')
  const again = await served.request('/bundle.js')
  assert.ok(again.body.equals(script))
  assert.equal(served.files.stats(), before, 'no lookup and no open for the second answer')
})

test('a kept file changed in place, deep in www, is served changed with a new ETag', async () => {
  const path = join(www, 'deep', 'er', 'page.txt')
  writeFileSync(path, 'version one')
  const served = await watchOnly()
  const first = await served.request('/deep/er/page.txt')
  assert.is(first.body.toString(), 'version one')
  await served.request('/deep/er/page.txt')
  writeFileSync(path, 'version two')
  touchLater(path, 5)
  const changed = await until(served, '/deep/er/page.txt', (answer) => answer.body.toString() !== 'version one')
  assert.is(changed.body.toString(), 'version two')
  assert.is.not(changed.headers.etag, first.headers.etag)
  assert.is((await served.request('/deep/er/page.txt', 'GET', { 'If-None-Match': first.headers.etag! })).status, 200, 'the old ETag no longer validates')
})

test('a kept file replaced by a rename, as editors save, is served as the new file', async () => {
  const path = join(www, 'saved.txt')
  writeFileSync(path, 'as first saved')
  const served = await watchOnly()
  const first = await served.request('/saved.txt')
  await served.request('/saved.txt')
  writeFileSync(join(www, '.saved.txt.swp'), 'as saved again, longer')
  renameSync(join(www, '.saved.txt.swp'), path)
  const changed = await until(served, '/saved.txt', (answer) => answer.body.toString() !== 'as first saved')
  assert.is(changed.body.toString(), 'as saved again, longer')
  assert.is(changed.headers['content-length'], String('as saved again, longer'.length))
  assert.is.not(changed.headers.etag, first.headers.etag)
})

test('a kept file removed is no longer served', async () => {
  const path = join(www, 'deep', 'gone.txt')
  writeFileSync(path, 'here for now')
  const served = await watchOnly()
  assert.is((await served.request('/deep/gone.txt')).status, 200)
  unlinkSync(path)
  await until(served, '/deep/gone.txt', (answer) => answer.status === 404)
})

test('a kept file replaced by a link pointing out of www is refused, and what lies outside is never sent', async () => {
  for (const [name, content] of [['small-link.txt', Buffer.from('inside')], ['large-link.bin', large]] as const) {
    const path = join(www, name)
    writeFileSync(path, content)
    const served = await watchOnly()
    assert.ok((await served.request(`/${name}`)).body.equals(content))
    symlinkSync(join(base, 'secret.txt'), join(www, `.${name}.link`))
    renameSync(join(www, `.${name}.link`), path)
    await until(served, `/${name}`, (answer) => answer.status === 404, (answer) => {
      assert.not.ok(answer.body.toString('latin1').includes(SECRET), `${name}: a secret from outside www was sent`)
      if (answer.status === 200) assert.ok(answer.body.equals(content), `${name}: only the kept bytes, under their headers`)
    })
  }
})

test('a kept file in a folder made after the watch began is served changed', async () => {
  const served = await watchOnly()
  writeFileSync(join(www, 'kept.txt'), 'kept')
  await served.request('/kept.txt')
  mkdirSync(join(www, 'later'))
  const path = join(www, 'later', 'new.txt')
  writeFileSync(path, 'new one')
  await until(served, '/later/new.txt', (answer) => answer.status === 200)
  await served.request('/later/new.txt')
  writeFileSync(path, 'new two')
  touchLater(path, 5)
  await until(served, '/later/new.txt', (answer) => answer.body.toString() === 'new two')
})

test('a large file changed through a hard link from outside www (no folder event) is never sent under its old headers', async () => {
  const path = join(www, 'hard.bin')
  writeFileSync(path, large)
  linkSync(path, join(base, 'outside', 'hard.bin'))
  const served = await watchOnly()
  const first = await served.request('/hard.bin')
  assert.ok(first.body.equals(large))
  const longer = patterned(large.length + 1000, 7)
  writeFileSync(join(base, 'outside', 'hard.bin'), longer)
  touchLater(join(base, 'outside', 'hard.bin'), 5)
  const answer = await served.request('/hard.bin')
  assert.is(answer.status, 200)
  assert.is(answer.headers['content-length'], String(longer.length))
  assert.ok(answer.body.equals(longer), 'the bytes the headers describe')
  assert.is.not(answer.headers.etag, first.headers.etag)
})

test('a small file changed where no watch can see it is served changed once its time of trust has passed', async () => {
  const path = join(www, 'trusted.txt')
  writeFileSync(path, 'trusted one')
  linkSync(path, join(base, 'outside', 'trusted.txt'))
  const served = await serve(new StaticFiles(www, { trustMs: 200 }))
  await served.request('/trusted.txt')
  writeFileSync(join(base, 'outside', 'trusted.txt'), 'trusted two')
  touchLater(join(base, 'outside', 'trusted.txt'), 5)
  const changed = await until(served, '/trusted.txt', (answer) => answer.body.toString() === 'trusted two')
  assert.is(changed.headers['content-length'], '11')
})

test('HEAD, 304, Range and 416 of a kept small file read nothing; of a kept large file only a range opens it', async () => {
  writeFileSync(join(www, 'small.bin'), patterned(1000))
  writeFileSync(join(www, 'large.bin'), large)
  const served = await watchOnly()
  const small = await served.request('/small.bin')
  const big = await served.request('/large.bin')
  const before = served.files.stats()!
  const head = await served.request('/small.bin', 'HEAD')
  assert.is(head.status, 200)
  assert.is(head.headers['content-length'], '1000')
  assert.is((await served.request('/small.bin', 'GET', { 'If-None-Match': small.headers.etag! })).status, 304)
  assert.is((await served.request('/small.bin', 'GET', { 'If-Modified-Since': small.headers['last-modified']! })).status, 304)
  const range = await served.request('/small.bin', 'GET', { Range: 'bytes=10-19' })
  assert.is(range.status, 206)
  assert.ok(range.body.equals(patterned(1000).subarray(10, 20)))
  assert.is((await served.request('/small.bin', 'GET', { Range: 'bytes=5000-' })).status, 416)
  assert.is((await served.request('/large.bin', 'HEAD')).headers['content-length'], String(large.length))
  assert.is((await served.request('/large.bin', 'GET', { 'If-None-Match': big.headers.etag! })).status, 304)
  assert.equal(served.files.stats(), before, 'no lookup and no open')
  const bigRange = await served.request('/large.bin', 'GET', { Range: 'bytes=100000-100099' })
  assert.ok(bigRange.body.equals(large.subarray(100000, 100100)))
  assert.equal(served.files.stats(), { ...before, opens: before.opens + 1 }, 'one open for the range, no lookup')
})

test('the memory budget holds: a file over the per-file size is not kept in memory, and the total stays under the budget', async () => {
  mkdirSync(join(www, 'budget'))
  const served = await serve(new StaticFiles(www, { trustMs: 60_000, maxBytes: 4096, maxFileBytes: 1024 }))
  writeFileSync(join(www, 'budget', 'over.bin'), patterned(1025))
  await until(served, '/budget/over.bin', (answer) => answer.status === 200)
  assert.is(served.files.stats()!.bytes, 0, 'a file over the per-file size is not held')
  const opens = served.files.stats()!.opens
  assert.ok((await served.request('/budget/over.bin')).body.equals(patterned(1025)))
  assert.is(served.files.stats()!.opens, opens + 1, 'it is read from the disk each time')
  for (let n = 0; n < 8; n++) writeFileSync(join(www, 'budget', `f${n}.bin`), patterned(1000, n))
  await until(served, '/budget/f0.bin', (answer) => answer.status === 200)
  for (let n = 0; n < 8; n++) {
    const answer = await served.request(`/budget/f${n}.bin`)
    assert.ok(answer.body.equals(patterned(1000, n)), `f${n}.bin`)
    const { bytes } = served.files.stats()!
    assert.ok(bytes <= 4096, `${bytes} bytes held after f${n}.bin`)
  }
  assert.is(served.files.stats()!.bytes, 4000, 'the last four files fill the budget')
})

test('an encoded slash never reaches what a path with a real slash kept', async () => {
  writeFileSync(join(www, 'deep', 'plain.txt'), 'plain')
  const served = await watchOnly()
  assert.is((await served.request('/deep/plain.txt')).status, 200)
  for (const path of ['/deep%2Fplain.txt', '/deep%2fplain.txt', '/deep%5Cplain.txt']) {
    assert.is((await served.request(path)).status, 404, path)
  }
})

test('with the cache turned off, every answer looks at the disk', async () => {
  writeFileSync(join(www, 'kept.txt'), 'kept')
  const files = new StaticFiles(www, false)
  const served = await serve(files)
  assert.is((await served.request('/kept.txt')).body.toString(), 'kept')
  assert.is(files.stats(), undefined)
  writeFileSync(join(www, 'kept.txt'), 'kept, and changed')
  assert.is((await served.request('/kept.txt')).body.toString(), 'kept, and changed', 'the very next request')
})

test('the server keeps www files by its wwwCache option: false reads the disk for the very next request, even where no watch could tell', async () => {
  mkdirSync(join(www, 'site'))
  const index = join(www, 'site', 'index.html')
  writeFileSync(index, 'one')
  linkSync(index, join(base, 'outside', 'index.html'))
  const kept = await startServerOnFolder({ www: join(www, 'site') })
  const off = await startServerOnFolder({ www: join(www, 'site'), wwwCache: false })
  try {
    for (const server of [kept, off]) assert.is((await server.request('GET', '/')).text, 'one')
    writeFileSync(join(base, 'outside', 'index.html'), 'two!')
    touchLater(join(base, 'outside', 'index.html'), 5)
    assert.is((await off.request('GET', '/')).text, 'two!', 'wwwCache: false')
    const started = Date.now()
    while ((await kept.request('GET', '/')).text !== 'two!') {
      if (Date.now() - started > 5000) assert.unreachable('the kept index.html never showed the change')
      await sleep(20)
    }
  } finally {
    await kept.close()
    await off.close()
  }
})

test('wwwCache bounds that are not sizes are refused when the handler is made', () => {
  for (const bounds of [{ maxBytes: -1 }, { maxFileBytes: Number.NaN }]) {
    assert.throws(() => createHandler({ store: { close: async () => {} } as never, wwwCache: bounds }), /wwwCache\.max\w+ must be a number of bytes/, JSON.stringify(bounds))
  }
})

test.run()
