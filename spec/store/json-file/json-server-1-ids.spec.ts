import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Answer } from '../../support/helpers.ts'
import { startPair, type Pair } from '../../support/side-by-side.ts'

// json-server 1.0's new ids in its mode (docs/json-server.md, "json-server 1.0's mode"), on a
// db.json: an item created, and an item the file holds without an id, get 11 random base64url
// characters (1.0's randomId), and a listing follows the file's order, as 1.0's does.
// json-server 1.0 and restdir run on copies of one db.json and get the same requests.

const ID = /^[A-Za-z0-9_-]{11}$/

const pairs: Pair[] = []
test.after.each(async () => {
  for (const pair of pairs.splice(0)) await pair.close()
})

/** The items without their ids, which differ by chance. */
const withoutIds = (answer: Answer) => (answer.json as Array<Record<string, unknown>>).map(({ id: _id, ...rest }) => rest)

test("created items and an item without an id get ids of 1.0's form, listed in the file's order as 1.0 lists them", async () => {
  const db = { posts: [{ id: 'b', title: 'one' }, { title: 'no id' }, { id: '10', title: 'two' }], comments: [] }
  const pair = await startPair(db, { jsonServer: { version: '1.0', how: 'module' }, restdir: { options: { jsonServer: '1' } } })
  pairs.push(pair)
  const ours: string[] = []
  for (const title of ['c', 'a', 'b', 'e', 'd', 'f', 'h', 'g']) {
    const [theirs, ourAnswer] = await pair.both('POST', '/posts', { body: { title } })
    assert.is(ourAnswer.status, theirs.status, `POST ${title}`)
    const theirId = (theirs.json as { id: string }).id
    const ourId = (ourAnswer.json as { id: string }).id
    assert.ok(ID.test(theirId), `1.0's id ${theirId} is of the form the test asks`)
    assert.ok(ID.test(ourId), `restdir's id ${JSON.stringify(ourId)} is 11 base64url characters`)
    assert.equal(withoutIds({ json: [ourAnswer.json] } as Answer), withoutIds({ json: [theirs.json] } as Answer), `POST ${title}: the same item`)
    ours.push(ourId)
  }
  assert.is(new Set(ours).size, ours.length, 'every new id is its own')
  const [theirs, ourList] = await pair.both('GET', '/posts')
  assert.equal(withoutIds(ourList), withoutIds(theirs), 'the same items in the same order')
  const idless = (list: Answer) => (list.json as Array<{ id: unknown; title: string }>).find((item) => item.title === 'no id')?.id
  assert.ok(ID.test(String(idless(theirs))), "1.0 gives the file's item without an id one of its ids")
  assert.ok(ID.test(String(idless(ourList))), `restdir gives it one of 1.0's form too: ${JSON.stringify(idless(ourList))}`)
  for (const id of ours) assert.is((await pair.restdir.request('GET', `/posts/${id}`)).status, 200, `GET /posts/${id}`)
})

test.run()
