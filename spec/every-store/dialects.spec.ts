import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { send, type Answer } from '../support/helpers.ts'
import { startPair as startSideBySide, type Pair } from '../support/side-by-side.ts'

// json-server 1.0's own answers, recorded by this run: the same db.json is
// served by json-server@1.0.0-beta.15 (installed in bench/json-server-1/ on
// first use, started here on port 0 against a temporary copy) and imported
// into restdir, and each request of json-server's README ("Query
// Capabilities") is sent to both, exactly as written.

const db = {
  posts: [
    { id: '1', title: 'a title', views: 100, author: { name: 'typicode' } },
    { id: '2', title: 'another title', views: 200, author: { name: 'alice' } },
    { id: '3', title: 'Hello world', views: 20, author: { name: 'bob' } },
    { id: '4', title: 'Hello', views: 150, author: { name: 'typicode' } },
    { id: '5', title: 'the end of the world', views: 5, author: { name: 'zed' } },
    { id: '6', title: 'six', views: 60, author: { name: 'alice' } },
    { id: '7', title: 'seven', views: 70, author: { name: 'max' } },
    { id: '8', title: 'eight', views: 80, author: { name: 'nina' } },
    { id: '9', title: 'nine', views: 90, author: { name: 'otto' } },
    { id: '10', title: 'ten', views: 101, author: { name: 'paul' } },
    { id: '11', title: 'eleven', views: 110, author: { name: 'quinn' } },
    { id: '12', title: 'twelve', views: 120, author: { name: 'rita' } },
  ],
  comments: [
    { id: '1', text: 'a comment about post 1', postId: '1' },
    { id: '2', text: 'another comment about post 1', postId: '1' },
    { id: '3', text: 'about post 3', postId: '3' },
    { id: '4', text: 'about a post that is gone', postId: '99' },
  ],
  profile: { name: 'typicode' },
}

const where = (condition: unknown) => `/posts?_where=${encodeURIComponent(JSON.stringify(condition))}`

/** Requests from json-server 1.0's README, each answered alike by both servers. */
const documented = [
  '/posts?views:gt=100',
  '/posts?title:eq=Hello',
  '/posts?author.name:eq=typicode',
  '/posts?title:contains=hello',
  '/posts?title:startsWith=Hello',
  '/posts?title:endsWith=world',
  '/posts?views:gte=100&views:lte=150',
  '/posts?views:lt=60',
  '/posts?views:ne=100',
  '/posts?views_gt=100', // 0.17's suffix, which 1.0 reads too
  '/posts?_sort=-views',
  '/posts?_sort=author.name,-views',
  '/posts?_page=1&_per_page=25',
  '/posts?_page=1&_per_page=5',
  '/posts?_page=2&_per_page=5',
  '/posts?_page=3&_per_page=5',
  '/posts?_page=9&_per_page=5', // past the last page: the last page
  '/posts?views:gt=50&_sort=-views&_page=2&_per_page=3',
  '/posts?_embed=comments',
  '/comments?_embed=post',
  '/posts/1?_embed=comments',
  where({ or: [{ views: { gt: 100 } }, { author: { name: { lt: 'm' } } }] }),
  where({ views: { gte: 60, lt: 100 } }),
  where({ author: { name: { in: ['alice', 'bob'] } } }),
  where({ or: [{ title: { startsWith: 'hello' } }, { views: { lte: 5 } }] }),
]

/** json-server 1.0's module as its command line uses it, on port 0 in this process, beside restdir on this pass's store. */
const startPair = () => startSideBySide(db, { jsonServer: { version: '1.0', how: 'module' }, restdir: { store: 'this pass' } })

const compared = suite<{ pair: Pair }>('the same requests to json-server 1.0 and to restdir', { pair: undefined as unknown as Pair })
compared.before(async (context) => {
  context.pair = await startPair()
})
compared.after(async ({ pair }) => {
  await pair.close()
})

const ask = (server: { port: number }, method: string, target: string) => send(server.port, method, target)

compared('every query of json-server 1.0\'s README answers what json-server answers', async ({ pair }) => {
  for (const target of documented) {
    const theirs = await ask(pair.jsonServer, 'GET', target)
    const ours = await ask(pair.restdir, 'GET', target)
    assert.is(theirs.status, 200, `json-server: ${target}`)
    assert.is(ours.status, 200, `restdir: ${target}: ${ours.text}`)
    assert.ok(Array.isArray(theirs.json) ? theirs.json.length > 0 : theirs.json !== undefined, `json-server finds something for ${target}`)
    assert.equal(ours.json, theirs.json, target)
  }
})

compared('a page in json-server 1.0\'s envelope counts the matches and names the pages around it', async ({ pair }) => {
  const theirs = await ask(pair.jsonServer, 'GET', '/posts?_page=2&_per_page=5')
  const ours = await ask(pair.restdir, 'GET', '/posts?_page=2&_per_page=5')
  assert.equal({ ...(ours.json as object), data: undefined }, { first: 1, prev: 1, next: 3, last: 3, pages: 3, items: 12, data: undefined })
  assert.equal(ours.json, theirs.json)
  assert.is(ours.headers['x-total-count'], '12')
})

compared('where restdir answers otherwise, it is on purpose: ids and numbers compare as text', async ({ pair }) => {
  // json-server 1.0 turns `1` into a number and finds no post whose id is the string "1".
  assert.equal((await ask(pair.jsonServer, 'GET', '/posts?id:in=1,2,3')).json, [])
  assert.equal(((await ask(pair.restdir, 'GET', '/posts?id:in=1,2,3')).json as { id: string }[]).map((post) => post.id), ['1', '2', '3'])
  // json-server 1.0 skips an operator it does not know and answers every post; restdir says so.
  assert.is(((await ask(pair.jsonServer, 'GET', '/posts?views:gtt=100')).json as unknown[]).length, 12)
  assert.is((await ask(pair.restdir, 'GET', '/posts?views:gtt=100')).status, 400)
  // `_per_page` without `_page`: json-server 1.0 ignores it and answers every post; restdir asks for the page.
  assert.is(((await ask(pair.jsonServer, 'GET', '/posts?_per_page=4')).json as unknown[]).length, 12)
  assert.is((await ask(pair.restdir, 'GET', '/posts?_per_page=4')).status, 400)
})

compared.run()

const deleting = suite('DELETE with _dependent, on json-server 1.0 and on restdir')

deleting('DELETE /posts/1?_dependent=comments removes the post and its comments, as json-server does', async () => {
  const pair = await startPair()
  try {
    const theirs = await ask(pair.jsonServer, 'DELETE', '/posts/1?_dependent=comments')
    const ours = await ask(pair.restdir, 'DELETE', '/posts/1?_dependent=comments')
    assert.is(ours.status, 200)
    assert.equal(ours.json, theirs.json)
    const left: Answer = await ask(pair.restdir, 'GET', '/comments')
    assert.equal((left.json as { id: string }[]).map((comment) => comment.id), ['3', '4'])
    assert.equal(left.json, (await ask(pair.jsonServer, 'GET', '/comments')).json)
    assert.is((await ask(pair.restdir, 'GET', '/posts/1')).status, 404)
    assert.is((await ask(pair.restdir, 'GET', '/posts/3')).status, 200)
  } finally {
    await pair.close()
  }
})

deleting.run()
