import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startPair } from '../support/side-by-side.ts'

// `GET /db` in the json-server mode (docs/json-server.md, "The json-server mode") beside
// json-server 0.17.4 itself, on the same db.json: collections and singular resources alike.

const db = {
  posts: [{ id: 1, title: 'json-server', author: 'typicode' }, { id: 2, title: 'restdir' }],
  comments: [{ id: 1, body: 'some comment', postId: 1 }],
  profile: { name: 'typicode', links: { site: 'https://example.com' } },
  settings: { theme: 'dark' },
}

test('GET /db answers what json-server 0.17.4 answers on the same db.json: each collection an array, each singular resource its object', async () => {
  const pair = await startPair(db, { jsonServer: { args: ['--quiet'] }, restdir: { store: 'this pass', options: { jsonServer: true } } })
  try {
    const [theirs, ours] = await pair.both('GET', '/db')
    assert.is(theirs.status, 200)
    assert.is(ours.status, theirs.status)
    assert.equal(ours.json, theirs.json)
    assert.equal(ours.json.profile, db.profile, 'a singular resource is its object, without an id of its own')
  } finally {
    await pair.close()
  }
})

test.run()
