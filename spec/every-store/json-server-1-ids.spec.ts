import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Answer } from '../support/helpers.ts'
import { startPair, type Pair } from '../support/side-by-side.ts'

// json-server 1.0's new ids in its mode (docs/json-server.md, "json-server 1.0's mode") on every
// store: 11 base64url characters, each its own, and a listing after several POSTs in the order
// 1.0 lists its file, the order they were made in, on a store that lists in id order too.
// json-server 1.0 runs on a db.json; restdir on the store of this pass, the same data imported.

const ID = /^[A-Za-z0-9_-]{11}$/

const pairs: Pair[] = []
test.after.each(async () => {
  for (const pair of pairs.splice(0)) await pair.close()
})

const withoutIds = (answer: Answer) => (answer.json as Array<Record<string, unknown>>).map(({ id: _id, ...rest }) => rest)

test("new ids are of 1.0's form, and a listing after several POSTs is 1.0's", async () => {
  const db = { posts: [{ id: '1', title: 'one' }, { id: '2', title: 'two' }] }
  const pair = await startPair(db, { jsonServer: { version: '1.0', how: 'module' }, restdir: { store: 'this pass', options: { jsonServer: '1' } } })
  pairs.push(pair)
  const ours: string[] = []
  // More than one a millisecond, and across milliseconds.
  const titles = Array.from({ length: 40 }, (_, i) => `t${(i * 7) % 40}`)
  for (const [i, title] of titles.entries()) {
    const [theirs, ourAnswer] = await pair.both('POST', '/posts', { body: { title } })
    assert.is(ourAnswer.status, theirs.status, `POST ${title}`)
    assert.ok(ID.test((theirs.json as { id: string }).id), "1.0's id is of the form the test asks")
    const id = (ourAnswer.json as { id: string }).id
    assert.ok(ID.test(id), `restdir's id ${JSON.stringify(id)} is 11 base64url characters`)
    ours.push(id)
    if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 3))
  }
  assert.is(new Set(ours).size, ours.length, 'every new id is its own')
  for (const target of ['/posts', '/posts?_page=2&_per_page=7', '/posts?title:ne=t3']) {
    const [theirs, ourList] = await pair.both('GET', target)
    const items = (answer: Answer) => withoutIds(Array.isArray(answer.json) ? answer : ({ json: (answer.json as { data: unknown[] }).data } as Answer))
    assert.ok(items(theirs).length > 5, `GET ${target}: 1.0 lists the posts`)
    assert.equal(items(ourList), items(theirs), `GET ${target}: the same items in the same order`)
  }
})

test.run()
