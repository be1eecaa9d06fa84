import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'
import * as restdirJsonServer from '../lib/json-server.ts'
import { makeTempDir, send, type Answer } from './support/helpers.ts'
import { builtCommand, root, spawnCli, stopAll } from './support/process.ts'
import { startPair, type Pair } from './support/side-by-side.ts'
import { categorizedPosts as database } from './support/fixtures/categorized-posts.ts'

// json-server 0.17 README's module examples ("Module": the simple one, custom routes, access control,
// the rewriter, mounting on /api), each written once as a function of the module, and run twice in
// Express 4: with json-server 0.17.4's own module and with restdir/json-server, each on its own copy
// of one db.json. The same requests go to both and their statuses and bodies are compared.

// Express and json-server stay quiet under test (no morgan line, no error stacks printed by Express's finalhandler).
process.env.NODE_ENV = 'test'

const require = createRequire(path.join(root, 'package.json'))
const express = require('express') as () => ExpressApp

interface ExpressApp {
  use(...handlers: unknown[]): ExpressApp
  get(path: string, handler: (req: any, res: any) => void): ExpressApp
  listen(port: number, host: string, ready: () => void): Server
}

interface JsonServerModule {
  create(): unknown
  router(source: string | object): unknown
  defaults(options?: object): unknown
  rewriter(rules: Record<string, string>): unknown
  bodyParser: unknown
}

/** A README example: builds its app from the module it is given and the db.json it serves. */
type Example = (jsonServer: JsonServerModule, dbFile: string) => ExpressApp

/** "Simple example". */
const simple: Example = (jsonServer, dbFile) => {
  const server = jsonServer.create() as ExpressApp
  const router = jsonServer.router(dbFile)
  const middlewares = jsonServer.defaults()
  server.use(middlewares)
  server.use(router)
  return server
}

/** "Custom routes example": an echo route before the router, and a timestamp on every resource created. */
const customRoutes: Example = (jsonServer, dbFile) => {
  const server = jsonServer.create() as ExpressApp
  const router = jsonServer.router(dbFile)
  const middlewares = jsonServer.defaults()
  server.use(middlewares)
  server.get('/echo', (req, res) => {
    res.jsonp(req.query)
  })
  server.use(jsonServer.bodyParser)
  server.use((req: any, _res: unknown, next: () => void) => {
    if (req.method === 'POST') {
      req.body.createdAt = 1700000000000 // the README's Date.now(), fixed so that both answers compare
    }
    next()
  })
  server.use(router)
  return server
}

/** "Access control example", its isAuthorized a bearer token. */
const accessControl: Example = (jsonServer, dbFile) => {
  const isAuthorized = (req: any) => req.headers.authorization === 'Bearer letmein'
  const server = jsonServer.create() as ExpressApp
  const router = jsonServer.router(dbFile)
  const middlewares = jsonServer.defaults()
  server.use(middlewares)
  server.use((req: any, res: any, next: () => void) => {
    if (isAuthorized(req)) {
      next()
    } else {
      res.sendStatus(401)
    }
  })
  server.use(router)
  return server
}

/** "Rewriter example", before the router. */
const rewriterExample: Example = (jsonServer, dbFile) => {
  const server = jsonServer.create() as ExpressApp
  const router = jsonServer.router(dbFile)
  server.use(jsonServer.defaults())
  server.use(jsonServer.rewriter({
    '/api/*': '/$1',
    '/blog/:resource/:id/show': '/:resource/:id',
  }))
  server.use(router)
  return server
}

/** "Mounting JSON Server on another endpoint example". */
const mounted: Example = (jsonServer, dbFile) => {
  const server = jsonServer.create() as ExpressApp
  const router = jsonServer.router(dbFile)
  server.use(jsonServer.defaults())
  server.use('/api', router)
  return server
}

/** "For an in-memory database, simply pass an object to jsonServer.router()", in an Express app of its own. */
const inMemory: Example = (jsonServer) => {
  const server = express()
  server.use(jsonServer.router(structuredClone(database)))
  return server
}

/** The example in Express twice, json-server's module and restdir's, each on its own db.json. */
function sideBySide(example: Example): Promise<Pair> {
  return startPair(database, { jsonServer: { how: 'module', app: example }, restdir: { app: example } })
}

/** The same status, and the same JSON body (a refusal: both JSON or both not, restdir's a problem+json). */
function assertSame([theirs, ours]: [Answer, Answer], what: string): void {
  assert.is(ours.status, theirs.status, `${what}: status`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, `${what}: body`)
}

/** Lines written with console.log while `run` runs (the request logs of both modules), kept off the test output. */
async function logged(run: () => Promise<void>): Promise<string[]> {
  const lines: string[] = []
  const original = console.log
  console.log = (...args: unknown[]) => lines.push(args.join(' '))
  try {
    await run()
  } finally {
    console.log = original
  }
  return lines
}

test.after(async () => {
  await stopAll()
})

test('the simple example serves db.json, reads and writes, with the defaults\' no-cache headers and a log line a request', async () => {
  const lines = await logged(async () => {
    const pair = await sideBySide(simple)
    try {
      for (const target of ['/posts', '/posts/1', '/posts?category=node', '/posts?_sort=id&_order=desc', '/comments?postId=1', '/posts/1?_embed=comments', '/profile', '/db', '/posts/9', '/posts?_page=1&_limit=1']) {
        const answers = await pair.both('GET', target)
        assertSame(answers, `GET ${target}`)
        assert.is(answers[1].headers['cache-control'], answers[0].headers['cache-control'], `GET ${target}: Cache-Control`)
        // From a page on a loopback origin, which both let in: the same headers exposed (0.17's cors() names none of its own).
        const [theirs, ours] = await pair.both('GET', target, { headers: { origin: 'http://localhost:5173' } })
        assert.is(ours.headers['access-control-allow-origin'], theirs.headers['access-control-allow-origin'], `GET ${target}: Access-Control-Allow-Origin`)
        assert.is(ours.headers['access-control-expose-headers'], theirs.headers['access-control-expose-headers'], `GET ${target}: Access-Control-Expose-Headers`)
      }
      assertSame(await pair.both('POST', '/posts', { body: { title: 'new' } }), 'POST /posts')
      assertSame(await pair.both('PATCH', '/posts/1', { body: { title: 'changed' } }), 'PATCH /posts/1')
      assertSame(await pair.both('DELETE', '/posts/2'), 'DELETE /posts/2')
      assertSame(await pair.both('GET', '/posts'), 'GET /posts after the writes')
      const [theirFile, ourFile] = await pair.files()
      assert.equal(ourFile, theirFile, 'both db.json files hold the same data after the writes')
    } finally {
      await pair.close()
    }
  })
  assert.ok(lines.some((line) => /^GET \/posts\/1 200 /.test(line)), `restdir's defaults() logs each request: ${lines.join(' | ')}`)
})

test('the custom routes example: the echo route before the router, and bodyParser\'s req.body changed by a middleware is what is stored', async () => {
  await logged(async () => {
    const pair = await sideBySide(customRoutes)
    try {
      assertSame(await pair.both('GET', '/echo?a=1&b=2&b=3'), 'GET /echo')
      const created = await pair.both('POST', '/posts', { body: { title: 'stamped' } })
      assertSame(created, 'POST /posts (JSON)')
      assert.is(created[1].json.createdAt, 1700000000000)
      const form = await pair.both('POST', '/comments', { body: 'body=from+a+form&postId=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
      assertSame(form, 'POST /comments (a form)')
      assert.is(form[1].json.createdAt, 1700000000000)
      assertSame(await pair.both('PUT', '/posts/1', { body: { title: 'replaced' } }), 'PUT /posts/1')
      assertSame(await pair.both('POST', '/posts', { body: '{"title": ', headers: { 'content-type': 'application/json' } }), 'POST of broken JSON')
      assertSame(await pair.both('GET', '/posts'), 'GET /posts after the writes')
      const [theirFile, ourFile] = await pair.files()
      assert.equal(ourFile, theirFile)
    } finally {
      await pair.close()
    }
  })
})

test('the access control example refuses without the token (401) and serves with it', async () => {
  await logged(async () => {
    const pair = await sideBySide(accessControl)
    try {
      const refused = await pair.both('GET', '/posts')
      assertSame(refused, 'GET /posts without the token')
      assert.is(refused[1].status, 401)
      assert.is(refused[1].text, refused[0].text, 'both say Unauthorized')
      assertSame(await pair.both('POST', '/posts', { body: { title: 'x' } }), 'POST /posts without the token')
      const token = { authorization: 'Bearer letmein' }
      assertSame(await pair.both('GET', '/posts', { headers: token }), 'GET /posts with the token')
      assertSame(await pair.both('POST', '/posts', { body: { title: 'x' }, headers: token }), 'POST /posts with the token')
    } finally {
      await pair.close()
    }
  })
})

test('the rewriter example rewrites /api/* and /blog/:resource/:id/show before the router, and answers GET /__rules', async () => {
  await logged(async () => {
    const pair = await sideBySide(rewriterExample)
    try {
      for (const target of ['/api/posts', '/api/posts/1', '/api/posts?category=node', '/blog/posts/2/show', '/blog/comments/1/show/', '/posts/1', '/__rules']) {
        const answers = await pair.both('GET', target)
        assertSame(answers, `GET ${target}`)
        assert.is(answers[1].status, 200, `GET ${target} is found`)
      }
      assertSame(await pair.both('POST', '/api/posts', { body: { title: 'through the rewrite' } }), 'POST /api/posts')
      assertSame(await pair.both('GET', '/posts/3'), 'GET /posts/3, made through /api/posts')
    } finally {
      await pair.close()
    }
  })
})

test('mounted on /api, the router answers below it, and hands out URLs below it', async () => {
  await logged(async () => {
    const pair = await sideBySide(mounted)
    try {
      for (const target of ['/api/posts', '/api/posts/2', '/api/profile', '/api/posts/1/comments', '/api/nothing']) assertSame(await pair.both('GET', target), `GET ${target}`)
      assertSame(await pair.both('GET', '/api/posts?_page=1&_limit=1'), 'a page')
      const [theirs, ours] = await pair.both('GET', '/api/posts?_page=1&_limit=1')
      assert.ok(String(ours.headers.link).includes('/api/posts?_page=2'), `Link is below /api: ${ours.headers.link}`)
      assert.is(ours.headers['x-total-count'], theirs.headers['x-total-count'])
      assertSame(await pair.both('POST', '/api/posts', { body: { title: 'mounted' } }), 'POST /api/posts')
    } finally {
      await pair.close()
    }
  })
})

test('router(object) serves the object from memory, seeded with a copy of it', async () => {
  const pair = await sideBySide(inMemory)
  try {
    for (const target of ['/posts', '/posts/2', '/profile', '/comments?postId=2']) assertSame(await pair.both('GET', target), `GET ${target}`)
    assertSame(await pair.both('POST', '/posts', { body: { title: 'kept in memory' } }), 'POST /posts')
    assertSame(await pair.both('GET', '/posts'), 'GET /posts after the write')
    const [theirFile, ourFile] = await pair.files()
    assert.equal(ourFile, database, 'no file was written')
    assert.equal(theirFile, database)
  } finally {
    await pair.close()
  }
})

/** "Custom output example": every answer wrapped in a body property. */
const wrappedOutput: Example = (jsonServer, dbFile) => {
  const server = jsonServer.create() as ExpressApp
  const router = jsonServer.router(dbFile) as any
  server.use(jsonServer.defaults())
  router.render = (_req: any, res: any) => {
    res.jsonp({
      body: res.locals.data,
    })
  }
  server.use(router)
  return server
}

/** "Custom output example", its second: a server-side error simulated on every answer. */
const errorOutput: Example = (jsonServer, dbFile) => {
  const server = jsonServer.create() as ExpressApp
  const router = jsonServer.router(dbFile) as any
  server.use(jsonServer.defaults())
  router.render = (_req: any, res: any) => {
    res.status(500).jsonp({
      error: 'error message here',
    })
  }
  server.use(router)
  return server
}

/** A header that names a URL (Location, Link) as a reference from the server's root, which both sides' resolve to. */
function withoutPort(value: unknown): unknown {
  return typeof value === 'string' ? value.replace(/http:\/\/127\.0\.0\.1:\d+/g, '') : value
}

test('an overridden router.render reshapes each answer json-server passes through it, res.locals.data its data, with the status and headers set', async () => {
  await logged(async () => {
    const pair = await sideBySide(wrappedOutput)
    try {
      const requests: Array<[string, string, unknown?]> = [
        ['GET', '/posts'],
        ['GET', '/posts?_page=1&_limit=1'],
        ['GET', '/posts?category=node&_sort=id&_order=desc'],
        ['GET', '/posts/1'],
        ['HEAD', '/posts/1'],
        ['HEAD', '/posts?_page=1&_limit=1'],
        ['GET', '/posts/1?_embed=comments'],
        ['GET', '/posts/1/comments'],
        ['GET', '/profile'],
        ['GET', '/posts/9'],
        ['GET', '/nothing'],
        ['POST', '/posts', { title: 'wrapped' }],
        ['POST', '/posts/1/comments', { body: 'nested' }],
        ['PUT', '/posts/1', { title: 'replaced' }],
        ['PATCH', '/posts/2', { title: 'patched' }],
        ['PATCH', '/posts/9', { title: 'nowhere' }],
        ['PATCH', '/profile', { name: 'patched' }],
        ['DELETE', '/comments/2'],
        ['DELETE', '/posts/9'],
        ['GET', '/db'],
      ]
      for (const [method, target, body] of requests) {
        const answers = await pair.both(method, target, { body })
        const [theirs, ours] = answers
        assert.is(ours.status, theirs.status, `${method} ${target}: status`)
        assert.equal(ours.json, theirs.json, `${method} ${target}: body`)
        // restdir counts every listing (X-Total-Count); what json-server sends, it sends alike (but the Location of a
        // nested POST, which 0.17 puts below the parent, where nothing answers, and restdir at the item's own URL).
        for (const name of ['x-total-count', 'link', 'location']) {
          if (theirs.headers[name] !== undefined && !(name === 'location' && target.split('/').length > 3)) assert.is(withoutPort(ours.headers[name]), withoutPort(theirs.headers[name]), `${method} ${target}: ${name}`)
        }
        assert.is(ours.headers['access-control-expose-headers'], theirs.headers['access-control-expose-headers'], `${method} ${target}: Access-Control-Expose-Headers`)
        // A HEAD has the rendered GET's headers: its length is the rendered body's.
        if (method === 'HEAD') assert.is(ours.headers['content-length'], theirs.headers['content-length'], `${method} ${target}: Content-Length`)
        if (method === 'GET' && target !== '/db' && ours.status === 200) assert.ok('body' in ours.json, `${method} ${target} went through render`)
      }
      const [theirFile, ourFile] = await pair.files()
      assert.equal(ourFile, theirFile, 'render reshapes answers, never what is stored')
    } finally {
      await pair.close()
    }
  })
})

test('router.render may set its own status: the README\'s simulated server-side error', async () => {
  await logged(async () => {
    const pair = await sideBySide(errorOutput)
    try {
      for (const [method, target, body] of [['GET', '/posts'], ['GET', '/posts/1'], ['GET', '/posts/9'], ['POST', '/posts', { title: 'x' }]] as Array<[string, string, unknown?]>) {
        const [theirs, ours] = await pair.both(method, target, { body })
        assert.is(ours.status, 500, `${method} ${target}`)
        assert.is(ours.status, theirs.status, `${method} ${target}: status`)
        assert.equal(ours.json, theirs.json, `${method} ${target}: body`)
      }
    } finally {
      await pair.close()
    }
  })
})

/** Custom routes that read and write through router.db, lowdb's API, before the router. */
const throughDb: Example = (jsonServer, dbFile) => {
  const server = jsonServer.create() as any
  const router = jsonServer.router(dbFile) as any
  server.use(jsonServer.defaults())
  server.use(jsonServer.bodyParser)
  // restdir's router reads its store once it is open (router.ready); json-server's has read its file already.
  server.use((_req: unknown, _res: unknown, next: () => void) => void Promise.resolve(router.ready).then(() => next()))
  server.get('/stats', (_req: any, res: any) => {
    const db = router.db
    res.jsonp({
      count: db.get('posts').size().value(),
      titles: db.get('posts').map('title').value(),
      first: db.get('posts').getById(1).value(),
      node: db.get('posts').find({ category: 'node' }).value(),
      profile: db.get('profile').value(),
      // Sorted: router(object)'s store in memory holds its names in name order, as its GET /db shows them.
      names: Object.keys(db.getState()).sort(),
    })
  })
  server.post('/posts/:id/like', (req: any, res: any) => {
    const post = router.db.get('posts').find({ id: Number(req.params.id) })
    if (!post.value()) return res.sendStatus(404)
    post.assign({ likes: (post.value().likes ?? 0) + 1 }).write()
    res.jsonp(post.value())
  })
  server.post('/quick', (req: any, res: any) => {
    res.status(201).jsonp(router.db.get('posts').insert({ ...req.body }).write())
  })
  server.post('/pushed', (req: any, res: any) => {
    router.db.get('comments').push({ id: 10, ...req.body }).write()
    res.sendStatus(204)
  })
  server.delete('/posts/:id/comments', (req: any, res: any) => {
    res.jsonp(router.db.get('comments').remove({ postId: Number(req.params.id) }).write())
  })
  server.put('/profile/name', (req: any, res: any) => {
    router.db.set('profile.name', req.body.name).write()
    res.jsonp(router.db.get('profile').value())
  })
  server.post('/state', (_req: any, res: any) => {
    const state = router.db.getState()
    router.db.setState({ ...state, posts: state.posts.filter((post: any) => post.id !== 3) })
    router.db.write()
    res.sendStatus(204)
  })
  server.use(router)
  return server
}

test('router.db reads and writes as lowdb does, through the store: the router\'s answers and the file agree with json-server\'s', async () => {
  await logged(async () => {
    const pair = await sideBySide(throughDb)
    try {
      const steps: Array<[string, string, unknown?]> = [
        ['GET', '/stats'],
        ['POST', '/posts/1/like'],
        ['POST', '/posts/1/like'],
        ['POST', '/posts/9/like'],
        ['GET', '/posts/1'],
        ['POST', '/quick', { title: 'quick', category: 'node' }],
        ['GET', '/posts/3'],
        ['POST', '/posts', { title: 'by HTTP' }],
        ['GET', '/stats'],
        ['POST', '/pushed', { body: 'pushed', postId: 2 }],
        ['GET', '/comments'],
        ['GET', '/comments/10'],
        ['DELETE', '/posts/1/comments'],
        ['GET', '/comments'],
        ['PUT', '/profile/name', { name: 'renamed' }],
        ['GET', '/profile'],
        ['PATCH', '/posts/2', { title: 'patched by HTTP' }],
        ['DELETE', '/posts/4'],
        ['GET', '/stats'],
        ['POST', '/state'],
        ['GET', '/posts'],
        ['GET', '/posts/3'],
        ['GET', '/db'],
      ]
      for (const [method, target, body] of steps) assertSame(await pair.both(method, target, { body }), `${method} ${target}`)
      const [theirFile, ourFile] = await pair.files()
      assert.equal(ourFile, theirFile, 'both db.json files hold the same data')
    } finally {
      await pair.close()
    }
  })
})

test('router(object).db reads and writes the in-memory data as json-server\'s does, and the object given is left as it was', async () => {
  const given = structuredClone(database)
  const pair = await sideBySide((jsonServer) => throughDb(jsonServer, structuredClone(given) as any))
  try {
    const steps: Array<[string, string, unknown?]> = [
      ['GET', '/stats'],
      ['POST', '/posts/2/like'],
      ['POST', '/quick', { title: 'quick' }],
      ['POST', '/posts', { title: 'by HTTP' }],
      ['DELETE', '/posts/1/comments'],
      ['PUT', '/profile/name', { name: 'renamed' }],
      ['GET', '/stats'],
      ['GET', '/db'],
    ]
    for (const [method, target, body] of steps) assertSame(await pair.both(method, target, { body }), `${method} ${target}`)
    assert.equal(given, database)
  } finally {
    await pair.close()
  }
})

test('a router.db write reaches the change feed that event streams read, as one batch', async () => {
  const dir = await makeTempDir('restdir-module-db-')
  const file = path.join(dir, 'db.json')
  await writeFile(file, JSON.stringify(database, null, 2))
  const router = restdirJsonServer.router(file)
  const app = express()
  app.use(router)
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening))
  })
  try {
    await router.ready
    const port = (server.address() as { port: number }).port
    const { last } = (await send(port, 'GET', '/comments?_changes')).json
    router.db.get('comments').push({ id: 7, body: 'from router.db', postId: 1 }).write()
    router.db.get('comments').remove({ id: 1 }).write()
    const feed = (await send(port, 'GET', `/comments?_changes&since=${last}`)).json
    assert.equal(feed.changes.map(({ type, path, data }: any) => ({ type, path, data })), [
      { type: 'put', path: '/comments/7', data: { id: 7, body: 'from router.db', postId: 1 } },
      { type: 'delete', path: '/comments/1', data: database.comments[0] },
    ])
    assert.throws(() => router.db.get('comments').push({ body: 'no id' }).write(), /an item of comments has no "id"; insert\(\) gives it one/)
    assert.is((await send(port, 'GET', '/comments')).json.length, 2, 'a refused write() stores nothing')
  } finally {
    await new Promise((resolve) => server.close(resolve))
    await router.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test('createServer takes rewrite rules and middlewares as options, as json-server\'s rewriter and a middleware before its router', async () => {
  const rules = { '/api/*': '/$1', '/:resource/:id/show': '/:resource/:id', '/posts/:category': '/posts?category=:category', '/articles\\?id=:id': '/posts/:id' }
  const stamp = (req: any, res: any, next: () => void) => {
    res.setHeader('X-Hello', 'World')
    if (req.method === 'POST') req.body.createdAt = 1700000000000
    next()
  }
  const pair = await startPair(database, {
    jsonServer: {
      how: 'module',
      app: (jsonServer: JsonServerModule, file: string) => {
        const app = jsonServer.create() as ExpressApp
        app.use(jsonServer.bodyParser)
        app.use(jsonServer.rewriter(rules))
        app.use(stamp)
        app.use(jsonServer.router(file))
        return app
      },
    },
    restdir: { options: { routes: rules, middlewares: [stamp] } },
  })
  try {
    for (const target of ['/api/posts', '/api/posts/1', '/posts/2/show', '/posts/node', '/articles?id=2', '/__rules']) {
      const answers = await pair.both('GET', target)
      assertSame(answers, `GET ${target}`)
      if (target !== '/__rules') assert.is(answers[1].headers['x-hello'], 'World', `GET ${target} went through the middleware`)
    }
    const created = await pair.both('POST', '/api/comments', { body: { body: 'stamped', postId: 2 } })
    assertSame(created, 'POST /api/comments')
    assert.is(created[1].json.createdAt, 1700000000000)
  } finally {
    await pair.close()
  }
})

test('a rewrite rule that cannot work throws at rewriter(), naming the rule', () => {
  assert.throws(() => restdirJsonServer.rewriter({ '/a/:id([)': '/b/:id' }), /"\/a\/:id\(\[\)" is not a pattern that compiles/)
  assert.throws(() => restdirJsonServer.rewriter({ '/a/:id': '/b/:name' }), /:name the pattern does not have; use one of :id/)
})

test('the package exports restdir/json-server: the simple example runs from CommonJS with require(\'restdir/json-server\')', async () => {
  builtCommand() // dist/, which the package's "exports" name
  const dir = await makeTempDir('restdir-module-package-')
  try {
    await mkdir(path.join(dir, 'node_modules'))
    await symlink(root, path.join(dir, 'node_modules', 'restdir'))
    await symlink(path.join(root, 'node_modules', 'express'), path.join(dir, 'node_modules', 'express'))
    await writeFile(path.join(dir, 'db.json'), JSON.stringify(database, null, 2))
    await writeFile(path.join(dir, 'server.js'), [
      "const jsonServer = require('restdir/json-server')",
      'const server = jsonServer.create()',
      "const router = jsonServer.router('db.json')",
      'const middlewares = jsonServer.defaults()',
      'server.use(middlewares)',
      'server.use(router)',
      "const listener = server.listen(0, '127.0.0.1', () => {",
      "  console.log('JSON Server is running on ' + listener.address().port)",
      '})',
    ].join('\n'))
    const app = spawnCli([], { command: [process.execPath, '--no-warnings', 'server.js'], cwd: dir })
    const [, port] = await app.waitFor(/JSON Server is running on (\d+)/)
    const answer = await send(Number(port), 'GET', '/posts/2')
    assert.is(answer.status, 200)
    assert.equal(answer.json, database.posts[1])
    app.child.kill()
    await app.exited
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test.run()
