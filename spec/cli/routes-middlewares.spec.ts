import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { makeTempDir, type Answer } from '../support/helpers.ts'
import { runCli, stopAll } from '../support/process.ts'
import { startPair, type Pair } from '../support/side-by-side.ts'
import { categorizedPosts as database } from '../support/fixtures/categorized-posts.ts'
import { readCommandLine, textsOf } from '../../lib/cli/args.ts'

// `--routes` and `--middlewares` side by side with json-server 0.17.4's own command
// (node_modules/json-server/lib/cli/bin.js), each on its own copy of one db.json, given the
// same rules file and middleware files: the same requests go to both, and their statuses and
// bodies are compared (a refusal's body is restdir's problem+json, docs/json-server.md says why).

/** json-server 0.17 README's routes.json ("Add custom routes"), every form it shows, its last pattern escaped as JSON must escape it. */
const readmeRules = {
  '/api/*': '/$1',
  '/:resource/:id/show': '/:resource/:id',
  '/posts/:category': '/posts?category=:category',
  '/articles\\?id=:id': '/posts/:id',
}

/** json-server 0.17.4's command and restdir's, each on a copy of `database`, given the same further arguments (restdir `restdirArgs` where its own differ). */
function bothCommands(args: string[], restdirArgs = args): Promise<Pair> {
  return startPair(database, {
    jsonServer: { args: [...args, '--quiet'], env: { NODE_ENV: 'test' } },
    restdir: { how: 'command', args: [...restdirArgs, '--quiet'] },
  })
}

/** The same status, and the same JSON body when it is not a refusal (restdir's refusals are problem+json). */
function assertSame([theirs, ours]: [Answer, Answer], what: string): void {
  assert.is(ours.status, theirs.status, `${what}: status (json-server answered ${theirs.text.slice(0, 200)}; restdir ${ours.text.slice(0, 200)})`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, `${what}: body`)
  else assert.match(String(ours.headers['content-type']), /^application\/problem\+json/, `${what}: restdir's refusal is problem+json`)
}

const routes = suite<{ dir: string; pair: Pair }>('--routes', { dir: '', pair: undefined as unknown as Pair })
routes.before(async (context) => {
  context.dir = await makeTempDir('restdir-routes-')
  writeFileSync(path.join(context.dir, 'routes.json'), JSON.stringify(readmeRules, null, 2))
  context.pair = await bothCommands(['--routes', path.join(context.dir, 'routes.json')])
})
routes.after(async ({ dir, pair }) => {
  await pair?.close()
  await stopAll()
  await rm(dir, { recursive: true, force: true })
})

routes('each rewrite of json-server\'s README answers as json-server answers it', async ({ pair }) => {
  // The README's own list: /api/posts → /posts, /api/posts/1 → /posts/1, /posts/1/show → /posts/1,
  // /posts/javascript → /posts?category=javascript, /articles?id=1 → /posts/1 (the rules apply in turn,
  // so /posts/1, once rewritten, is also taken by /posts/:category, in json-server as here).
  for (const target of ['/api/posts', '/api/posts/1', '/posts/1/show', '/posts/javascript', '/posts/node', '/articles?id=1', '/articles?id=2']) {
    assertSame(await pair.both('GET', target), `GET ${target}`)
  }
})

routes('a rewritten URL keeps the rest of its query, and a URL no rule takes is served as it is', async ({ pair }) => {
  for (const target of ['/api/posts?_sort=id&_order=desc', '/api/comments?postId=2', '/API/posts', '/api/profile/', '/comments', '/comments/2', '/profile', '/api/nothing']) {
    const answers = await pair.both('GET', target)
    assertSame(answers, `GET ${target}`)
  }
})

routes('GET /__rules answers the rules as json-server does', async ({ pair }) => {
  const answers = await pair.both('GET', '/__rules')
  assertSame(answers, 'GET /__rules')
  assert.equal(answers[1].json, readmeRules)
})

routes('writes go through the rules too', async ({ pair }) => {
  assertSame(await pair.both('POST', '/api/comments', { body: { body: 'through /api', postId: 1 } }), 'POST /api/comments')
  assertSame(await pair.both('PATCH', '/comments/3/show', { body: { body: 'patched' } }), 'PATCH /comments/3/show')
  assertSame(await pair.both('GET', '/api/comments/3'), 'GET /api/comments/3')
  assertSame(await pair.both('DELETE', '/api/comments/3'), 'DELETE /api/comments/3')
})

routes.run()

const mistakes = suite<{ dir: string }>('a rules file that cannot work', { dir: '' })
mistakes.before(async (context) => {
  context.dir = await makeTempDir('restdir-routes-mistakes-')
})
mistakes.after(async ({ dir }) => {
  await stopAll()
  await rm(dir, { recursive: true, force: true })
})

const cannotWork: Array<[string, string, RegExp]> = [
  ['not JSON', '{ "/api/*": "/$1", }', /routes\.json is not valid JSON .*; rewrite rules are a JSON object such as \{ "\/api\/\*": "\/\$1" \}/],
  ['not an object', '["/api/*", "/$1"]', /routes\.json must be a JSON object of rewrite rules, such as .*, not an array/],
  ['a target that is not a string', '{ "/api/*": 1 }', /routes\.json: "\/api\/\*" rewrites to 1; a target is a non-empty string/],
  ['a pattern that does not compile', '{ "/posts/:id([)": "/posts/:id" }', /routes\.json: "\/posts\/:id\(\[\)" is not a pattern that compiles .*escape a literal/],
  ['a target naming what the pattern lacks', '{ "/posts/:id/show": "/posts/:postId" }', /routes\.json: "\/posts\/:id\/show" rewrites to "\/posts\/:postId", whose :postId the pattern does not have; use one of :id/],
]
for (const [mistake, text, message] of cannotWork) {
  mistakes(`${mistake} stops the start with the rule and the fix`, async ({ dir }) => {
    const file = path.join(dir, 'routes.json')
    writeFileSync(file, text)
    const result = await runCli([path.join(dir, 'db.json'), '--routes', file, '--port', '0'])
    assert.is(result.code, 2, result.stdout + result.stderr)
    assert.match(result.stderr, message)
    assert.not.match(result.stdout, /listening/)
  })
}

mistakes('a rules file that is not there stops the start, naming it', async ({ dir }) => {
  const result = await runCli(['--routes', path.join(dir, 'missing.json'), '--port', '0', path.join(dir, 'db.json')])
  assert.is(result.code, 2)
  assert.match(result.stderr, /missing\.json: the rewrite rules cannot be read \(there is no such file\)/)
})

mistakes.run()

/** Middleware files: CommonJS, and an ES module with its CommonJS twin for json-server (whose require() takes no ES module). */
const middlewareFiles: Record<string, string> = {
  // json-server README's hello.js, and a timestamp on what is created (its module example's, fixed to compare).
  'hello.js': `module.exports = (req, res, next) => {
  res.header('X-Hello', 'World')
  if (req.method === 'POST') req.body.createdAt = 1700000000000
  next()
}
`,
  'guard.mjs': `export default function guard(req, res, next) {
  if (req.body.secret === 'no') return res.status(403).json({ error: 'no secrets here' })
  res.setHeader('X-Body-Seen', JSON.stringify(req.body))
  if (req.path === '/stamp') return res.jsonp({ stamped: req.query.value, order: res.getHeader('X-Hello') })
  next()
}
`,
  'guard.cjs': `module.exports = function guard(req, res, next) {
  if (req.body.secret === 'no') return res.status(403).json({ error: 'no secrets here' })
  res.setHeader('X-Body-Seen', JSON.stringify(req.body))
  if (req.path === '/stamp') return res.jsonp({ stamped: req.query.value, order: res.getHeader('X-Hello') })
  next()
}
`,
  'faults.js': `module.exports = (req, res, next) => {
  if (req.path === '/next-error') return next(new Error('handed on'))
  if (req.path === '/thrown') throw new Error('thrown')
  if (req.path === '/refused') return next(Object.assign(new Error('not for you'), { status: 418 }))
  next()
}
`,
}

const middlewares = suite<{ dir: string; pair: Pair }>('--middlewares', { dir: '', pair: undefined as unknown as Pair })
middlewares.before(async (context) => {
  context.dir = await makeTempDir('restdir-middlewares-')
  for (const [name, text] of Object.entries(middlewareFiles)) writeFileSync(path.join(context.dir, name), text)
})
middlewares.after(async ({ dir }) => {
  await stopAll()
  await rm(dir, { recursive: true, force: true })
})

/** The pair of commands with the middlewares: restdir takes the ES module where json-server takes its CommonJS twin. */
async function withMiddlewares(dir: string, run: (pair: Pair) => Promise<void>): Promise<void> {
  const file = (name: string) => path.join(dir, name)
  const pair = await bothCommands(['--middlewares', file('hello.js'), file('guard.cjs'), file('faults.js')], ['-m', file('hello.js'), file('guard.mjs'), '-m', file('faults.js')])
  try {
    await run(pair)
  } finally {
    await pair.close()
  }
}

middlewares('they run in order before the API, CommonJS and ES modules, with req.body parsed as json-server parses it', async ({ dir }) => {
  await withMiddlewares(dir, async (pair) => {
    const read = await pair.both('GET', '/posts')
    assertSame(read, 'GET /posts')
    for (const answer of read) assert.is(answer.headers['x-hello'], 'World')
    assert.is(read[1].headers['x-body-seen'], read[0].headers['x-body-seen'], 'req.body of a GET')

    const created = await pair.both('POST', '/posts', { body: { title: 'from a client' } })
    assertSame(created, 'POST /posts (JSON)')
    assert.is(created[1].json.createdAt, 1700000000000, 'what a middleware added to req.body is stored')
    assert.is(created[1].headers['x-body-seen'], created[0].headers['x-body-seen'], 'the next middleware saw the changed req.body')

    const form = await pair.both('POST', '/comments', { body: 'body=a+form&postId=2&tag=a&tag=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    assertSame(form, 'POST /comments (a form)')
    assert.is(form[1].headers['x-body-seen'], form[0].headers['x-body-seen'], 'req.body of a form')

    assertSame(await pair.both('PATCH', '/posts/1', { body: { title: 'patched' } }), 'PATCH /posts/1')
    assertSame(await pair.both('PUT', '/posts/2', { body: { title: 'replaced' } }), 'PUT /posts/2')
    assertSame(await pair.both('GET', '/posts'), 'GET /posts after the writes')
    assertSame(await pair.both('GET', '/comments'), 'GET /comments after the writes')
  })
})

middlewares('a middleware that answers itself ends the request, and nothing is stored', async ({ dir }) => {
  await withMiddlewares(dir, async (pair) => {
    const refused = await pair.both('POST', '/posts', { body: { title: 'x', secret: 'no' } })
    assert.is(refused[0].status, 403)
    assert.is(refused[1].status, 403)
    assert.equal(refused[1].json, refused[0].json)
    const stamped = await pair.both('GET', '/stamp?value=7')
    assertSame(stamped, 'GET /stamp')
    assert.equal(stamped[1].json, { stamped: '7', order: 'World' })
    assertSame(await pair.both('GET', '/posts'), 'GET /posts: nothing was stored')
  })
})

middlewares('next(error) and a thrown error are a 500 (an error\'s own 4xx status as Express takes it), and the server keeps serving', async ({ dir }) => {
  await withMiddlewares(dir, async (pair) => {
    for (const target of ['/next-error', '/thrown', '/refused']) {
      const answers = await pair.both('GET', target)
      assertSame(answers, `GET ${target}`)
      assert.not.match(answers[1].text, /at .*faults\.js|thrown\)|handed on/, 'no stack, no file path, no internal message in a 500')
    }
    assert.match((await pair.both('GET', '/refused'))[1].json.detail, /not for you/)
    assertSame(await pair.both('GET', '/posts/1'), 'GET /posts/1 afterwards')
    assertSame(await pair.both('POST', '/posts', { body: '{"title": ', headers: { 'content-type': 'application/json' } }), 'POST of broken JSON')
  })
})

middlewares('a middleware file that is missing or exports no function stops the start, naming it', async ({ dir }) => {
  const missing = await runCli([path.join(dir, 'db.json'), '-m', path.join(dir, 'nowhere.js'), '--port', '0'])
  assert.is(missing.code, 2)
  assert.match(missing.stderr, /--middlewares .*nowhere\.js: there is no such file/)
  writeFileSync(path.join(dir, 'object.cjs'), 'module.exports = { handle() {} }\n')
  const notFunction = await runCli([path.join(dir, 'db.json'), '-m', path.join(dir, 'object.cjs'), '--port', '0'])
  assert.is(notFunction.code, 2)
  assert.match(notFunction.stderr, /object\.cjs exports an object; export a function \(req, res, next\)/)
  writeFileSync(path.join(dir, 'broken.mjs'), 'export default (req, res, next => {\n')
  const broken = await runCli([path.join(dir, 'db.json'), '-m', path.join(dir, 'broken.mjs'), '--port', '0'])
  assert.is(broken.code, 2)
  assert.match(broken.stderr, /broken\.mjs could not be loaded/)
})

middlewares('-m takes every file after it up to the next flag, as json-server reads it, and may come again; a .json argument is the store', () => {
  const { flags, positionals } = readCommandLine(['-m', 'a.js', 'b.mjs', 'db.json', '--middlewares', 'c.cjs', '--port', '0', '--middlewares=d.js'])
  assert.equal(textsOf(flags, 'middlewares'), ['a.js', 'b.mjs', 'c.cjs', 'd.js'])
  assert.equal(positionals, ['db.json'])
  assert.throws(() => readCommandLine(['db.json', '-m', '--port', '0']), /-m needs a value: one or more middleware files/)
})

middlewares.run()
