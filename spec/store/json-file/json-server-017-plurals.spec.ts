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

test.run()
