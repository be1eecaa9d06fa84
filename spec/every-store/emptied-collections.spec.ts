import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { RestdirOptions } from '../../lib/options.ts'
import type { Answer } from '../support/helpers.ts'
import { listingQueries, startPair, startRestdirOnThisPass, type Side } from '../support/side-by-side.ts'

// A collection whose last item is deleted, on every store (docs/json-server.md, "The json-server
// mode"): in the mode it is still a collection, `200 []` to every query as json-server 0.17.4 answers
// (run side by side on a db.json of the same data), whether or not a listing index was built for it;
// without the mode it is gone, `404` to every query alike.

const db = {
  posts: [{ id: 1, title: 'one' }],
  comments: [{ id: 1, postId: 1, body: 'a' }],
  notes: [{ id: 1, body: 'b' }],
}

/** Every kind of listing query json-server 0.17 takes. */
const listings = (name: string) => listingQueries(name)

const closing: Array<() => Promise<void>> = []
test.after.each(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

async function restdirOn(options: RestdirOptions): Promise<Side> {
  const server = await startRestdirOnThisPass(db, { options })
  closing.push(() => server.close())
  return server
}

function assertSame(theirs: Answer, ours: Answer, what: string): void {
  assert.is(ours.status, theirs.status, `${what}: json-server answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, `${what}: the same JSON`)
}

test('in the json-server mode, a collection whose last item was deleted answers 200 [] to every query, as json-server 0.17.4, index or not', async () => {
  const pair = await startPair(db, { restdir: { store: 'this pass', options: { jsonServer: true } } })
  closing.push(() => pair.close())
  const both = async (method: string, target: string) => {
    const [theirs, ours] = await pair.both(method, target)
    assertSame(theirs, ours, `${method} ${target}`)
  }
  // `comments` is listed filtered and sorted first, so restdir keeps a listing index of it; `notes` never is.
  await both('GET', '/comments?body=a')
  await both('GET', '/comments?_sort=body')
  await both('DELETE', '/comments/1')
  await both('DELETE', '/notes/1')
  for (const name of ['comments', 'notes']) {
    for (const target of listings(name)) await both('GET', target)
  }
  await both('GET', '/db')
  await both('GET', '/nothing')
  // A new item makes it a collection of one again, on both.
  await both('POST', '/notes')
  await both('GET', '/notes')
})

test('in the json-server mode, a collection removed as a whole is gone: 404', async () => {
  const restdir = await restdirOn({ jsonServer: true })
  assert.is((await restdir.request('DELETE', '/notes/1')).status, 200)
  assert.is((await restdir.request('GET', '/notes')).status, 200)
  assert.is((await restdir.request('DELETE', '/comments')).status, 204)
  for (const target of ['/comments', '/comments?_sort=body', '/comments?_page=1']) assert.is((await restdir.request('GET', target)).status, 404, target)
  assert.not.ok('comments' in ((await restdir.request('GET', '/db')).json as object), 'GET /db leaves it out')
})

test('without the mode, a collection whose last item was deleted is a 404 to every query, index or not', async () => {
  const restdir = await restdirOn({})
  assert.equal((await restdir.request('GET', '/comments?_sort=body')).json, [db.comments[0]])
  assert.is((await restdir.request('DELETE', '/comments/1')).status, 200)
  for (const target of listings('comments').slice(0, -1)) {
    const answer = await restdir.request('GET', target)
    assert.is(answer.status, 404, `${target}: ${answer.text}`)
  }
})

test.run()
