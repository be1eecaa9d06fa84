import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { RestdirOptions } from '../../lib/options.ts'
import { readCommandLine, serverOptions } from '../../lib/cli/args.ts'
import { UsageError } from '../../lib/cli/usage.ts'
import { makeTempDir, send, startServer, type Answer, type RequestOptions } from '../support/helpers.ts'
import { startPair as startSideBySide, type JsonServerVersion, type Pair } from '../support/side-by-side.ts'
import { startCli, stopAll } from '../support/process.ts'

// `--json-server 1` beside json-server 1.0 itself, and the json-server mode's
// few deliberate differences beside json-server 0.17.4 and 1.0
// (docs/json-server.md, "json-server 1.0's mode" and "What still differs").
// Each side serves its own copy of the same db.json: json-server as its users
// start it (`json-server db.json`, spec/support/side-by-side.ts; 1.0 is installed in
// bench/json-server-1/ on first use, and runs without its watch of the file,
// whose re-reads of its own writes race the next request), restdir on the file
// itself. Each request goes to both, exactly as written, and the answers are compared.

/** A db.json as json-server 1.0 keeps one: string ids (it turns numeric ones into strings). */
function db1() {
  return {
    posts: Array.from({ length: 23 }, (_, index) => ({
      id: String(index + 1),
      title: `post ${index + 1}`,
      views: (index * 37) % 100,
      author: { name: index % 3 === 0 ? 'alice' : 'bob' },
    })),
    comments: [
      { id: '1', text: 'first on post 1', postId: '1' },
      { id: '2', text: 'second on post 1', postId: '1' },
      { id: '3', text: 'on post 2', postId: '2' },
      { id: '4', text: 'on post 3', postId: '3' },
      { id: '5', text: 'about nothing', postId: null },
    ],
    likes: [
      { id: '1', postId: '1' },
      { id: '2', postId: '2' },
      { id: '3', postId: '3' },
    ],
    profile: { name: 'typicode' },
  }
}

/** json-server 0.17's own kind of db.json: numeric ids. */
function db017() {
  return {
    posts: [
      { id: 1, title: 'a', views: 5 },
      { id: 2, title: 'b', views: 50 },
    ],
    comments: [{ id: 1, body: 'on a', postId: 1 }],
  }
}

/**
 * json-server `version` and restdir (`options`) side by side, each on its own copy of `db` as a db.json;
 * json-server as its users start it, without its watch of the file.
 */
function startPair(version: JsonServerVersion, options: RestdirOptions, db: object): Promise<Pair> {
  return startSideBySide(db, { jsonServer: { version, watch: false, args: version === '0.17' ? ['--quiet'] : [] }, restdir: { options } })
}

/** Asserts that both answered alike: the same status, and the same JSON. */
function assertSame([theirs, ours]: [Answer, Answer], what: string): void {
  assert.is(ours.status, theirs.status, `${what}: restdir ${ours.status} (${ours.text.slice(0, 200)}), json-server ${theirs.status}`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, what)
}

/** A suite whose tests share one pair, in the order they are written: the reads first, the writes after. */
function pairSuite(name: string, version: JsonServerVersion, options: RestdirOptions, db: () => object) {
  const test = suite<{ pair: Pair }>(name, { pair: undefined as unknown as Pair })
  test.before(async (context) => {
    context.pair = await startPair(version, options, db())
  })
  test.after(async ({ pair }) => {
    await pair?.close()
  })
  return test
}

const one = pairSuite('--json-server 1, side by side with json-server 1.0', '1.0', { jsonServer: '1' }, db1)

one('the listing queries where 1.0 and 0.17 differ answer what json-server 1.0 answers', async ({ pair }) => {
  const targets = [
    // `_page` alone: 1.0's envelope, 10 a page.
    '/posts?_page=1', '/posts?_page=3',
    // Page values as 1.0 reads them (parseInt; not a number is no page; clamped), never a 400.
    '/posts?_page=abc', '/posts?_page=', '/posts?_page=0', '/posts?_page=-3&_per_page=5', '/posts?_page=1.7&_per_page=4.5',
    '/posts?_page=99', '/posts?_page=2&_per_page=0', '/posts?_page=2&_per_page=x', '/posts?_page=2&_per_page=-4', '/posts?_per_page=3',
    '/posts?_page=99999999999999999999&_per_page=7',
    // A filter on a field no item has.
    '/posts?colour=red', '/posts?colour=red&_page=1',
    // 1.0's operators, 0.17's suffixes it reads too, and plain equality.
    '/posts?views:eq=74', '/posts?views:lt=20', '/posts?views:lte=11', '/posts?views:gt=90', '/posts?views:gte=96', '/posts?views:ne=0&_sort=-views&_page=1&_per_page=3',
    '/posts?title:contains=POST+1', '/posts?title:startsWith=post+2', '/posts?title:endsWith=3', '/posts?author.name:eq=alice&_sort=-views',
    '/posts?views_gte=90', '/posts?views_lt=10', '/posts?views=74', '/posts?author.name=bob&_page=2&_per_page=4',
    // A repeated filter: the last value counts.
    '/posts?views=74&views=11',
    // Parameters 1.0 does not know: filters on fields of those names, which no item has; an unknown operator is dropped.
    '/posts?_limit=2', '/posts?_start=0&_end=2', '/posts?_sort=views&_order=desc', '/posts?q=post', '/posts?title_like=post',
    '/posts?_delay=10', '/posts?_=123', '/posts?_expand=author', '/posts?callback=fn', '/posts?views:gtt=3', '/posts?constructor=1',
    // `_where` replaces the other filters; one that is not JSON is ignored.
    `/posts?_where=${encodeURIComponent('{"views":{"lt":20}}')}&title=nothing`, '/posts?_where=nonsense&views=74', `/posts?_where=${encodeURIComponent('[1]')}`,
    // Inside `_where`, a name beside a known operator that is none is dropped.
    `/posts?_where=${encodeURIComponent('{"views":{"gt":90,"gtt":1}}')}`, `/posts?_where=${encodeURIComponent('{"author":{"name":{"eq":"alice","like":"b"}},"views":{"lt":40}}')}`,
    `/posts?_where=${encodeURIComponent('{"or":[{"views":{"lt":10,"below":1}},{"title":{"eq":"post 3"}}]}')}`,
    // Conditions 1.0 never holds true: a plain value, an array, null, an `or` that is no non-empty array, a branch that is no object.
    ...['{"views":74}', '{"views":[74]}', '{"title":null}', '{"author":{"name":"alice"}}', '{"or":[]}', '{"or":{"views":{"lt":10}}}', '{"or":[1]}']
      .map((where) => `/posts?_where=${encodeURIComponent(where)}`),
    `/posts?_where=${encodeURIComponent('{"or":[1,{"views":{"lt":10}}],"title":{"startsWith":"post"}}')}`,
    '/comments?_embed=post', '/posts?_embed=comments&_page=1&_per_page=2',
    // An item reads `_embed` alone.
    '/posts/1?_embed=comments&_foo=1', '/comments/1?_embed=post&q=x&_page=abc',
  ]
  for (const target of targets) assertSame(await pair.both('GET', target), target)
})

one('filters past the listing\'s bounds are a 400 that names the bound, never a crash', async ({ pair }) => {
  const long = Array.from({ length: 30 }, (_, index) => `f${index}=${'x'.repeat(200)}`).join('&')
  for (const [target, detail] of [['/posts?a.b.c.d.e.f.g.h.i=1', /"a\.b\.c\.d\.e\.f\.g\.h\.i" names a field more than 8 levels deep/], [`/posts?${long}`, /filters come to more than 4096 characters/]] as const) {
    const answer = await send(pair.restdir.port, 'GET', target)
    assert.is(answer.status, 400, answer.text)
    assert.match(answer.json.detail, detail)
  }
})

one('a problem answer carries json-server 1.0\'s "error" member beside its own, under json-server\'s status', async ({ pair }) => {
  const requests: Array<[string, string, RequestOptions?]> = [
    ['GET', '/posts/99'],
    ['PUT', '/posts/99', { body: { title: 'x' } }],
    ['DELETE', '/posts/99'],
    ['POST', '/posts', { body: [1] }],
    // json-server 1.0 has neither `GET /db` nor nested routes.
    ['GET', '/db'],
    ['GET', '/posts/1/comments'],
  ]
  for (const [method, target, options] of requests) {
    const [theirs, ours] = await pair.both(method, target, options)
    const what = `${method} ${target}`
    assert.is(ours.status, theirs.status, `${what}: ${ours.text}`)
    assert.is(typeof theirs.json.error, 'string', `json-server: ${what}`)
    assert.is(ours.headers['content-type'], 'application/problem+json')
    assert.is(ours.json.status, ours.status)
    assert.is(ours.json.error, ours.json.detail, what)
  }
  // A body that is not JSON: restdir's 400 is json-server 0.17's status (see the 0.17 suite); 1.0 answers 500.
  const [theirs, ours] = await pair.both('PATCH', '/posts/1', { body: '{"title":', headers: { 'Content-Type': 'application/json' } })
  assert.is(ours.status, 400, ours.text)
  assert.is(theirs.status, 500, 'json-server 1.0')
})

one('CORS: a loopback origin is let in as json-server lets it in; another origin only once --cors names it', async ({ pair }) => {
  const local = await pair.both('GET', '/posts/1', { headers: { Origin: 'http://localhost:5173' } })
  assertSame(local, 'GET with a loopback Origin')
  for (const answer of local) assert.ok(answer.headers['access-control-allow-origin'], 'a loopback origin is allowed')
  const preflight = { 'Access-Control-Request-Method': 'DELETE' }
  const localPreflight = await pair.both('OPTIONS', '/posts/1', { headers: { Origin: 'http://localhost:5173', ...preflight } })
  assert.is(localPreflight[1].status, localPreflight[0].status)
  for (const answer of localPreflight) assert.match(answer.headers['access-control-allow-methods'] as string, /DELETE/)
  const foreignPreflight = await pair.both('OPTIONS', '/posts/1', { headers: { Origin: 'https://app.example', ...preflight } })
  assert.is(foreignPreflight[0].status, localPreflight[0].status)
  assert.is(foreignPreflight[1].status, 403, 'restdir refuses a preflight from another origin')
  const foreign = await pair.both('GET', '/posts/1', { headers: { Origin: 'https://app.example' } })
  assertSame(foreign, 'GET with another Origin')
  assert.is(foreign[0].headers['access-control-allow-origin'], '*')
  assert.is(foreign[1].headers['access-control-allow-origin'], undefined)
  const widened = await startServer({ store: join(pair.restdir.file, '..', 'widened.json'), jsonServer: '1', cors: '*' })
  try {
    assert.is((await widened.request('GET', '/', { headers: { Origin: 'https://app.example' } })).headers['access-control-allow-origin'], 'https://app.example')
  } finally {
    await widened.close()
  }
})

one('the playground answers / when there is no static folder, where json-server shows its own home page', async ({ pair }) => {
  const [theirs, ours] = await pair.both('GET', '/')
  assert.is(ours.status, theirs.status)
  for (const answer of [theirs, ours]) assert.match(answer.headers['content-type'] as string, /^text\/html/)
  assert.match(ours.text, /restdir/i)
})

one('POST gives the item a new id and sets a body\'s own id aside, as json-server 1.0', async ({ pair }) => {
  const [theirs, ours] = await pair.both('POST', '/posts', { body: { id: '7', title: 'new' } })
  assert.is(ours.status, theirs.status)
  for (const answer of [theirs, ours]) {
    assert.is(typeof answer.json.id, 'string')
    assert.is.not(answer.json.id, '7')
    assert.equal({ ...answer.json, id: undefined }, { title: 'new', id: undefined })
  }
  assert.equal((await send(pair.restdir.port, 'GET', `/posts/${ours.json.id}`)).json, ours.json)
  assert.is((await send(pair.restdir.port, 'GET', '/posts/7')).json.title, 'post 7')
  for (const answer of [theirs, ours]) assert.is((await send(answer === ours ? pair.restdir.port : pair.jsonServer.port, 'DELETE', `/posts/${answer.json.id}`)).status, 200)
})

one('DELETE answers the deleted item, sets the foreign keys that named it to null, and _dependent removes those, as json-server 1.0', async ({ pair }) => {
  const deleted = await pair.both('DELETE', '/posts/1')
  assertSame(deleted, 'DELETE /posts/1')
  assert.is(deleted[1].json.title, 'post 1')
  for (const target of ['/comments', '/likes']) assertSame(await pair.both('GET', target), `${target} after DELETE /posts/1`)
  assert.equal((await send(pair.restdir.port, 'GET', '/likes/1')).json, { id: '1', postId: null })
  assertSame(await pair.both('DELETE', '/posts/2?_dependent=comments'), 'DELETE /posts/2?_dependent=comments')
  for (const target of ['/comments', '/likes', '/posts?_page=1']) assertSame(await pair.both('GET', target), `${target} after DELETE /posts/2?_dependent=comments`)
  assert.equal((await send(pair.restdir.port, 'GET', '/comments')).json.map((comment: { id: string }) => comment.id), ['4'])
  assertSame(await pair.both('DELETE', '/posts/2'), 'DELETE /posts/2 again')
})

one('a write json-server 1.0 has no route or resource for is a 404, as json-server 1.0 answers it, and nothing is written', async ({ pair }) => {
  const requests: Array<[string, string, RequestOptions?]> = [
    // A singular resource is changed by PUT and PATCH alone.
    ['POST', '/profile', { body: { name: 'x' } }],
    ['DELETE', '/profile'],
    ['PATCH', '/profile', { body: { site: 'typicode.com' } }],
    ['PUT', '/profile', { body: { name: 'typicode', site: 'typicode.com' } }],
    // A collection is written to by POST alone, an item by PUT, PATCH and DELETE.
    ['PUT', '/posts', { body: { title: 'x' } }],
    ['PATCH', '/posts', { body: { title: 'x' } }],
    ['DELETE', '/posts'],
    ['POST', '/posts/3', { body: { title: 'x' } }],
    // A name the file does not have.
    ['POST', '/notes', { body: { text: 'x' } }],
    ['PUT', '/notes', { body: { text: 'x' } }],
    ['PATCH', '/notes', { body: { text: 'x' } }],
    ['DELETE', '/notes'],
    ['PUT', '/notes/1', { body: { text: 'x' } }],
    ['DELETE', '/notes/1'],
  ]
  for (const [method, target, options] of requests) assertSame(await pair.both(method, target, options), `${method} ${target}`)
  for (const target of ['/profile', '/posts/3', '/notes', '/posts?_page=3']) assertSame(await pair.both('GET', target), `GET ${target} after`)
})

one('a body not sent as JSON is a 415, where json-server 1.0 reads it as JSON whatever its type', async ({ pair }) => {
  const [theirs, ours] = await pair.both('POST', '/posts', { body: '{"title":"c"}', headers: { 'Content-Type': 'text/plain' } })
  assert.is(ours.status, 415, ours.text)
  assert.is(ours.json.error, ours.json.detail)
  assert.is(theirs.status, 201, 'json-server 1.0 takes it')
  assert.is((await send(pair.jsonServer.port, 'DELETE', `/posts/${theirs.json.id}`)).status, 200)
  assertSame(await pair.both('GET', '/posts'), 'GET /posts after')
})

one('a hand edit that breaks the file is never overwritten: a write is a 503, where json-server 1.0 writes its last good state over it', async ({ pair }) => {
  const broken = (await readFile(pair.restdir.file, 'utf8')).replace('"post 3"', '"post 3"!')
  assert.is.not(broken, await readFile(pair.restdir.file, 'utf8'))
  for (const side of [pair.jsonServer, pair.restdir]) await writeFile(side.file, broken)
  const [theirs, ours] = await pair.both('POST', '/posts', { body: { title: 'new' } })
  assert.is(ours.status, 503, ours.text)
  assert.is(ours.headers['retry-after'], '1')
  assert.is(ours.json.error, ours.json.detail)
  assert.is(await readFile(pair.restdir.file, 'utf8'), broken)
  assert.is(theirs.status, 201, 'json-server 1.0 takes the write')
  assert.is.not(await readFile(pair.jsonServer.file, 'utf8'), broken, 'json-server 1.0 wrote over the hand edit')
})

one.run()

/** A db.json with items a person added by hand, without ids, and foreign keys of either type. */
function dbWithoutIds() {
  return {
    posts: [
      { id: '1', title: 'a' },
      { id: '2', title: 'b' },
    ],
    comments: [
      { text: 'no id, on post 1', postId: '1' },
      { text: 'no id, a numeric key', postId: 1 },
      { id: 'c', text: 'on post 2', postId: '2' },
      { text: 'no id, on nothing', postId: null },
    ],
    tags: [{ id: 't', label: 'news' }],
  }
}

const hand = pairSuite('--json-server 1 on a db.json edited by hand, side by side with json-server 1.0', '1.0', { jsonServer: '1' }, dbWithoutIds)

/** The items without their ids: json-server 1.0 gives an item without one a random id as it reads the file. */
function withoutIds([theirs, ours]: [Answer, Answer]): [Answer, Answer] {
  const strip = (answer: Answer) => ({ ...answer, json: (answer.json as Array<Record<string, unknown>>).map(({ id: _id, ...rest }) => rest) })
  return [strip(theirs), strip(ours)]
}

hand('an item without an id gets a new one as the file is read, at its URL from then on, and the next write writes it, as json-server 1.0 does', async ({ pair }) => {
  const original = JSON.stringify(dbWithoutIds(), null, 2)
  const listed = await pair.both('GET', '/comments')
  assertSame(withoutIds(listed), 'GET /comments')
  for (const answer of listed) assert.ok(answer.json.every((comment: { id: unknown }) => typeof comment.id === 'string' && comment.id !== ''), answer.text)
  // Each side's new id names the item there, and the file is left as it is until a write.
  for (const [side, answer] of [[pair.jsonServer, listed[0]], [pair.restdir, listed[1]]] as const) {
    const first = answer.json[0]
    assert.equal((await send(side.port, 'GET', `/comments/${first.id}`)).json, first)
    assert.is(await readFile(side.file, 'utf8'), original)
  }
  assertSame(await pair.both('PATCH', '/tags/t', { body: { label: 'news!' } }), 'PATCH /tags/t')
  const [theirs, ours] = (await pair.files()) as Array<{ comments: Array<{ id: string }> }>
  assert.equal(ours.comments.map((comment) => comment.id), listed[1].json.map((comment: { id: string }) => comment.id), 'restdir writes the ids it answered')
  const idsOut = (db: { comments: Array<{ id: string }> }) => ({ ...db, comments: db.comments.map(({ id, ...rest }) => ({ ...rest, id: id === 'c' ? id : 'new' })) })
  assert.equal(idsOut(ours), idsOut(theirs))
})

hand('DELETE sets the foreign keys of items without ids to null, compares them as 1.0 does, and _dependent removes them, as json-server 1.0', async ({ pair }) => {
  assertSame(await pair.both('DELETE', '/posts/1'), 'DELETE /posts/1')
  const after = await pair.both('GET', '/comments')
  assertSame(withoutIds(after), 'GET /comments after DELETE /posts/1')
  assert.equal(after[1].json.map((comment: { postId: unknown }) => comment.postId), [null, 1, '2', null])
  assertSame(await pair.both('DELETE', '/posts/2?_dependent=comments'), 'DELETE /posts/2?_dependent=comments')
  assertSame(withoutIds(await pair.both('GET', '/comments')), 'GET /comments after DELETE /posts/2?_dependent=comments')
  assert.equal(withoutIds(await pair.both('GET', '/comments'))[1].json, [{ text: 'no id, a numeric key', postId: 1 }])
})

hand('an emptied collection answers [] to every query and is still written to, as json-server 1.0', async ({ pair }) => {
  assertSame(await pair.both('DELETE', '/tags/t'), 'DELETE /tags/t')
  for (const target of ['/tags', '/tags?_page=1', '/tags?_page=2&_per_page=5', '/tags?label=news', '/tags?_sort=-label', `/tags?_where=${encodeURIComponent('{"label":{"eq":"news"}}')}`, '/tags/t']) {
    assertSame(await pair.both('GET', target), `GET ${target} once emptied`)
  }
  // A store folder keeps no empty collection: the mode remembers the one it saw emptied, and answers it alike.
  const folder = await makeTempDir('json-server-1-folder-')
  const seeding = await startServer({ store: folder })
  const { id } = (await seeding.request('POST', '/tags', { body: { label: 'news' } })).json
  await seeding.close()
  const restdir = await startServer({ store: folder, jsonServer: '1' })
  try {
    assert.is((await send(restdir.port, 'DELETE', `/tags/${id}`)).status, 200)
    for (const target of ['/tags', '/tags?_page=1', '/tags?_page=2&_per_page=5', '/tags?label=news']) {
      const [theirs, ours] = await Promise.all([send(pair.jsonServer.port, 'GET', target), send(restdir.port, 'GET', target)])
      assertSame([theirs, ours], `GET ${target} once emptied, on a store folder`)
    }
    const created = await Promise.all([send(pair.jsonServer.port, 'POST', '/tags', { body: { label: 'again' } }), send(restdir.port, 'POST', '/tags', { body: { label: 'again' } })])
    assert.is(created[1].status, created[0].status, `POST /tags once emptied, on a store folder: ${created[1].text}`)
    assert.is((await send(pair.restdir.port, 'POST', '/tags', { body: { label: 'again' } })).status, 201)
  } finally {
    await restdir.close()
    await rm(folder, { recursive: true, force: true })
  }
  const created = await pair.both('POST', '/tags', { body: { label: 'again' } })
  assert.is(created[1].status, created[0].status, created[1].text)
  assertSame(withoutIds(await pair.both('GET', '/tags')), 'GET /tags after a POST')
})

hand.run()

/**
 * json-server 0.17's kind of db.json in 1.0's mode: numeric ids (a fraction among them) beside a
 * text one, numeric foreign keys, ids inside an item and of a singular resource, and a
 * `$schema` of the file's own, first. (An array of strings stops json-server 1.0 at its start.)
 */
function dbWithNumericIds() {
  return {
    $schema: './my-schema.json',
    posts: [
      { id: 1, title: 'one', tags: [{ id: 7 }] },
      { title: 'no id', id: 2 },
      { id: 2.5, title: 'two and a half' },
      { id: 'x', title: 'text' },
    ],
    comments: [
      { id: 1, postId: 1, body: 'a numeric key' },
      { id: 2, postId: '1', body: 'a text key' },
    ],
    profile: { id: 1, name: 'typicode' },
  }
}

const numericIds = pairSuite('--json-server 1 on a db.json of numeric ids, side by side with json-server 1.0', '1.0', { jsonServer: '1' }, dbWithNumericIds)

numericIds('numeric ids are answered as strings from the start, and the file is left as it is until a write', async ({ pair }) => {
  const original = JSON.stringify(dbWithNumericIds(), null, 2)
  const targets = [
    '/posts', '/posts/1', '/posts/2.5', '/posts/x', '/comments', '/comments/2', '/profile',
    // A query's `1` is the number, which no id is any more; the text finds it.
    '/posts?id=1', '/posts?id:in=1,2', `/posts?_where=${encodeURIComponent('{"id":{"eq":"1"}}')}`, '/posts?id:lt=2', '/comments?postId=1',
    '/comments?_embed=post', '/posts?_embed=comments',
  ]
  for (const target of targets) assertSame(await pair.both('GET', target), target)
  assert.equal((await send(pair.restdir.port, 'GET', '/posts/1')).json, { id: '1', title: 'one', tags: [{ id: 7 }] })
  for (const side of [pair.jsonServer, pair.restdir]) assert.is(await readFile(side.file, 'utf8'), original, side === pair.restdir ? 'restdir' : 'json-server 1.0')
})

numericIds('the next write writes every id as a string and json-server 1.0\'s $schema last, the very file json-server 1.0 writes', async ({ pair }) => {
  assertSame(await pair.both('PATCH', '/posts/2', { body: { title: 'two' } }), 'PATCH /posts/2')
  const written = await Promise.all([pair.jsonServer, pair.restdir].map((side) => readFile(side.file, 'utf8')))
  assert.is(written[1], written[0])
  assert.match(written[1], /"id": "2\.5"/)
  assert.match(written[1], /"\$schema": "\.\/node_modules\/json-server\/schema\.json"\n}$/)
  // The key that named post 1 as text is nulled, the numeric one kept, as 1.0 compares them.
  assertSame(await pair.both('DELETE', '/posts/1'), 'DELETE /posts/1')
  assertSame(await pair.both('GET', '/comments'), 'GET /comments after DELETE /posts/1')
  const after = await Promise.all([pair.jsonServer, pair.restdir].map((side) => readFile(side.file, 'utf8')))
  assert.is(after[1], after[0])
  assert.is.not(after[1], written[1])
})

numericIds.run()

const seventeen = pairSuite('the json-server mode beside json-server 0.17', '0.17', {}, db017)

seventeen('no JSONP: ?callback= is answered as plain JSON, the data json-server 0.17 wraps in a script', async ({ pair }) => {
  const [theirs, ours] = await pair.both('GET', '/posts?callback=fn')
  assert.is(ours.status, theirs.status)
  assert.match(theirs.headers['content-type'] as string, /javascript/)
  assert.match(ours.headers['content-type'] as string, /^application\/json/)
  const wrapped = /fn\(([\s\S]*)\);?\s*$/.exec(theirs.text)
  assert.ok(wrapped, theirs.text)
  assert.equal(ours.json, JSON.parse(wrapped![1]))
})

seventeen('errors are application/problem+json under json-server 0.17\'s status, whose {} is a JSON object too', async ({ pair }) => {
  const requests: Array<[string, string, RequestOptions?]> = [
    ['GET', '/posts/99'],
    ['PUT', '/posts/99', { body: { title: 'x' } }],
    ['PATCH', '/posts/99', { body: { title: 'x' } }],
    ['DELETE', '/posts/99'],
    ['PATCH', '/posts/1', { body: '{"title":', headers: { 'Content-Type': 'application/json' } }],
  ]
  for (const [method, target, options] of requests) {
    const [theirs, ours] = await pair.both(method, target, options)
    assert.is(ours.status, theirs.status, `${method} ${target}: ${ours.text}`)
    assert.is(ours.headers['content-type'], 'application/problem+json')
    assert.is(typeof ours.json.detail, 'string')
  }
})

seventeen('a taken id is a 409 where json-server 0.17 answers 500, and the item stays as it was', async ({ pair }) => {
  const [theirs, ours] = await pair.both('POST', '/posts', { body: { id: 1, title: 'again' } })
  assert.is(theirs.status, 500, `json-server 0.17: ${theirs.text.slice(0, 100)}`)
  assert.is(ours.status, 409, ours.text)
  assertSame(await pair.both('GET', '/posts/1'), 'GET /posts/1 after')
})

seventeen('0.17 stays the default for a db.json: a DELETE answers {}, _page alone a plain page, as json-server 0.17 does', async ({ pair }) => {
  assertSame(await pair.both('GET', '/posts?_page=1'), 'GET /posts?_page=1')
  assertSame(await pair.both('GET', '/db'), 'GET /db')
  assertSame(await pair.both('GET', '/posts/1/comments'), 'GET /posts/1/comments')
  const deleted = await pair.both('DELETE', '/posts/1')
  assertSame(deleted, 'DELETE /posts/1')
  assert.equal(deleted[1].json, {})
})

seventeen('a body not sent as JSON is a 415, where json-server 0.17 takes it as no body, and nothing is created', async ({ pair }) => {
  const before = (await send(pair.restdir.port, 'GET', '/posts')).json.length
  const [theirs, ours] = await pair.both('POST', '/posts', { body: '{"title":"c"}', headers: { 'Content-Type': 'text/plain' } })
  assert.is(ours.status, 415, ours.text)
  assert.is(theirs.status, 201, 'json-server 0.17 creates an item without the body')
  assert.is((await send(pair.restdir.port, 'GET', '/posts')).json.length, before)
})

seventeen.run()

const commandLine = suite('--json-server on the command line')
commandLine.after(stopAll)

commandLine('restdir db.json --json-server 1 answers as json-server 1.0, restdir db.json as 0.17', async () => {
  const dir = await makeTempDir('json-server-flag-')
  try {
    const file = join(dir, 'db.json')
    // 1.0 answers the deleted item, its numeric id read as a string; 0.17 answers {}.
    for (const [args, deleted, paged] of [[['--json-server', '1'], { id: '1', title: 'a', views: 5 }, false], [[], {}, true]] as const) {
      await writeFile(file, JSON.stringify(db017()))
      const cli = await startCli([...args, file, '--port', '0'])
      try {
        assert.equal((await send(cli.port, 'DELETE', '/posts/1')).json, deleted, args.join(' ') || 'a db.json alone')
        assert.is(Array.isArray((await send(cli.port, 'GET', '/posts?_page=1')).json), paged)
      } finally {
        await cli.stop()
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

commandLine('a version after --json-server is read only when it is one, and one restdir does not answer as is refused', () => {
  const read = (...args: string[]) => {
    const line = readCommandLine(args)
    return { positionals: line.positionals, jsonServer: serverOptions(line.flags, {}).jsonServer }
  }
  assert.equal(read('--json-server', 'db.json'), { positionals: ['db.json'], jsonServer: true })
  assert.equal(read('--json-server', '1', 'db.json'), { positionals: ['db.json'], jsonServer: '1' })
  assert.equal(read('db.json', '--json-server=1.0'), { positionals: ['db.json'], jsonServer: '1' })
  assert.equal(read('--json-server', '0.17.4', 'db.json'), { positionals: ['db.json'], jsonServer: '0.17' })
  assert.equal(read('db.json'), { positionals: ['db.json'], jsonServer: undefined })
  assert.throws(() => read('--json-server', '2', 'db.json'), (error: Error) => error instanceof UsageError && /0\.17 or 1/.test(error.message))
  assert.throws(() => read('--json-server', '1', '--no-json-server'), (error: Error) => error instanceof UsageError && /contradict/.test(error.message))
})

commandLine.run()
