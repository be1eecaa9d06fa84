import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { importDatabase } from '../../lib/data/import.ts'
import type { ListingPage, Store } from '../../lib/store/store.ts'
import { makeTempDir, openTestStore, startServer, testStoreKind, wrapStore, type Answer } from '../support/helpers.ts'
import { startJsonServer, startPair, type Pair, type Side } from '../support/side-by-side.ts'

// json-server 1.0's filters in `--json-server 1` (docs/json-server.md, "json-server 1.0's mode"),
// side by side with json-server 1.0 itself on a db.json of the same data, on every store and on
// every way a listing is answered: the store's own query (PostgreSQL's SQL), the listing index
// kept in the process (a folder and memory, built by the first filtered listing), and the scan of
// every document (lib/listing/match.ts), which a store whose query answers nothing gets. 1.0
// compares values typed: `?views=7` is the number 7, never the text "7"; `<` is JavaScript's; and
// a `_where` object without a known operator holds wherever the field is no object.

/** Values of every JSON type in the same fields, ids as 1.0 keeps them (strings), in id order as the file holds them. */
const db = {
  posts: [
    { id: '1', title: 'Alpha', views: 7, published: true, rating: 4.5, author: { name: 'ada', age: 36 }, postId: '1' },
    { id: '2', title: 'beta', views: '7', published: 'true', rating: '4.5', author: 'ada', postId: 1 },
    { id: '3', title: 'Gamma', views: 70, published: false, rating: null, author: { name: 'bob' } },
    { id: '4', title: 'delta', views: null, author: null, postId: null },
    { id: '5', title: '7', views: '70', code: '' },
    { id: '6', title: 'Epsilon', views: [7], author: ['ada'], code: ' 7 ' },
    { id: '7', title: 'zeta', views: { n: 7 }, author: { name: { first: 'ada' } }, code: '0x10' },
    { id: '8', title: 'Eta', published: 0, rating: '10' },
    { id: '9' },
    { id: '10', title: 'theta', views: 1000, published: 1, rating: 10, author: {} },
    // Members whose names hold a dot, which a `_where` key holding one names.
    { id: '11', title: 'iota', 'author.name': 'ada', author: { name: 'bob', 'x.y': 1 } },
    { id: '12', title: 'kappa', 'author.name': { first: 'ada' }, author: { name: 'ada', 'x.y': 2 } },
  ],
}

const where = (condition: unknown) => `/posts?_where=${encodeURIComponent(JSON.stringify(condition))}`

/**
 * A query of each group: `sql` when PostgreSQL judges its every condition in SQL
 * (lib/store/postgres/listing-query.ts), `process` when it leaves the query to the process
 * (a text compared with a number that Number() reads in a form SQL does not: blank, ` 7 `,
 * `0x10`), `none` when it has no condition at all to ask of a store.
 */
type Target = { target: string; answered: 'sql' | 'process' | 'none' }
const inSql = (...targets: string[]): Target[] => targets.map((target) => ({ target, answered: 'sql' }))

/** Values compared typed, as json-server 1.0 compares them. */
const TYPED: Target[] = [
  // A query's values as 1.0 reads them: numbers, booleans and null typed, the rest text.
  ...inSql('/posts?views=7', '/posts?views=70', '/posts?id=1', '/posts?id=10', '/posts?title=7', '/posts?published=true', '/posts?published=false'),
  ...inSql('/posts?rating=null', '/posts?rating=4.5', '/posts?postId=1', '/posts?postId=null', '/posts?postId:ne=1'),
  ...inSql('/posts?views:ne=7', '/posts?views:in=7,70', '/posts?rating:in=null,4.5,10', '/posts?id:in=1,2', '/posts?views:eq=7&published:eq=true'),
  ...inSql('/posts?title:contains=ETA', '/posts?views:contains=7', '/posts?title:startsWith=e', '/posts?title:endsWith=A', '/posts?title:contains='),
  ...inSql('/posts?title:gt=beta', '/posts?title:lt=a', '/posts?title:gte=Eta', '/posts?views:gt=abc', '/posts?title:lt=8'),
  ...inSql('/posts?published:lt=true', '/posts?published:gte=1', '/posts?rating:gte=null', '/posts?rating:gt=4.5'),
  ...inSql('/posts?views:gt=7', '/posts?views:gte=7', '/posts?views:lt=70', '/posts?views:lte=0', '/posts?views:gt=', where({ views: { gte: null } })),
  // 0.17's suffixes, which 1.0 reads too.
  ...inSql('/posts?views_ne=7', '/posts?title_contains=a', '/posts?views_gte=7'),
  // _where: operands of every type, an array or object standing for its String() and equal to nothing.
  ...inSql(where({ views: { gt: '5' } }), where({ views: { lt: [8] } }), where({ title: { gte: ['E'] } }), where({ views: { eq: { n: 7 } } }), where({ views: { ne: { n: 7 } } })),
  ...inSql(where({ views: { in: [7, '7', null] } }), where({ rating: { eq: 4.5 } }), where({ published: { eq: 'true' } }), where({ title: { contains: 7 } })),
  ...inSql(where({ or: [{ views: { eq: 7 } }, { title: { eq: '7' } }] }), where({ views: { gt: 5, lt: 100 } })),
  ...['/posts?code:lt=1', '/posts?code:gte=0', where({ code: { lte: 16 } }), where({ code: { gt: false } })].map((target): Target => ({ target, answered: 'process' })),
]

/** An object without a known operator: it holds where the field is no object, and otherwise holds its conditions on the field's members. */
const WITHOUT_OPERATOR: Target[] = [
  // A query's field below another builds one (`{"author":{"name":{"eq":"ada"}}}`).
  ...inSql('/posts?author.name=ada', '/posts?author.name.first=ada', '/posts?author.age:gt=30', '/posts?author.name:ne=bob'),
  ...inSql(where({ author: { age: { gt: 30 } } }), where({ author: {} }), where({ author: { name: { gtt: 1 } } }), where({ author: { name: 'ada' } })),
  ...inSql(where({ or: [{ author: { name: { eq: 'bob' } } }, { views: { gte: 1000 } }] }), where({ author: { or: [{ name: { eq: 'bob' } }] } })),
]

/** A `_where` key holding a dot names a member of that very name (`item["author.name"]`), as 1.0 reads it: judged in the process on every store. */
const DOTTED_KEY: Target[] = [
  where({ 'author.name': { eq: 'ada' } }), where({ 'author.name': { ne: 'x' } }), where({ 'author.name': { startsWith: 'A' } }),
  where({ 'author.name': {} }), where({ 'author.name': { first: { eq: 'ada' } } }), where({ 'author.name': { 'a.b': { eq: 1 } } }),
  where({ author: { 'x.y': { gte: 1 } } }), where({ author: { 'x.y': { eq: 2 }, name: { eq: 'ada' } } }),
  where({ or: [{ 'author.name': { eq: 'ada' } }, { views: { gte: 1000 } }] }),
].map((target): Target => ({ target, answered: 'process' }))

function assertSame(theirs: Answer, ours: Answer, what: string): void {
  assert.is(ours.status, theirs.status, `${what}: json-server 1.0 answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
  assert.equal(ours.json, theirs.json, `${what}: the same JSON`)
}

/** A fresh store of this pass holding `db`, and a server on it in 1.0's mode; `plain` makes its store answer no query (every document scanned). */
async function restdirOnThisPass(listing: 'store' | 'plain'): Promise<{ side: Side; answered: () => number }> {
  const { store, dispose } = await openTestStore()
  await importDatabase(store, structuredClone(db))
  let answered = 0
  const wrapped: Store = wrapStore(store, {})
  if (listing === 'plain') wrapped.query = async () => undefined
  else if (store.query) {
    wrapped.query = async (path, plan): Promise<ListingPage | undefined> => {
      const page = await store.query!(path, plan)
      if (page) answered++
      return page
    }
  }
  const server = await startServer({ store: wrapped, jsonServer: '1' })
  const side: Side = {
    port: server.port,
    file: '',
    request: (method, target, options) => server.request(method, target, options),
    data: () => undefined,
    stdout: () => '',
    stderr: () => '',
    close: async () => {
      await server.close()
      await dispose()
    },
  }
  return { side, answered: () => answered }
}

/**
 * Each target of `targets` answered by json-server 1.0 and by restdir on this pass's store,
 * through the store's query or the listing index, and through the scan of every document.
 */
async function compareOnEveryPath(targets: readonly Target[]): Promise<void> {
  const folder = await makeTempDir('json-server-1-filters-')
  const file = join(folder, 'db.json')
  await writeFile(file, JSON.stringify(db, null, 2))
  const jsonServer = await startJsonServer(file, { version: '1.0', how: 'module' })
  const indexed = await restdirOnThisPass('store')
  const plain = await restdirOnThisPass('plain')
  try {
    const counts: number[] = []
    for (const { target, answered } of targets) {
      const theirs = await jsonServer.request('GET', target)
      assert.is(theirs.status, 200, `json-server 1.0: ${target}`)
      counts.push(theirs.json.length)
      const before = indexed.answered()
      assertSame(theirs, await indexed.side.request('GET', target), `${target} (the store's query or the listing index)`)
      // PostgreSQL answers in SQL what it can judge there, and hands the rest to the process.
      if (testStoreKind === 'postgres') assert.is(indexed.answered(), before + (answered === 'sql' ? 1 : 0), `${target}: answered ${answered === 'sql' ? 'in SQL' : 'in the process'}`)
      assertSame(theirs, await plain.side.request('GET', target), `${target} (every document scanned)`)
    }
    // The filters found something to tell apart: most queries keep some items and leave others.
    assert.ok(counts.filter((count) => count > 0 && count < db.posts.length).length > targets.length / 2, `counts: ${counts.join(', ')}`)
  } finally {
    await plain.side.close()
    await indexed.side.close()
    await jsonServer.close()
    await rm(folder, { recursive: true, force: true })
  }
}

/** Each target answered by json-server 1.0 and by restdir on a db.json (its listing index in the file's order). */
async function compareOnDbJson(targets: readonly Target[]): Promise<void> {
  const pair: Pair = await startPair(db, { jsonServer: { version: '1.0', how: 'module' }, restdir: { options: { jsonServer: '1' } } })
  try {
    for (const { target } of targets) {
      const [theirs, ours] = await pair.both('GET', target)
      assertSame(theirs, ours, target)
    }
  } finally {
    await pair.close()
  }
}

test(`filter values compare typed, as json-server 1.0 compares them, on the ${testStoreKind} store: its query or the listing index, and the scan of every document`, () => compareOnEveryPath(TYPED))

test(`a _where object without a known operator holds where the field is no object, as in json-server 1.0, on the ${testStoreKind} store: its query or the listing index, and the scan`, () => compareOnEveryPath(WITHOUT_OPERATOR))

test(`a _where key holding a dot names a member of that very name, as in json-server 1.0, on the ${testStoreKind} store: its query or the listing index, and the scan`, () => compareOnEveryPath(DOTTED_KEY))

test('on a db.json, both answer as json-server 1.0 through the listing index the file keeps in its own order', () => compareOnDbJson([...TYPED, ...WITHOUT_OPERATOR, ...DOTTED_KEY]))

test.run()
