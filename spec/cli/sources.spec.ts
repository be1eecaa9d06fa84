import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { jsonServer1Package } from '../../bench/json-server-1/install.ts'
import { makeTempDir, send, type Answer } from '../support/helpers.ts'
import { freePort, root, spawnCli, startCli, stopAll } from '../support/process.ts'
import { startJsonServer, startRestdir, type Side } from '../support/side-by-side.ts'

// The sources json-server takes besides a db.json (docs/json-server.md, "A URL
// or a seed.js" and "Serving a db.json5"), each run side by side with
// json-server itself, as its command line runs it, on the same data and the
// same requests: a URL and a seed.js with json-server 0.17.4, a db.json5 with
// json-server 1.0, whose JSON5 it is.

/** restdir's command run from any folder: tsx named by its path, as the folder has no node_modules. */
const restdirCommand = [process.execPath, '--import', pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href]

function database() {
  return {
    posts: [
      { id: 1, title: 'json-server', author: 'typicode', views: 10 },
      { id: 2, title: 'restdir', author: 'ada', views: 30 },
      { id: 3, title: "it's \"quoted\"", author: 'ada', views: 20 },
    ],
    comments: [
      { id: 1, body: 'some comment', postId: 1 },
      { id: 2, body: 'another', postId: 2 },
      { id: 3, body: 'more', postId: 1 },
    ],
    profile: { name: 'typicode' },
  }
}

/** The same requests, in order, to both servers: reads, then writes and what they leave. */
const requests: Array<[string, string, unknown?]> = [
  ['GET', '/posts'],
  ['GET', '/posts/2'],
  ['GET', '/posts?author=ada'],
  ['GET', '/posts?_sort=views&_order=desc'],
  ['GET', '/posts?_page=1&_limit=2'],
  ['GET', '/posts?q=quoted'],
  ['GET', '/posts/1/comments'],
  ['GET', '/comments?_expand=post'],
  ['GET', '/posts?_embed=comments'],
  ['GET', '/profile'],
  ['GET', '/posts/9'],
  ['POST', '/posts', { title: 'new', author: 'bob', views: 5 }],
  ['PATCH', '/posts/1', { views: 11 }],
  ['PUT', '/profile', { name: 'ada' }],
  ['DELETE', '/posts/2'],
  ['GET', '/posts'],
  ['GET', '/comments'],
  ['GET', '/profile'],
]

/** Both servers' answers to `requests`, status and JSON body, one request at a time. */
async function answersOf(port: number): Promise<Array<{ request: string; status: number; body: unknown }>> {
  const answers = []
  for (const [method, target, body] of requests) {
    const answer: Answer = await send(port, method, target, body === undefined ? {} : { body })
    // An error's body is restdir's problem+json (docs/json-server.md, "What still differs"): its status is compared.
    answers.push({ request: `${method} ${target}`, status: answer.status, body: answer.status < 400 ? answer.json : 'an error' })
  }
  return answers
}

/** A plain HTTP server on 127.0.0.1 answering `body` at /db.json (and 404 elsewhere), counting the requests it gets. */
async function serveRemote(body: string, type = 'application/json'): Promise<{ url: string; hits(): number; close(): Promise<void> }> {
  let hits = 0
  const server: Server = createServer((req, res) => {
    hits++
    if (req.url !== '/db.json') return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found')
    res.writeHead(200, { 'Content-Type': type }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/db.json`,
    hits: () => hits,
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}

/** restdir's command on `source` run to its end (it fails to start). */
async function failedStart(source: string, cwd: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const cli = spawnCli([join(root, 'bin', 'restdir.ts'), source, '--port', '0'], { command: restdirCommand, cwd })
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 20_000)))
  const exit = await Promise.race([cli.exited, late])
  clearTimeout(timer)
  if (exit === 'late') {
    cli.child.kill('SIGKILL')
    await cli.exited
    assert.unreachable(`restdir ${source} was still running after 20 s:\n${cli.stdout()}${cli.stderr()}`)
    throw new Error('unreachable')
  }
  return { code: exit.code, stderr: cli.stderr(), stdout: cli.stdout() }
}

const remote = suite('a http:// source: loaded once into memory, served as json-server 0.17 serves it')

remote.after(stopAll)

remote('the same requests get the same answers from restdir and json-server 0.17 on the same URL, each loading it once', async () => {
  const dir = await makeTempDir('restdir-remote-')
  const source = await serveRemote(JSON.stringify(database(), null, 2))
  let jsonServer: Side | undefined
  const restdir = await startRestdir(source.url, { how: 'command', cwd: dir, args: ['--quiet'] })
  try {
    assert.is(source.hits(), 1, 'restdir loaded it once')
    jsonServer = await startJsonServer(source.url, { cwd: dir })
    assert.is(source.hits(), 2, 'and so did json-server')
    const ours = await answersOf(restdir.port)
    const theirs = await answersOf(jsonServer.port)
    for (let index = 0; index < requests.length; index++) assert.equal(ours[index], theirs[index], ours[index].request)
    assert.is(source.hits(), 2, 'neither went back to the URL')
    assert.equal(readdirSync(dir), [], 'nothing was made on disk: no folder named http:, no store')
  } finally {
    await restdir.close()
    await jsonServer?.close()
    await source.close()
    await rm(dir, { recursive: true, force: true })
  }
})

remote('the banner says the data is in memory and where it was loaded from', async () => {
  const dir = await makeTempDir('restdir-remote-')
  const source = await serveRemote(JSON.stringify(database()))
  const restdir = await startCli([join(root, 'bin', 'restdir.ts'), source.url, '--port', '0'], { command: restdirCommand, cwd: dir })
  try {
    assert.match(restdir.stdout(), `store: in memory, loaded once from ${source.url} (changes last until restdir stops)\n`)
    assert.match(restdir.stdout(), /json-server 0\.17's URLs/)
  } finally {
    await restdir.stop()
    await source.close()
    await rm(dir, { recursive: true, force: true })
  }
})

remote('a user and password in the URL are sent as Basic credentials, and never shown', async () => {
  const dir = await makeTempDir('restdir-remote-')
  let authorization: string | undefined
  const server: Server = createServer((req, res) => {
    authorization = req.headers.authorization
    if (authorization !== `Basic ${Buffer.from('ada:s3cret:x').toString('base64')}`) return void res.writeHead(401).end()
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(database()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `127.0.0.1:${(server.address() as AddressInfo).port}`
  try {
    const restdir = await startCli([join(root, 'bin', 'restdir.ts'), `http://ada:s3cret%3Ax@${base}/db.json`, '--port', '0'], { command: restdirCommand, cwd: dir })
    await restdir.stop()
    assert.match(restdir.stdout(), `store: in memory, loaded once from http://ada:***@${base}/db.json (`)
    assert.not.match(restdir.stdout() + restdir.stderr(), 's3cret')
    const refused = await failedStart(`http://ada:wrong@${base}/db.json`, dir)
    assert.is(refused.code, 1)
    assert.is(refused.stderr, `restdir: cannot load http://ada:***@${base}/db.json: it answered 401 Unauthorized, not the JSON of a database.\n`)
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await rm(dir, { recursive: true, force: true })
  }
})

remote('a URL that cannot be fetched, or is not a json-server database, stops the start with why and exit 1', async () => {
  const dir = await makeTempDir('restdir-remote-')
  const closed = `http://127.0.0.1:${await freePort()}/db.json`
  const broken = await serveRemote('{"posts": [{"id": 1,}]}')
  const html = await serveRemote('<!doctype html><p>hello', 'text/html')
  const notObject = await serveRemote('[1, 2]')
  const inexact = await serveRemote('{"posts": [{"id": 1, "n": 0.30000000000000001}]}')
  try {
    const cases: Array<[string, RegExp]> = [
      [closed, /^restdir: cannot load http:\/\/127\.0\.0\.1:\d+\/db\.json: the connection was refused \(is the server running\?\)\.\n$/],
      [broken.url.replace('/db.json', '/missing.json'), /^restdir: cannot load http:\/\/127\.0\.0\.1:\d+\/missing\.json: it answered 404 Not Found, not the JSON of a database\.\n$/],
      [broken.url, /^restdir: http:\/\/127\.0\.0\.1:\d+\/db\.json is not valid JSON: line 1, column 21: expected a property name in double quotes\.\n$/],
      [html.url, /^restdir: http:\/\/127\.0\.0\.1:\d+\/db\.json is not valid JSON: line 1, column 1: expected a value\.\n$/],
      [notObject.url, /^restdir: http:\/\/127\.0\.0\.1:\d+\/db\.json cannot be served:\n {2}A json-server database is a JSON object/],
      [inexact.url, /^restdir: http:\/\/127\.0\.0\.1:\d+\/db\.json holds at posts\[0\]\.n 0\.30000000000000001 has more precision than a double holds/],
    ]
    for (const [url, message] of cases) {
      const result = await failedStart(url, dir)
      assert.is(result.code, 1, url)
      assert.match(result.stderr, message, result.stderr)
      assert.not.match(result.stdout, /listening/)
    }
    assert.equal(readdirSync(dir), [], 'nothing was made on disk')
  } finally {
    await Promise.all([broken.close(), html.close(), notObject.close(), inexact.close()])
    await rm(dir, { recursive: true, force: true })
  }
})

remote.run()

const seed = suite('a seed.js source: the data a module exports, served as json-server 0.17 serves it')

seed.after(stopAll)

seed('a CommonJS module exporting a function: the same requests get the same answers from restdir and json-server 0.17', async () => {
  const dir = await makeTempDir('restdir-seed-')
  writeFileSync(join(dir, 'seed.js'), `module.exports = () => (${JSON.stringify(database())})\n`)
  let jsonServer: Side | undefined
  const restdir = await startRestdir('seed.js', { how: 'command', cwd: dir, args: ['--quiet'] })
  try {
    jsonServer = await startJsonServer('seed.js', { cwd: dir })
    const ours = await answersOf(restdir.port)
    const theirs = await answersOf(jsonServer.port)
    for (let index = 0; index < requests.length; index++) assert.equal(ours[index], theirs[index], ours[index].request)
    assert.equal(readdirSync(dir), ['seed.js'], 'nothing else was made on disk')
  } finally {
    await restdir.close()
    await jsonServer?.close()
    await rm(dir, { recursive: true, force: true })
  }
})

seed('an ES module (.mjs), a .cjs and a module exporting the data itself (or an async function) are served alike', async () => {
  const dir = await makeTempDir('restdir-seed-')
  const data = JSON.stringify(database())
  writeFileSync(join(dir, 'function.js'), `module.exports = () => (${data})\n`)
  writeFileSync(join(dir, 'seed.mjs'), `export default async () => (${data})\n`)
  writeFileSync(join(dir, 'seed.cjs'), `module.exports = ${data}\n`)
  const expected = await (async () => {
    const restdir = await startRestdir('function.js', { how: 'command', cwd: dir, args: ['--quiet'] })
    try {
      return await answersOf(restdir.port)
    } finally {
      await restdir.close()
    }
  })()
  for (const file of ['seed.mjs', 'seed.cjs']) {
    const restdir = await startRestdir(file, { how: 'command', cwd: dir, args: ['--quiet'] })
    try {
      assert.equal(await answersOf(restdir.port), expected, file)
    } finally {
      await restdir.close()
    }
  }
  await rm(dir, { recursive: true, force: true })
})

seed('a module that is missing, throws, exports nothing or no database stops the start with why and exit 1', async () => {
  const dir = await makeTempDir('restdir-seed-')
  writeFileSync(join(dir, 'throws.js'), `module.exports = () => { throw new Error('no data today') }\n`)
  writeFileSync(join(dir, 'nothing.mjs'), `export const posts = []\n`)
  writeFileSync(join(dir, 'number.cjs'), `module.exports = () => 5\n`)
  writeFileSync(join(dir, 'syntax.js'), `module.exports = () => ({\n`)
  try {
    const cases: Array<[string, RegExp]> = [
      ['index.js', /^restdir: cannot load \S+\/index\.js: there is no such file\.\n$/],
      ['throws.js', /^restdir: \S+\/throws\.js's exported function threw: no data today\n$/],
      ['nothing.mjs', /^restdir: \S+\/nothing\.mjs exports nothing: export the data, or a function returning it/],
      ['number.cjs', /^restdir: \S+\/number\.cjs cannot be served:\n {2}A json-server database is a JSON object/],
      ['syntax.js', /^restdir: cannot load \S+\/syntax\.js: /],
    ]
    for (const [file, message] of cases) {
      const result = await failedStart(file, dir)
      assert.is(result.code, 1, file)
      assert.match(result.stderr, message, result.stderr)
    }
    assert.equal(readdirSync(dir).sort(), ['nothing.mjs', 'number.cjs', 'syntax.js', 'throws.js'], 'nothing was made on disk')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

seed.run()

const json5 = suite('a db.json5: JSON5 read and written back, as json-server 1.0 does')

json5.after(stopAll)

/** A hand-written JSON5 database: every form JSON5 adds to JSON. */
const json5Text = `// json-server 1.0's db.json5
{
  /* posts, by id */
  posts: [
    { id: '1', title: 'json-server', views: 0x10, author: 'typicode', },
    { id: '2', title: "it's", views: +30, ratio: .5, author: 'ada' },
    { id: '3', title: 'multi\\
line', views: 20., author: 'ada', },
  ],
  'comments': [{ id: '1', body: 'some comment', postId: '1' }],
  profile: { name: 'typicode', },
}
`

/** The requests json-server 1.0 answers as 0.17 does (its ids are strings). */
const json5Requests: Array<[string, string, unknown?]> = [
  ['GET', '/posts'],
  ['GET', '/posts/2'],
  ['GET', '/posts?author=ada'],
  ['GET', '/comments'],
  ['GET', '/profile'],
  ['PATCH', '/posts/1', { views: 17 }],
  ['PUT', '/profile', { name: 'ada' }],
  ['GET', '/posts/9'],
  ['GET', '/posts'],
]

json5('the same requests get the same answers, and both write back a JSON5 file holding the same data', async () => {
  const ours = await makeTempDir('restdir-json5-')
  const theirs = await makeTempDir('restdir-json5-1-')
  writeFileSync(join(ours, 'db.json5'), json5Text)
  writeFileSync(join(theirs, 'db.json5'), json5Text)
  const JSON5 = createRequire(join(await jsonServer1Package(), 'package.json'))('json5') as { parse(text: string): any; stringify(value: unknown, replacer: null, space: number): string }
  const restdir = await startRestdir('db.json5', { how: 'command', cwd: ours, args: ['--quiet'] })
  const jsonServer = await startJsonServer('db.json5', { version: '1.0', cwd: theirs, watch: false })
  try {
    for (const [method, target, body] of json5Requests) {
      const [a, b] = await Promise.all([restdir.port, jsonServer.port].map((port) => send(port, method, target, body === undefined ? {} : { body })))
      // An error's body is restdir's problem+json (docs/json-server.md, "What still differs"): its status is compared.
      assert.equal({ status: a.status, body: a.status < 400 ? a.json : 'an error' }, { status: b.status, body: b.status < 400 ? b.json : 'an error' }, `${method} ${target}`)
    }
    // A DELETE: json-server 1.0 answers the item, 0.17 (whose mode restdir serves a db.json5 in) {}; both remove it.
    const deleted = await Promise.all([restdir.port, jsonServer.port].map((port) => send(port, 'DELETE', '/posts/3')))
    assert.equal(deleted.map((answer) => answer.status), [200, 200])
    // A POST: each makes its own id (json-server 1.0 four random hex digits), the rest is the same.
    const [a, b] = await Promise.all([restdir.port, jsonServer.port].map((port) => send(port, 'POST', '/posts', { body: { title: 'new', views: 1 } })))
    assert.is(a.status, b.status)
    assert.equal({ ...a.json, id: 'made' }, { ...b.json, id: 'made' })
    await waitFor(() => readFileSync(join(theirs, 'db.json5'), 'utf8').includes("'new'"), 'json-server 1.0 wrote its file')
    const ourText = readFileSync(join(ours, 'db.json5'), 'utf8')
    // json-server 1.0 adds `$schema`, its editor's pointer to its JSON Schema, to the file.
    const withoutNewId = (data: any, id: string) => ({ ...data, $schema: undefined, posts: data.posts.map((post: any) => (post.id === id ? { ...post, id: 'made' } : post)) })
    assert.equal(withoutNewId(JSON5.parse(ourText), a.json.id), withoutNewId(JSON5.parse(readFileSync(join(theirs, 'db.json5'), 'utf8')), b.json.id))
    // Written as the json5 package writes it, laid out as restdir lays out a db.json (json-server 1.0 writes it on one line).
    assert.is(ourText, JSON5.stringify(JSON5.parse(ourText), null, 2) + '\n')
    assert.match(ourText, /^\{\n {2}posts: \[\n {4}\{\n {6}id: '1',\n/)
  } finally {
    await restdir.close()
    await jsonServer.close()
    await rm(ours, { recursive: true, force: true })
    await rm(theirs, { recursive: true, force: true })
  }
})

json5('hand edits of a db.json5 are served; one that breaks it names the line and column, and is not overwritten', async () => {
  const dir = await makeTempDir('restdir-json5-')
  const file = join(dir, 'db.json5')
  writeFileSync(file, json5Text)
  const restdir = await startCli([join(root, 'bin', 'restdir.ts'), 'db.json5', '--port', '0'], { command: restdirCommand, cwd: dir })
  try {
    assert.match(restdir.stdout(), `store: ${file} (a db.json5, JSON5: every change is written back into it)\n`)
    writeFileSync(file, `{ posts: [ { id: '1', title: 'edited', }, ], /* a comment */ }\n`)
    await waitForAnswer(restdir.port, '/posts/1', (answer) => answer.json?.title === 'edited')
    const broken = `{ posts: [ { id: '1', title: 'broken' ] }\n`
    writeFileSync(file, broken)
    // The store looks at the file when asked for data: a read finds the break.
    await waitForAnswer(restdir.port, '/posts/1', () => restdir.stderr().includes('db.json5 is not valid JSON5'))
    await restdir.waitFor(/db\.json5 is not valid JSON5: line 1, column 39: expected "," or "}"/, 'stderr')
    assert.is((await send(restdir.port, 'GET', '/posts/1')).json.title, 'edited', 'reads keep the last good state')
    assert.is((await send(restdir.port, 'POST', '/posts', { body: { title: 'x' } })).status, 503)
    assert.is(readFileSync(file, 'utf8'), broken, 'the broken file is left as it is')
    writeFileSync(file, `{ posts: [ { id: '1', title: 'Infinity', views: Infinity } ] }\n`)
    await waitForAnswer(restdir.port, '/posts/1', () => restdir.stderr().includes('Infinity cannot be kept'))
    await restdir.waitFor(/db\.json5 holds at posts\[0\]\.views Infinity cannot be kept: JSON has no Infinity/, 'stderr')
  } finally {
    await restdir.stop()
    await rm(dir, { recursive: true, force: true })
  }
})

json5('--import and --fixture take a db.json5 too; a broken one names its line and column', async () => {
  const dir = await makeTempDir('restdir-json5-')
  writeFileSync(join(dir, 'db.json5'), json5Text)
  writeFileSync(join(dir, 'broken.json5'), `{\n  posts: [{ id: 1 }\n}\n`)
  try {
    const run = (args: string[]) => spawnCli([join(root, 'bin', 'restdir.ts'), ...args], { command: restdirCommand, cwd: dir })
    const imported = run(['--import', 'db.json5', '--store', 'data'])
    assert.is((await imported.exited).code, 0, imported.stderr())
    assert.match(imported.stdout(), /imported 5 documents \(2 collections\) from db\.json5/)
    const broken = run(['--import', 'broken.json5', '--store', 'data'])
    assert.is((await broken.exited).code, 1)
    assert.is(broken.stderr(), 'restdir: broken.json5 is not valid JSON5: line 3, column 1: expected "," or "]".\n')
    const fixture = await startCli([join(root, 'bin', 'restdir.ts'), '--fixture', 'db.json5', '--port', '0', '--quiet'], { command: restdirCommand, cwd: dir })
    try {
      assert.is((await send(fixture.port, 'GET', '/posts/3')).json.title, 'multiline')
    } finally {
      await fixture.stop()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

json5.run()

const starts = suite('what a start serves, and says it serves')

starts.after(stopAll)

starts('a db.json that does not exist is made, empty, and the banner says so; the next start finds it', async () => {
  const dir = await makeTempDir('restdir-made-')
  try {
    const first = await startCli([join(root, 'bin', 'restdir.ts'), 'db.json', '--port', '0'], { command: restdirCommand, cwd: dir })
    await first.stop()
    assert.match(first.stdout(), `store: ${join(dir, 'db.json')} (a db.json: every change is written back into it; it did not exist, so it was made, empty)\n`)
    assert.is(readFileSync(join(dir, 'db.json'), 'utf8'), '{}\n')
    const second = await startCli([join(root, 'bin', 'restdir.ts'), 'db.json', '--port', '0'], { command: restdirCommand, cwd: dir })
    await second.stop()
    assert.match(second.stdout(), `store: ${join(dir, 'db.json')} (a db.json: every change is written back into it)\n`)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

starts('with no argument, the banner names the default store folder and says how to serve a db.json', async () => {
  const dir = await makeTempDir('restdir-default-')
  try {
    const cli = await startCli([join(root, 'bin', 'restdir.ts'), '--port', '0'], { command: restdirCommand, cwd: dir, env: { RESTDIR_STORE: '', DATABASE_URL: '' } })
    await cli.stop()
    assert.match(cli.stdout(), `store: ${join(dir, 'store')} (the default store folder, one file per document, as no store was named; \`restdir db.json\` serves a db.json)\n`)
    assert.ok(existsSync(join(dir, 'store')))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

starts.run()

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!check()) {
    if (Date.now() > deadline) assert.unreachable(`${what} within 10 s`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function waitForAnswer(port: number, target: string, check: (answer: Answer) => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const answer = await send(port, 'GET', target)
    if (check(answer)) return
    if (Date.now() > deadline) assert.unreachable(`GET ${target} never answered as expected within 10 s; last: ${answer.status} ${answer.text}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
