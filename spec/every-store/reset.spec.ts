import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFile, rm, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { request as httpRequest } from 'node:http'
import { createServer } from '../../lib/index.ts'
import { FileStore } from '../../lib/store/index.ts'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'
import { startCli, stopAll } from '../support/process.ts'

// Resetting between tests (docs/http-api.md, "Resetting between tests"): the store starts
// from a fixture and `POST /?_reset` or `reset()` puts it back.

const database = {
  posts: [
    { id: 1, title: 'first', views: 3 },
    { id: 2, title: 'second', views: 5 },
  ],
  notes: [{ text: 'no id: restdir makes one' }],
  profile: { name: 'typicode' },
  user: [{ user_id: 'ann', username: 'ann', playlist: [{ playlist_id: 'p1', songs: ['a', 'b'] }] }],
}

let folder: string
let fixture: string

test.before(async () => {
  folder = await makeTempDir('restdir-fixture-')
  fixture = path.join(folder, 'db.json')
  await writeFile(fixture, JSON.stringify(database))
})

test.after(async () => {
  await stopAll()
  await rm(folder, { recursive: true, force: true })
})

async function withServer(options: Parameters<typeof startServer>[0], run: (server: TestServer) => Promise<void>, host?: string): Promise<void> {
  const server = await startServer({ fixture, ...options }, host)
  try {
    await run(server)
  } finally {
    await server.close()
  }
}

/** Everything a client sees of the fixture's data. */
async function snapshot(server: TestServer) {
  const read = async (target: string) => (await server.request('GET', target)).json
  return {
    posts: await read('/posts'),
    notes: await read('/notes'),
    profile: await read('/profile'),
    users: await read('/user'),
    playlist: await read('/user/ann/playlist/p1'),
    top: await read('/?_children'),
  }
}

test('a server started with a db.json fixture holds it, and POST /?_reset puts it back after any change', () =>
  withServer({}, async (server) => {
    const before = await snapshot(server)
    assert.equal(before.posts, [{ id: 1, title: 'first', views: 3 }, { id: 2, title: 'second', views: 5 }])
    assert.is(before.notes.length, 1)
    assert.equal(before.playlist.songs, ['a', 'b'])
    assert.equal(before.top, ['notes', 'posts', 'profile', 'user'])

    assert.is((await server.request('PATCH', '/posts/1', { body: { title: 'changed' } })).status, 200)
    assert.is((await server.request('DELETE', '/posts/2')).status, 200)
    assert.is((await server.request('DELETE', '/user/ann')).status, 200)
    assert.is((await server.request('PUT', '/extra/x', { body: { a: 1 } })).status, 201)
    assert.is((await server.request('POST', '/notes', { body: { text: 'more' } })).status, 201)

    const reset = await server.request('POST', '/?_reset')
    assert.is(reset.status, 200, reset.text)
    assert.is(reset.json.documents, 6)
    // The id restdir made for the note at start is the same after the reset.
    assert.equal(await snapshot(server), before)
  }))

test('server.reset() and handler.reset() reset as POST /?_reset does, from a store folder as fixture', async () => {
  const source = await makeTempDir('restdir-fixture-store-')
  const seed = await FileStore.open(source)
  await seed.write(['todos', 'a'], { id: 'a', done: false })
  await seed.write(['todos', 'b'], { id: 'b', done: true })
  await seed.close()
  try {
    await withServer({ fixture: source }, async (server) => {
      assert.is((await server.request('DELETE', '/todos')).status, 204)
      assert.is((await server.request('GET', '/todos')).status, 404)
      const summary = await server.server.reset()
      assert.is(summary.documents, 2)
      assert.equal((await server.request('GET', '/todos')).json, [{ id: 'a', done: false }, { id: 'b', done: true }])
      await server.request('PUT', '/todos/c', { body: {} })
      await server.server.handler.reset()
      assert.equal((await server.request('GET', '/todos?_children')).json, ['a', 'b'])
    })
  } finally {
    await rm(source, { recursive: true, force: true })
  }
})

test('without a fixture, POST /?_reset is a 404 problem that creates nothing, and reset() rejects', async () => {
  const server = await startServer()
  try {
    await server.request('PUT', '/kept/1', { body: {} })
    const answer = await server.request('POST', '/?_reset')
    assert.is(answer.status, 404)
    assert.match(String(answer.headers['content-type']), /^application\/problem\+json/)
    assert.match(answer.json.detail, /--fixture/)
    assert.equal((await server.request('GET', '/?_children')).json, ['kept'])
    await server.server.reset().then(
      () => assert.unreachable('reset() resolved without a fixture'),
      (error: Error) => assert.match(error.message, /fixture/),
    )
  } finally {
    await server.close()
  }
})

test('a reset that races DELETEs of the nodes it removes answers 200, and the nodes are gone', () =>
  withServer({}, async (server) => {
    for (let round = 0; round < 5; round++) {
      const names = Array.from({ length: 40 }, (_, index) => `xr${index}`)
      for (const name of names) assert.is((await server.request('PUT', `/${name}`, { body: { round } })).status, 201)
      // Each DELETE may land before or after the reset reaches its node: both are fine, neither may fail the other.
      const [reset, ...deletes] = await Promise.all([
        server.request('POST', '/?_reset'),
        ...names.map((name) => server.request('DELETE', `/${name}`)),
      ])
      assert.is(reset.status, 200, JSON.stringify(reset.json))
      for (const answer of deletes) assert.ok(answer.status === 200 || answer.status === 404, `DELETE answered ${answer.status}`)
      assert.equal((await server.request('GET', '/?_children')).json.sort(), ['notes', 'posts', 'profile', 'user'])
    }
  }))

test('a read-only server refuses a reset with 405', () =>
  withServer({ readonly: true }, async (server) => {
    const answer = await server.request('POST', '/?_reset')
    assert.is(answer.status, 405)
    assert.is(answer.headers.allow, 'GET, HEAD, OPTIONS')
    assert.is((await server.request('OPTIONS', '/?_reset')).headers.allow, 'OPTIONS')
  }))

test('a reset needs the token: always when one is set, and on a server bound beyond loopback even with none', async () => {
  await withServer({}, async (server) => {
    await server.request('DELETE', '/posts')
    const answer = await server.request('POST', '/?_reset')
    assert.is(answer.status, 403, answer.text)
    assert.match(answer.json.detail, /--token/)
    assert.is((await server.request('GET', '/posts')).status, 404, 'nothing was reset')
  }, '0.0.0.0')
  await withServer({ token: 'secret' }, async (server) => {
    await server.request('DELETE', '/posts', { headers: { authorization: 'Bearer secret' } })
    assert.is((await server.request('POST', '/?_reset')).status, 401)
    assert.is((await server.request('GET', '/posts')).status, 404, 'nothing was reset')
    assert.is((await server.request('POST', '/?_reset', { headers: { authorization: 'Bearer secret' } })).status, 200)
    assert.is((await server.request('GET', '/posts')).json.length, 2)
  }, '0.0.0.0')
})

test('GET /?_reset is a 405, never a listing', () =>
  withServer({}, async (server) => {
    const answer = await server.request('GET', '/?_reset')
    assert.is(answer.status, 405)
    assert.is(answer.headers.allow, 'POST, OPTIONS')
  }))

test('an event stream hears a reset as the changes that undo what was done: puts and deletes', () =>
  withServer({}, async (server) => {
    await server.request('PATCH', '/posts/1', { body: { title: 'changed' } })
    await server.request('DELETE', '/posts/2')
    await server.request('PUT', '/posts/3', { body: { title: 'new' } })
    const events: string[] = []
    const request = httpRequest({ host: '127.0.0.1', port: server.port, path: '/posts', headers: { accept: 'text/event-stream' } })
    let heard = () => {}
    request.on('response', (res) => {
      res.setEncoding('utf8')
      let text = ''
      res.on('data', (chunk: string) => {
        text += chunk
        const end = text.lastIndexOf('\n\n')
        for (const match of text.slice(0, end).matchAll(/event: (\w+)\ndata: (.*)/g)) events.push(`${match[1]} ${JSON.parse(match[2]).path}`)
        text = text.slice(end + 2)
        heard()
      })
    })
    request.end()
    const until = (check: () => boolean) => new Promise<void>((resolve, reject) => {
      const late = setTimeout(() => reject(new Error(`events so far: ${events.join(', ')}`)), 5000)
      heard = () => check() && (clearTimeout(late), resolve())
      heard()
    })
    await until(() => events.includes('value /posts'))
    assert.is((await server.request('POST', '/?_reset')).status, 200)
    await until(() => events.length === 4)
    request.destroy()
    assert.equal(events.slice(1).sort(), ['delete /posts/3', 'put /posts/1', 'put /posts/2'])
  }))

test('a reset of a 1 000-document fixture is fast enough to run before every test', async () => {
  const big = path.join(folder, 'big.json')
  const items = Array.from({ length: 1000 }, (_, index) => ({ id: index + 1, title: `item ${index}`, tags: ['a', 'b'], done: index % 2 === 0 }))
  await writeFile(big, JSON.stringify({ items }))
  await withServer({ fixture: big }, async (server) => {
    const median = async (change: () => Promise<unknown>, written: number) => {
      const times: number[] = []
      for (let round = 0; round < 5; round++) {
        await change()
        const started = performance.now()
        const answer = await server.request('POST', '/?_reset')
        times.push(performance.now() - started)
        assert.is(answer.json.documents, 1000)
        assert.is(answer.json.written, written)
      }
      return times.sort((a, b) => a - b)[2]
    }
    // A test that changed a few documents, and one that removed them all.
    const few = await median(() => Promise.all([server.request('DELETE', '/items/7'), server.request('PATCH', '/items/8', { body: { done: true } }), server.request('POST', '/items', { body: {} })]), 2)
    const all = await median(() => server.request('DELETE', '/items'), 1000)
    console.log(`  reset of 1 000 documents (${process.env.RESTDIR_TEST_STORE ?? 'file'} store): ${few.toFixed(0)} ms after a few changes, ${all.toFixed(0)} ms after all were deleted`)
    assert.is((await server.request('GET', '/items?_limit=1')).headers['x-total-count'], '1000')
    assert.ok(few < 2000, `a reset after a few changes took ${few} ms`)
    assert.ok(all < 20000, `a reset after all were deleted took ${all} ms`)
  })
})

test('the command line starts from --fixture, in memory unless --store is given, and says how to reset', async () => {
  const cwd = await makeTempDir('restdir-cli-cwd-')
  await mkdir(cwd, { recursive: true })
  const cli = await startCli(['--port', '0', '--fixture', fixture, '--quiet'])
  try {
    assert.match(cli.stdout(), /store: in memory\n/)
    assert.ok(cli.stdout().includes(`fixture: ${fixture} (reset with POST /?_reset)`), cli.stdout())
    const posts = await fetch(`${cli.url}/posts`)
    assert.is((await posts.json()).length, 2)
    await fetch(`${cli.url}/posts/1`, { method: 'DELETE' })
    assert.is((await fetch(`${cli.url}/?_reset`, { method: 'POST' })).status, 200)
    assert.is((await fetch(`${cli.url}/posts/1`)).status, 200)
  } finally {
    await cli.stop()
    await rm(cwd, { recursive: true, force: true })
  }
})

test('a fixture that is the store folder itself is refused at once', async () => {
  const dir = await makeTempDir()
  try {
    assert.throws(() => createServer({ fixture: dir, store: dir + '/' }), /is also the store folder/)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('a fixture that cannot be imported stops the server before it serves, with the import error', async () => {
  const bad = path.join(folder, 'bad.json')
  await writeFile(bad, JSON.stringify({ posts: [{ id: 1 }, { id: 1 }] }))
  const server = createServer({ fixture: bad, store: await makeTempDir(), quiet: true })
  server.on('error', () => {})
  await server.ready.then(
    () => assert.unreachable('the server opened'),
    (error: Error) => assert.match(error.message, /repeats the id "1"/),
  )
  await server.handler.close()
})

test.run()
