import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Answer } from '../../support/helpers.ts'
import { startPair, type Pair } from '../../support/side-by-side.ts'

// json-server 0.17.4's router where restdir's own reading would differ (docs/json-server.md, "The
// json-server mode"): a nested route's foreign key, the cascade of a DELETE, and writes to names the
// file does not have. Each test runs json-server's command and restdir on copies of one db.json,
// sends both the same requests, and compares the answers and the files.

const pairs: Pair[] = []
test.after.each(async () => {
  for (const pair of pairs.splice(0)) await pair.close()
})

async function pairOn(db: object): Promise<Pair> {
  const pair = await startPair(db)
  pairs.push(pair)
  return pair
}

/** The same status, and below 400 the same JSON (a refusal's body is restdir's problem+json, docs/json-server.md). */
function assertSame([theirs, ours]: [Answer, Answer], what: string): void {
  assert.is(ours.status, theirs.status, `${what}: json-server answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, `${what}: the same JSON`)
}

async function assertSameFiles(pair: Pair, what: string): Promise<void> {
  const [theirs, ours] = await pair.files()
  assert.equal(ours, theirs, `${what}: the same file`)
}

test("a nested route's foreign key is left out when no item of the collection has it, as any filter of 0.17 is", async () => {
  const pair = await pairOn({
    posts: [{ id: 1, title: 'one' }, { id: 2, title: 'two' }],
    comments: [{ id: 1, postId: 1, body: 'a' }, { id: 2, postId: 2, body: 'b' }, { id: 3, postId: 1, body: 'c' }],
    replies: [{ id: 1, text: 'x' }, { id: 2, text: 'y' }],
  })
  for (const target of [
    '/comments/1/replies',
    '/comments/9/replies',
    '/comments/1/replies?_sort=text&_order=desc',
    '/comments/1/replies?text=y',
    '/posts/1/comments',
    '/posts/9/comments',
    '/posts/1/comments?postId=2',
    '/posts/1/comments?body=c',
  ]) {
    assertSame(await pair.both('GET', target), `GET ${target}`)
  }
  // Once one reply has the key, it filters.
  assertSame(await pair.both('POST', '/comments/2/replies', { body: { text: 'z' } }), 'POST /comments/2/replies')
  for (const target of ['/comments/1/replies', '/comments/2/replies']) assertSame(await pair.both('GET', target), `GET ${target} once a reply has commentId`)
  await assertSameFiles(pair, 'after the nested POST')
})

test('a write to a name the file does not have is a 404, as json-server 0.17 (which routes only its file\'s names) answers it', async () => {
  const pair = await pairOn({ posts: [{ id: 1, title: 'one' }], comments: [], profile: { name: 'ann' } })
  const writes: Array<[string, string, object?]> = [
    ['POST', '/newthings', { title: 'x' }],
    ['PUT', '/newthing', { name: 'x' }],
    ['PATCH', '/newthing', { name: 'x' }],
    ['DELETE', '/newthing'],
    ['PUT', '/newthings/1', { title: 'x' }],
    ['PATCH', '/newthings/1', { title: 'x' }],
    ['DELETE', '/newthings/1'],
    ['POST', '/posts/1/newthings', { title: 'x' }],
    ['POST', '/db', { posts: [] }],
    // The file's own names, the emptied collection among them, take writes.
    ['POST', '/comments', { body: 'first', postId: 1 }],
    ['POST', '/posts/1/comments', { body: 'second' }],
    ['PUT', '/profile', { name: 'bob' }],
    ['PATCH', '/profile', { role: 'admin' }],
    ['POST', '/posts', { title: 'two' }],
  ]
  for (const [method, target, body] of writes) assertSame(await pair.both(method, target, body && { body }), `${method} ${target}`)
  for (const target of ['/newthings', '/newthing', '/db']) assertSame(await pair.both('GET', target), `GET ${target} after the writes`)
  await assertSameFiles(pair, 'after the writes')
})

test('a DELETE removes every orphan of the file, as json-server 0.17 does, in one pass: the answers and the files agree', async () => {
  const pair = await pairOn({
    posts: [{ id: 1, title: 'one' }, { id: 2, title: 'two' }, { id: 3, title: 'three' }],
    comments: [
      { id: 1, postId: 1, body: 'on the deleted post' },
      { id: 2, postId: 2, body: 'kept' },
      { id: 3, postId: '3', body: 'an id named as text is found' },
      { id: 4, postId: 9, body: 'an orphan before the DELETE' },
      { id: 5, postId: 2, userId: 7, body: 'one key of two names nothing' },
      { id: 6, categoryId: 4, body: 'no categories in the file: kept' },
      { id: 7, tagId: 1, body: 'the tags are an empty collection' },
      { id: 8, postId: 2, userId: 1, tagIdea: 'x', body: 'kept' },
      { id: 9, ownerId: 5, body: 'a singular resource: its values with an id are its items' },
      { id: 10, ownerId: 6, body: 'names none of them' },
    ],
    replies: [{ id: 1, commentId: 1, text: 'names a comment the cascade removes' }, { id: 2, commentId: 2, text: 'kept' }],
    users: [{ id: 1, name: 'ann' }],
    tags: [],
    profile: { name: 'ann', address: { userId: 99 } },
    owners: { main: { id: 5, name: 'bo' }, label: 'x' },
  })
  assertSame(await pair.both('DELETE', '/posts/1'), 'DELETE /posts/1')
  for (const target of ['/db', '/comments', '/replies', '/profile']) assertSame(await pair.both('GET', target), `GET ${target} after the first DELETE`)
  await assertSameFiles(pair, 'after the first DELETE')
  // The reply whose comment went is an orphan now: the next DELETE, of anything, takes it.
  assertSame(await pair.both('DELETE', '/users/1'), 'DELETE /users/1')
  for (const target of ['/db', '/comments', '/replies']) assertSame(await pair.both('GET', target), `GET ${target} after the second DELETE`)
  await assertSameFiles(pair, 'after the second DELETE')
})

test('where 0.17 fails a DELETE with a 500 (a foreign key that is null, an orphan without an id), restdir removes the item asked for and keeps those (docs/json-server.md)', async () => {
  const pair = await pairOn({
    posts: [{ id: 1, title: 'one' }, { id: 2, title: 'two' }],
    comments: [{ id: 1, postId: null, body: 'names nothing' }, { id: 2, postId: 2, body: 'kept' }],
    notes: [{ postId: 9, body: 'an orphan without an id' }],
  })
  const [theirs, ours] = await pair.both('DELETE', '/posts/1')
  assert.is(theirs.status, 500, `json-server 0.17 answers ${theirs.status} ${theirs.text}`)
  assert.is(ours.status, 200, ours.text)
  assert.equal((await pair.restdir.request('GET', '/db')).json, {
    posts: [{ id: 2, title: 'two' }],
    comments: [{ id: 1, postId: null, body: 'names nothing' }, { id: 2, postId: 2, body: 'kept' }],
    notes: [{ postId: 9, body: 'an orphan without an id' }],
  })
})

test('the cascade reads foreign keys by --foreignKeySuffix, as 0.17 reads them by its foreignKeySuffix', async () => {
  const pair = await startPair(
    { posts: [{ id: 1 }, { id: 2 }], comments: [{ id: 1, post_id: 1 }, { id: 2, post_id: 2 }, { id: 3, postId: 1 }, { id: 4, post_id: 7 }] },
    { jsonServer: { how: 'module', foreignKeySuffix: '_id' }, restdir: { options: { foreignKeySuffix: '_id' } } },
  )
  pairs.push(pair)
  assertSame(await pair.both('DELETE', '/posts/1'), 'DELETE /posts/1')
  assertSame(await pair.both('GET', '/comments'), 'GET /comments')
  await assertSameFiles(pair, 'after the DELETE')
})

test.run()
