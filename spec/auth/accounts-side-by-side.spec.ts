import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from 'node:http'
import { rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { makeTempDir, send, startServer, type Answer, type RequestOptions, type TestServer } from '../support/helpers.ts'

// json-server-auth 2.1 itself, wired as its README wires it (json-server 0.17's
// app, its router on a db.json, json-server-auth's rewriter and middlewares
// between), beside `restdir db.json --auth`, each on its own copy of one
// db.json; every request goes to both and both answers are compared: the
// status, and the body (a refusal is restdir's problem, whose detail starts
// with json-server-auth's message). Where restdir is safer on purpose
// (docs/accounts.md, "What restdir does that json-server-auth does not"), the
// test says so and checks both answers as they are.

const require = createRequire(import.meta.url)
const jsonServer = require('json-server') as { create(): any; router(file: string): any; defaults(options?: object): any[] }
const jsonServerAuth = require('json-server-auth') as unknown[] & { rewriter(rules: Record<string, unknown>): unknown }

interface Pair {
  jsa(method: string, target: string, options?: RequestOptions): Promise<Answer>
  restdir(method: string, target: string, options?: RequestOptions): Promise<Answer>
  close(): Promise<void>
}

const database = () => ({
  users: [],
  messages: [
    { id: 1, userId: 1, text: 'alice 1' },
    { id: 2, userId: 2, text: 'bob 1' },
    { id: 3, userId: 1, text: 'alice 2' },
  ],
  notes: [{ id: 1, text: 'nobody\'s' }],
})

/** Both servers on copies of `db`, with the same rules (`routes`: json-server-auth's rewriter, restdir's --routes). */
async function startPair(db: object, routes?: Record<string, unknown>): Promise<Pair> {
  const folder = await makeTempDir('restdir-accounts-')
  await writeFile(join(folder, 'jsa.json'), JSON.stringify(db, null, 2))
  await writeFile(join(folder, 'db.json'), JSON.stringify(db, null, 2))
  const app = jsonServer.create()
  const router = jsonServer.router(join(folder, 'jsa.json'))
  app.db = router.db
  app.use(jsonServer.defaults({ logger: false }))
  if (routes) app.use(jsonServerAuth.rewriter(routes))
  app.use(jsonServerAuth)
  app.use(router)
  const server: Server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const jsaPort = (server.address() as AddressInfo).port
  // A restdir that cannot start leaves nothing running behind the failed test.
  const restdir: TestServer = await startServer({ store: join(folder, 'db.json'), auth: true, routes: routes as Record<string, string> | undefined }).catch(async (error: unknown) => {
    await new Promise((resolve) => server.close(resolve))
    throw error
  })
  return {
    jsa: (method, target, options) => send(jsaPort, method, target, options),
    restdir: (method, target, options) => restdir.request(method, target, options),
    async close() {
      await new Promise((resolve) => server.close(resolve))
      await restdir.close()
      await rm(folder, { recursive: true, force: true })
    },
  }
}

/** Sends the request to both; they must answer alike: the same status, the same body or, refused, restdir's detail starting with json-server-auth's message. */
async function alike(pair: Pair, method: string, target: string, options: { body?: unknown; jsaToken?: string; token?: string } = {}): Promise<{ jsa: Answer; restdir: Answer }> {
  const headersOf = (token: string | undefined): Record<string, string> => (token === undefined ? {} : { authorization: `Bearer ${token}` })
  const jsa = await pair.jsa(method, target, { body: options.body, headers: headersOf(options.jsaToken) })
  const restdir = await pair.restdir(method, target, { body: options.body, headers: headersOf(options.token) })
  const what = `${method} ${target} ${options.token === undefined ? 'in public' : 'signed in'}`
  assert.is(restdir.status, jsa.status, `${what}: restdir ${restdir.status} ${restdir.text} / json-server-auth ${jsa.status} ${jsa.text}`)
  if (jsa.status >= 400) {
    assert.is(typeof jsa.json, 'string', `${what}: json-server-auth's refusal is a message`)
    assert.is(restdir.headers['content-type'], 'application/problem+json', what)
    assert.ok(String(restdir.json?.detail).startsWith(jsa.json), `${what}: "${restdir.json?.detail}" starts with "${jsa.json}"`)
  } else if (typeof jsa.json === 'object' && jsa.json !== null && 'accessToken' in jsa.json) {
    assert.match(restdir.json.accessToken, /^[\w-]+\.[\w-]+\.[\w-]+$/, what)
    assert.equal(restdir.json.user, jsa.json.user, what)
  } else {
    // json-server-auth's answers carry password hashes, which restdir's never do.
    assert.equal(restdir.json, withoutHashes(jsa.json), what)
  }
  return { jsa, restdir }
}

function withoutHashes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutHashes)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([key, field]) => !(key === 'password' && /^\$2a\$10\$/.test(String(field)))).map(([key, field]) => [key, withoutHashes(field)]))
}

interface Signed {
  id: number
  jsa: string
  restdir: string
}

async function registerBoth(pair: Pair, email: string, extra: object = {}): Promise<Signed> {
  const { jsa, restdir } = await alike(pair, 'POST', '/register', { body: { email, password: 'bestPassw0rd', ...extra } })
  assert.is(jsa.status, 201)
  return { id: restdir.json.user.id, jsa: jsa.json.accessToken, restdir: restdir.json.accessToken }
}

test('register, its validations and log in answer as json-server-auth answers them', async () => {
  const pair = await startPair(database())
  try {
    const alice = await registerBoth(pair, 'alice@mail.com', { firstname: 'Alice' })
    assert.is(alice.id, 1)
    // /signup and /users register too, in json-server-auth's users router.
    await alike(pair, 'POST', '/signup', { body: { email: 'bob@mail.com', password: 'bobsPassword' } })
    await alike(pair, 'POST', '/users', { body: { email: 'carol@mail.com', password: 'carolsPassword', age: 30 } })
    for (const body of [{ email: 'dan@mail.com' }, { password: 'abcd' }, { email: '  ', password: 'abcd' }, { email: 'not an email', password: 'abcd' }, { email: 'dan@mail.com', password: 'abc' }, { email: 'alice@mail.com', password: 'anotherOne' }]) {
      const { restdir } = await alike(pair, 'POST', '/register', { body })
      assert.is(restdir.status, 400, JSON.stringify(body))
    }
    const login = await alike(pair, 'POST', '/login', { body: { email: 'alice@mail.com', password: 'bestPassw0rd' } })
    assert.is(login.restdir.status, 200)
    assert.equal(login.restdir.json.user, { email: 'alice@mail.com', firstname: 'Alice', id: 1 })
    await alike(pair, 'POST', '/signin', { body: { email: 'carol@mail.com', password: 'carolsPassword' } })
    assert.is((await alike(pair, 'POST', '/login', { body: { email: 'alice@mail.com', password: 'bestPassw0rD' } })).restdir.status, 400)
    assert.is((await alike(pair, 'POST', '/login', { body: { email: 'nobody@mail.com', password: 'bestPassw0rd' } })).restdir.status, 400)
    assert.is((await alike(pair, 'POST', '/login', { body: { email: 'alice@mail.com' } })).restdir.status, 400)
    // A user's PUT needs both fields, a PATCH's password its length; either password is hashed, and logs in.
    assert.is((await alike(pair, 'PUT', '/users/1', { body: { email: 'alice@mail.com' } })).restdir.status, 400)
    assert.is((await alike(pair, 'PATCH', '/users/1', { body: { password: 'abc' } })).restdir.status, 400)
    assert.is((await alike(pair, 'PATCH', '/users/1', { body: { email: 'not an email' } })).restdir.status, 400)
    assert.is((await alike(pair, 'PUT', '/users/1', { body: { email: 'alice@mail.com', password: 'put password', firstname: 'Alice' } })).restdir.status, 200)
    assert.is((await alike(pair, 'POST', '/login', { body: { email: 'alice@mail.com', password: 'put password' } })).restdir.status, 200)
    assert.is((await alike(pair, 'PATCH', '/users/1', { body: { password: 'patched password' } })).restdir.status, 200)
    assert.is((await alike(pair, 'POST', '/login', { body: { email: 'alice@mail.com', password: 'patched password' } })).restdir.status, 200)
    const jsonPatch = await pair.restdir('PATCH', '/users/1', { body: JSON.stringify([{ op: 'replace', path: '/password', value: 'in clear' }]), headers: { 'content-type': 'application/json-patch+json' } })
    assert.is(jsonPatch.status, 400, jsonPatch.text)
    // The token: HS256, sub the user's id as a string, the email, one hour.
    const claims = JSON.parse(Buffer.from(alice.restdir.split('.')[1], 'base64url').toString())
    const header = JSON.parse(Buffer.from(alice.restdir.split('.')[0], 'base64url').toString())
    assert.equal(header, { alg: 'HS256', typ: 'JWT' })
    assert.is(claims.sub, '1')
    assert.is(claims.email, 'alice@mail.com')
    assert.is(claims.exp - claims.iat, 3600)
  } finally {
    await pair.close()
  }
})

/** What each guard lets the owner, a signed-in stranger and the public do with one message, as json-server-auth's guards router says. */
const GUARDS = ['664', '660', '644', '640', '600', '444', '440', '400']

test('each guard answers the owner, a signed-in stranger and the public as json-server-auth does: read, update, create', async () => {
  const pair = await startPair(database())
  try {
    const alice = await registerBoth(pair, 'alice@mail.com')
    const bob = await registerBoth(pair, 'bob@mail.com')
    const callers: Array<[string, Signed | undefined]> = [['owner', alice], ['stranger', bob], ['public', undefined]]
    const statuses: string[] = []
    for (const guard of GUARDS) {
      for (const [who, caller] of callers) {
        const as = { jsaToken: caller?.jsa, token: caller?.restdir }
        const read = await alike(pair, 'GET', `/${guard}/messages/1`, as)
        const update = await alike(pair, 'PATCH', `/${guard}/messages/1`, { ...as, body: { text: `${guard} by ${who}` } })
        const create = await alike(pair, 'POST', `/${guard}/messages`, { ...as, body: { userId: caller?.id ?? 1, text: `new, ${guard} by ${who}` } })
        const replace = await alike(pair, 'PUT', `/${guard}/messages/1`, { ...as, body: { userId: 1, text: `put, ${guard} by ${who}` } })
        statuses.push(`${guard} ${who}: ${read.restdir.status} ${update.restdir.status} ${create.restdir.status} ${replace.restdir.status}`)
      }
      // The public creating a message in its owner's name.
      await alike(pair, 'POST', `/${guard}/messages`, { body: { userId: 1, text: 'in the public' } })
    }
    // The table of json-server-auth's README, as both answered it: GET, PATCH, POST and PUT of message 1 (Alice's).
    assert.equal(statuses, [
      '664 owner: 200 200 201 200', '664 stranger: 200 200 201 200', '664 public: 200 401 401 401',
      '660 owner: 200 200 201 200', '660 stranger: 200 200 201 200', '660 public: 401 401 401 401',
      '644 owner: 200 200 201 200', '644 stranger: 200 403 201 403', '644 public: 200 401 401 401',
      '640 owner: 200 200 201 200', '640 stranger: 200 403 201 403', '640 public: 401 401 401 401',
      '600 owner: 200 200 201 200', '600 stranger: 403 403 201 403', '600 public: 401 401 401 401',
      '444 owner: 200 403 403 403', '444 stranger: 200 403 403 403', '444 public: 200 403 403 403',
      '440 owner: 200 403 403 403', '440 stranger: 200 403 403 403', '440 public: 401 401 401 401',
      '400 owner: 200 403 403 403', '400 stranger: 403 403 403 403', '400 public: 401 401 401 401',
    ])
    // A user's own record behind a guard, and a stranger's: json-server-auth's owner of a user is the user.
    await alike(pair, 'GET', '/600/users/1', { jsaToken: alice.jsa, token: alice.restdir })
    await alike(pair, 'GET', '/600/users/1', { jsaToken: bob.jsa, token: bob.restdir })
    await alike(pair, 'DELETE', '/600/messages/2', { jsaToken: alice.jsa, token: alice.restdir })
    await alike(pair, 'DELETE', '/600/messages/2', { jsaToken: bob.jsa, token: bob.restdir })
    await alike(pair, 'GET', '/messages')
  } finally {
    await pair.close()
  }
})

test('a refused token is a 401 on both, restdir\'s naming the reason json-server-auth names', async () => {
  const pair = await startPair(database())
  try {
    const alice = await registerBoth(pair, 'alice@mail.com')
    const tamper = (token: string) => `${token.slice(0, -2)}${token.endsWith('AA') ? 'BA' : 'AA'}`
    const forged = await alike(pair, 'GET', '/600/messages/1', { jsaToken: tamper(alice.jsa), token: tamper(alice.restdir) })
    assert.is(forged.restdir.json.detail.split(':')[0], 'invalid signature')
    assert.is(forged.restdir.headers['www-authenticate'], 'Bearer realm="restdir", error="invalid_token"')
    await alike(pair, 'GET', '/600/messages/1', { jsaToken: 'notatoken', token: 'notatoken' })
    await alike(pair, 'GET', '/600/messages/1', { jsaToken: 'not.a.token', token: 'not.a.token' })
    const scheme = { jsa: await pair.jsa('GET', '/600/messages/1', { headers: { authorization: `Basic ${alice.jsa}` } }), restdir: await pair.restdir('GET', '/600/messages/1', { headers: { authorization: `Basic ${alice.restdir}` } }) }
    assert.is(scheme.restdir.status, 401)
    assert.ok(scheme.restdir.json.detail.startsWith(scheme.jsa.json))
  } finally {
    await pair.close()
  }
})

test('through --routes, both of json-server-auth\'s forms guard as its rewriter does; POST /users still registers', async () => {
  const pair = await startPair(database(), { users: 600, messages: '640', '/api/*': '/$1', '/mine*': '/600/messages$1' })
  try {
    const alice = await registerBoth(pair, 'alice@mail.com')
    await alike(pair, 'POST', '/users', { body: { email: 'bob@mail.com', password: 'bobsPassword' } })
    const bob = { jsa: (await pair.jsa('POST', '/login', { body: { email: 'bob@mail.com', password: 'bobsPassword' } })).json.accessToken, restdir: (await pair.restdir('POST', '/login', { body: { email: 'bob@mail.com', password: 'bobsPassword' } })).json.accessToken }
    assert.is((await alike(pair, 'GET', '/messages/1')).restdir.status, 401)
    assert.is((await alike(pair, 'GET', '/messages/1', { jsaToken: bob.jsa, token: bob.restdir })).restdir.status, 200)
    assert.is((await alike(pair, 'PATCH', '/messages/1', { jsaToken: bob.jsa, token: bob.restdir, body: { text: 'mine now' } })).restdir.status, 403)
    assert.is((await alike(pair, 'PATCH', '/messages/1', { jsaToken: alice.jsa, token: alice.restdir, body: { text: 'edited' } })).restdir.status, 200)
    assert.is((await alike(pair, 'GET', '/users/1', { jsaToken: bob.jsa, token: bob.restdir })).restdir.status, 403)
    assert.is((await alike(pair, 'GET', '/api/messages/2')).restdir.status, 200)
    assert.is((await alike(pair, 'GET', '/mine/3', { jsaToken: bob.jsa, token: bob.restdir })).restdir.status, 403)
    assert.is((await alike(pair, 'GET', '/mine/3', { jsaToken: alice.jsa, token: alice.restdir })).restdir.status, 200)
  } finally {
    await pair.close()
  }
})

test('safer: a guarded listing answers only the caller\'s documents, where json-server-auth answers the whole list to anyone owning one', async () => {
  const pair = await startPair(database())
  try {
    const alice = await registerBoth(pair, 'alice@mail.com')
    const bob = await registerBoth(pair, 'bob@mail.com')
    const carol = await registerBoth(pair, 'carol@mail.com')
    const asAlice = { headers: { authorization: `Bearer ${alice.restdir}` } }
    // json-server-auth: Bob owns message 2, so he gets Alice's too.
    const leaked = await pair.jsa('GET', '/600/messages', { headers: { authorization: `Bearer ${bob.jsa}` } })
    assert.equal(leaked.json.map((message: { id: number }) => message.id), [1, 2, 3])
    const bobs = await pair.restdir('GET', '/600/messages', { headers: { authorization: `Bearer ${bob.restdir}` } })
    assert.is(bobs.status, 200)
    assert.equal(bobs.json, [{ id: 2, userId: 2, text: 'bob 1' }])
    assert.is(bobs.headers['x-total-count'], '1')
    // Filters, pages and the count see only the caller's.
    const page = await pair.restdir('GET', '/600/messages?_page=1&_limit=1', asAlice)
    assert.equal(page.json.map((message: { id: number }) => message.id), [1])
    assert.is(page.headers['x-total-count'], '2')
    for (const query of ['text=bob%201', 'userId=2', 'userId_eq=2', 'userId=1&userId=2&text=bob%201', 'q=bob', 'id=2']) {
      const other = await pair.restdir('GET', `/600/messages?${query}`, asAlice)
      assert.is(other.status, 200, query)
      assert.equal(other.json, [], query)
      assert.is(other.headers['x-total-count'], '0', query)
    }
    // A field no document has is no way round the guard (json-server 0.17 drops a filter on such a field).
    assert.equal((await pair.restdir('GET', '/600/messages?nosuchfield=1', asAlice)).json.map((message: { id: number }) => message.id), [1, 3])
    assert.equal((await pair.restdir('GET', '/600/notes', asAlice)).json, [])
    // Carol owns none: json-server-auth refuses her with 403, restdir lists nothing.
    assert.is((await pair.jsa('GET', '/600/messages', { headers: { authorization: `Bearer ${carol.jsa}` } })).status, 403)
    const none = await pair.restdir('GET', '/600/messages', { headers: { authorization: `Bearer ${carol.restdir}` } })
    assert.is(none.status, 200)
    assert.equal(none.json, [])
    // Users: each sees their own record.
    assert.equal((await pair.restdir('GET', '/600/users', asAlice)).json, [{ email: 'alice@mail.com', id: 1 }])
    // A PUT may not take another's document, though its body names the caller (json-server-auth lets it).
    const taken = { body: { userId: bob.id, text: 'taken' } }
    assert.is((await pair.jsa('PUT', '/600/messages/1', { ...taken, headers: { authorization: `Bearer ${bob.jsa}` } })).status, 200)
    assert.is((await pair.restdir('PUT', '/600/messages/1', { ...taken, headers: { authorization: `Bearer ${bob.restdir}` } })).status, 403)
    // Nor is a guarded collection deleted whole.
    assert.is((await pair.restdir('DELETE', '/600/messages', { headers: { authorization: `Bearer ${bob.restdir}` } })).status, 403)
    assert.is((await pair.restdir('GET', '/messages')).json.length, 3)
  } finally {
    await pair.close()
  }
})

test('safer: a password hash never leaves, where json-server-auth serves every hash on GET /users', async () => {
  const pair = await startPair(database())
  try {
    const alice = await registerBoth(pair, 'alice@mail.com')
    const leaked = await pair.jsa('GET', '/users')
    assert.match(leaked.text, /\$2a\$10\$/)
    const asAlice = { headers: { authorization: `Bearer ${alice.restdir}` } }
    const reads = ['/users', '/users/1', '/db', '/messages?_expand=user', '/messages/1?_expand=user', '/users?_embed=messages', '/users/1?_embed=messages', '/600/users/1', '/users?email=alice@mail.com']
    for (const target of reads) {
      const answer = await pair.restdir('GET', target, asAlice)
      assert.is(answer.status, 200, `${target}: ${answer.text}`)
      assert.ok(answer.text.includes('alice@mail.com'), `${target} shows the user`)
      assert.not.match(answer.text, /\$2[aby]?\$/, target)
      assert.not.ok(answer.text.includes('"password"'), target)
    }
    // Answers to writes, and a batch's answers.
    const patched = await pair.restdir('PATCH', '/users/1', { ...asAlice, body: { firstname: 'Alice' } })
    assert.is(patched.status, 200)
    assert.not.ok(patched.text.includes('password'), patched.text)
    const batch = await pair.restdir('POST', '/?_batch', { ...asAlice, body: { requests: [{ method: 'PATCH', path: '/600/users/1', body: { lastname: 'A.' } }] } })
    assert.is(batch.status, 200, batch.text)
    assert.is(batch.json.responses[0].body.lastname, 'A.')
    assert.not.ok(batch.text.includes('password'), batch.text)
  } finally {
    await pair.close()
  }
})

test.run()
