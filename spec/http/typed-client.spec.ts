import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'
import { root } from '../support/process.ts'
// openapi-typescript's imports of `typescript` get typescript5 (see the module).
import '../support/typescript5.ts'

// The API description (docs/http-api.md, "Describing the API") as a typed client is made of it:
// openapi-typescript's types and openapi-fetch's client, written as openapi-fetch's README writes
// one, checked by `tsc --strict` and run against the server; and `redocly lint` finds no error.

const run = promisify(execFile)
const TOKEN = 'typed-client-token'

/** The failure's output, or '' when the command succeeds. */
function outputOf(command: Promise<unknown>): Promise<string> {
  return command.then(
    () => '',
    (error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message,
  )
}

/** A folder for the client, inside which `node_modules` is the project's, so that openapi-fetch resolves. */
async function clientFolder(): Promise<string> {
  const dir = await makeTempDir('restdir-typed-client-')
  await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  return dir
}

async function seed(server: TestServer, headers: Record<string, string>): Promise<void> {
  for (const [target, body] of [['/posts/1', { title: 'first', views: 3, tags: ['a'] }], ['/posts/2', { title: 'second', views: 5, author: { name: 'bo' } }], ['/profile', { name: 'me' }]] as const) {
    const answer = await server.request('PUT', target, { body, headers })
    assert.ok(answer.status < 300, answer.text)
  }
}

/** The client as openapi-fetch's README writes one: createClient<paths>(), then typed calls. */
const client = `import createClient from 'openapi-fetch'
import type { paths } from './api.d.ts'

const client = createClient<paths>({ baseUrl: process.env.RESTDIR_URL, headers: { Authorization: 'Bearer ${TOKEN}' } })

// Create without an id: the server gives one.
const { data: created, error: refused } = await client.POST('/posts', { body: { title: 'typed' } })
if (refused || !created) throw new Error('POST /posts was refused: ' + JSON.stringify(refused))
const id: string = String(created.id)

// A merge patch of one field.
const { data: patched } = await client.PATCH('/posts/{id}', {
  params: { path: { id } },
  body: { views: 7 },
  headers: { 'Content-Type': 'application/merge-patch+json' },
})
const views: number | undefined = patched?.views

// The list, typed as an array of posts.
const { data: posts } = await client.GET('/posts', { params: { query: { _sort: 'id' } } })
const titles: string[] = (posts ?? []).map((post) => post.title)

// A singular resource, replaced whole and read back.
await client.PUT('/profile', { body: { name: 'typed' } })
const { data: profile } = await client.GET('/profile')

console.log(JSON.stringify({ created, views, titles, profile: profile?.name }))
`

/** What the types must refuse: each line a mistake tsc names by its line. */
const misuse = `import createClient from 'openapi-fetch'
import type { paths } from './api.d.ts'
const client = createClient<paths>({ baseUrl: 'http://localhost' })
export const wrongType = await client.POST('/posts', { body: { title: 5 } })
const { data: posts } = await client.GET('/posts')
export const notAString: string | undefined = posts
`

test('a typed client (openapi-typescript, openapi-fetch) type-checks with tsc --strict and runs: create without an id, merge-patch one field, list as an array', async () => {
  const server = await startServer({ token: TOKEN })
  const dir = await clientFolder()
  try {
    await seed(server, { Authorization: `Bearer ${TOKEN}` })
    const description = (await server.request('GET', '/?_openapi')).json
    const { default: openapiTS, astToString } = await import('openapi-typescript')
    await writeFile(path.join(dir, 'api.d.ts'), astToString(await openapiTS(description as never)))
    await writeFile(path.join(dir, 'client.ts'), client)
    await writeFile(path.join(dir, 'misuse.ts'), misuse)
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }')
    // The project's own compiler, by path: node_modules/.bin/tsc may be the typescript5 alias.
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    const flags = ['--pretty', 'false', '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--lib', 'es2022,dom', '--types', 'node', '--allowImportingTsExtensions']
    assert.is(await outputOf(run(tsc, [...flags, path.join(dir, 'client.ts')], { cwd: dir })), '', 'the client type-checks')
    const mistakes = await outputOf(run(tsc, [...flags, path.join(dir, 'misuse.ts')], { cwd: dir }))
    assert.match(mistakes, /misuse\.ts\(4,/, 'a title that is no string is refused')
    assert.match(mistakes, /misuse\.ts\(6,/, 'a list is no string')
    const ran = await run(process.execPath, ['--import', 'tsx', path.join(dir, 'client.ts')], { cwd: dir, env: { ...process.env, RESTDIR_URL: server.url } })
    const result = JSON.parse(ran.stdout) as { created: { id: string; title: string }; views: number; titles: string[]; profile: string }
    assert.is(result.created.title, 'typed')
    assert.is(result.views, 7)
    assert.equal(result.titles.slice().sort(), ['first', 'second', 'typed'])
    assert.is(result.profile, 'typed')
    assert.equal((await server.request('GET', `/posts/${result.created.id}`)).json, { id: result.created.id, title: 'typed', views: 7 })
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test('redocly lint finds no error in the description, with and without --token; with it, a bearer scheme guards every write, answered 401 without it', async () => {
  const dir = await makeTempDir('restdir-redocly-')
  try {
    for (const token of [undefined, TOKEN]) {
      const server = await startServer(token ? { token } : {})
      try {
        await seed(server, token ? { Authorization: `Bearer ${token}` } : {})
        const description = (await server.request('GET', '/?_openapi')).json
        const file = path.join(dir, `openapi-${token ? 'token' : 'open'}.json`)
        await writeFile(file, JSON.stringify(description))
        const lint = await run(path.join(root, 'node_modules', '.bin', 'redocly'), ['lint', file, '--format', 'stylish'], { cwd: dir }).then(
          (done) => ({ ok: true, output: done.stdout + done.stderr }),
          (error: { stdout: string; stderr: string }) => ({ ok: false, output: error.stdout + error.stderr }),
        )
        assert.ok(lint.ok, lint.output)
        assert.not.match(lint.output, /\berror\b/)
        const operations = Object.values(description.paths as Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>).flatMap((item) => Object.entries(item))
        for (const [method, operation] of operations) {
          const writes = !['get', 'head', 'options'].includes(method)
          assert.equal(operation.security, token && writes ? [{ bearer: [] }] : [], `${method} says who may call it`)
          if (token && writes) assert.ok(operation.responses['401'], `${method} answers 401`)
        }
        if (token) assert.equal(description.components.securitySchemes.bearer.scheme, 'bearer')
        else assert.is(description.components.securitySchemes, undefined)
      } finally {
        await server.close()
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('a GET answers JSON in the description; the event stream it also is is said in words, apart', async () => {
  const server = await startServer()
  try {
    await seed(server, {})
    const description = (await server.request('GET', '/?_openapi')).json
    for (const [route, item] of Object.entries(description.paths as Record<string, Record<string, { description?: string; responses: Record<string, { content?: object }> }>>)) {
      if (!item.get) continue
      assert.equal(Object.keys(item.get.responses['200'].content ?? {}), ['application/json'], `${route}: JSON only`)
      assert.match(String(item.get.description), 'text/event-stream', `${route}: the stream is described`)
    }
    const postInput = description.components.schemas.postsInput
    assert.is(postInput.required, undefined, 'what a client sends requires nothing')
    assert.equal(description.paths['/posts'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/postsInput' })
    assert.equal(description.paths['/posts/{id}'].patch.requestBody.content['application/merge-patch+json'].schema, { $ref: '#/components/schemas/postsInput' })
    assert.equal(description.components.schemas.posts.required, ['id', 'title', 'views'], 'what is stored keeps what every sampled document has')
  } finally {
    await server.close()
  }
})

test.run()
