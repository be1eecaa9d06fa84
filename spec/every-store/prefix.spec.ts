import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readFile, rm } from 'node:fs/promises'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'
import { runCli, startCli, stopAll } from '../support/process.ts'
import { bundledWww } from '../../lib/options.ts'
import { createHandler, MemoryStore } from '../../lib/index.ts'

// The playground form (docs/cli.md, "The playground form: `--prefix /api`"): with `--prefix /api`, declared and generic
// resources live under the prefix, and every URL outside it is static only.

let www: string

async function makeWww(): Promise<string> {
  const dir = await makeTempDir('restdir-www-')
  mkdirSync(join(dir, 'user'))
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>home</title>')
  writeFileSync(join(dir, 'user', 'readme.txt'), 'a static file where the API would be without a prefix')
  return dir
}

const prefixed = suite<{ server: TestServer }>('with --prefix /api', { server: undefined as unknown as TestServer })

prefixed.before(async (context) => {
  www = await makeWww()
  context.server = await startServer({ prefix: '/api', www })
})

prefixed.after(async ({ server }) => {
  await server.close()
  await rm(www, { recursive: true, force: true })
})

prefixed('declared resources move under the prefix, and Location says so', async ({ server }) => {
  const created = await server.request('POST', '/api/user', { body: { username: 'ada' } })
  assert.is(created.status, 201)
  const location = created.headers.location as string
  assert.is(location, `/api/user/${created.json.user_id}`)
  assert.is((await server.request('GET', location)).json.username, 'ada')
  const playlist = await server.request('POST', `${location}/playlist`, { body: { name: 'Focus' } })
  assert.is(playlist.headers.location, `${location}/playlist/${playlist.json.playlist_id}`)
  assert.is((await server.request('GET', '/api/user')).headers['x-total-count'], '1')
})

prefixed('generic documents move under the prefix too', async ({ server }) => {
  const created = await server.request('POST', '/api/notes', { body: { text: 'hi' } })
  assert.is(created.headers.location, `/api/notes/${created.json.id}`)
  const put = await server.request('PUT', '/api/index.html', { body: { a: 1 } })
  assert.is(put.status, 201)
  assert.is(put.headers.location, '/api/index.html')
  assert.equal((await server.request('GET', '/api/index.html')).json, { id: 'index.html', a: 1 })
  assert.equal((await server.request('GET', '/api/?_children')).json, ['index.html', 'notes', 'user'])
})

prefixed('outside the prefix, a GET serves files and nothing else', async ({ server }) => {
  const home = await server.request('GET', '/')
  assert.is(home.status, 200)
  assert.is(home.text, '<!doctype html><title>home</title>')
  assert.is((await server.request('GET', '/user/readme.txt')).text, 'a static file where the API would be without a prefix')
  const notFile = await server.request('GET', '/user')
  assert.is(notFile.status, 404)
  assert.is(notFile.headers['content-type'], 'application/problem+json')
  assert.match(notFile.json.detail, /under \/api\//)
  assert.is((await server.request('GET', '/apiary')).status, 404, 'a path that merely starts with the same letters is outside')
})

prefixed('outside the prefix, writes are refused and no document is made', async ({ server }) => {
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const answer = await server.request(method, '/notes/x', { body: { a: 1 } })
    assert.is(answer.status, 404, method)
    assert.match(answer.json.detail, /\/api\//)
  }
  assert.is((await server.request('GET', '/api/notes/x')).status, 404)
})

prefixed('the page learns where the API is from X-Restdir-Api, and API answers do not carry it', async ({ server }) => {
  assert.is((await server.request('HEAD', '/')).headers['x-restdir-api'], '/api')
  assert.is((await server.request('GET', '/index.html')).headers['x-restdir-api'], '/api')
  assert.is((await server.request('GET', '/api/user')).headers['x-restdir-api'], undefined)
})

prefixed('the prefix itself is the root of the data', async ({ server }) => {
  const root = await server.request('GET', '/api')
  assert.is(root.status, 200)
  assert.ok(Array.isArray(root.json))
  assert.is((await server.request('GET', '/api/')).status, 200)
})

prefixed.run()

const plain = suite('without a prefix')

plain('the page is at / and names / as the API, which answers beside it', async () => {
  const server = await startServer()
  try {
    const home = await server.request('GET', '/')
    assert.is(home.status, 200)
    assert.is(home.headers['x-restdir-api'], '/')
    assert.is(home.text, await readFile(join(bundledWww, 'index.html'), 'utf8'), 'the bundled playground')
    const created = await server.request('POST', '/user', { body: { username: 'bo' } })
    assert.is(created.headers.location, `/user/${created.json.user_id}`)
  } finally {
    await server.close()
  }
})

plain('a prefix is written any way and means the same: api, /api/ and /api', async () => {
  for (const prefix of ['api', '/api/', '/v1/api']) {
    const server = await startServer({ prefix })
    try {
      const base = prefix === '/v1/api' ? '/v1/api' : '/api'
      const created = await server.request('POST', `${base}/things`, { body: {} })
      assert.is(created.status, 201, prefix)
      assert.is(created.headers.location, `${base}/things/${created.json.id}`, prefix)
      assert.is((await server.request('HEAD', '/')).headers['x-restdir-api'], base, prefix)
    } finally {
      await server.close()
    }
  }
})

/** Each way to write a prefix, and the API base it means (`undefined`: refused). */
const prefixSpellings: Array<[string, string | undefined]> = [
  ['api', '/api'],
  ['/api/', '/api'],
  ['/a/b', '/a/b'],
  ['//a//b/', '/a/b'],
  ['/', '/'],
  ['', '/'],
  ['..', undefined],
  ['/api/../x', undefined],
  ['%2e', undefined],
  ['/a%20b', undefined],
  ['a b', undefined],
]

plain('the library reads a prefix by the one rule: api, /api/ and /a/b are bases, .. and %2e are refused', async () => {
  for (const [prefix, base] of prefixSpellings) {
    if (base === undefined) {
      assert.throws(() => createHandler({ store: new MemoryStore(), prefix, quiet: true }), /prefix ".*" is not a plain path/, prefix)
      continue
    }
    const server = await startServer({ prefix })
    try {
      assert.is((await server.request('HEAD', '/')).headers['x-restdir-api'], base, `prefix ${JSON.stringify(prefix)}`)
    } finally {
      await server.close()
    }
  }
})

plain('the command line reads --prefix by the same rule, and a refused one exits 2 saying what is wrong', async () => {
  const dir = await makeTempDir('restdir-prefix-cli-')
  try {
    // Three processes at a time: eleven starting at once can take longer than a start's limit on a busy machine of two cores.
    for (let first = 0; first < prefixSpellings.length; first += 3) await Promise.all(prefixSpellings.slice(first, first + 3).map(async ([prefix, base]) => {
      if (base === undefined) {
        const result = await runCli(['--prefix', prefix])
        assert.is(result.code, 2, `--prefix ${JSON.stringify(prefix)} exits 2: ${result.stderr}`)
        assert.match(result.stderr, /^restdir: --prefix ".*" is not a plain path/)
        assert.match(result.stderr, /\nrestdir --help for every option\n$/)
        return
      }
      const store = join(dir, String(prefixSpellings.findIndex(([other]) => other === prefix)))
      const cli = await startCli(['--port', '0', '--quiet', '--store', store, '--prefix', prefix])
      try {
        const answer = await fetch(`${cli.url}/`, { method: 'HEAD' })
        assert.is(answer.headers.get('x-restdir-api'), base, `--prefix ${JSON.stringify(prefix)}`)
      } finally {
        await cli.stop()
      }
    }))
  } finally {
    await stopAll()
    await rm(dir, { recursive: true, force: true })
  }
})

plain('a file added to www takes its URL from the data API at once, and gives it back when removed', async () => {
  const dir = await makeWww()
  const server = await startServer({ www: dir })
  const read = async () => (await server.request('GET', '/later/doc')).text
  try {
    await server.request('PUT', '/later/doc', { body: { a: 1 } })
    assert.is(await read(), '{"id":"doc","a":1}\n', 'no file: the document')
    mkdirSync(join(dir, 'later'))
    writeFileSync(join(dir, 'later', 'doc'), 'a file now')
    // The folder's top names are watched: the change is known within milliseconds of the write.
    assert.is(await soon(read, 'a file now'), 'a file now', 'a static file comes first')
    rmSync(join(dir, 'later'), { recursive: true })
    assert.is(await soon(read, '{"id":"doc","a":1}\n'), '{"id":"doc","a":1}\n', 'the document again')
    // A folder renamed into place, not made in place, is seen as well.
    mkdirSync(join(dir, 'staging'))
    writeFileSync(join(dir, 'staging', 'doc'), 'renamed in')
    renameSync(join(dir, 'staging'), join(dir, 'later'))
    assert.is(await soon(read, 'renamed in'), 'renamed in')
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
})

plain('without a prefix, a file of www under a declared route\'s URL leaves it to the route', async () => {
  const dir = await makeWww()
  const server = await startServer({ www: dir })
  try {
    const answer = await server.request('GET', '/user/readme.txt')
    assert.is(answer.status, 404, 'the route answers: there is no such user')
    assert.match(answer.text, /There is no user/)
    assert.is((await server.request('GET', '/index.html')).status, 200, 'a file no route claims is served')
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
})

plain('the www folder made after the server started is served too', async () => {
  const parent = await makeTempDir('restdir-www-late-')
  const dir = join(parent, 'www')
  const server = await startServer({ www: dir })
  try {
    assert.is((await server.request('GET', '/late.txt')).status, 404)
    mkdirSync(dir)
    writeFileSync(join(dir, 'late.txt'), 'here now')
    assert.is((await server.request('GET', '/late.txt')).text, 'here now')
  } finally {
    await server.close()
    await rm(parent, { recursive: true, force: true })
  }
})

/**
 * Reads until the answer is `expected`, for at most a second, and gives the last answer: a
 * file-system event reaches the server within milliseconds (a person's next request is much later).
 */
async function soon(read: () => Promise<string>, expected: string): Promise<string> {
  let answer = await read()
  for (let waited = 0; answer !== expected && waited < 1000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    answer = await read()
  }
  return answer
}

plain.run()
