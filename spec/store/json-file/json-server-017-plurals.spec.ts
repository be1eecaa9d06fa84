import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Answer } from '../../support/helpers.ts'
import { startPair, type Pair } from '../../support/side-by-side.ts'

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
// item whatever the data holds; the 0.17 mode answers both as json-server 0.17.4 does, and
// `--json-server 1` answers json-server 1.0's parent (`_embed=person` → `/people/:personId`), each
// compared with that json-server itself on the same file. String ids, which 1.0's reading would
// make of numbers anyway.
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

/** Singular `_embed` names that name no collection of the file, and the name each embeds. */
const parents = [
  ['/children?_embed=person', 'person'],
  ['/children/2?_embed=person', 'person'],
  ['/analyses?_embed=category', 'category'],
  ['/posts?_embed=comment', 'comment'],
  ['/people/1/children?_embed=person', 'person'],
] as const

const itemsOf = (answer: Answer) => (Array.isArray(answer.json) ? answer.json : [answer.json]) as Record<string, unknown>[]

test('a singular _embed name embeds the collection of that very name, or nothing, as json-server 0.17.4 does', async () => {
  const pair = await startPair(singularDb)
  pairs.push(pair)
  for (const target of ['/comments?_embed=post', '/comments/1?_embed=post', '/comments?_embed=profile', '/comments?_embed=post&_expand=post']) {
    assertSame(await pair.both('GET', target), `GET ${target}`)
  }
  const [, ours] = await pair.both('GET', '/comments/1?_embed=post')
  // Not a check that cannot fail: 0.17's answer here holds data, the item of `post` naming comment 1.
  assert.equal(ours.json.post, [singularDb.post[1]], 'the post item whose commentId is 1')
  for (const [target, name] of parents) {
    const answers = await pair.both('GET', target)
    assertSame(answers, `GET ${target}`)
    // Not a check that cannot fail: the items have parents there (1.0 embeds them, below), and 0.17 none.
    const [theirs] = answers
    assert.ok(itemsOf(theirs).length > 0, `GET ${target}: json-server 0.17 answered items`)
    for (const item of itemsOf(theirs)) assert.equal(item[name], [], `GET ${target}: json-server 0.17 embeds an empty array in every item`)
  }
})

test("with --json-server 1, a singular _embed name is json-server 1.0's parent", async () => {
  const pair = await startPair(singularDb, { jsonServer: { version: '1.0', how: 'module' }, restdir: { options: { jsonServer: '1' } } })
  pairs.push(pair)
  // 1.0 has no nested routes: the nested target is 0.17's alone.
  for (const [target, name] of parents.filter(([target]) => !target.startsWith('/people/'))) {
    const answers = await pair.both('GET', target)
    assertSame(answers, `GET ${target}`)
    const [, ours] = answers
    // Not a check that cannot fail: where 0.17 answers `[]`, these items get a document (no member where the key names none).
    if (name !== 'comment') assert.ok(itemsOf(ours).some((item) => item[name] !== undefined && !Array.isArray(item[name])), `GET ${target}: the mode embeds a parent`)
  }
})

test.run()
