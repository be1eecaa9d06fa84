import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, type TestServer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'

// Listing queries in json-server's dialect (docs/http-api.md, "Listing queries"), on generic and declared collections.

const books = [
  { id: 'b1', title: 'Dune', author: { name: 'Herbert', born: 1920 }, year: 1965, genre: 'sf', rating: 4.5 },
  { id: 'b2', title: 'Emma', author: { name: 'Austen', born: 1775 }, year: 1815, genre: 'novel', rating: 4 },
  { id: 'b3', title: 'Solaris', author: { name: 'Lem', born: 1921 }, year: 1961, genre: 'sf', rating: '4' },
  { id: 'b4', title: 'Persuasion', author: { name: 'Austen', born: 1775 }, year: 1817, genre: 'novel' },
  { id: 'b5', title: 'Ubik', author: { name: 'Dick', born: 1928 }, year: 1969, genre: 'sf', rating: 3 },
]

const listing = suite<{ server: TestServer }>('listing', { server: undefined as unknown as TestServer })

listing.before(async (context) => {
  context.server = await startServer()
  for (const { id, ...book } of books) {
    const answer = await context.server.request('PUT', `/books/${id}`, { body: book })
    assert.is(answer.status, 201)
  }
})

listing.after(async (context) => {
  await context.server.close()
})

const ids = (answer: { json: any }) => (answer.json as { id: string }[]).map((doc) => doc.id)

listing('a plain listing has every document in id order and says how many there are', async ({ server }) => {
  const answer = await server.request('GET', '/books')
  assert.is(answer.status, 200)
  assert.equal(ids(answer), ['b1', 'b2', 'b3', 'b4', 'b5'])
  assert.is(answer.headers['x-total-count'], '5')
  assert.is(answer.headers.link, undefined)
})

listing('the total count can be read by a cross-origin script', async ({ server }) => {
  const answer = await server.request('GET', '/books?_page=1&_limit=2', { headers: { origin: 'http://localhost:5173' } })
  assert.is(answer.headers['access-control-allow-origin'], 'http://localhost:5173')
  const exposed = String(answer.headers['access-control-expose-headers']).split(/\s*,\s*/).map((name) => name.toLowerCase())
  for (const name of ['x-total-count', 'link', 'location', 'etag']) assert.ok(exposed.includes(name), `${name} is exposed`)
})

listing('field=value keeps the documents whose field equals the value', async ({ server }) => {
  const answer = await server.request('GET', '/books?genre=sf')
  assert.equal(ids(answer), ['b1', 'b3', 'b5'])
  assert.is(answer.headers['x-total-count'], '3')
})

listing('values compare as strings, so a number matches its digits and a string of them alike', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?rating=4')), ['b2', 'b3'])
  assert.equal(ids(await server.request('GET', '/books?year=1965')), ['b1'])
})

listing('a repeated key means any of its values', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?id=b4&id=b1&id=nope')), ['b1', 'b4'])
})

listing('different keys must all match', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?genre=novel&title=Emma')), ['b2'])
})

listing('a dotted key reaches a nested field', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?author.name=Austen')), ['b2', 'b4'])
  assert.equal(ids(await server.request('GET', '/books?author.born=1921')), ['b3'])
})

listing('a document without the field never equals a value', async ({ server }) => {
  const answer = await server.request('GET', '/books?rating=undefined')
  assert.equal(ids(answer), [])
  assert.is(answer.headers['x-total-count'], '0')
})

listing('_ne, _gte, _lte and _like compare as json-server does', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?genre_ne=sf')), ['b2', 'b4'])
  assert.equal(ids(await server.request('GET', '/books?year_gte=1961&year_lte=1965')), ['b1', 'b3'])
  assert.equal(ids(await server.request('GET', '/books?title_like=SOL')), ['b3'])
})

listing('_like takes a regular expression, and one that would make a backtracking search run away answers at once', async ({ server }) => {
  const answer = await server.request('GET', `/books?title_like=${encodeURIComponent('(a+)+Q$')}`)
  assert.is(answer.status, 200)
  assert.equal(ids(answer), [])
})

listing('q searches every text in the document, nested ones too, ignoring case', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?q=austen')), ['b2', 'b4'])
  assert.equal(ids(await server.request('GET', '/books?q=UBI')), ['b5'])
})

listing('_sort sorts ascending by default, and _order=desc reverses it', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?_sort=year')), ['b2', 'b4', 'b3', 'b1', 'b5'])
  assert.equal(ids(await server.request('GET', '/books?_sort=year&_order=desc')), ['b5', 'b1', 'b3', 'b4', 'b2'])
  assert.equal(ids(await server.request('GET', '/books?_sort=title&_order=DESC')), ['b5', 'b3', 'b4', 'b2', 'b1'])
})

listing('several sort fields each take their own order', async ({ server }) => {
  const answer = await server.request('GET', '/books?_sort=genre,year&_order=asc,desc')
  assert.equal(ids(answer), ['b4', 'b2', 'b5', 'b1', 'b3'])
  assert.equal(ids(await server.request('GET', '/books?_sort=genre,-year')), ['b4', 'b2', 'b5', 'b1', 'b3'])
})

listing('sorting reaches nested fields and puts documents without the field last', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?_sort=author.born,title')), ['b2', 'b4', 'b1', 'b3', 'b5'])
  assert.equal(ids(await server.request('GET', '/books?_sort=rating')), ['b5', 'b2', 'b3', 'b1', 'b4'])
  assert.equal(ids(await server.request('GET', '/books?_sort=rating&_order=desc')), ['b1', 'b2', 'b3', 'b5', 'b4'])
})

listing('_start and _end slice after filtering and sorting, and the count is taken before', async ({ server }) => {
  const answer = await server.request('GET', '/books?_sort=year&_start=1&_end=3')
  assert.equal(ids(answer), ['b4', 'b3'])
  assert.is(answer.headers['x-total-count'], '5')
  const filtered = await server.request('GET', '/books?genre=sf&_start=1&_end=10')
  assert.equal(ids(filtered), ['b3', 'b5'])
  assert.is(filtered.headers['x-total-count'], '3')
})

listing('_start with _limit slices too, and _end alone starts at the first', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?_start=3&_limit=1')), ['b4'])
  assert.equal(ids(await server.request('GET', '/books?_end=2')), ['b1', 'b2'])
  assert.equal(ids(await server.request('GET', '/books?_start=4')), ['b5'])
  assert.equal(ids(await server.request('GET', '/books?_start=9&_end=12')), [])
})

listing('_page counts from 1 and takes _limit documents, 10 unless told otherwise', async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?_page=2&_limit=2')), ['b3', 'b4'])
  assert.equal(ids(await server.request('GET', '/books?_page=3&_limit=2')), ['b5'])
  assert.equal(ids(await server.request('GET', '/books?_page=1')), ['b1', 'b2', 'b3', 'b4', 'b5'])
  const past = await server.request('GET', '/books?_page=9&_limit=2')
  assert.equal(ids(past), [])
  assert.is(past.headers['x-total-count'], '5')
})

listing('a page answer links to the first, previous, next and last pages as absolute URLs of the request\'s own origin, keeping the rest of the query', async ({ server }) => {
  const at = server.url
  const middle = await server.request('GET', '/books?genre_ne=none&_page=2&_limit=2')
  assert.is(
    middle.headers.link,
    `<${at}/books?genre_ne=none&_page=1&_limit=2>; rel="first", <${at}/books?genre_ne=none&_page=1&_limit=2>; rel="prev", ` +
      `<${at}/books?genre_ne=none&_page=3&_limit=2>; rel="next", <${at}/books?genre_ne=none&_page=3&_limit=2>; rel="last"`,
  )
  const first = await server.request('GET', '/books?_page=1&_limit=2')
  assert.is(first.headers.link, `<${at}/books?_page=1&_limit=2>; rel="first", <${at}/books?_page=2&_limit=2>; rel="next", <${at}/books?_page=3&_limit=2>; rel="last"`)
  const last = await server.request('GET', '/books?_page=3&_limit=2')
  assert.is(last.headers.link, `<${at}/books?_page=1&_limit=2>; rel="first", <${at}/books?_page=2&_limit=2>; rel="prev", <${at}/books?_page=3&_limit=2>; rel="last"`)
  const single = await server.request('GET', '/books?_page=1&_limit=10')
  assert.is(single.headers.link, undefined)
})

listing('an underscore parameter or operator restdir does not know is a 400 that names it and lists the known ones', async ({ server }) => {
  const parameter = await server.request('GET', '/books?_embedd=comments')
  assertProblem(parameter, 400, /"_embedd"; the known ones are _sort, _order, _start, _end, _limit, _page, _per_page, _embed, _expand, _where, _children, _changes/)
  const operator = await server.request('GET', '/books?year:after=1960')
  assertProblem(operator, 400, /Unknown operator "after" in "year:after"; the known ones are eq, ne, lt, lte, gt, gte, in, contains, startsWith, endsWith/)
  assertProblem(await server.request('GET', '/books/b1?_bogus=1'), 400, /"_bogus"/)
  assertProblem(await server.request('GET', '/books?:gt=1'), 400, /names no field/)
  // A cache buster and the playground's `_children` are known.
  assert.equal(ids(await server.request('GET', '/books?_=12345')), ['b1', 'b2', 'b3', 'b4', 'b5'])
  assert.equal((await server.request('GET', '/books?_children')).json, ['b1', 'b2', 'b3', 'b4', 'b5'])
})

listing("json-server 1.0's field:op filters compare like 0.17's suffixes, and 1.0's suffixes work too", async ({ server }) => {
  assert.equal(ids(await server.request('GET', '/books?year:gt=1961')), ['b1', 'b5'])
  assert.equal(ids(await server.request('GET', '/books?year:lt=1961')), ['b2', 'b4'])
  assert.equal(ids(await server.request('GET', '/books?year:gte=1961&year:lte=1965')), ['b1', 'b3'])
  assert.equal(ids(await server.request('GET', '/books?genre:eq=novel')), ['b2', 'b4'])
  assert.equal(ids(await server.request('GET', '/books?genre:ne=sf')), ['b2', 'b4'])
  assert.equal(ids(await server.request('GET', '/books?id:in=b5,b1,nope')), ['b1', 'b5'])
  assert.equal(ids(await server.request('GET', '/books?title:contains=SUAS')), ['b4'])
  assert.equal(ids(await server.request('GET', '/books?title:startsWith=sol')), ['b3'])
  assert.equal(ids(await server.request('GET', '/books?title:endsWith=MA')), ['b2'])
  assert.equal(ids(await server.request('GET', '/books?author.born:gt=1920')), ['b3', 'b5'])
  assert.equal(ids(await server.request('GET', '/books?year_gt=1965&year_lt=1969')), [])
  assert.equal(ids(await server.request('GET', '/books?year_in=1815,1969')), ['b2', 'b5'])
  const counted = await server.request('GET', '/books?year:gt=1960')
  assert.is(counted.headers['x-total-count'], '3')
})

listing("_page with _per_page answers json-server 1.0's envelope; a page past the last is the last", async ({ server }) => {
  const second = await server.request('GET', '/books?_sort=year&_page=2&_per_page=2')
  assert.is(second.status, 200)
  assert.equal(second.json, {
    first: 1, prev: 1, next: 3, last: 3, pages: 3, items: 5,
    data: [books[2], books[0]].map(({ id, ...book }) => ({ id, ...book })),
  })
  assert.is(second.headers['x-total-count'], '5')
  assert.match(String(second.headers.link), /_page=3&_per_page=2>; rel="next"/)
  const beyond = await server.request('GET', '/books?_page=7&_per_page=2')
  assert.equal({ ...beyond.json, data: ids({ json: beyond.json.data }) }, { first: 1, prev: 2, next: null, last: 3, pages: 3, items: 5, data: ['b5'] })
  const none = await server.request('GET', '/books?genre=poetry&_page=1&_per_page=2')
  assert.equal(none.json, { first: 1, prev: null, next: null, last: 1, pages: 1, items: 0, data: [] })
  // 0.17's _page with _limit still answers a plain array.
  assert.ok(Array.isArray((await server.request('GET', '/books?_page=1&_limit=2')).json))
  for (const query of ['_page=1&_per_page=0', '_page=1&_per_page=x', '_per_page=2', '_page=1&_per_page=2&_limit=2', '_page=1&_per_page=2&_start=1']) {
    assertProblem(await server.request('GET', `/books?${query}`), 400, /_per_page/)
  }
})

const where = (condition: unknown) => `/books?_where=${encodeURIComponent(JSON.stringify(condition))}`

listing('_where takes JSON conditions: operators, nested fields, plain values and or', async ({ server }) => {
  assert.equal(ids(await server.request('GET', where({ year: { gt: 1961, lt: 1969 } }))), ['b1'])
  assert.equal(ids(await server.request('GET', where({ or: [{ genre: 'novel' }, { rating: { gte: 4.5 } }] }))), ['b1', 'b2', 'b4'])
  assert.equal(ids(await server.request('GET', where({ author: { name: { in: ['Lem', 'Dick'] } } }))), ['b3', 'b5'])
  assert.equal(ids(await server.request('GET', where({ genre: 'sf', or: [{ year: { lt: 1962 } }, { title: { endsWith: 'IK' } }] }))), ['b3', 'b5'])
  assert.equal(ids(await server.request('GET', where({ author: { or: [{ name: 'Lem' }, { born: { lt: 1800 } }] } }))), ['b2', 'b3', 'b4'])
  const counted = await server.request('GET', where({ genre: 'sf' }) + '&_page=1&_per_page=2')
  assert.is(counted.json.items, 3)
})

listing('a _where restdir cannot read is a 400 that says why, never an empty list', async ({ server }) => {
  assertProblem(await server.request('GET', '/books?_where=%7Bnope'), 400, /_where must be a JSON object/)
  assertProblem(await server.request('GET', '/books?_where=%5B1%5D'), 400, /_where must be a JSON object/)
  assertProblem(await server.request('GET', where({ year: { gt: 1, after: 2 } })), 400, /Unknown operator "after" in "_where at year"/)
  assertProblem(await server.request('GET', where({ or: [] })), 400, /"or" must be a non-empty array/)
  assertProblem(await server.request('GET', where({ year: { eq: null } })), 400, /year is compared with null/)
  assertProblem(await server.request('GET', where({ genre: 'sf' }) + '&year=1965'), 400, /cannot be combined with other filters/)
})

listing('what _where and _embed may ask is capped, and a query past a cap is a 400 that names it', async ({ server }) => {
  let deep: Record<string, unknown> = { year: 1965 }
  for (let level = 0; level < 8; level++) deep = { or: [deep] }
  assertProblem(await server.request('GET', where(deep)), 400, /deeper than 8 levels/)
  const many = { or: Array.from({ length: 33 }, (_, year) => ({ year })) }
  assertProblem(await server.request('GET', where(many)), 400, /more than 32 filter values.*--max-filters/)
  const ranges = { or: Array.from({ length: 16 }, (_, year) => ({ year: { gte: year, lte: year } })) }
  assertProblem(await server.request('GET', where(ranges)), 400, /more than 32 filter values/)
  assertProblem(await server.request('GET', where({ id: { in: Array.from({ length: 33 }, (_, index) => `b${index}`) } })), 400, /more than 32 filter values/)
  assertProblem(await server.request('GET', `/books?_where=${encodeURIComponent(JSON.stringify({ title: 'x'.repeat(5000) }))}`), 400, /_where is longer than 4096/)
  assertProblem(await server.request('GET', '/books?_embed=a&_embed=b&_embed=c&_expand=d&_expand=e'), 400, /more than 4 relations/)
  assertProblem(await server.request('GET', '/books?_embed=comments.author'), 400, /one level/)
  // Under the caps, the same shapes answer (the `or` counts one, each of its conditions one).
  assert.equal(ids(await server.request('GET', where({ or: Array.from({ length: 31 }, (_, index) => ({ year: 1961 + index })) }))), ['b1', 'b3', 'b5'])
  assert.equal(ids(await server.request('GET', where(deep.or instanceof Array ? deep.or[0] : deep))), ['b1'])
})

listing('_embed counts against --max-filters with the filters', async () => {
  const capped = await startServer({ maxFilters: 3 })
  try {
    await capped.request('PUT', '/books/b1', { body: { genre: 'sf' } })
    assert.is((await capped.request('GET', '/books?genre=sf&_embed=comments&_expand=author')).status, 200)
    assertProblem(await capped.request('GET', '/books?genre=sf&genre=x&_embed=comments&_expand=author'), 400, /more than 3 filter values/)
  } finally {
    await capped.close()
  }
})

listing('a malformed window or order is a 400 that says which parameter', async ({ server }) => {
  for (const query of ['_page=0', '_page=two', '_limit=-1', '_start=1.5', '_end=x', '_page=1&_limit=0', '_sort=year&_order=up', '_sort=,']) {
    const answer = await server.request('GET', `/books?${query}`)
    assert.is(answer.status, 400, query)
    assert.is(answer.headers['content-type'], 'application/problem+json', query)
    assert.match(answer.json.detail, /_page|_limit|_start|_end|_order|_sort/, query)
  }
})

listing('HEAD of a listing carries the same headers and no body', async ({ server }) => {
  const answer = await server.request('HEAD', '/books?_page=1&_limit=2')
  assert.is(answer.status, 200)
  assert.is(answer.text, '')
  assert.is(answer.headers['x-total-count'], '5')
  assert.match(String(answer.headers.link), /rel="next"/)
})

listing('a query on a document rather than a collection leaves the document whole', async ({ server }) => {
  const answer = await server.request('GET', '/books/b1?_page=2&genre=novel')
  assert.is(answer.status, 200)
  assert.is(answer.json.title, 'Dune')
})

listing('a value repeated in an equality filter matches each document once, and the count says so', async ({ server }) => {
  const once = await server.request('GET', '/books?genre=sf')
  assert.equal(ids(once), ['b1', 'b3', 'b5'])
  for (const query of ['genre=sf&genre=sf', 'genre:in=sf,sf', 'genre_in=sf,sf,sf', 'genre=sf&genre=sf&_sort=-year', `_where=${encodeURIComponent('{"genre":{"in":["sf","sf"]}}')}`]) {
    const answer = await server.request('GET', `/books?${query}`)
    assert.is(answer.status, 200, query)
    assert.equal([...ids(answer)].sort(), ['b1', 'b3', 'b5'], query)
    assert.is(answer.headers['x-total-count'], '3', query)
  }
})

listing.run()

const declared = suite('listing declared collections')

declared('GET /user takes the same queries, and an empty store lists no users with a count of 0', async () => {
  const server = await startServer()
  try {
    const empty = await server.request('GET', '/user?_page=1&_limit=5')
    assert.is(empty.status, 200)
    assert.equal(empty.json, [])
    assert.is(empty.headers['x-total-count'], '0')
    for (const username of ['cy', 'ada', 'bo']) {
      assert.is((await server.request('POST', '/user', { body: { username, team: username === 'bo' ? 'red' : 'blue' } })).status, 201)
    }
    const sorted = await server.request('GET', '/user?_sort=username&_start=0&_end=2')
    assert.equal(sorted.json.map((user: { username: string }) => user.username), ['ada', 'bo'])
    assert.is(sorted.headers['x-total-count'], '3')
    const blue = await server.request('GET', '/user?team=blue&_sort=username&_order=desc')
    assert.equal(blue.json.map((user: { username: string }) => user.username), ['cy', 'ada'])
    assert.is((await server.request('GET', '/user?_limit=x')).status, 400)
  } finally {
    await server.close()
  }
})

declared("GET /user/:user_id/playlist pages a user's playlists and links with the collection's own URL", async () => {
  const server = await startServer()
  try {
    const user = (await server.request('POST', '/user', { body: { username: 'ada' } })).json
    const none = await server.request('GET', `/user/${user.user_id}/playlist?_page=1`)
    assert.equal(none.json, [])
    assert.is(none.headers['x-total-count'], '0')
    for (const name of ['a', 'b', 'c']) {
      assert.is((await server.request('POST', `/user/${user.user_id}/playlist`, { body: { name, songs: name === 'b' ? ['x'] : [] } })).status, 201)
    }
    const page = await server.request('GET', `/user/${user.user_id}/playlist?_page=2&_limit=2`)
    assert.equal(page.json.map((playlist: { name: string }) => playlist.name), ['c'])
    assert.is(page.headers['x-total-count'], '3')
    const at = `${server.url}/user/${user.user_id}/playlist`
    assert.is(page.headers.link, `<${at}?_page=1&_limit=2>; rel="first", <${at}?_page=1&_limit=2>; rel="prev", <${at}?_page=2&_limit=2>; rel="last"`)
    const named = await server.request('GET', `/user/${user.user_id}/playlist?name=b`)
    assert.equal(named.json.map((playlist: { name: string }) => playlist.name), ['b'])
  } finally {
    await server.close()
  }
})

declared('the root of an empty store lists as an empty collection with a count of 0', async () => {
  const server = await startServer({ prefix: '/api' })
  try {
    const root = await server.request('GET', '/api?_page=1')
    assert.is(root.status, 200)
    assert.equal(root.json, [])
    assert.is(root.headers['x-total-count'], '0')
  } finally {
    await server.close()
  }
})

declared("a collection with nothing in it yet answers json-server 1.0's envelope too, empty", async () => {
  const server = await startServer()
  try {
    const users = await server.request('GET', '/user?_page=1&_per_page=5')
    assert.is(users.status, 200)
    assert.equal(users.json, { first: 1, prev: null, next: null, last: 1, pages: 1, items: 0, data: [] })
    assert.is(users.headers['x-total-count'], '0')
  } finally {
    await server.close()
  }
})

declared('_page without _limit takes 10 a page', async () => {
  const server = await startServer()
  try {
    for (let n = 10; n <= 21; n++) await server.request('PUT', `/many/${n}`, { body: {} })
    const second = await server.request('GET', '/many?_page=2')
    assert.equal(ids(second), ['20', '21'])
    assert.is(second.headers['x-total-count'], '12')
    assert.match(String(second.headers.link), /_page=1>; rel="prev"/)
  } finally {
    await server.close()
  }
})

declared('a plain page is the very text a filtered listing serialises: key order, numbers and escapes as a parsed document gives them', async () => {
  const server = await startServer()
  try {
    // Bodies sent as text: numbers written the long way, escapes, nesting and key order a serialiser must keep.
    const bodies = [
      '{"b": 1.50, "a": 1e2, "text": "caf\\u00e9 \\"quoted\\" \\/ tab\\t", "nested": {"z": [1, {"y": null}], "x": true}}',
      '{\n  "emoji": "\u{1F600}",\n  "line": "two\\nlines",\n  "big": 1.5e300,\n  "small": -0.25\n}',
      '{"empty": {}, "list": [], "s": ""}',
    ]
    for (const [index, body] of bodies.entries()) {
      const written = await server.request('PUT', `/texts/t${index}`, { body, headers: { 'content-type': 'application/json' } })
      assert.is(written.status, 201)
    }
    // Read once, so a store with a cache answers the page from it; then a page, and the same window through the filter path.
    for (let index = 0; index < bodies.length; index++) await server.request('GET', `/texts/t${index}`)
    const page = await server.request('GET', '/texts?_start=0&_limit=10')
    const filtered = await server.request('GET', '/texts?id_ne=none&_start=0&_limit=10')
    assert.is(page.status, 200)
    assert.is(page.text, filtered.text)
    assert.is(page.text, `${JSON.stringify(page.json)}\n`)
    assert.is(page.headers['content-length'], String(Buffer.byteLength(page.text)))
    assert.equal(page.json[0], { id: 't0', b: 1.5, a: 100, text: 'caf\u00e9 "quoted" / tab\t', nested: { z: [1, { y: null }], x: true } })
    // A 0.17 page (_page without _per_page) goes the same way, with its Link header.
    const paged = await server.request('GET', '/texts?_page=2&_limit=2')
    assert.is(paged.text, `${JSON.stringify([page.json[2]])}\n`)
    assert.match(String(paged.headers.link), /rel="first"/)
  } finally {
    await server.close()
  }
})

declared.run()
