import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Answer } from '../../support/helpers.ts'
import { makeTempDir } from '../../support/helpers.ts'
import { startJsonServer, startPair, type Pair, type Side } from '../../support/side-by-side.ts'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'

// json-server 0.17.4's plurals (docs/json-server.md, "The json-server mode"): it names a foreign
// key by `pluralize.singular` of the collection (`people` → `personId`) and the collection of a key
// or an `_expand` by `pluralize` (`child` → `children`), irregular and uncountable words included.
// json-server's command and restdir run on copies of one db.json; the same requests go to both,
// and the answers and files are compared: `_embed`, `_expand`, nested routes and the cascade.

const pairs: Pair[] = []
test.after.each(async () => {
  for (const pair of pairs.splice(0)) await pair.close()
})

/** The same status, and below 400 the same JSON (a refusal's body is restdir's problem+json, docs/json-server.md). */
function assertSame([theirs, ours]: [Answer, Answer], what: string): void {
  assert.is(ours.status, theirs.status, `${what}: json-server answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, `${what}: the same JSON`)
}

const db = {
  people: [{ id: 1, name: 'ada' }, { id: 2, name: 'bob' }],
  children: [{ id: 1, personId: 1, name: 'cy' }, { id: 2, personId: 2, name: 'di' }, { id: 3, personId: 1, name: 'ed' }],
  toys: [{ id: 1, childId: 1, name: 'kite' }, { id: 2, childId: 3, name: 'ball' }, { id: 3, childId: 2, name: 'drum' }],
  sheep: [{ id: 1, name: 'dolly' }],
  fleeces: [{ id: 1, sheepId: 1 }, { id: 2, sheepId: 1 }],
  categories: [{ id: 1, title: 'tools' }],
  analyses: [{ id: 1, categoryId: 1 }],
}

test('irregular and uncountable names join, nest and cascade as json-server 0.17 names them', async () => {
  const pair = await startPair(db)
  pairs.push(pair)
  for (const target of [
    '/people?_embed=children',
    '/people/1?_embed=children',
    '/children?_expand=person',
    '/children/2?_expand=person',
    '/children?_embed=toys&_expand=person',
    '/toys?_expand=child',
    '/sheep?_embed=fleeces',
    '/fleeces?_expand=sheep',
    '/categories?_embed=analyses',
    '/analyses/1?_expand=category',
    '/people/1/children',
    '/people/2/children?_sort=name',
    '/children/1/toys',
    '/sheep/1/fleeces',
  ]) {
    assertSame(await pair.both('GET', target), `GET ${target}`)
  }
  assertSame(await pair.both('POST', '/people/2/children', { body: { name: 'fay' } }), 'POST /people/2/children')
  assertSame(await pair.both('GET', '/people/2/children'), 'GET /people/2/children after the POST')
  // The cascade: each item whose key names no item of that key's collection goes with the person.
  assertSame(await pair.both('DELETE', '/people/1'), 'DELETE /people/1')
  let [theirs, ours] = await pair.files()
  assert.equal(ours, theirs, 'the same file after DELETE /people/1')
  assertSame(await pair.both('DELETE', '/children/2'), 'DELETE /children/2')
  assertSame(await pair.both('DELETE', '/sheep/1'), 'DELETE /sheep/1')
  ;[theirs, ours] = await pair.files()
  assert.equal(ours, theirs, 'the same file after the cascades')
  // Not a check that cannot fail: the cascade took someone's children.
  assert.is((ours as { children: unknown[] }).children.length, 1, 'the children of ada and of di went')
})

// A singular `_embed` name (docs/json-server.md, "What still differs"): 0.17 embeds the sibling
// collection of that very name by its `commentId`, and where there is none answers `[]` for every
// item; the mode does the first as 0.17 does, and for the second answers json-server 1.0's parent
// (`_embed=person` → `/people/:personId`), compared with 1.0 itself on the same file. String ids,
// which 1.0's reading would make of numbers anyway.
const singularDb = {
  posts: [{ id: '1', title: 'a' }, { id: '2', title: 'b' }],
  post: [{ id: '1', commentId: '2', text: 'p' }, { id: '2', commentId: '1', text: 'q' }],
  comments: [{ id: '1', postId: '1', body: 'x' }, { id: '2', postId: '2', body: 'y' }],
  people: [{ id: '1', name: 'ada' }, { id: '2', name: 'bob' }],
  children: [{ id: '1', personId: '2', name: 'cy' }, { id: '2', personId: '1', name: 'di' }],
  categories: [{ id: '1', title: 'tools' }],
  analyses: [{ id: '1', categoryId: '1' }, { id: '2', categoryId: '9' }],
  profile: { name: 'me', commentId: '1' },
}

test("a singular _embed name embeds the collection of that name as 0.17 does, and else 1.0's parent where 0.17 answers []", async () => {
  const pair = await startPair(singularDb)
  pairs.push(pair)
  for (const target of ['/comments?_embed=post', '/comments/1?_embed=post', '/comments?_embed=profile', '/comments?_embed=post&_expand=post']) {
    assertSame(await pair.both('GET', target), `GET ${target}`)
  }
  const [, ours] = await pair.both('GET', '/comments/1?_embed=post')
  // Not a check that cannot fail: 0.17's answer here holds data, the item of `post` naming comment 1.
  assert.equal(ours.json.post, [singularDb.post[1]], 'the post item whose commentId is 1')

  const dir = await makeTempDir('restdir-singular-embed-')
  const file = path.join(dir, 'db.json')
  await writeFile(file, JSON.stringify(singularDb, null, 2))
  let version1: Side | undefined
  try {
    version1 = await startJsonServer(file, { version: '1.0', how: 'module' })
    for (const [target, name] of [
      ['/children?_embed=person', 'person'],
      ['/children/2?_embed=person', 'person'],
      ['/analyses?_embed=category', 'category'],
      ['/posts?_embed=comment', 'comment'],
    ]) {
      const [theirs, ours] = await pair.both('GET', target)
      const items = (answer: { json: any }) => (Array.isArray(answer.json) ? answer.json : [answer.json]) as Record<string, unknown>[]
      assert.is(theirs.status, 200, `GET ${target}: json-server 0.17 answered ${theirs.status}`)
      for (const item of items(theirs)) assert.equal(item[name], [], `GET ${target}: json-server 0.17 embeds nothing, an empty array in every item`)
      const one = await version1.request('GET', target)
      assert.is(ours.status, one.status, `GET ${target}: json-server 1.0 answered ${one.status} ${one.text}, restdir ${ours.status} ${ours.text}`)
      assert.equal(ours.json, one.json, `GET ${target}: the mode answers json-server 1.0's parent`)
    }
  } finally {
    await version1?.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test.run()
