import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'
import { assertLintedDescription } from '../support/openapi-lint.ts'

// `?_openapi` under `--auth` on the declared families (docs/accounts.md, "The declared families"):
// the bearer scheme (and the administrator's --token), `POST /user` registering and `POST /login`,
// each family's operations asking for the token and answering 401 and 403 as its access says, and
// no password (nor its hash) in what is answered or in any sample. A store folder serves it here.

const BCRYPT = /\$2[abxy]?\$\d\d\$/
const TOKEN = 'the administrator key of this test'
const resources = {
  user: { id: 'user_id', unique: ['username'], children: { playlist: { id: 'playlist_id', arrays: ['songs'] } } },
  song: { id: 'song_id', access: '644' },
}

type Operation = { operationId: string; summary: string; security?: unknown[]; requestBody?: any; responses: Record<string, any> }
type Description = { info: { description: string }; paths: Record<string, Record<string, Operation>>; components: Record<string, any> }

async function withFolder(token: string | undefined, use: (server: TestServer, folder: string, dir: string) => Promise<void>): Promise<void> {
  const folder = await makeTempDir('restdir-family-openapi-store-')
  const dir = await makeTempDir('restdir-family-openapi-')
  const server = await startServer({ store: folder, auth: true, resources, ...(token ? { token } : {}) })
  try {
    await use(server, folder, dir)
  } finally {
    await server.close()
    await rm(folder, { recursive: true, force: true })
    await rm(dir, { recursive: true, force: true })
  }
}

/** `#/components/…/Name` read, as a client's tool would follow it. */
function resolved(description: Description, value: { $ref?: string }): any {
  if (!value?.$ref) return value
  const [, , kind, name] = value.$ref.split('/')
  return description.components[kind][name]
}

/** Where a key `password` is, anywhere in the description. */
function passwordsIn(value: unknown, at: string[] = []): string[] {
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, inner]) => [...(key === 'password' ? [[...at, key].join('.')] : []), ...passwordsIn(inner, [...at, key])]).sort()
}

/** Every file the store folder holds, read whole. */
async function storeText(folder: string): Promise<string> {
  let text = ''
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), 'utf8')
  }
  return text
}

test('under --auth on a store folder the description is valid and names the bearer scheme, the administrator\'s key, registering and logging in', async () => {
  await withFolder(TOKEN, async (server, _folder, dir) => {
    const ada = await server.request('POST', '/user', { body: { username: 'ada', password: 'bestPassw0rd', name: 'Ada' } })
    assert.is(ada.status, 201, ada.text)
    const answer = await server.request('GET', '/?_openapi')
    assert.is(answer.status, 200, answer.text)
    const description: Description = answer.json
    await assertLintedDescription(description, dir)

    const { bearer } = description.components.securitySchemes
    assert.equal([bearer.type, bearer.scheme, bearer.bearerFormat], ['http', 'bearer', 'JWT'])
    assert.match(bearer.description, /POST \/user/)
    assert.match(bearer.description, /--token/, 'the administrator\'s key is said')

    const register = description.paths['/user'].post
    assert.equal(register.security, [], 'anyone may register')
    const credentials = resolved(description, register.requestBody.content['application/json'].schema)
    assert.equal(credentials.required, ['username', 'password'])
    assert.is(credentials.properties.password.writeOnly, true)
    const session = resolved(description, register.responses['201'].content['application/json'].schema)
    assert.equal(Object.keys(session.properties), Object.keys(ada.json), 'the session is what POST /user answers')
    const login = description.paths['/login'].post
    assert.equal(login.requestBody.content['application/json'].schema.$ref, '#/components/schemas/Credentials')
    assert.is(login.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Session')
    for (const status of ['400', '429']) assert.ok(resolved(description, login.responses[status])?.content?.['application/problem+json'], `POST /login answers ${status}`)
    assert.is((await server.request('POST', '/login', { body: { username: 'ada', password: 'bestPassw0rd' } })).status, 200, 'as the server answers')
  })
})

test('each family operation asks for the token and answers 401 and 403 as its access says, as the server answers them', async () => {
  await withFolder(TOKEN, async (server) => {
    const ada = (await server.request('POST', '/user', { body: { username: 'ada', password: 'bestPassw0rd' } })).json
    const bob = (await server.request('POST', '/user', { body: { username: 'bob', password: 'bestPassw0rd' } })).json
    const description: Description = (await server.request('GET', '/?_openapi')).json
    // The playlists have no access of their own: the seed's 600, their owner alone.
    for (const url of ['/user/{user_id}/playlist', '/user/{user_id}/playlist/{playlist_id}', '/user/{user_id}']) {
      for (const [method, operation] of Object.entries(description.paths[url])) {
        if (method === 'options') {
          assert.equal(operation.security, [], 'OPTIONS passes')
          continue
        }
        assert.equal(operation.security, [{ bearer: [] }], `${method} ${url} asks for the token`)
        for (const status of ['401', '403']) {
          assert.ok(resolved(description, operation.responses[status])?.content?.['application/problem+json'], `${method} ${url} answers ${status} as a problem`)
        }
      }
    }
    // 644: everyone reads the songs; only the owner writes, and a song is in no user's subtree.
    const songs = description.paths['/song']
    assert.equal([songs.get.security, songs.get.responses['401'], songs.get.responses['403']], [[], undefined, undefined])
    assert.equal(songs.post.security, [{ bearer: [] }])
    assert.ok(songs.post.responses['403'])
    // The root is the administrator's.
    assert.equal(description.paths['/'].get.security, [{ bearer: [] }])
    assert.ok(description.paths['/'].get.responses['403'])
    // A batch is anyone's, each of its requests checked as its caller: the token is optional there.
    assert.equal(description.paths['/'].post.security, [{ bearer: [] }, {}])
    const batch = await server.request('POST', '/?_batch', { body: { requests: [{ method: 'PATCH', path: `/user/${ada.user.user_id}`, body: { city: 'Lima' } }] }, headers: { authorization: `Bearer ${ada.accessToken}` } })
    assert.is(batch.status, 200, batch.text)

    const mine = `/user/${ada.user.user_id}/playlist`
    assert.is((await server.request('POST', mine, { body: { name: 'mine' }, headers: { authorization: `Bearer ${ada.accessToken}` } })).status, 201)
    const without = await server.request('GET', mine)
    assert.is(without.status, 401)
    assert.match(String(without.headers['content-type']), /^application\/problem\+json/)
    const stranger = await server.request('GET', mine, { headers: { authorization: `Bearer ${bob.accessToken}` } })
    assert.is(stranger.status, 403)
    assert.match(String(stranger.headers['content-type']), /^application\/problem\+json/)
    assert.is((await server.request('GET', '/song')).status, 200, 'a 644 read is open')
    assert.is((await server.request('GET', '/', { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200, 'the administrator\'s key')
  })
})

test('no password is in the users\' schema as answered, one write-only is in what is sent, and no hash is anywhere in the description', async () => {
  await withFolder(undefined, async (server, folder) => {
    assert.is((await server.request('POST', '/user', { body: { username: 'ada', password: 'bestPassw0rd', name: 'Ada' } })).status, 201)
    assert.match(await storeText(folder), BCRYPT, 'the store holds the hash')
    const answer = await server.request('GET', '/?_openapi')
    assert.not.match(answer.text, BCRYPT)
    const description: Description = answer.json
    const { schemas } = description.components
    assert.is(schemas.Session.properties.user.$ref, '#/components/schemas/User')
    assert.is(schemas.User.properties.password, undefined, 'the answered user has no password')
    assert.equal(schemas.UserInput.properties.password, { type: 'string', minLength: 4, writeOnly: true, description: 'Stored as a bcrypt hash, never answered' })
    // A password is named only where it is sent: not in an answer's schema, an example or a path.
    assert.equal(passwordsIn(description), ['components.schemas.Credentials.properties.password', 'components.schemas.UserInput.properties.password'])
    assert.not.match(description.components.securitySchemes.bearer.description, /--token/, 'no administrator without --token')
  })
})

test.run()
