import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startPair, type Pair } from '../support/side-by-side.ts'

// json-server 1.0's `_embed` of a name in its mode (docs/json-server.md, "json-server 1.0's mode") on
// every store: a name the store has no collection of leaves each item as it is, and a collection
// emptied by deleting its last item is still one, embedded as `[]`. json-server 1.0 runs on a
// db.json; restdir on the store of this pass, the same data imported.

const pairs: Pair[] = []
test.after.each(async () => {
  for (const pair of pairs.splice(0)) await pair.close()
})

test("an _embed of a name is 1.0's on every store, an emptied collection's too", async () => {
  const db = { posts: [{ id: '1', title: 'one' }, { id: '2', title: 'two' }], comments: [{ id: '1', postId: '1' }] }
  const pair = await startPair(db, { jsonServer: { version: '1.0', how: 'module' }, restdir: { store: 'this pass', options: { jsonServer: '1' } } })
  pairs.push(pair)
  const targets = ['/posts?_embed=comments', '/posts/1?_embed=comments&_embed=nothing', '/posts?_embed=likes', '/comments?_embed=post']
  const compare = async (when: string) => {
    for (const target of targets) {
      const [theirs, ours] = await pair.both('GET', target)
      assert.is(ours.status, theirs.status, `GET ${target} ${when}: json-server 1.0 answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
      if (theirs.status < 400) assert.equal(ours.json, theirs.json, `GET ${target} ${when}: the same JSON`)
    }
  }
  await compare('')
  const [theirs, ours] = await pair.both('DELETE', '/comments/1')
  assert.equal([ours.status, theirs.status], [200, 200], 'the last comment deleted on both sides')
  await compare('once the comments are emptied')
  const [, embedded] = await pair.both('GET', '/posts/2?_embed=comments')
  // Not a check that cannot fail: the emptied collection is embedded, not left out.
  assert.equal(embedded.json.comments, [], 'an emptied collection embeds as []')
})

test.run()
