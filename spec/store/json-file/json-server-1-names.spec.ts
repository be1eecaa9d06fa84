import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Answer } from '../../support/helpers.ts'
import { startPair, type Pair } from '../../support/side-by-side.ts'

// Names json-server 1.0 finds no data of the file's for. An `_embed` naming no collection of the file
// (`nothing`, `toString`, a singular name whose plural is none) leaves each item as it is in 1.0,
// where 0.17 adds an empty array; an emptied collection is still one.
//
// Names every JavaScript object inherits (`toString`, `valueOf`, `constructor`, …) as json-server
// 1.0 reads them (docs/json-server.md, "json-server 1.0's mode"). A filter of the query string on
// such a name is dropped by 1.0's setProperty, which writes it into the inherited function instead,
// and by restdir, which writes nothing: the same answers. A `_where` naming one is read by 1.0 as
// `item[key]`, the inherited function for an item without that member: restdir's answer is 1.0's
// less those items. json-server 1.0 runs as its command, so that what its setProperty writes into
// Object.prototype's functions stays in its own process, on a copy of the same db.json.

const pairs: Pair[] = []
test.after.each(async () => {
  for (const pair of pairs.splice(0)) await pair.close()
})

type Item = Record<string, unknown>

// Typed by hand: TypeScript would read these members as the inherited ones'.
const db: { posts: Item[]; comments: Item[] } = {
  posts: [
    { id: '1', title: 'a', author: { name: 'x' } },
    { id: '2', title: 'b', constructor: 'Ada', toString: 'mine', author: { name: 'y', valueOf: 2 } },
    { id: '3', title: 'c', valueOf: 3 },
  ],
  comments: [{ id: '1', postId: '1' }],
}

function ids(answer: Answer): string[] {
  return (answer.json as Item[]).map((item) => String(item.id))
}

async function startVersion1(): Promise<Pair> {
  const pair = await startPair(db, { jsonServer: { version: '1.0', how: 'command', watch: false }, restdir: { options: { jsonServer: '1' } } })
  pairs.push(pair)
  return pair
}

test("a query-string filter on an inherited name is dropped, as json-server 1.0's setProperty drops it", async () => {
  const pair = await startVersion1()
  for (const target of [
    '/posts?toString=mine',
    '/posts?toString:ne=1',
    '/posts?valueOf=3',
    '/posts?valueOf_lt=5',
    '/posts?hasOwnProperty:ne=1',
    '/posts?isPrototypeOf:gt=1',
    '/posts?toLocaleString:contains=f',
    '/posts?propertyIsEnumerable.x=1',
    '/posts?author.valueOf=2',
    '/posts?title.toString=1',
    '/posts?title=a&toString=1',
    '/posts?toString=1&title=b',
    '/posts?constructor=Ada',
    '/posts?__proto__:ne=1',
    '/posts?title:ne=a&__lookupGetter__=1&_page=1',
  ]) {
    const [theirs, ours] = await pair.both('GET', target)
    assert.is(ours.status, theirs.status, `GET ${target}: json-server 1.0 answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
    assert.equal(ours.json, theirs.json, `GET ${target}: the same JSON`)
  }
  // Not a check that cannot fail: the filter beside the dropped one still holds.
  const [, ours] = await pair.both('GET', '/posts?title=a&toString=1')
  assert.equal(ids(ours), ['1'], 'title=a alone')
})

test("a _where naming an inherited member answers json-server 1.0's items less those without that member", async () => {
  const pair = await startVersion1()
  const where = (condition: object) => `/posts?_where=${encodeURIComponent(JSON.stringify(condition))}`
  const owns = (item: Item, name: string) => Object.hasOwn(item, name)
  const [, all] = await pair.both('GET', '/posts')
  const items = all.json as Item[]
  for (const [condition, name] of [
    [{ toString: { ne: 1 } }, 'toString'],
    [{ toString: { eq: 'mine' } }, 'toString'],
    [{ toString: { gt: 'a' } }, 'toString'],
    [{ valueOf: { lt: 5 } }, 'valueOf'],
    [{ valueOf: { ne: 3 } }, 'valueOf'],
    [{ constructor: { ne: 'x' } }, 'constructor'],
    [{ constructor: { eq: 'Ada' } }, 'constructor'],
    [{ hasOwnProperty: { in: [1, 2] } }, 'hasOwnProperty'],
  ] as const) {
    const [theirs, ours] = await pair.both('GET', where(condition))
    assert.is(ours.status, theirs.status, `${JSON.stringify(condition)}: json-server 1.0 answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
    const owning = new Set(items.filter((item) => owns(item, name)).map((item) => String(item.id)))
    assert.equal(ids(ours), ids(theirs).filter((id) => owning.has(id)), `${JSON.stringify(condition)}: 1.0's items that own ${name}`)
  }
  // Not a check that cannot fail: 1.0 keeps items without `toString` here, restdir does not.
  const [theirs, ours] = await pair.both('GET', where({ toString: { ne: 1 } }))
  assert.ok(ids(theirs).length > ids(ours).length, `the functions 1.0 compares are not data: 1.0 ${ids(theirs)}, restdir ${ids(ours)}`)
})

test('an _embed of a name the file has no collection of leaves each item as json-server 1.0 leaves it', async () => {
  const pair = await startVersion1()
  const targets = [
    '/posts?_embed=nothing',
    '/posts/1?_embed=things',
    '/posts?_embed=toString',
    '/posts/2?_embed=constructor',
    '/posts?_embed=__proto__&_embed=comments',
    '/posts?_embed=',
    '/posts?_embed=comments.postId',
    '/comments?_embed=post&_embed=posts',
    '/comments/1?_embed=person',
    '/posts/1?_embed=comments',
  ]
  const compare = async (when: string) => {
    for (const target of targets) {
      const [theirs, ours] = await pair.both('GET', target)
      assert.is(ours.status, theirs.status, `GET ${target} ${when}: json-server 1.0 answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
      // A refusal's body is restdir's problem+json (docs/json-server.md, "What still differs").
      if (theirs.status < 400) assert.equal(ours.json, theirs.json, `GET ${target} ${when}: the same JSON`)
    }
  }
  await compare('')
  // Not a check that cannot fail: a collection the file has is still embedded.
  const [, ours] = await pair.both('GET', '/posts/1?_embed=comments&_embed=nothing')
  assert.equal([ours.json.comments, 'nothing' in ours.json], [db.comments, false], 'the comments, and no member for nothing')
  const [theirs, deleted] = await pair.both('DELETE', '/comments/1')
  assert.equal([deleted.status, theirs.status], [200, 200], 'the last comment deleted on both sides')
  await compare('once the comments are emptied')
})

test.run()
