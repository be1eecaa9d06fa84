import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { writeFile, rm } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { register } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'
import { validate, compileErrors } from '@readme/openapi-parser'
import { createHandler } from '../../lib/index.ts'
import { MAX_COLLECTIONS, SAMPLE_SIZE } from '../../lib/http/openapi.ts'
import { makeTempDir, openTestStore, send, startServer, type TestServer } from '../support/helpers.ts'
import { root } from '../support/process.ts'

// The API description (docs/http-api.md, "Describing the API"): OpenAPI 3.1 at the API
// root's reserved `?_openapi`, checked by a real validator and turned into
// TypeScript types a client compiles against.

// openapi-typescript runs on the TypeScript 5 compiler API; the project's own
// `typescript` is the native compiler, which has none. Its imports get typescript5.
register(
  'data:text/javascript,' +
    encodeURIComponent(`export async function resolve(specifier, context, next) {
  if (specifier === 'typescript' && context.parentURL?.includes('/openapi-typescript/')) return next('typescript5', context)
  return next(specifier, context)
}`),
)

const run = promisify(execFile)

async function describe(server: TestServer, target = '/?_openapi') {
  const answer = await server.request('GET', target)
  assert.is(answer.status, 200, answer.text)
  assert.match(String(answer.headers['content-type']), /^application\/json/)
  return answer.json
}

async function assertValid(document: unknown): Promise<void> {
  const result = await validate(structuredClone(document) as never)
  assert.ok(result.valid, compileErrors(result))
}

async function seed(server: TestServer): Promise<void> {
  await server.request('POST', '/user', { body: { username: 'ann' } })
  await server.request('PUT', '/posts/1', { body: { title: 'first', views: 3, tags: ['a'] } })
  await server.request('PUT', '/posts/2', { body: { title: 'second', author: { name: 'bo' } } })
  await server.request('PUT', '/profile', { body: { name: 'me' } })
  await server.request('PUT', '/odd%20name%7B1%7D/x', { body: {} })
}

test('GET /?_openapi answers an OpenAPI 3.1 document that a validator accepts', async () => {
  const server = await startServer()
  try {
    await seed(server)
    const document = await describe(server)
    assert.is(document.openapi, '3.1.0')
    await assertValid(document)
    assert.equal(document.servers, [{ url: '/' }])
    for (const route of ['/user', '/user/{user_id}', '/user/{user_id}/playlist', '/user/{user_id}/playlist/{playlist_id}', '/posts', '/posts/{id}', '/profile', '/{collection}', '/{collection}/{id}']) {
      assert.ok(document.paths[route], `describes ${route}`)
    }
    assert.ok(document.paths['/odd%20name%7B1%7D/{id}'], 'a collection name is percent-encoded, never read as a template')
    const getUser = document.paths['/user/{user_id}'].get
    assert.equal(getUser.responses['404'], { $ref: '#/components/responses/404' })
    assert.equal(Object.keys(document.components.responses['404'].content), ['application/problem+json'])
    assert.ok(getUser.responses['200'].content['text/event-stream'], 'a GET is also an event stream')
    assert.ok(getUser.responses['200'].headers.ETag)
    assert.ok(getUser.parameters.some((parameter: { $ref?: string }) => parameter.$ref === '#/components/parameters/If-None-Match'))
    assert.ok(document.paths['/posts/{id}'].put.parameters.some((parameter: { $ref?: string }) => parameter.$ref === '#/components/parameters/If-Match'))
    for (const member of ['/posts/{id}', '/{collection}/{id}', '/user/{user_id}', '/user/{user_id}/playlist/{playlist_id}']) {
      assert.equal(Object.keys(document.paths[member].patch.requestBody.content), ['application/json', 'application/merge-patch+json', 'application/json-patch+json'], `${member} takes both patch types`)
    }
    const listing = document.paths['/posts'].get.parameters.map((parameter: { $ref: string }) => parameter.$ref.split('/').pop())
    for (const name of ['_sort', '_order', '_start', '_end', '_limit', '_page', 'q']) assert.ok(listing.includes(name), `lists ${name}`)
    assert.equal(document.components.schemas.posts.required, ['id', 'title'])
    assert.equal(document.components.schemas.posts.properties.views, { type: 'integer' })
  } finally {
    await server.close()
  }
})

test('the description follows the store: a field written a moment ago is in the next one', async () => {
  const server = await startServer()
  try {
    await seed(server)
    assert.is((await describe(server)).components.schemas.posts.properties.rating, undefined)
    await server.request('PATCH', '/posts/2', { body: { rating: 4.5 } })
    const document = await describe(server)
    assert.equal(document.components.schemas.posts.properties.rating, { type: 'number' })
    await server.request('DELETE', '/posts')
    assert.is((await describe(server)).paths['/posts'], undefined)
  } finally {
    await server.close()
  }
})

test(`the description is bounded: at most ${MAX_COLLECTIONS} collections, each from at most ${SAMPLE_SIZE} documents`, async () => {
  const server = await startServer()
  try {
    for (let index = 0; index < MAX_COLLECTIONS + 5; index++) await server.request('PUT', `/c${String(index).padStart(3, '0')}/1`, { body: {} })
    for (let index = 0; index < SAMPLE_SIZE; index++) await server.request('PUT', `/c000/${String(index + 1).padStart(4, '0')}`, { body: { n: index } })
    await server.request('PUT', '/c000/zzzz', { body: { late: true } }) // sorts after every other name
    const document = await describe(server)
    const described = Object.keys(document.paths).filter((route) => /^\/c\d{3}$/.test(route))
    assert.is(described.length, MAX_COLLECTIONS)
    assert.is(document.components.schemas.c000.properties.late, undefined, 'the document past the sample is not read')
    assert.match(document.info.description, new RegExp(`${MAX_COLLECTIONS} of ${MAX_COLLECTIONS + 5} top-level nodes`))
    await assertValid(document)
  } finally {
    await server.close()
  }
})

test('servers names the prefix, and the mount path under a host app', async () => {
  const prefixed = await startServer({ prefix: '/api' })
  try {
    const document = await describe(prefixed, '/api?_openapi')
    assert.equal(document.servers, [{ url: '/api' }])
    await assertValid(document)
  } finally {
    await prefixed.close()
  }
  // A host app that mounts restdir at /data, as Express does (req.url cut, originalUrl and baseUrl set).
  const { store, dispose } = await openTestStore()
  const handler = createHandler({ store, prefix: '/api', quiet: true })
  await handler.ready
  const app = http.createServer((req, res) => {
    const request = req as http.IncomingMessage & { originalUrl?: string; baseUrl?: string }
    request.originalUrl = req.url
    request.baseUrl = '/data'
    req.url = req.url!.slice('/data'.length) || '/'
    handler(req, res, () => res.writeHead(404).end())
  })
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
  try {
    const answer = await send((app.address() as AddressInfo).port, 'GET', '/data/api/?_openapi')
    assert.is(answer.status, 200)
    assert.equal(answer.json.servers, [{ url: '/data/api' }])
  } finally {
    await new Promise((resolve) => app.close(resolve))
    await handler.close()
    await dispose()
  }
})

test('the reserved query is answered where index.html is served, refuses writes, and creates nothing', async () => {
  const server = await startServer()
  try {
    assert.equal((await describe(server)).openapi, '3.1.0')
    const post = await server.request('POST', '/?_openapi', { body: {} })
    assert.is(post.status, 405)
    assert.is(post.headers.allow, 'GET, HEAD, OPTIONS')
    assert.equal((await server.request('GET', '/?_children')).json, [])
    const head = await server.request('HEAD', '/?_openapi')
    assert.is(head.status, 200)
    assert.is(head.text, '')
  } finally {
    await server.close()
  }
})

test('a read-only server describes no write operation', async () => {
  const server = await startServer({ readonly: true })
  try {
    const document = await describe(server)
    await assertValid(document)
    for (const [route, operations] of Object.entries(document.paths as Record<string, object>)) {
      assert.equal(Object.keys(operations).sort(), ['get', 'options'], `${route} offers reads only`)
    }
  } finally {
    await server.close()
  }
})

test('openapi-typescript turns the description into types a client compiles against, and a misuse does not compile', async () => {
  const server = await startServer()
  const dir = await makeTempDir('restdir-openapi-types-')
  try {
    await seed(server)
    const { default: openapiTS, astToString } = await import('openapi-typescript')
    const types = astToString(await openapiTS((await describe(server)) as never))
    await writeFile(path.join(dir, 'api.d.ts'), types)
    await writeFile(
      path.join(dir, 'client.ts'),
      `import type { paths, components } from './api.d.ts'
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { 'application/json': infer T } } } } ? T : never
const base = 'http://localhost:3000'
export async function firstPostTitle(): Promise<string> {
  const posts: Json<'/posts', 'get', 200> = await (await fetch(base + '/posts')).json()
  return posts[0].title
}
export async function createUser(username: string): Promise<string> {
  const body: components['schemas']['UserInput'] = { username }
  const user: Json<'/user', 'post', 201> = await (await fetch(base + '/user', { method: 'POST', body: JSON.stringify(body) })).json()
  return user.user_id
}
export async function anyDocument(collection: string, id: string): Promise<string | undefined> {
  const doc: Json<'/{collection}/{id}', 'get', 200> = await (await fetch(base + '/' + collection + '/' + id)).json()
  return doc.id
}
export const problem: components['schemas']['Problem'] = { type: 'about:blank', title: 'Not Found', status: 404, detail: 'Nothing is stored at /x.' }
export const views: number | undefined = ({} as components['schemas']['posts']).views
`,
    )
    await writeFile(
      path.join(dir, 'misuse.ts'),
      `import type { components } from './api.d.ts'
export const views: string | undefined = ({} as components['schemas']['posts']).views
`,
    )
    // The project's own compiler, by path: node_modules/.bin/tsc may be the typescript5 alias that openapi-typescript needs.
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    const flags = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--lib', 'es2022,dom', '--allowImportingTsExtensions', '--skipLibCheck', 'false']
    const compiled = await run(tsc, [...flags, path.join(dir, 'client.ts')], { cwd: dir }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    )
    assert.is(compiled, '', 'the client compiles against the generated types')
    const misuse = await run(tsc, [...flags, path.join(dir, 'misuse.ts')], { cwd: dir }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    )
    assert.match(misuse, /misuse\.ts.*TS2322/, 'a number is not a string')
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test.run()
