import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryStore, PostgresStore } from '../../../lib/store/index.ts'
import type { ListingPage, Store } from '../../../lib/store/store.ts'
import { startServer, wrapStore, type Answer, type TestServer } from '../../support/helpers.ts'
import { adminQuery, fillCollection, filledDoc, freshSchema, startTestPostgres, type TestPostgres } from '../../support/postgres.ts'
import { seeded, seedFrom } from '../../support/random.ts'
import { randomDoc, randomQuery, type ListingMix } from '../../support/random-listing.ts'
import { linkWithoutOrigin } from '../../support/assertions.ts'

// Listing queries answered inside PostgreSQL (docs/postgres.md, "Running on PostgreSQL"):
// a page reads only its own documents into the process, and every answer is
// the one the listing gives in the process, which a second server on the
// same store, without the store's query, gives here to compare.
//
// Replay a run: QUERY_SEED=<the seed it printed> node spec/run.mjs postgres-query

const SEED = seedFrom('QUERY_SEED')

let postgres: TestPostgres | undefined

test.before(async () => {
  postgres = await startTestPostgres()
})

test.after(async () => {
  await postgres?.dispose()
})

/** The store, and the same store without `query`, so that a listing on it runs in the process. */
function withoutQuery(store: Store): Store {
  const inProcess = wrapStore(store, {})
  // A query that answers nothing: every listing is then made from every document, as a store
  // without one would make it were it not indexed in the process (docs/http-api.md, "Listing queries").
  inProcess.query = async () => undefined
  return inProcess
}

/** The store, counting what its listing queries answer and the documents read one by one. */
function counting(store: Store) {
  const counts = { queries: 0, answered: 0, texts: 0, reads: 0, fullListings: 0 }
  const counted = wrapStore(store, {
    before(operation, path) {
      if ((operation === 'read' || operation === 'readText') && path.length > 1) counts.reads++
    },
  })
  const { documentChildren } = counted
  counted.documentChildren = (path, start, end) => {
    if (end === undefined) counts.fullListings++
    return documentChildren!.call(counted, path, start, end)
  }
  counted.query = async (path, plan) => {
    counts.queries++
    const page: ListingPage | undefined = await store.query!(path, plan)
    if (page) {
      counts.answered++
      counts.texts += page.texts.length
    }
    return page
  }
  return { store: counted, counts }
}

function sameAnswer(sql: Answer, inProcess: Answer, what: string): void {
  assert.is(sql.status, inProcess.status, `${what}: status`)
  assert.equal(sql.json, inProcess.json, `${what}: body`)
  assert.is(sql.headers['x-total-count'], inProcess.headers['x-total-count'], `${what}: X-Total-Count`)
  assert.is(linkWithoutOrigin(sql.headers.link), linkWithoutOrigin(inProcess.headers.link), `${what}: Link`)
}

test('a filtered, sorted page of a 3 000-document collection brings only its 5 documents into the process, and equals the listing made there', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {} })
  await fillCollection(schema.url, 'books', 3000, 10)
  const { store: counted, counts } = counting(store)
  const server = await startServer({ store: counted })
  const inProcess = await startServer({ store: withoutQuery(store) })
  try {
    const target = '/books?author=author-7&_sort=-views&_page=3&_per_page=5'
    const answer = await server.request('GET', target)
    const expected = Array.from({ length: 3000 }, (_, index) => filledDoc(index + 1, 10))
      .filter((doc) => doc.author === 'author-7')
      .sort((a, b) => b.views - a.views)
    assert.is(answer.status, 200)
    assert.equal(answer.json.data, expected.slice(10, 15))
    assert.is(answer.json.items, 300)
    assert.equal(counts, { queries: 1, answered: 1, texts: 5, reads: 0, fullListings: 0 })
    sameAnswer(answer, await inProcess.request('GET', target), target)
  } finally {
    await server.close()
    await inProcess.close()
    await schema.drop()
  }
})

test('a collection holding a document SQL does not read exactly, and a plan SQL cannot express, are listed in the process, with the same answers', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {} })
  const { store: counted, counts } = counting(store)
  const server = await startServer({ store: counted })
  const inProcess = await startServer({ store: withoutQuery(store) })
  try {
    await server.request('PUT', '/plain/1', { body: { name: 'b', tags: ['x'] } })
    await server.request('PUT', '/plain/2', { body: { name: 'a', tags: ['y'] } })
    const sql = await server.request('GET', '/plain?_sort=name')
    assert.equal(sql.json.map((doc: { name: string }) => doc.name), ['a', 'b'])
    assert.is(counts.answered, 1)
    // A plan: an array's item by index, a case fold past ASCII.
    for (const target of ['/plain?tags.0=x', '/plain?name_like=É', '/plain?_sort=tags']) {
      sameAnswer(await server.request('GET', target), await inProcess.request('GET', target), target)
    }
    assert.is(counts.answered, 1, 'none of them answered in SQL')
    // Field names and values are parameters, never SQL.
    const hostile = `/plain?${encodeURIComponent("name') OR true; DROP TABLE restdir_nodes; --")}=x&name=${encodeURIComponent("a' OR '1'='1")}&_sort=${encodeURIComponent('name" DESC, "x')}`
    const injected = await server.request('GET', hostile)
    assert.equal([injected.status, injected.json], [200, []])
    assert.is(counts.answered, 2)
    assert.is((await server.request('GET', '/plain?_sort=name')).json.length, 2)
    // A document: a number past 15 digits, whose String() SQL does not write.
    await server.request('PUT', '/plain/3', { body: { name: 'c', n: 0.1 + 0.2 } })
    for (const target of ['/plain?_sort=-name', '/plain?n=0.30000000000000004']) {
      sameAnswer(await server.request('GET', target), await inProcess.request('GET', target), target)
    }
    assert.is(counts.answered, 3)
    // Text edited by hand that is no document: left out and named, as in the process.
    await adminQuery(schema.url, `UPDATE restdir_nodes SET text = '{"name": "d", "name": "e"}' WHERE parent = '/plain/' AND name = '3'`)
    const broken = await server.request('GET', '/plain?_sort=name')
    assert.match(String(broken.headers['x-restdir-skipped']), /\/plain\/3/)
    sameAnswer(broken, await inProcess.request('GET', '/plain?_sort=name'), 'with a broken document')
  } finally {
    await server.close()
    await inProcess.close()
    await schema.drop()
  }
})

// ---------------------------------------------------------------- the differential run

/**
 * Values that test the listing's rules: numbers and numeric strings, case, code-unit order, String() of arrays
 * and objects; no NUL character and no -0, which PostgreSQL's jsonb does not keep.
 */
const MIX: ListingMix = {
  texts: ['a', 'B', 'b', 'ab', 'Ab', '', ' ', 'x y', 'é', 'É', 'İx', 'ix', 'K', 'k', '😀', '\uffff', '\ue000', 'ß', 'a,b', 'true', 'null', '[object Object]', 'Zebra', 'zebra'],
  numericTexts: ['10', '2', '-3.5', '007', '0.5', '100', '2.50'],
  numbers: [0, 1, 2, 10, -3.5, 0.5, 2.25, 100, 0.000001, 123456789012345, 7],
  oddNumbers: ['1e3', ' 5', '0x10', 'Infinity', '5 ', '+5', '.5'],
  queryOnlyValues: ['x', 'a,b', '2', 'ZEB', 'EBR'],
  filterFields: ['a', 'n', 'b', 'o.p', 'tags', 'o'],
  sortFields: ['a', 'n', 'b', 'o.p', 'id'],
  conditions: ['equal', 'not-equal', 'range', 'like', 'text', 'in', 'compare', 'q', 'equal'],
  comparisons: ['gt', 'lte'],
  whereOperators: ['eq', 'ne', 'gt', 'lt', 'contains'],
  windows: ['per-page', 'page-limit', 'start-end', 'limit', 'whole'],
}

/**
 * The differential run: 400 seeded random queries over 250 seeded random documents, each answered by SQL on
 * PostgreSQL and by the listing in the process on a MemoryStore holding the same documents. With `indexed`,
 * every shape an index can serve gets one (docs/postgres.md, "Indexes for listings") as soon as it is first
 * answered, and the query is asked again, through the index. With `version1`, both servers answer in
 * json-server 1.0's mode, whose filters compare typed values (lib/listing/typed.ts); the query's `_limit`,
 * `_start` and `_end`, which 1.0 reads as filters on fields no item has, are left out.
 */
async function differentialRun(indexed: boolean, version1 = false): Promise<void> {
  const random = seeded(SEED)
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {}, listingIndexes: indexed ? { after: 1, minimum: 1, most: 1000 } : false })
  const { store: counted, counts } = counting(store)
  let server: TestServer | undefined
  let inProcess: TestServer | undefined
  try {
    // The listing in the process, on a store of its own holding the same documents: faster than reading them back from the database each time.
    const memory = new MemoryStore()
    for (let index = 1; index <= 250; index++) {
      const doc = randomDoc(random, MIX, String(index))
      await store.write(['items', String(index)], doc)
      await memory.write(['items', String(index)], doc)
    }
    server = await startServer({ store: counted, ...(version1 && { jsonServer: '1' as const }) })
    inProcess = await startServer({ store: memory, ...(version1 && { jsonServer: '1' as const }) })
    for (let round = 0; round < 400; round++) {
      const query = new URLSearchParams(randomQuery(random, MIX))
      if (version1) for (const name of ['_limit', '_start', '_end']) query.delete(name)
      const target = `/items?${query}`
      const expected = await inProcess.request('GET', target)
      sameAnswer(await server.request('GET', target), expected, `seed ${SEED}, GET ${decodeURIComponent(target)}`)
      if (!indexed) continue
      await store.listingIndexes!.settled()
      sameAnswer(await server.request('GET', target), expected, `seed ${SEED}, GET ${decodeURIComponent(target)}, again with its index`)
    }
    // Most plans are SQL's to answer: the comparison is between two ways of listing, not one way twice.
    assert.ok(counts.answered > counts.queries * 0.5, `seed ${SEED}: SQL answered ${counts.answered} of ${counts.queries} queries`)
    console.log(`  SQL answered ${counts.answered} of ${counts.queries} listing queries${indexed ? `, ${store.listingIndexes!.used} through an index` : ''}`)
    if (indexed) assert.ok(store.listingIndexes!.used >= 50, `seed ${SEED}: only ${store.listingIndexes!.used} answers through an index`)
  } finally {
    await server?.close()
    await inProcess?.close()
    await schema.drop()
  }
}

test(`SQL on PostgreSQL and the listing in the process on a MemoryStore agree on 400 seeded random queries over 250 seeded random documents (seed ${SEED})`, async () => {
  await differentialRun(false)
})

test(`in json-server 1.0's mode, whose filters compare typed values, SQL and the listing in the process agree on 400 seeded random queries (seed ${SEED})`, async () => {
  await differentialRun(false, true)
})

test(`with an index made for every shape that can have one, SQL through the indexes and the listing in the process agree on the same 400 queries (seed ${SEED})`, async () => {
  await differentialRun(true)
})

test.run()
