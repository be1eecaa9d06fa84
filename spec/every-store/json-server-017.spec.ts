import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { importDatabase } from '../../lib/data/import.ts'
import type { RestdirOptions } from '../../lib/options.ts'
import { openTestStore, startServer, type Answer, type RequestOptions, type TestServer } from '../support/helpers.ts'

// json-server 0.17.4's own route tests (its repository's __tests__/server/plural.js,
// singular.js and schema-ignore.js, at the tag v0.17.4), each rewritten in uvu against
// restdir's HTTP in the json-server mode, with the same `db` and the same expectations.
// Where an expectation is not json-server's to the letter, a comment says why
// (docs/json-server.md, "What still differs"). Left out: the tests of json-server's
// JavaScript API (rewriter rules, router.render, router.db: spec/json-server-module.spec.ts
// compares them with json-server's own) and of its own home page.

/** plural.js's `db`, built afresh for each server as its beforeEach builds it. */
function pluralDb() {
  return {
    posts: [
      { id: 1, body: 'foo' },
      { id: 2, body: 'bar' },
    ] as Record<string, unknown>[],
    tags: [
      { id: 1, body: 'Technology' },
      { id: 2, body: 'Photography' },
      { id: 3, body: 'photo' },
    ],
    users: [
      { id: 1, username: 'Jim', tel: '0123' },
      { id: 2, username: 'George', tel: '123' },
    ],
    comments: [
      { id: 1, body: 'foo', published: true, postId: 1, userId: 1 },
      { id: 2, body: 'bar', published: false, postId: 1, userId: 2 },
      { id: 3, body: 'baz', published: false, postId: 2, userId: 1 },
      { id: 4, body: 'qux', published: true, postId: 2, userId: 2 },
      { id: 5, body: 'quux', published: false, postId: 2, userId: 1 },
    ],
    buyers: [
      { id: 1, name: 'Aileen', country: 'Colombia', total: 100 },
      { id: 2, name: 'Barney', country: 'Colombia', total: 200 },
      { id: 3, name: 'Carley', country: 'Colombia', total: 300 },
      { id: 4, name: 'Daniel', country: 'Belize', total: 30 },
      { id: 5, name: 'Ellen', country: 'Belize', total: 20 },
      { id: 6, name: 'Frank', country: 'Belize', total: 10 },
      { id: 7, name: 'Grace', country: 'Argentina', total: 1 },
      { id: 8, name: 'Henry', country: 'Argentina', total: 2 },
      { id: 9, name: 'Isabelle', country: 'Argentina', total: 3 },
    ],
    refs: [{ id: 'abcd-1234', url: 'http://example.com', postId: 1, userId: 1 }],
    stringIds: [{ id: '1234' }],
    deep: [{ a: { b: 1 } }, { a: 1 }] as Record<string, unknown>[],
    nested: [{ resource: { name: 'dewey' } }, { resource: { name: 'cheatem' } }, { resource: { name: 'howe' } }] as Record<string, unknown>[],
    list: Array.from({ length: 15 }, (_, index) => ({ id: index + 1 })),
  }
}

/** singular.js's `db`, its `user` named `profile`: `/user` is restdir's own users (see "singular" below). */
function singularDb() {
  return { profile: { name: 'foo', email: 'foo@example.com' } }
}

interface Running {
  server: TestServer
  dispose(): Promise<void>
  ask(method: string, target: string, options?: RequestOptions): Promise<Answer>
}

/** restdir in the json-server mode on a fresh store of this run's kind, loaded with `db`. */
async function serve(db: object, options: RestdirOptions = {}): Promise<Running> {
  const { store, dispose } = await openTestStore()
  await importDatabase(store, structuredClone(db))
  const server = await startServer({ store, jsonServer: true, ...options })
  return {
    server,
    ask: (method, target, requestOptions) => server.request(method, target, requestOptions),
    async dispose() {
      await server.close()
      await dispose()
    },
  }
}

/** A server for one test, closed after it (json-server's tests build theirs in beforeEach). */
async function withServer(db: object, run: (running: Running) => Promise<void>, options: RestdirOptions = {}): Promise<void> {
  const running = await serve(db, options)
  try {
    await run(running)
  } finally {
    await running.dispose()
  }
}

/**
 * An item of db.json without an id (`deep`, `nested`) gets one on import: restdir names
 * every document by its URL. json-server 0.17 leaves such items without; a front end
 * never sees them otherwise, and an id more hurts none. The answers are compared without it.
 */
function withoutGivenIds(docs: unknown): unknown {
  return (docs as Record<string, unknown>[]).map(({ id: _id, ...rest }) => rest)
}

const isJson = (answer: Answer) => assert.match(String(answer.headers['content-type']), /json/)

const db = pluralDb()
const reads = suite<{ running: Running }>('json-server 0.17.4 plural.js: reads', { running: undefined as unknown as Running })
reads.before(async (context) => {
  context.running = await serve(pluralDb(), { cors: '*' })
})
reads.after(async ({ running }) => running.dispose())

reads('GET /db should respond with json and full database', async ({ running }) => {
  const answer = await running.ask('GET', '/db')
  assert.is(answer.status, 200)
  isJson(answer)
  const { deep, nested, ...rest } = answer.json
  const { deep: deepDb, nested: nestedDb, ...restDb } = db
  assert.equal(rest, restDb)
  assert.equal(withoutGivenIds(deep), deepDb)
  assert.equal(withoutGivenIds(nested), nestedDb)
})

reads('GET /:resource should respond with json and corresponding resources (CORS with credentials, with --cors \'*\')', async ({ running }) => {
  const answer = await running.ask('GET', '/posts', { headers: { origin: 'http://example.com' } })
  isJson(answer)
  assert.is(answer.headers['access-control-allow-credentials'], 'true')
  assert.is(answer.headers['access-control-allow-origin'], 'http://example.com')
  assert.is(answer.status, 200)
  assert.equal(answer.json, db.posts)
})

reads('GET /:resource should respond with 404 if resource is not found', async ({ running }) => {
  assert.is((await running.ask('GET', '/undefined')).status, 404)
})

const listed = (target: string, expected: unknown, adapt: (json: unknown) => unknown = (json) => json) => async ({ running }: { running: Running }) => {
  const answer = await running.ask('GET', target)
  isJson(answer)
  assert.is(answer.status, 200, answer.text)
  assert.equal(adapt(answer.json), expected)
}

reads('GET /:resource?attr=&attr= should respond with json and filter resources', listed('/comments?postId=1&published=true', [db.comments[0]]))
reads('GET /:resource?attr=&attr= should be strict', listed('/users?tel=123', [db.users[1]]))
reads('GET /:resource?attr=&attr= should support multiple filters', listed('/comments?id=1&id=2', [db.comments[0], db.comments[1]]))
reads('GET /:resource?attr=&attr= should support deep filter', listed('/deep?a.b=1', [db.deep[0]], withoutGivenIds))
// JSONP is left out on purpose: it hands the data to any web page, past CORS (docs/json-server.md).
reads('GET /:resource?attr=&attr= should ignore JSONP query parameters callback and _ (answered as JSON, not JSONP)', async ({ running }) => {
  const answer = await running.ask('GET', '/comments?callback=1&_=1')
  assert.is(answer.status, 200)
  assert.match(answer.text, new RegExp(db.comments[0].body))
  assert.match(String(answer.headers['content-type']), /json/)
})
reads('GET /:resource?attr=&attr= should ignore unknown query parameters', listed('/comments?foo=1&bar=2', db.comments))
reads('GET /:resource?q= should respond with json and make a full-text search', listed('/tags?q=pho', [db.tags[1], db.tags[2]]))
reads('GET /:resource?q= should respond with json and make a deep full-text search', listed('/deep?q=1', db.deep, withoutGivenIds))
reads('GET /:resource?q= should return an empty array when nothing is matched', listed('/tags?q=nope', []))
reads('GET /:resource?q= should support other query parameters', listed('/comments?q=qu&published=true', [db.comments[3]]))
reads('GET /:resource?q= should ignore duplicate q query parameters', listed('/comments?q=foo&q=bar', [db.comments[0]]))
reads('GET /:resource?q= should support filtering by boolean value false', listed('/comments?published=false', [db.comments[1], db.comments[2], db.comments[4]]))

/**
 * `Access-Control-Expose-Headers` names what 0.17 names, beside an allowed Origin and
 * without one alike (docs/json-server.md, "The json-server mode").
 */
async function assertExposes(running: Running, target: string, names: string[]): Promise<void> {
  for (const headers of [{ origin: 'http://localhost:5173' }, undefined]) {
    const answer = await running.ask('GET', target, { headers })
    assert.equal(String(answer.headers['access-control-expose-headers']).split(/,\s*/), names, `${target} exposes ${names.join(', ')}${headers ? ' with an Origin' : ''}`)
  }
}

reads('GET /:resource?_end= should respond with a sliced array', async ({ running }) => {
  const answer = await running.ask('GET', '/comments?_end=2')
  isJson(answer)
  assert.is(answer.headers['x-total-count'], String(db.comments.length))
  await assertExposes(running, '/comments?_end=2', ['X-Total-Count'])
  assert.equal(answer.json, db.comments.slice(0, 2))
})
reads('GET /:resource?_sort= should respond with json and sort on a field', listed('/tags?_sort=body', [db.tags[1], db.tags[0], db.tags[2]]))
reads('GET /:resource?_sort= should reverse sorting with _order=DESC', listed('/tags?_sort=body&_order=DESC', [db.tags[2], db.tags[0], db.tags[1]]))
reads('GET /:resource?_sort= should reverse sorting with _order=desc (case insensitive)', listed('/tags?_sort=body&_order=desc', [db.tags[2], db.tags[0], db.tags[1]]))
reads('GET /:resource?_sort= should sort on numerical field', listed('/posts?_sort=id&_order=DESC', [...db.posts].reverse()))
reads('GET /:resource?_sort= should sort on nested field', listed('/nested?_sort=resource.name', [db.nested[1], db.nested[0], db.nested[2]], withoutGivenIds))
reads('GET /:resource?_sort= should sort on multiple fields', listed('/buyers?_sort=country,total&_order=asc,desc', [8, 7, 6, 3, 4, 5, 2, 1, 0].map((index) => db.buyers[index])))
reads('GET /:resource?_start=&_end= should respond with a sliced array', async ({ running }) => {
  const answer = await running.ask('GET', '/comments?_start=1&_end=2')
  isJson(answer)
  assert.is(answer.headers['x-total-count'], String(db.comments.length))
  await assertExposes(running, '/comments?_start=1&_end=2', ['X-Total-Count'])
  assert.equal(answer.json, db.comments.slice(1, 2))
})
reads('GET /:resource?_start=&_limit= should respond with a limited array', async ({ running }) => {
  const answer = await running.ask('GET', '/comments?_start=1&_limit=1')
  isJson(answer)
  assert.is(answer.headers['x-total-count'], String(db.comments.length))
  await assertExposes(running, '/comments?_start=1&_limit=1', ['X-Total-Count'])
  assert.equal(answer.json, db.comments.slice(1, 2))
})
reads('GET /:resource?_page= should paginate', async ({ running }) => {
  const answer = await running.ask('GET', '/list?_page=2')
  isJson(answer)
  assert.is(answer.headers['x-total-count'], String(db.list.length))
  await assertExposes(running, '/list?_page=2', ['X-Total-Count', 'Link'])
  assert.equal(answer.json, db.list.slice(10, 20))
})
reads('GET /:resource?_page=&_limit= should paginate with a custom limit', async ({ running }) => {
  const link = [
    '<http://localhost/list?_page=1&_limit=1>; rel="first"',
    '<http://localhost/list?_page=1&_limit=1>; rel="prev"',
    '<http://localhost/list?_page=3&_limit=1>; rel="next"',
    '<http://localhost/list?_page=15&_limit=1>; rel="last"',
  ].join(', ')
  const answer = await running.ask('GET', '/list?_page=2&_limit=1', { headers: { host: 'localhost' } })
  isJson(answer)
  assert.is(answer.headers['x-total-count'], String(db.list.length))
  assert.is(answer.headers.link, link)
  await assertExposes(running, '/list?_page=2&_limit=1', ['X-Total-Count', 'Link'])
  assert.equal(answer.json, db.list.slice(1, 2))
})
reads('GET /:resource?attr_gte=&attr_lte= should respond with a limited array', listed('/comments?id_gte=2&id_lte=3', db.comments.slice(1, 3)))
reads('GET /:resource?attr_ne= should respond with a limited array', listed('/comments?id_ne=1', db.comments.slice(1)))
reads('GET /:resource?attr_ne= should accept multiple parameters', listed('/comments?id_ne=1&id_ne=2', db.comments.slice(2)))
reads('GET /:resource?attr_like= should respond with an array that matches the like operator (case insensitive)', listed('/tags?body_like=photo', [db.tags[1], db.tags[2]]))
reads('GET /:resource?attr_like= should accept multiple parameters', listed('/tags?body_like=photo&body_like=tech', db.tags))
reads('GET /:parent/:parentId/:resource should respond with json and corresponding nested resources', listed('/posts/1/comments', [db.comments[0], db.comments[1]]))
reads('GET /:resource/:id should respond with json and corresponding resource', listed('/posts/1', db.posts[0]))
reads('GET /:resource/:id should support string id, respond with json and corresponding resource', listed('/refs/abcd-1234', db.refs[0]))
reads('GET /:resource/:id should support integer id as string', listed('/stringIds/1234', db.stringIds[0]))
// The body of a 404 is restdir's problem+json (RFC 9457), where 0.17 sends `{}`: both are JSON objects.
reads('GET /:resource/:id should respond with 404 if resource is not found (a problem+json body)', async ({ running }) => {
  const answer = await running.ask('GET', '/posts/9001')
  isJson(answer)
  assert.is(answer.status, 404)
  assert.is(answer.json.status, 404)
})
reads('GET /:resource?_embed= should respond with corresponding resources and embedded resources', listed('/posts?_embed=comments', [
  { ...db.posts[0], comments: [db.comments[0], db.comments[1]] },
  { ...db.posts[1], comments: [db.comments[2], db.comments[3], db.comments[4]] },
]))
reads('GET /:resource?_embed&_embed= should respond with corresponding resources and embedded resources', listed('/posts?_embed=comments&_embed=refs', [
  { ...db.posts[0], comments: [db.comments[0], db.comments[1]], refs: [db.refs[0]] },
  { ...db.posts[1], comments: [db.comments[2], db.comments[3], db.comments[4]], refs: [] },
]))
reads('GET /:resource/:id?_embed= should respond with corresponding resources and embedded resources', listed('/posts/1?_embed=comments', { ...db.posts[0], comments: [db.comments[0], db.comments[1]] }))
reads('GET /:resource/:id?_embed=&_embed= should respond with corresponding resource and embedded resources', listed('/posts/1?_embed=comments&_embed=refs', { ...db.posts[0], comments: [db.comments[0], db.comments[1]], refs: [db.refs[0]] }))
reads('GET /:resource?_expand= should respond with corresponding resource and expanded inner resources', listed('/refs?_expand=post', [{ ...db.refs[0], post: db.posts[0] }]))
reads('GET /:resource/:id?_expand= should respond with corresponding resource and expanded inner resources', listed('/comments/1?_expand=post', { ...db.comments[0], post: db.posts[0] }))
reads('GET /:resource?_expand=&_expand should respond with corresponding resource and expanded inner resources', listed('/refs?_expand=post&_expand=user', [{ ...db.refs[0], post: db.posts[0], user: db.users[0] }]))
reads('GET /:resource/:id?_expand=&_expand= should respond with corresponding resource and expanded inner resources', listed('/comments/1?_expand=post&_expand=user', { ...db.comments[0], post: db.posts[0], user: db.users[0] }))

/** A request that takes more than a second with `_delay=1100`, as 0.17's tests measure it. */
const delayed = (method: string, target: string, status: number, body?: object) => async ({ running }: { running: Running }) => {
  const started = performance.now()
  const answer = await running.ask(method, target, body ? { body } : {})
  assert.is(answer.status, status, answer.text)
  assert.ok(performance.now() - started > 1000, "Request wasn't delayed")
}
reads('GET /:resource>_delay= should delay response', delayed('GET', '/posts?_delay=1100', 200))

reads('Responses should have no cache headers (for IE)', async ({ running }) => {
  const answer = await running.ask('GET', '/db')
  assert.is(answer.headers['cache-control'], 'no-cache')
  assert.is(answer.headers.pragma, 'no-cache')
  assert.is(answer.headers.expires, '-1')
})

reads.run()

const writes = suite('json-server 0.17.4 plural.js: writes, each on a fresh server')

writes('GET /:resource?attr=&attr= should not fail with null value', () => withServer({ ...pluralDb(), posts: [...pluralDb().posts, { id: 99, body: null }] }, async ({ ask }) => {
  const answer = await ask('GET', '/posts?body=foo')
  assert.is(answer.status, 200)
  assert.equal(answer.json, [db.posts[0]])
}))

writes('POST /:resource should respond with json, create a resource and increment id', () => withServer(pluralDb(), async ({ ask }) => {
  const answer = await ask('POST', '/posts', { body: { body: 'foo', booleanValue: true, integerValue: 1 }, headers: { origin: 'http://localhost:5173' } })
  assert.is(answer.headers['access-control-expose-headers'], 'Location')
  assert.match(String(answer.headers.location), /posts\/3$/)
  isJson(answer)
  assert.is(answer.status, 201)
  assert.equal(answer.json, { id: 3, body: 'foo', booleanValue: true, integerValue: 1 })
  assert.is((await ask('GET', '/posts')).json.length, 3)
}))

writes('POST /:resource should support x-www-form-urlencoded', () => withServer(pluralDb(), async ({ ask }) => {
  const answer = await ask('POST', '/posts', { body: 'body=foo&booleanValue=true&integerValue=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  isJson(answer)
  assert.is(answer.status, 201)
  assert.equal(answer.json, { id: 3, body: 'foo', booleanValue: 'true', integerValue: '1' })
  assert.is((await ask('GET', '/posts')).json.length, 3)
}))

writes('POST /:resource should respond with json, create a resource and generate string id', () => withServer(pluralDb(), async ({ ask }) => {
  const answer = await ask('POST', '/refs', { body: { url: 'http://foo.com', postId: 1 } })
  isJson(answer)
  assert.is(answer.status, 201)
  assert.type(answer.json.id, 'string')
  assert.is((await ask('GET', '/refs')).json.length, 2)
}))

writes('POST /:parent/:parentId/:resource should respond with json and set parentId', () => withServer(pluralDb(), async ({ ask }) => {
  const answer = await ask('POST', '/posts/1/comments', { body: { body: 'foo' } })
  isJson(answer)
  assert.is(answer.status, 201)
  assert.equal(answer.json, { id: 6, postId: '1', body: 'foo' })
}))

writes('POST /:resource?_delay= should delay response', () => withServer(pluralDb(), async (running) => {
  await delayed('POST', '/posts?_delay=1100', 201, { body: 'foo', booleanValue: true, integerValue: 1 })({ running })
}))

writes('PUT /:resource/:id should respond with json and replace resource', () => withServer(pluralDb(), async ({ ask }) => {
  const post = { id: 1, booleanValue: true, integerValue: 1 }
  const answer = await ask('PUT', '/posts/1', { body: post, headers: { accept: 'application/json' } })
  isJson(answer)
  assert.is(answer.status, 200)
  assert.equal(answer.json, post)
  assert.equal((await ask('GET', '/posts/1')).json, post)
}))

writes('PUT /:resource/:id should respond with 404 if resource is not found (a problem+json body)', () => withServer(pluralDb(), async ({ ask }) => {
  const answer = await ask('PUT', '/posts/9001', { body: { id: 1, body: 'bar' } })
  isJson(answer)
  assert.is(answer.status, 404)
  assert.is((await ask('GET', '/posts/9001')).status, 404)
}))

writes('PUT /:resource:id?_delay= should delay response', () => withServer(pluralDb(), async (running) => {
  await delayed('PUT', '/posts/1?_delay=1100', 200, { id: 1, booleanValue: true, integerValue: 1 })({ running })
}))

writes('PATCH /:resource/:id should respond with json and update resource', () => withServer(pluralDb(), async ({ ask }) => {
  const post = { id: 1, body: 'bar' }
  const answer = await ask('PATCH', '/posts/1', { body: { body: 'bar' } })
  isJson(answer)
  assert.is(answer.status, 200)
  assert.equal(answer.json, post)
  assert.equal((await ask('GET', '/posts/1')).json, post)
}))

writes('PATCH /:resource/:id should respond with 404 if resource is not found (a problem+json body)', () => withServer(pluralDb(), async ({ ask }) => {
  const answer = await ask('PATCH', '/posts/9001', { body: { body: 'bar' } })
  isJson(answer)
  assert.is(answer.status, 404)
}))

writes('PATCH /:resource:id?_delay= should delay response', () => withServer(pluralDb(), async (running) => {
  await delayed('PATCH', '/posts/1?_delay=1100', 200, { body: 'bar', id: 1, booleanValue: true, integerValue: 1 })({ running })
}))

writes('DELETE /:resource/:id should respond with empty data, destroy resource and dependent resources', () => withServer(pluralDb(), async ({ ask }) => {
  const answer = await ask('DELETE', '/posts/1')
  assert.is(answer.status, 200)
  assert.equal(answer.json, {})
  assert.is((await ask('GET', '/posts')).json.length, 1)
  assert.is((await ask('GET', '/comments')).json.length, 3)
}))

writes('DELETE /:resource/:id should respond with 404 if resource is not found (a problem+json body)', () => withServer(pluralDb(), async ({ ask }) => {
  const answer = await ask('DELETE', '/posts/9001')
  isJson(answer)
  assert.is(answer.status, 404)
}))

writes('DELETE /:resource:id?_delay= should delay response', () => withServer(pluralDb(), async (running) => {
  await delayed('DELETE', '/posts/1?_delay=1100', 200)({ running })
}))

writes.run()

// singular.js and schema-ignore.js name their resource `user`; restdir's `/user` is its
// declared users, whose rules the mode keeps (docs/json-server.md, "Users and playlists in
// the mode"), so the resource is `profile` here: the same object, the same expectations.
const singular = suite('json-server 0.17.4 singular.js and schema-ignore.js, the resource named profile')

singular('GET /:resource should respond with corresponding resource', () => withServer(singularDb(), async ({ ask }) => {
  const answer = await ask('GET', '/profile')
  assert.is(answer.status, 200)
  assert.equal(answer.json, singularDb().profile)
}))

singular('POST /:resource should create resource', () => withServer(singularDb(), async ({ ask }) => {
  const answer = await ask('POST', '/profile', { body: { name: 'bar' } })
  assert.is(answer.status, 201)
  assert.equal(answer.json, { name: 'bar' })
  assert.equal((await ask('GET', '/profile')).json, { name: 'bar' })
}))

singular('PUT /:resource should update resource', () => withServer(singularDb(), async ({ ask }) => {
  const answer = await ask('PUT', '/profile', { body: { name: 'bar' } })
  assert.is(answer.status, 200)
  assert.equal(answer.json, { name: 'bar' })
}))

singular('PATCH /:resource should update resource', () => withServer(singularDb(), async ({ ask }) => {
  const answer = await ask('PATCH', '/profile', { body: { name: 'bar' } })
  assert.is(answer.status, 200)
  assert.equal(answer.json, { name: 'bar', email: 'foo@example.com' })
}))

singular('$schema-ignore: doesnt error with $schema node', () => withServer({ $schema: 'http://some.schema.somewhere/', ...singularDb() }, async ({ ask }) => {
  const answer = await ask('GET', '/profile')
  assert.is(answer.status, 200)
  assert.equal(answer.json, singularDb().profile)
}))

singular.run()
