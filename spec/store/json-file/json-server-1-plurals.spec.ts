import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Answer } from '../../support/helpers.ts'
import { startPair, type Pair } from '../../support/side-by-side.ts'

// json-server 1.0's plurals in its mode (docs/json-server.md, "json-server 1.0's mode"): 1.0 names
// a foreign key by `inflection.singularize` of the collection (`people` → `personId`) and the
// collection of a singular `_embed` by `inflection.pluralize` (`person` → `people`), where 0.17's
// `pluralize` makes other words (`heroes` → `hero` in both, `hero` → `heros` in 1.0 alone).
// json-server 1.0 and restdir run on copies of one db.json and get the same requests.

const pairs: Pair[] = []
test.after.each(async () => {
  for (const pair of pairs.splice(0)) await pair.close()
})

function assertSame([theirs, ours]: [Answer, Answer], what: string): void {
  assert.is(ours.status, theirs.status, `${what}: json-server 1.0 answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, `${what}: the same JSON`)
}

const db = {
  people: [{ id: '1', name: 'ada' }, { id: '2', name: 'bob' }],
  children: [{ id: '1', personId: '1', name: 'cy' }, { id: '2', personId: '2', name: 'di' }, { id: '3', personId: '1', name: 'ed' }],
  toys: [{ id: '1', childId: '1', heroId: '1' }, { id: '2', childId: '3', heroId: '2' }],
  heros: [{ id: '1', name: 'x' }],
  heroes: [{ id: '2', name: 'y' }],
  sheep: [{ id: '1', name: 'dolly' }],
  fleeces: [{ id: '1', sheepId: '1' }],
}

test("irregular and uncountable names embed and cascade as json-server 1.0's inflection names them", async () => {
  const pair = await startPair(db, { jsonServer: { version: '1.0', how: 'module' }, restdir: { options: { jsonServer: '1' } } })
  pairs.push(pair)
  for (const target of [
    '/people?_embed=children',
    '/people/1?_embed=children',
    '/children?_embed=person',
    '/children/2?_embed=person',
    '/toys?_embed=child',
    '/toys?_embed=hero',
    '/sheep?_embed=fleeces',
    '/fleeces?_embed=sheep',
  ]) {
    assertSame(await pair.both('GET', target), `GET ${target}`)
  }
  assertSame(await pair.both('DELETE', '/people/1?_dependent=children'), 'DELETE /people/1?_dependent=children')
  assertSame(await pair.both('DELETE', '/children/2'), 'DELETE /children/2')
  for (const target of ['/children', '/toys']) assertSame(await pair.both('GET', target), `GET ${target} after the DELETEs`)
  const [, ours] = await pair.both('GET', '/children')
  // Not a check that cannot fail: the DELETEs took children.
  assert.is((ours.json as unknown[]).length, 0, 'every child went')
})

test.run()
