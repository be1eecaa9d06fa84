import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { writeFile, rm } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import { validate, compileErrors } from '@readme/openapi-parser'
// ajv is the JSON Schema validator @readme/openapi-parser itself runs on; 2020-12 is OpenAPI 3.1's dialect.
import { Ajv2020 } from 'ajv/dist/2020.js'
import { createHandler } from '../../lib/index.ts'
import { MAX_COLLECTIONS, SAMPLE_SIZE, SAMPLE_TEXT } from '../../lib/resources/openapi.ts'
import { MAX_BATCH_REQUESTS } from '../../lib/resources/batch.ts'
import { DeclarationError, MAX_DECLARATION_DEPTH, MAX_DECLARED_FIELDS, MAX_DECLARED_NAMES, MAX_FAMILIES, type Declarations, type FamilyDeclaration } from '../../lib/data/declarations.ts'
import { makeTempDir, openTestStore, send, startServer, type TestServer } from '../support/helpers.ts'
import { root } from '../support/process.ts'
// openapi-typescript's imports of `typescript` get typescript5 (see the module).
import '../support/typescript5.ts'

// The API description (docs/http-api.md, "Describing the API"): OpenAPI 3.1 at the API
// root's reserved `?_openapi`, checked by a real validator and turned into
// TypeScript types a client compiles against.

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

/** Checks values against the description's own component schemas: the errors, or '' when it holds. */
function schemaChecker(document: { components: unknown }): (name: string, value: unknown) => string {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addSchema({ $id: 'restdir:description', components: structuredClone(document.components) })
  return (name, value) => {
    const check = ajv.getSchema(`restdir:description#/components/schemas/${name}`)
    assert.ok(check, `the description has the schema ${name}`)
    return check(value) ? '' : ajv.errorsText(check.errors)
  }
}

/** The root's POST, which is also `POST /?_batch` (docs/http-api.md, "Batches"). */
function batchOperation(document: { paths: Record<string, Record<string, any>> }) {
  return document.paths['/'].post
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
    assert.equal(Object.keys(getUser.responses['200'].content), ['application/json'], 'a GET answers JSON')
    assert.match(getUser.description, 'Accept: text/event-stream', 'and says, apart, that it is also an event stream')
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

test('the description is bounded whatever the declaration: one 1,000 levels deep or 10,000 families wide is refused at the start, the largest allowed is described in under 4 MB', async () => {
  const chain = (levels: number, fields: (depth: number) => string[] = () => []) => {
    const top: Declarations = {}
    let level = top
    for (let depth = 0; depth < levels; depth++) {
      const family: FamilyDeclaration = { id: `l${depth}_id`, arrays: fields(depth) }
      level[`l${depth}`] = family
      if (depth < levels - 1) level = family.children = {}
    }
    return top
  }
  const wide = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`f${index}`, { id: `f${index}_id` }]))
  const longNames = (depth: number) => Array.from({ length: MAX_DECLARED_FIELDS }, (_, index) => `d${depth}_${index}_`.padEnd(Math.floor(MAX_DECLARED_NAMES / MAX_DECLARATION_DEPTH / MAX_DECLARED_FIELDS) - 4, 'x'))
  const declarations: Array<[string, Declarations]> = [
    ['1,000 levels', chain(1000)],
    ['10,000 families', wide(10_000)],
    [`${MAX_FAMILIES} families`, wide(MAX_FAMILIES)],
    [`${MAX_DECLARATION_DEPTH} levels, each with ${MAX_DECLARED_FIELDS} long field names`, chain(MAX_DECLARATION_DEPTH, longNames)],
  ]
  for (const [what, resources] of declarations) {
    const server = await startServer({ resources }).catch((error: Error) => error)
    if (server instanceof Error) {
      assert.ok(server instanceof DeclarationError, `${what}: ${server.message}`)
      continue
    }
    try {
      const answer = await server.request('GET', '/?_openapi')
      assert.is(answer.status, 200)
      assert.ok(answer.text.length < 4 * 1024 * 1024, `${what}: the description is ${answer.text.length} characters`)
      const count = (level: Declarations): number => Object.values(level).reduce((sum, family) => sum + 1 + (family.children ? count(family.children) : 0), 0)
      assert.is(Object.keys(answer.json.paths).filter((route) => /\/\{[lf]\d+_id\}$/.test(route)).length, count(resources), `${what}: every family is described`)
    } finally {
      await server.close()
    }
  }
})

test(`a collection's sample stops at ${SAMPLE_TEXT} characters of its documents, however few they are`, async () => {
  const server = await startServer()
  try {
    // 30 documents of 100 000 characters: 3 MB, far fewer than SAMPLE_SIZE documents.
    const count = 30
    assert.ok(count < SAMPLE_SIZE && count * 100_000 > 2 * SAMPLE_TEXT)
    for (let index = 1; index <= count; index++) {
      const body: Record<string, unknown> = { pad: 'x'.repeat(100_000) }
      if (index === count) body.late = true
      assert.is((await server.request('PUT', `/big/${String(index).padStart(2, '0')}`, { body })).status, 201)
    }
    const document = await describe(server)
    assert.ok(document.components.schemas.big.properties.pad, 'the first documents are read')
    assert.is(document.components.schemas.big.properties.late, undefined, 'the documents past the text cap are not read')
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

test('the description has POST /?_batch: the root\'s POST with _batch takes a Batch and answers a BatchAnswer, or a Problem naming the request', async () => {
  const server = await startServer()
  try {
    const document = await describe(server)
    await assertValid(document)
    const operation = batchOperation(document)
    assert.match(operation.summary, /\?_batch/)
    assert.ok(operation.parameters.some((parameter: { name?: string; in?: string }) => parameter.name === '_batch' && parameter.in === 'query'), 'a _batch query parameter')
    assert.ok(operation.requestBody.content['application/json'].schema.anyOf.some((schema: { $ref?: string }) => schema.$ref === '#/components/schemas/Batch'))
    assert.equal(operation.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/BatchAnswer' })
    for (const status of ['400', '404', '405', '409', '412', '413', '415', '501']) {
      const answer = document.components.responses[operation.responses[status].$ref.split('/').pop()]
      assert.equal(answer.content, { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } }, `${status} is a Problem`)
    }
    assert.equal(document.components.schemas.Problem.properties.index.type, 'integer')
    const { Batch, BatchRequest } = document.components.schemas
    assert.equal(BatchRequest.properties.method.enum.slice().sort(), ['DELETE', 'PATCH', 'POST', 'PUT'])
    assert.is(Batch.properties.requests.maxItems, MAX_BATCH_REQUESTS)
  } finally {
    await server.close()
  }
})

test('the described example batch, which uses every method, is answered 200 with what BatchAnswer describes', async () => {
  const server = await startServer()
  try {
    const document = await describe(server)
    const check = schemaChecker(document)
    const example = batchOperation(document).requestBody.content['application/json'].examples.batch.value
    assert.is(check('Batch', example), '')
    const methods = new Set(example.requests.map((request: { method: string }) => request.method))
    assert.equal([...methods].sort(), document.components.schemas.BatchRequest.properties.method.enum.slice().sort(), 'each allowed method is sent')
    const answer = await server.request('POST', '/?_batch', { body: example })
    assert.is(answer.status, 200, answer.text)
    assert.is(check('BatchAnswer', answer.json), '')
    assert.is(answer.json.responses.length, example.requests.length)
    const order = (await server.request('GET', `/orders/${answer.json.responses[1].body.id}`)).json
    assert.is(order.invoice, order.id, 'the placeholders named the new order')
  } finally {
    await server.close()
  }
})

test('the Batch schema takes what the server takes and refuses what it refuses', async () => {
  const server = await startServer()
  try {
    const check = schemaChecker(await describe(server))
    const put = (extra: object) => ({ method: 'PUT', path: '/d/1', body: { n: 1 }, ...extra })
    const bodies: [string, unknown][] = [
      ['no member', {}],
      ['requests not an array', { requests: 'x' }],
      ['no request', { requests: [] }],
      [`${MAX_BATCH_REQUESTS + 1} requests`, { requests: Array.from({ length: MAX_BATCH_REQUESTS + 1 }, () => put({})) }],
      ['another member', { requests: [put({})], more: 1 }],
      ['a request with another member', { requests: [put({ extra: 1 })] }],
      ['a GET', { requests: [put({ method: 'GET' })] }],
      ['a path without its slash', { requests: [put({ path: 'd/1' })] }],
      ['a path with a fragment', { requests: [put({ path: '/d/1#x' })] }],
      ['an Authorization header', { requests: [put({ headers: { Authorization: 'Bearer x' } })] }],
      ['a header that is no string', { requests: [put({ headers: { 'If-Match': 1 } })] }],
      ['a null body', { requests: [put({ body: null })] }],
      ['an array body on a PUT', { requests: [put({ body: [] })] }],
      ['a JSON Patch without its Content-Type', { requests: [put({ method: 'PATCH', body: [{ op: 'add', path: '/x', value: 1 }] })] }],
      ['a JSON Patch sent as JSON', { requests: [put({ method: 'PATCH', body: [{ op: 'add', path: '/x', value: 1 }], headers: { 'Content-Type': 'application/json' } })] }],
      ['headers in lower case, and a JSON Patch in any case', {
        requests: [
          put({ headers: { 'if-none-match': '*' } }),
          put({ method: 'PATCH', body: [{ op: 'replace', path: '/n', value: 2 }], headers: { 'CONTENT-TYPE': 'Application/JSON-Patch+json' } }),
          { method: 'POST', path: '/d?x=1' },
        ],
      }],
      ['a DELETE', { requests: [{ method: 'DELETE', path: '/d/1' }] }],
    ]
    for (const [what, body] of bodies) {
      const errors = check('Batch', body)
      const answer = await server.request('POST', '/?_batch', { body })
      if (answer.status === 200) assert.is(errors, '', `${what}: the server takes it, so must the schema`)
      else {
        assert.ok([400, 413].includes(answer.status), `${what}: refused as malformed, not ${answer.status} ${answer.text}`)
        assert.is.not(errors, '', `${what}: the server refuses it (${answer.json.detail}), so must the schema`)
      }
    }
    assert.is((await server.request('GET', '/d/1')).status, 404, 'the last batch deleted what the one before made')
  } finally {
    await server.close()
  }
})

test('a failed batch is answered with the failed request\'s described status and a Problem whose index names it', async () => {
  const server = await startServer()
  try {
    const document = await describe(server)
    const check = schemaChecker(document)
    const example = batchOperation(document).requestBody.content['application/json'].examples.batch.value
    const failing = { requests: [...example.requests, { method: 'PATCH', path: '/nothing/here', body: { a: 1 } }] }
    const answer = await server.request('POST', '/?_batch', { body: failing })
    assert.is(answer.status, 404, answer.text)
    assert.ok(batchOperation(document).responses['404'], '404 is described')
    assert.match(String(answer.headers['content-type']), /^application\/problem\+json/)
    assert.is(check('Problem', answer.json), '')
    assert.is(answer.json.index, example.requests.length)
    assert.is((await server.request('GET', '/orders')).status, 404, 'nothing of the batch was stored')
  } finally {
    await server.close()
  }
})

test('a family named like a schema of the description is told apart from it', async () => {
  const server = await startServer({ resources: { batch: { id: 'batch_id' }, problem: { id: 'problem_id' } } })
  try {
    const document = await describe(server)
    await assertValid(document)
    const { schemas } = document.components
    assert.ok(schemas.Batch.properties.requests, 'the batch\'s schema stays')
    assert.ok(schemas.Problem.properties.detail, 'the problem\'s schema stays')
    assert.equal(document.paths['/batch/{batch_id}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Batch_' })
    assert.equal(schemas.Batch_.required, ['batch_id'])
    assert.equal(schemas.Problem_.required, ['problem_id'])
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
    assert.is(document.components.schemas.Batch, undefined, 'nor a batch')
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
export async function checkout(cart: string): Promise<number> {
  const batch: components['schemas']['Batch'] = { requests: [{ method: 'DELETE', path: '/carts/' + cart }, { method: 'POST', path: '/orders', body: { cart } }] }
  const answer: Json<'/', 'post', 200> = await (await fetch(base + '/?_batch', { method: 'POST', body: JSON.stringify(batch) })).json()
  return answer.responses[1].status
}
`,
    )
    await writeFile(
      path.join(dir, 'misuse.ts'),
      `import type { components } from './api.d.ts'
export const views: string | undefined = ({} as components['schemas']['posts']).views
export const read: components['schemas']['BatchRequest'] = { method: 'GET', path: '/posts' }
`,
    )
    // The project's own compiler, by path: node_modules/.bin/tsc may be the typescript5 alias that openapi-typescript needs.
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    const flags = ['--pretty', 'false', '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--lib', 'es2022,dom', '--allowImportingTsExtensions', '--skipLibCheck', 'false']
    const compiled = await run(tsc, [...flags, path.join(dir, 'client.ts')], { cwd: dir }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    )
    assert.is(compiled, '', 'the client compiles against the generated types')
    const misuse = await run(tsc, [...flags, path.join(dir, 'misuse.ts')], { cwd: dir }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    )
    assert.match(misuse, /misuse\.ts\(2,.*TS2322/, 'a number is not a string')
    assert.match(misuse, /misuse\.ts\(3,.*TS2322/, 'a batch holds no GET')
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test.run()
