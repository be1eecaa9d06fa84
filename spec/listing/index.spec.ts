import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { FileStore, MemoryStore } from '../../lib/store/index.ts'
import type { Store } from '../../lib/store/store.ts'
import { collectGarbage, makeTempDir, startServer, touchLater, wrapStore, type Answer, type TestServer } from '../support/helpers.ts'
import { seeded, seedFrom, type Random } from '../support/random.ts'
import { randomDoc, randomQuery, randomScalar, type ListingMix } from '../support/random-listing.ts'
import { assertJson, linkWithoutOrigin } from '../support/assertions.ts'
import { Documents } from '../../lib/data/documents.ts'
import { ListingIndexes, NOT_INDEXED } from '../../lib/listing/indexes.ts'
import { CollectionIndex } from '../../lib/listing/collection-index.ts'
import type { Filter } from '../../lib/listing/filters.ts'

// Listing indexes (docs/http-api.md, "Listing queries"): a filtered, sorted
// page is answered from compact values kept per collection, and every answer
// is the one the listing gives from every document, which a second server on
// the same store, whose store declines to be indexed, gives here to compare.
//
// Replay a run: INDEX_SEED=<the seed it printed> node spec/run.mjs listing/index

const SEED = seedFrom('INDEX_SEED')

/** The same store, listed the plain way: a store with its own `query` (which here answers nothing) is never indexed in the process. */
function listedPlainly(store: Store): Store {
  const plain = wrapStore(store, {})
  plain.query = async () => undefined
  return plain
}

function sameAnswer(indexed: Answer, plain: Answer, what: string): void {
  assert.is(indexed.status, plain.status, `${what}: status`)
  assert.is(indexed.text, plain.text, `${what}: body`)
  assert.is(indexed.headers['x-total-count'], plain.headers['x-total-count'], `${what}: X-Total-Count`)
  assert.is(linkWithoutOrigin(indexed.headers.link), linkWithoutOrigin(plain.headers.link), `${what}: Link`)
  assert.is(indexed.headers['x-restdir-skipped'], plain.headers['x-restdir-skipped'], `${what}: X-Restdir-Skipped`)
}

// ---------------------------------------------------------------- random documents and queries

/** Values that test the listing's rules: numbers and numeric strings, case, code-unit order, String() of arrays and objects, infinities, NUL and -0. */
const TEXTS = ['a', 'B', 'b', 'ab', 'Ab', '', ' ', 'x y', 'é', 'É', 'İx', 'ix', 'K', 'k', '😀', '\uffff', '\ue000', 'ß', 'a,b', 'true', 'null', '[object Object]', 'Zebra', 'zebra', 'a\u0000b']
const NUMBERS = [0, 1, 2, 10, -3.5, 0.5, 2.25, 100, 0.000001, 123456789012345, 7, -0]

/** Every kind of document and query, with a field no document has; ids are asked for, as the writes below name them. */
const MIX: ListingMix = {
  texts: TEXTS,
  numericTexts: ['10', '2', '-3.5', '007', '0.5', '100', '2.50', '1e999', '-1e999'],
  numbers: NUMBERS,
  oddNumbers: ['1e3', ' 5', '0x10', 'Infinity', '5 ', '+5', '.5'],
  queryOnlyValues: ['x', 'a,b', '2', 'ZEB', 'EBR', 'Infinity'],
  filterFields: ['a', 'n', 'b', 'o.p', 'tags', 'o', 'missing'],
  sortFields: ['a', 'n', 'b', 'o.p', 'id', 'o', 'tags', 'missing'],
  conditions: ['equal', 'not-equal', 'range', 'like', 'text', 'in', 'compare', 'q', 'id', 'equal'],
  comparisons: ['gt', 'lte', 'eq'],
  whereOperators: ['eq', 'ne', 'gt', 'lt', 'contains', 'in'],
  windows: ['per-page', 'page-limit', 'start-end', 'limit', 'zero-limit', 'whole'],
}

/** Rules that random queries reach only now and then: an empty `q` (no match in a document without text), a separator in `q`, infinities. */
const EDGE_QUERIES = ['q=', 'q=&_sort=-a', 'q=a%00b', 'a=', 'missing_ne=x&_sort=missing', 'n_gte=1e999', 'n_lt=-1e999&_sort=n', '_sort=n,-a&_limit=10', '_sort=tags,o&_embed=none']

/** A write through the indexed server: a new or replaced document, a merge patch, or a removal. */
async function randomWrite(random: Random, server: TestServer): Promise<void> {
  const target = `/items/${random.between(1, 60)}`
  switch (random.int(4)) {
    case 0: await server.request('PATCH', target, { body: { a: randomScalar(random, [TEXTS, NUMBERS]), n: null } }); break
    case 1: await server.request('DELETE', target); break
    default: await server.request('PUT', target, { body: randomDoc(random, MIX) })
  }
}

async function differentialRun(store: Store, label: string): Promise<void> {
  const random = seeded(SEED)
  for (let index = 1; index <= 250; index++) {
    // Some names are generated-looking, not whole numbers: id order puts them after the numbers.
    const name = random.chance(0.1) ? `0x${index}` : String(index)
    await store.write(['items', name], random.chance(0.03) ? {} : randomDoc(random, MIX))
  }
  const indexed = await startServer({ store })
  const plain = await startServer({ store: listedPlainly(store) })
  try {
    for (const query of EDGE_QUERIES) {
      const target = `/items?${query}`
      sameAnswer(await indexed.request('GET', target), await plain.request('GET', target), `${label}, GET ${target}`)
    }
    for (let round = 0; round < 400; round++) {
      if (random.chance(0.25)) await randomWrite(random, indexed)
      const target = `/items?${randomQuery(random, MIX)}`
      const [fromIndex, fromEvery] = [await indexed.request('GET', target), await plain.request('GET', target)]
      sameAnswer(fromIndex, fromEvery, `${label}, seed ${SEED}, round ${round}, GET ${decodeURIComponent(target)}`)
    }
  } finally {
    await indexed.close()
    await plain.close()
  }
}

test(`a listing index on the memory store answers 400 seeded random queries over 250 seeded random documents, with writes between them, exactly as the listing from every document (seed ${SEED})`, async () => {
  await differentialRun(new MemoryStore(), 'memory store')
})

test(`a listing index on the file store answers 400 seeded random queries over 250 seeded random documents, with writes between them, exactly as the listing from every document (seed ${SEED})`, async () => {
  const dir = await makeTempDir()
  const store = await FileStore.open(dir)
  try {
    await differentialRun(store, 'file store')
  } finally {
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
})

// ---------------------------------------------------------------- what an index reads

test('after the first filtered listing, other filters and sorts read no document, and a write is read once and shows in the next listing', async () => {
  const memory = new MemoryStore()
  for (let index = 1; index <= 600; index++) await memory.write(['posts', String(index)], { author: `a${index % 7}`, views: (index * 37) % 101 })
  let reads = 0
  const store = wrapStore(memory, { before: (operation, path) => void (operation === 'read' && path.length === 2 && reads++) })
  const server = await startServer({ store })
  try {
    const first = await server.request('GET', '/posts?author=a3&_sort=-views&_limit=5')
    assert.is(first.headers['x-total-count'], '86')
    assert.is(reads, 600, 'the first listing read every document once')
    const page = await server.request('GET', '/posts?author:eq=a3&_sort=-views,id&_page=2&_per_page=3')
    const views = await server.request('GET', '/posts?views_gte=99&q=a5&_sort=id')
    assert.is(reads, 600, 'later listings read none')
    assert.equal(page.json.data.map((doc: { views: number }) => doc.views), first.json.slice(3, 5).map((doc: { views: number }) => doc.views).concat(page.json.data[2].views))
    assert.ok(views.json.every((doc: { views: number; author: string }) => doc.views >= 99 && doc.author === 'a5'))
    assert.is((await server.request('PUT', '/posts/9999', { body: { author: 'a3', views: 1000 } })).status, 201)
    const beforeListing = reads
    const after = await server.request('GET', '/posts?author=a3&_sort=-views&_limit=5')
    assert.is(reads - beforeListing, 1, 'the listing read the written document, and no other')
    assert.is(after.headers['x-total-count'], '87')
    assert.equal(after.json[0], { id: '9999', author: 'a3', views: 1000 })
    await server.request('DELETE', '/posts/9999')
    assert.equal((await server.request('GET', '/posts?author=a3&_sort=-views&_limit=5')).json, first.json)
  } finally {
    await server.close()
  }
})

// ---------------------------------------------------------------- hand edits

test('a document edited, added, broken or removed by hand in the store folder shows in the next listing a second later, as the plain listing shows it', async () => {
  const dir = await makeTempDir()
  const store = await FileStore.open(dir)
  const indexed = await startServer({ store })
  const plain = await startServer({ store: listedPlainly(store) })
  try {
    for (let index = 1; index <= 5; index++) await indexed.request('PUT', `/books/${index}`, { body: { genre: index % 2 ? 'sf' : 'poetry', year: 1990 + index } })
    const target = '/books?genre=sf&_sort=-year'
    assert.equal((await indexed.request('GET', target)).json.map((book: { id: string }) => book.id), ['5', '3', '1'])
    // An editor saves in place (a new mtime), a person adds a folder, removes one, and breaks a file.
    const edited = join(dir, 'books', '2', '@.json')
    writeFileSync(edited, JSON.stringify({ genre: 'sf', year: 2050 }, null, 2))
    touchLater(edited)
    mkdirSync(join(dir, 'books', '6'))
    writeFileSync(join(dir, 'books', '6', '@.json'), '{"genre": "sf", "year": 1900}\n')
    rmSync(join(dir, 'books', '3'), { recursive: true })
    const broken = join(dir, 'books', '5', '@.json')
    writeFileSync(broken, '{"genre": "sf", ')
    touchLater(broken)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const answer = await indexed.request('GET', target)
    assert.equal(answer.json.map((book: { year: number }) => book.year), [2050, 1991, 1900])
    assert.is(answer.headers['x-total-count'], '3')
    assert.match(String(answer.headers['x-restdir-skipped']), /\/books\/5/)
    sameAnswer(answer, await plain.request('GET', target), 'after the hand edits')
    // The file mended by hand comes back.
    writeFileSync(broken, '{"genre": "sf", "year": 2000}\n')
    touchLater(broken)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const mended = await indexed.request('GET', target)
    assert.equal(mended.json.map((book: { year: number }) => book.year), [2050, 2000, 1991, 1900])
    sameAnswer(mended, await plain.request('GET', target), 'after the mend')
  } finally {
    await indexed.close()
    await plain.close()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
})

// ---------------------------------------------------------------- the memory bound

test('the memory an index is counted to hold comes back whole when its columns are dropped, and a small bound keeps it under, columns least used going first', async () => {
  const store = new MemoryStore()
  for (let index = 0; index < 40; index++) await store.write(['items', String(index)], { a: index % 4, [`own${index}`]: 'x'.repeat(index) })
  const limit = 200_000
  const indexes = new ListingIndexes(new Documents(store), limit)
  const windowOf = (total: number) => ({ start: 0, end: total })
  const ask = (filters: Filter[]) => indexes.answer(['items'], filters, [], windowOf, () => undefined)
  const equal = (field: string, value: string): Filter => ({ operator: 'eq', field, values: [value] })
  const first = await ask([equal('a', '1')])
  assert.ok(first !== NOT_INDEXED && first !== undefined && first.total === 10)
  const rowsOnly = indexes.bytes
  for (let round = 0; round < 300; round++) {
    // 32 new fields each time, and `a` now and then: what the bound drops is made again when asked.
    const filters = Array.from({ length: 32 }, (_, field) => equal(`f${round}_${field}`, 'x'))
    const answer = await ask(round % 10 === 0 ? [equal('a', '2'), ...filters.slice(1)] : filters)
    assert.ok(answer !== NOT_INDEXED && answer !== undefined, `round ${round} is answered from the index`)
    assert.is(answer.total, 0)
    assert.ok(indexes.bytes <= limit, `round ${round}: the indexes are counted at ${indexes.bytes} bytes, over ${limit}`)
  }
  const again = await ask([equal('a', '1'), equal('own7', 'xxxxxxx')])
  assert.ok(again !== NOT_INDEXED && again !== undefined && again.total === 0)
  const one = await ask([equal('own7', 'xxxxxxx')])
  assert.ok(one !== NOT_INDEXED && one !== undefined && one.total === 1)
  // Every column dropped, the count is the rows' alone, as before any column was made.
  const index = new CollectionIndex()
  for (let slot = 0; slot < 40; slot++) {
    const doc = { a: slot % 4, [`own${slot}`]: 'x'.repeat(slot), list: [slot], nested: { deep: slot } }
    index.put(String(slot), doc, JSON.stringify(doc), undefined)
  }
  const before = index.bytes
  await index.prepare({ fields: ['a', 'list', 'nested', 'own3', 'missing'], postings: ['a', 'own3'], search: false }, () => undefined)
  assert.ok(index.bytes > before, 'the columns are counted')
  // A column costs what its array and its entry do, beyond its cells: 100 columns of fields no document has are not nearly free.
  const lone = new CollectionIndex()
  lone.put('1', { a: 1 }, '{"a":1}', undefined)
  const alone = lone.bytes
  await lone.prepare({ fields: Array.from({ length: 100 }, (_, field) => `g${field}`), postings: [], search: false }, () => undefined)
  assert.ok(lone.bytes - alone >= 100 * 512, `100 columns are counted at ${lone.bytes - alone} bytes`)
  index.put('3', { a: 9, own3: 'y' }, JSON.stringify({ a: 9, own3: 'y' }), undefined)
  index.remove('5')
  index.dropColumns([], {})
  assert.is(index.columnCount, 0)
  const rowsNow = [...index.rows.values()].reduce((sum, row) => sum + 160 + row.name.length + row.text.length, 0)
  assert.is(index.bytes, rowsNow, 'what the columns were counted at came off whole')
  assert.ok(rowsOnly > 0)
})

test('listings that each filter on 32 new field names keep the index to at most MOST_COLUMNS columns, and the process does not grow with their number', async () => {
  const server = await startServer({ store: new MemoryStore() })
  try {
    for (let index = 0; index < 20; index++) await server.request('PUT', `/c/${index}`, { body: { a: index, name: `n${index}` } })
    const listing = async (round: number) => {
      const query = Array.from({ length: 32 }, (_, field) => `f${round}_${field}=x`).join('&')
      const answer = await server.request('GET', `/c?${query}`)
      assert.is(answer.status, 200)
      assert.equal(answer.json, [])
    }
    for (let round = 0; round < 500; round++) await listing(round)
    // The heap after a full collection, not RSS: RSS keeps what earlier spec files of this process freed.
    collectGarbage()
    const before = process.memoryUsage().heapUsed
    for (let round = 500; round < 2500; round++) await listing(round)
    collectGarbage()
    const grown = (process.memoryUsage().heapUsed - before) / 1024 / 1024
    console.log(`  2 000 more listings of new fields: the heap grew by ${grown.toFixed(1)} MB`)
    // A fixed figure: columns never dropped grow the heap by tens of MB over these listings.
    assert.ok(grown < 20, `the heap grew by ${grown.toFixed(0)} MB`)
    assertJson(await server.request('GET', '/c?name=n3'), 200, [{ id: '3', a: 3, name: 'n3' }])
  } finally {
    await server.close()
  }
})

test.run()
