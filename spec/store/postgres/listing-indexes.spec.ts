import pg from 'pg'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { PostgresStore } from '../../../lib/store/index.ts'
import { indexName, indexShape, indexedListingSql } from '../../../lib/store/postgres/listing-index-sql.ts'
import { ID_ORDER } from '../../../lib/store/postgres/schema.ts'
import type { ListingPlan, Store } from '../../../lib/store/store.ts'
import { startServer, wrapStore, type Answer } from '../../support/helpers.ts'
import { adminQuery, fillCollection, filledDoc, freshSchema, startTestPostgres, type TestPostgres } from '../../support/postgres.ts'

// Listing indexes (docs/postgres.md, "Indexes for listings"): a shape of
// listing answered often gets an index of its own, made concurrently while
// writes go on, once whatever the instances; a page of that shape then walks
// its entries of the index, with the answer the listing gives in the process.

let postgres: TestPostgres | undefined

test.before(async () => {
  postgres = await startTestPostgres()
})

test.after(async () => {
  await postgres?.dispose()
})

/** The bench's page (bench/postgres.ts): one author's documents, most viewed first, page 3 of 5. */
const TARGET = '/books?author=author-7&_sort=-views&_page=3&_per_page=5'
const PLAN: ListingPlan = { filters: [{ operator: 'eq', field: 'author', values: ['author-7'] }], sort: [{ field: 'views', descending: true }], start: 10, end: 15 }
const SHAPE = indexShape('/books/', PLAN)!

function withoutQuery(store: Store): Store {
  const inProcess = wrapStore(store, {})
  delete inProcess.query
  return inProcess
}

function sameAnswer(sql: Answer, inProcess: Answer, what: string): void {
  assert.is(sql.status, inProcess.status, `${what}: status`)
  assert.equal(sql.json, inProcess.json, `${what}: body`)
  assert.is(sql.headers['x-total-count'], inProcess.headers['x-total-count'], `${what}: X-Total-Count`)
}

/** The listing indexes on the schema's restdir_nodes: name and whether whole. */
async function indexesOf(url: string): Promise<{ name: string; valid: boolean }[]> {
  const { rows } = await adminQuery(
    url,
    `SELECT pg_class.relname AS name, pg_index.indisvalid AS valid FROM pg_index JOIN pg_class ON pg_class.oid = pg_index.indexrelid
     WHERE pg_index.indrelid = to_regclass('restdir_nodes') AND pg_class.relname LIKE 'restdir\\_listing\\_%' ORDER BY 1`,
  )
  return rows as { name: string; valid: boolean }[]
}

/** Fails after `ms` milliseconds: a write that waits for an index build is a failure, not a slow pass. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

test('a shape of listing answered often gets its index, and the bench page is then an index scan of its own entries, with the same answer', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {}, listingIndexes: { after: 3, minimum: 1000 } })
  await fillCollection(schema.url, 'books', 3000, 10)
  const server = await startServer({ store })
  const inProcess = await startServer({ store: withoutQuery(store) })
  try {
    for (let count = 1; count <= 3; count++) {
      assert.equal(await indexesOf(schema.url), [], `no index before the answer ${count}`)
      await server.request('GET', TARGET)
      await store.listingIndexes!.settled()
    }
    assert.equal(await indexesOf(schema.url), [{ name: indexName(SHAPE), valid: true }])
    assert.is(store.listingIndexes!.used, 0)
    const answer = await server.request('GET', TARGET)
    assert.is(store.listingIndexes!.used, 1, 'answered through the index')
    const expected = Array.from({ length: 3000 }, (_, index) => filledDoc(index + 1, 10))
      .filter((doc) => doc.author === 'author-7')
      .sort((a, b) => b.views - a.views)
    assert.equal(answer.json.data, expected.slice(10, 15))
    sameAnswer(answer, await inProcess.request('GET', TARGET), TARGET)
    // The plan PostgreSQL makes: the page and the count by the index, no row of the collection read in turn.
    const sql = indexedListingSql(SHAPE, PLAN, ID_ORDER)
    const plan = (await adminQuery(schema.url, `EXPLAIN ${sql.text}`, sql.values)).rows.map((row) => row['QUERY PLAN'] as string).join('\n')
    assert.match(plan, new RegExp(`Index Scan using ${indexName(SHAPE)}`))
    assert.not.match(plan, /Seq Scan/)
    assert.not.match(plan, /restdir_documents_json/)
    // A write lands in the index: the next page holds it.
    await server.request('PUT', '/books/top', { body: { title: 'Top', author: 'author-7', views: 1e9 } })
    const first = '/books?author=author-7&_sort=-views&_page=1&_per_page=2'
    const top = await server.request('GET', first)
    assert.is(top.json.data[0].id, 'top')
    sameAnswer(top, await inProcess.request('GET', first), first)
    assert.is(store.listingIndexes!.used, 2)
  } finally {
    await server.close()
    await inProcess.close()
    await schema.drop()
  }
})

test('with the defaults, the 20th answer of a shape makes its index on a collection of 10 000 documents, and none on one of 9 999', async () => {
  const schema = await freshSchema(postgres!.url)
  // No options: the defaults, as the command line opens the store (docs/postgres.md, "Indexes for listings").
  const store = await PostgresStore.open(schema.url, { log: () => {} })
  await fillCollection(schema.url, 'books', 10_000, 10)
  await fillCollection(schema.url, 'smaller', 9_999, 10)
  const server = await startServer({ store })
  const smaller = TARGET.replace('/books', '/smaller')
  try {
    for (let count = 1; count <= 19; count++) {
      assert.is((await server.request('GET', TARGET)).status, 200)
      assert.is((await server.request('GET', smaller)).status, 200)
      await store.listingIndexes!.settled()
    }
    assert.equal(await indexesOf(schema.url), [], 'no index after 19 answers of the shape')
    await server.request('GET', TARGET)
    await store.listingIndexes!.settled()
    assert.equal(await indexesOf(schema.url), [{ name: indexName(SHAPE), valid: true }], 'the 20th made it')
    await server.request('GET', smaller)
    await store.listingIndexes!.settled()
    assert.equal(await indexesOf(schema.url), [{ name: indexName(SHAPE), valid: true }], 'a collection of 9 999 documents gets none')
    const used = store.listingIndexes!.used
    const answer = await server.request('GET', TARGET)
    assert.is(store.listingIndexes!.used, used + 1, 'the next answer goes through it')
    const expected = Array.from({ length: 10_000 }, (_, index) => filledDoc(index + 1, 10))
      .filter((doc) => doc.author === 'author-7')
      .sort((a, b) => b.views - a.views)
    assert.equal(answer.json.data, expected.slice(10, 15))
  } finally {
    await server.close()
    await schema.drop()
  }
})

test('a page through a listing index is a named statement that PostgreSQL plans once per connection, and that plan walks the index', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {}, listingIndexes: { minimum: 1000 } })
  // The bench's proportions (bench/postgres.ts): a thousand documents for each author.
  await fillCollection(schema.url, 'books', 20_000, 20)
  const client = new pg.Client({ connectionString: schema.url })
  try {
    assert.is(await store.listingIndexes!.make(SHAPE), 'made')
    // Statistics of the index's expressions, as autovacuum gathers in time: each author holds a twentieth of the collection.
    await adminQuery(schema.url, 'ANALYZE restdir_nodes')
    const sql = indexedListingSql(SHAPE, PLAN, ID_ORDER)
    assert.ok(sql.name, 'named')
    // The plan made without the values: the collection and the fields are in its text, so it still matches the index.
    const generic = (await adminQuery(schema.url, `EXPLAIN (GENERIC_PLAN) ${sql.text}`)).rows.map((row) => row['QUERY PLAN'] as string).join('\n')
    assert.match(generic, new RegExp(`Index Scan using ${indexName(SHAPE)}`))
    assert.not.match(generic, /Seq Scan/)
    // PostgreSQL keeps that plan once it has made its first few for the values, and answers as they did.
    await client.connect()
    for (let count = 0; count < 8; count++) {
      // The first document of each author's: a window far smaller than the one PostgreSQL guesses when it plans without the values.
      const plan = { filters: [{ operator: 'eq', field: 'author', values: [`author-${count}`] }], sort: PLAN.sort, start: 0, end: 1 }
      const statement = indexedListingSql(SHAPE, plan, ID_ORDER)
      assert.is(statement.name, sql.name, 'one name for the shape')
      const named = (await client.query(statement)).rows[0]
      assert.equal(named, (await client.query(statement.text, statement.values)).rows[0], `author-${count}`)
      assert.is(Number(named.total), 1000)
    }
    const { rows } = await client.query(`SELECT generic_plans::int AS generic FROM pg_prepared_statements WHERE name = $1`, [sql.name])
    assert.ok(rows[0].generic > 0, 'the generic plan is used')
  } finally {
    await client.end()
    await store.close()
    await schema.drop()
  }
})

test('no index is made for a collection smaller than the minimum, nor past the most a database holds', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {}, listingIndexes: { after: 1, minimum: 1000, most: 1 } })
  await fillCollection(schema.url, 'books', 999, 10)
  try {
    assert.is(await store.listingIndexes!.make(SHAPE), 'small')
    await store.write(['books', '1000'], filledDoc(1000, 10))
    assert.is(await store.listingIndexes!.make(SHAPE), 'made')
    assert.is(await store.listingIndexes!.make(SHAPE), 'present')
    const other = indexShape('/books/', { ...PLAN, sort: [{ field: 'year', descending: false }] })!
    assert.is(await store.listingIndexes!.make(other), 'full')
    assert.equal(await indexesOf(schema.url), [{ name: indexName(SHAPE), valid: true }])
  } finally {
    await store.close()
    await schema.drop()
  }
})

test('two instances making the same index at once both go on without an error, and one index is made', async () => {
  const schema = await freshSchema(postgres!.url)
  const options = { log: () => {}, listingIndexes: { minimum: 1 } }
  const stores = [await PostgresStore.open(schema.url, options), await PostgresStore.open(schema.url, options)]
  await fillCollection(schema.url, 'books', 20_000, 20)
  try {
    const outcomes = await Promise.all(stores.map((store) => store.listingIndexes!.make(SHAPE)))
    assert.equal([...outcomes].sort(), outcomes.includes('busy') ? ['busy', 'made'] : ['made', 'present'])
    assert.equal(await indexesOf(schema.url), [{ name: indexName(SHAPE), valid: true }])
    // The one that did not make it finds it made, and uses it.
    for (const store of stores) assert.is(await store.listingIndexes!.make(SHAPE), 'present')
    for (const store of stores) assert.is((await store.query(['books'], PLAN))?.total, 1000)
    assert.equal(stores.map((store) => store.listingIndexes!.used), [1, 1])
  } finally {
    for (const store of stores) await store.close()
    await schema.drop()
  }
})

test('writes go on while an index builds, and the index holds them', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {}, listingIndexes: { minimum: 1 } })
  await fillCollection(schema.url, 'books', 3000, 10)
  const server = await startServer({ store })
  const inProcess = await startServer({ store: withoutQuery(store) })
  // A transaction that holds a writer's lock on the table: the build waits for it to end, as it would for any write under way.
  const pg = (await import('pg')).default
  const holder = new pg.Client({ connectionString: schema.url })
  await holder.connect()
  try {
    await holder.query('BEGIN')
    await holder.query('LOCK TABLE restdir_nodes IN ROW EXCLUSIVE MODE')
    const building = store.listingIndexes!.make(SHAPE)
    building.catch(() => {}) // awaited below; a failure before that is the test's own
    for (let tries = 0; ; tries++) {
      const { rows } = await adminQuery(schema.url, `SELECT count(*)::int AS count FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX%' AND wait_event_type = 'Lock'`)
      if (rows[0].count === 1) break
      if (tries > 200) throw new Error('the build never waited')
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    for (let index = 0; index < 5; index++) {
      const put = await within(3000, `PUT ${index} during the build`, server.request('PUT', `/books/new-${index}`, { body: { title: `New ${index}`, author: 'author-7', views: 200_000 + index } }))
      assert.is(put.status, 201)
    }
    const posted = await within(3000, 'POST during the build', server.request('POST', '/books', { body: { title: 'Posted', author: 'author-7', views: 300_000 } }))
    assert.is(posted.status, 201)
    await holder.query('ROLLBACK')
    assert.is(await building, 'made')
    const target = '/books?author=author-7&_sort=-views&_page=1&_per_page=7'
    const answer = await server.request('GET', target)
    assert.is(store.listingIndexes!.used, 1, 'answered through the index')
    assert.equal(answer.json.data.map((doc: { title: string }) => doc.title), ['Posted', 'New 4', 'New 3', 'New 2', 'New 1', 'New 0', expectedTitle()])
    sameAnswer(answer, await inProcess.request('GET', target), target)
  } finally {
    await holder.end().catch(() => {})
    await server.close()
    await inProcess.close()
    await schema.drop()
  }
})

/** The most viewed of author-7's filled documents. */
function expectedTitle(): string {
  const docs = Array.from({ length: 3000 }, (_, index) => filledDoc(index + 1, 10)).filter((doc) => doc.author === 'author-7')
  return docs.sort((a, b) => b.views - a.views)[0].title
}

test('closing a store stops its build, and the next build replaces what it left', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {}, listingIndexes: { minimum: 1 } })
  await fillCollection(schema.url, 'books', 3000, 10)
  const pg = (await import('pg')).default
  const holder = new pg.Client({ connectionString: schema.url })
  await holder.connect()
  try {
    await holder.query('BEGIN')
    await holder.query('LOCK TABLE restdir_nodes IN ROW EXCLUSIVE MODE')
    const building = store.listingIndexes!.make(SHAPE)
    for (let tries = 0; (await indexesOf(schema.url)).length === 0; tries++) {
      if (tries > 200) throw new Error('the build never started')
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    await within(3000, 'close during a build', store.close())
    const outcome = await within(3000, 'the build after close', building.then(() => 'finished', (error: Error) => error.message))
    assert.match(outcome, /cancel/)
    await holder.query('ROLLBACK')
    assert.equal(await indexesOf(schema.url), [{ name: indexName(SHAPE), valid: false }])
    const next = await PostgresStore.open(schema.url, { log: () => {}, listingIndexes: { minimum: 1 } })
    try {
      assert.is(await next.listingIndexes!.make(SHAPE), 'made')
      assert.equal(await indexesOf(schema.url), [{ name: indexName(SHAPE), valid: true }])
    } finally {
      await next.close()
    }
  } finally {
    await holder.end().catch(() => {})
    await schema.drop()
  }
})

test.run()
