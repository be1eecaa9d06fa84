import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'
import { assertLintedDescription } from '../support/openapi-lint.ts'

// `?_openapi` under `--auth` (docs/accounts.md, "The API description"): the bearer scheme of the
// accounts' tokens, registering and logging in, each guard's 401 and 403, and no password hash
// in what it infers from the users the file holds. Without `--auth` it says none of it.

const BCRYPT = /\$2[abxy]?\$\d\d\$/

type Operation = { operationId: string; security?: unknown[]; requestBody?: any; responses: Record<string, any> }
type Description = { paths: Record<string, Record<string, Operation>>; components: Record<string, any> }

async function withFile(auth: boolean, use: (server: TestServer, file: string, dir: string) => Promise<void>, routes?: Record<string, string>): Promise<void> {
  const dir = await makeTempDir('restdir-auth-openapi-')
  const file = join(dir, 'db.json')
  await writeFile(file, JSON.stringify({ users: [], messages: [{ id: 1, userId: 1, text: 'alice 1' }, { id: 2, userId: 2, text: 'bob 1' }] }, null, 2))
  const server = await startServer({ store: file, auth, ...(routes ? { routes } : {}) })
  try {
    await use(server, file, dir)
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
}

async function describe(server: TestServer): Promise<{ text: string; description: Description }> {
  const answer = await server.request('GET', '/?_openapi')
  assert.is(answer.status, 200, answer.text)
  return { text: answer.text, description: answer.json }
}

/** `#/components/responses/Name` read, as a client's tool would follow it. */
function resolved(description: Description, response: { $ref?: string }) {
  const name = response.$ref?.replace('#/components/responses/', '')
  return name ? description.components.responses[name] : response
}

test('under --auth the description is valid, names the bearer scheme, register and login, and each guard\'s 401 and 403, as the server answers them', async () => {
  await withFile(true, async (server, _file, dir) => {
    const alice = (await server.request('POST', '/register', { body: { email: 'alice@mail.com', password: 'bestPassw0rd', name: 'Alice' } })).json
    const bob = (await server.request('POST', '/register', { body: { email: 'bob@mail.com', password: 'bestPassw0rd' } })).json
    const { description } = await describe(server)
    await assertLintedDescription(description, dir)
    assert.equal(description.components.securitySchemes, { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: description.components.securitySchemes.bearer.description } })

    const register = description.paths['/register'].post
    assert.is(register.requestBody.content['application/json'].schema.$ref, '#/components/schemas/Credentials')
    assert.is(register.responses['201'].content['application/json'].schema.$ref, '#/components/schemas/Session')
    assert.is(description.paths['/users'].post.responses['201'].content['application/json'].schema.$ref, '#/components/schemas/Session', 'POST /users registers')
    assert.is(description.paths['/login'].post.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Session')
    assert.ok(description.paths['/login'].post.responses['429'], 'a login may be slowed')
    assert.equal(description.components.schemas.Credentials.required, ['email', 'password'])
    assert.equal(Object.keys(description.components.schemas.Session.properties), Object.keys(alice), 'the session is what /register answers')

    // 600: the owner reads and writes; anyone else is refused, told why.
    const owners = description.paths['/600/{collection}/{id}']
    for (const method of ['get', 'put', 'patch', 'delete']) {
      assert.equal(owners[method].security, [{ bearer: [] }], `${method} behind 600 asks for the token`)
      for (const status of ['401', '403']) {
        const response = resolved(description, owners[method].responses[status])
        assert.ok(response?.content?.['application/problem+json'], `${method} behind 600 answers ${status} as a problem`)
      }
    }
    assert.equal(owners.options.security, [], 'OPTIONS passes every guard')
    // 644 and 664 are read by everyone: no token asked, no refusal described for a read.
    for (const guard of ['644', '664']) {
      const read = description.paths[`/${guard}/{collection}`].get
      assert.equal([read.security, read.responses['401'], read.responses['403']], [[], undefined, undefined], guard)
    }
    assert.equal(description.paths['/660/{collection}'].post.security, [{ bearer: [] }])
    assert.ok(description.paths['/660/{collection}'].post.responses['401'])
    assert.is(description.paths['/660/{collection}'].post.responses['403'], undefined, 'any signed-in user may write behind 660')
    assert.ok(description.paths['/444/{collection}/{id}'].delete.responses['403'], '444 lets nobody write')
    // An unguarded path is open, as json-server-auth leaves it.
    assert.equal(description.paths['/messages/{id}'].get.security, [])

    // What the description says is what the server answers.
    const without = await server.request('GET', '/600/messages/1')
    assert.is(without.status, 401)
    assert.match(String(without.headers['content-type']), /^application\/problem\+json/)
    assert.ok(without.headers['www-authenticate'])
    const stranger = await server.request('GET', '/600/messages/1', { headers: { authorization: `Bearer ${bob.accessToken}` } })
    assert.is(stranger.status, 403)
    assert.match(String(stranger.headers['content-type']), /^application\/problem\+json/)
  })
})

test('under --auth no password hash is in the description: the users\' schema is inferred from them as answered, and a user is sent with its password', async () => {
  await withFile(true, async (server, file) => {
    assert.is((await server.request('POST', '/register', { body: { email: 'alice@mail.com', password: 'bestPassw0rd', name: 'Alice' } })).status, 201)
    assert.match(await readFile(file, 'utf8'), BCRYPT, 'the file holds the hash')
    const { text, description } = await describe(server)
    assert.not.match(text, BCRYPT)
    const users = description.components.schemas.users
    assert.equal(Object.keys(users.properties).sort(), ['email', 'id', 'name'], 'the stored users have no password as answered')
    assert.equal(description.components.schemas.usersInput.properties.password, { type: 'string', minLength: 4, writeOnly: true, description: 'Stored as a bcrypt hash, never answered' })
    assert.is(description.components.schemas.Session.properties.user.$ref, '#/components/schemas/users')
  })
})

test('a collection a routes file puts behind a guard is described as the guard\'s, and POST /users still registers', async () => {
  await withFile(true, async (server, _file, dir) => {
    await server.request('POST', '/register', { body: { email: 'alice@mail.com', password: 'bestPassw0rd' } })
    const { description } = await describe(server)
    await assertLintedDescription(description, dir)
    const messages = description.paths['/messages']
    assert.equal(messages.get.security, [{ bearer: [] }], '640: signed-in users read')
    assert.ok(messages.get.responses['401'])
    assert.is(messages.get.responses['403'], undefined)
    assert.ok(resolved(description, messages.post.responses['403']).content['application/problem+json'], '640: only the owner writes')
    assert.is(messages.get.operationId, 'list_store_messages', 'the routed path keeps its operation ids')
    assert.ok(description.paths['/users/{id}'].get.responses['403'], '600: only the user reads its record')
    const register = description.paths['/users'].post
    assert.equal([register.security, register.responses['201'].content['application/json'].schema.$ref], [[], '#/components/schemas/Session'])
    assert.is((await server.request('GET', '/messages')).status, 401, 'as the server answers')
  }, { messages: '640', users: '600' })
})

test('without --auth the description says nothing of accounts or guards, and the users\' fields are as stored', async () => {
  await withFile(false, async (server, _file, dir) => {
    await server.request('POST', '/users', { body: { email: 'alice@mail.com', password: 'plain' } })
    const { description } = await describe(server)
    await assertLintedDescription(description, dir)
    assert.is(description.components.securitySchemes, undefined)
    assert.is(description.components.responses.Unauthorized, undefined)
    const routes = Object.keys(description.paths)
    assert.equal(routes.filter((route) => /^\/(register|signup|login|signin|\d{3}\/)/.test(route)), [])
    assert.ok(description.components.schemas.users.properties.password)
    assert.is(description.paths['/users'].post.operationId, 'create_store_users')
    assert.is(description.paths['/users'].post.responses['201'].content['application/json'].schema.$ref, '#/components/schemas/users')
  })
})

test.run()
