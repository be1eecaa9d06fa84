import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Answer } from '../../support/helpers.ts'
import { listingQueries, startPair, type Pair } from '../../support/side-by-side.ts'

// A db.json served by restdir and by json-server 0.17.4 (its own command line, unchanged), each on
// a copy of the same file, asked the same requests (docs/json-server.md, "Serving a db.json"):
// the file is its own declaration, and its empty collections are kept as json-server keeps them.

const pairs: Pair[] = []
test.after.each(async () => {
  for (const pair of pairs.splice(0)) await pair.close()
})

/** json-server 0.17.4's command and restdir, each on a copy of `db`. */
async function pairOn(db: unknown): Promise<Pair> {
  const pair = await startPair(db as object)
  pairs.push(pair)
  return pair
}

/** The two answers agree: the status, and (below 400) the JSON; a refusal's body is restdir's problem+json (docs/json-server.md). */
function assertSame([theirs, ours]: [Answer, Answer], what: string): void {
  assert.is(ours.status, theirs.status, `${what}: json-server answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, `${what}: the same JSON`)
}

test('a db.json with its own "user" object serves it as json-server does: a singular resource, no users family', async () => {
  const pair = await pairOn({ user: { name: 'ann', role: 'admin' }, posts: [{ id: 1, title: 'one' }] })
  assertSame(await pair.both('GET', '/user'), 'GET /user')
  assertSame(await pair.both('PATCH', '/user', { body: { role: 'owner' } }), 'PATCH /user')
  assertSame(await pair.both('PUT', '/user', { body: { name: 'bob' } }), 'PUT /user')
  assertSame(await pair.both('POST', '/user', { body: { name: 'cy' } }), 'POST /user')
  assertSame(await pair.both('GET', '/user'), 'GET /user after the writes')
  assertSame(await pair.both('GET', '/user/1'), 'GET /user/1')
  assertSame(await pair.both('GET', '/db'), 'GET /db')
  const [theirs, ours] = await pair.files()
  assert.equal(ours, theirs)
})

test('a db.json with its own "user" array serves a plain collection: integer ids, no user_id, a PATCH merges', async () => {
  const pair = await pairOn({ user: [{ id: 1, name: 'ann' }], playlist: [{ id: 1, userId: 1, name: 'mix' }] })
  assertSame(await pair.both('POST', '/user', { body: { name: 'bob' } }), 'POST /user')
  assertSame(await pair.both('PATCH', '/user/2', { body: { name: 'bobby' } }), 'PATCH /user/2')
  assertSame(await pair.both('GET', '/user?_sort=name&_order=desc'), 'GET /user sorted')
  assertSame(await pair.both('GET', '/user/1/playlist'), 'GET /user/1/playlist (a nested route)')
  assertSame(await pair.both('POST', '/user/1/playlist', { body: { name: 'two' } }), 'POST /user/1/playlist')
  assertSame(await pair.both('DELETE', '/user/2'), 'DELETE /user/2')
  assertSame(await pair.both('GET', '/playlist'), 'GET /playlist')
  const [theirs, ours] = await pair.files()
  assert.equal(ours, theirs)
})

const listings = (name: string) => listingQueries(name, [`/${name}?_embed=likes`])

test('an empty collection answers 200 [] to every query, as json-server does, and stays in the file and in GET /db', async () => {
  const pair = await pairOn({ posts: [{ id: 1, title: 'one' }], comments: [], profile: { name: 'x' } })
  for (const target of listings('comments')) assertSame(await pair.both('GET', target), `GET ${target}`)
  assertSame(await pair.both('GET', '/db'), 'GET /db')
  assertSame(await pair.both('POST', '/comments', { body: { body: 'first', postId: 1 } }), 'POST into the empty collection')
  const [theirs, ours] = await pair.files()
  assert.equal(ours, theirs)
})

test('a collection whose last item is deleted answers 200 [] to every query, whether or not a filtered listing ran before, and stays in the file and in GET /db', async () => {
  const pair = await pairOn({ posts: [{ id: 1, title: 'one' }], comments: [{ id: 1, postId: 1, body: 'a' }], notes: [{ id: 1, body: 'b' }] })
  // A filtered and a sorted listing of `comments` first (restdir then keeps a listing index of it); `notes` has none.
  assertSame(await pair.both('GET', '/comments?body=a'), 'a filtered listing')
  assertSame(await pair.both('GET', '/comments?_sort=body'), 'a sorted listing')
  assertSame(await pair.both('DELETE', '/comments/1'), 'DELETE /comments/1')
  assertSame(await pair.both('DELETE', '/notes/1'), 'DELETE /notes/1')
  for (const name of ['comments', 'notes']) {
    for (const target of listings(name)) assertSame(await pair.both('GET', target), `GET ${target}`)
  }
  assertSame(await pair.both('GET', '/db'), 'GET /db')
  const [theirs, ours] = await pair.files()
  assert.equal(ours, theirs)
  assert.equal(ours, { posts: [{ id: 1, title: 'one' }], comments: [], notes: [] })
})

test('a name the file does not hold is still a 404, as json-server answers it', async () => {
  const pair = await pairOn({ posts: [], profile: {} })
  assertSame(await pair.both('GET', '/nothing'), 'GET /nothing')
  assertSame(await pair.both('GET', '/nothing?_sort=id'), 'GET /nothing sorted')
  assertSame(await pair.both('GET', '/profile'), 'GET /profile (an empty object)')
})

test.run()
