import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { validate, compileErrors } from '@readme/openapi-parser'
import { startServer, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem } from '../support/assertions.ts'
import { MAX_JOINED_TEXT } from '../../lib/listing/relations.ts'
import { MAX_FIELDS, MAX_FIELDS_PER_OBJECT } from '../../lib/resources/openapi.ts'

// No single request holds the server, whatever the size of the documents it
// works on (docs/http-api.md, "Listing queries" and "Describing the API"): the work is
// counted in characters, not documents, and what an answer may join is capped.

/** A text of `length` characters that no filter value below is found in. */
const filler = (length: number) => 'ab'.repeat(length / 2)

/**
 * Sends GETs of a small document one after another for as long as a listing
 * runs, and says how long the listing took and the slowest of them did.
 */
async function smallGetsDuring(server: TestServer, target: string): Promise<{ listing: number; slowest: number; count: number; status: number }> {
  const started = performance.now()
  let listing = 0
  let status = 0
  const running = server.request('GET', target).then((answer) => {
    listing = performance.now() - started
    status = answer.status
  })
  const latencies: number[] = []
  while (listing === 0) {
    const sent = performance.now()
    assertJson(await server.request('GET', '/small/x'), 200, { id: 'x', a: 1 })
    latencies.push(performance.now() - sent)
  }
  await running
  return { listing, slowest: Math.max(...latencies), count: latencies.length, status }
}

/**
 * 12 documents of 1,000,000 characters: one value of a filter checked against one of them
 * is a scan of a megabyte, and the caps allow 32 values. Counted in documents,
 * as the pace once was, the whole listing was one step of seconds; counted in
 * steps, or with a long text searched in one step, 128 such scans go between two looks at the clock.
 */
async function bigDocuments(server: TestServer): Promise<void> {
  const text = filler(1_000_000)
  for (let index = 0; index < 12; index++) assertJson(await server.request('PUT', `/big/${index}`, { body: { id: String(index), t: `${text} end` } }), 201)
  assertJson(await server.request('PUT', '/small/x', { body: { a: 1 } }), 201)
}

/**
 * The small GETs wait at most a slice of the listing's work each, and a few
 * turns of the event loop: a fixed figure, whatever the listing takes, where
 * a listing that holds the server, or yields too seldom (work counted in
 * steps rather than characters, a long text searched in one step), makes one
 * of them wait 100 ms and more.
 */
function assertNeverHeld(during: { listing: number; slowest: number; count: number; status: number }): void {
  console.log(`  listing ${during.listing.toFixed(0)} ms; ${during.count} small GETs meanwhile, the slowest ${during.slowest.toFixed(1)} ms`)
  assert.is(during.status, 200)
  assert.ok(during.slowest < MOST_WAIT_MS, `a small GET waited ${during.slowest.toFixed(0)} ms of a ${during.listing.toFixed(0)} ms listing`)
}

/** The longest a small GET may wait during a listing, in milliseconds. */
const MOST_WAIT_MS = 350

test('a small GET is answered at once while a listing checks 32 contains values against big documents', async () => {
  const server = await startServer()
  try {
    await bigDocuments(server)
    const values = Array.from({ length: 32 }, (_, index) => `t:contains=${'ab'.repeat(127)}${String(index).padStart(2, '0')}`).join('&')
    assertJson(await server.request('GET', `/big?${values}`), 200, [])
    assertNeverHeld(await smallGetsDuring(server, `/big?${values}`))
  } finally {
    await server.close()
  }
})

test('a small GET is answered at once while a listing searches big documents for 32 q texts', async () => {
  const server = await startServer()
  try {
    await bigDocuments(server)
    // Each text is found at the far end of every document, but the last is found nowhere: every document is searched 32 times.
    const found = `${'ab'.repeat(126)} end`
    const values = [...Array.from({ length: 31 }, () => `q=${encodeURIComponent(found)}`), 'q=nowhere'].join('&')
    const everyOne = await server.request('GET', `/big?${values.replace('q=nowhere', 'q=END')}&_limit=1`)
    assertJson(everyOne, 200)
    assert.is(everyOne.headers['x-total-count'], '12', 'q finds the texts at the end of every document, ignoring case')
    assertNeverHeld(await smallGetsDuring(server, `/big?${values}`))
  } finally {
    await server.close()
  }
})

test('a small GET is answered at once while the listing from every document, which no index answers, checks 31 contains values and a q against big documents', async () => {
  const server = await startServer()
  try {
    await bigDocuments(server)
    // A q holding NUL is answered by no listing index and by no SQL: each document is read and matched (matchesFilters).
    const values = [...Array.from({ length: 31 }, (_, index) => `t:contains=${'ab'.repeat(127)}${String(index).padStart(2, '0')}`), 'q=%00%C3%A9']
    assertJson(await server.request('GET', `/big?${values.join('&')}`), 200, [])
    assertNeverHeld(await smallGetsDuring(server, `/big?${values.join('&')}`))
  } finally {
    await server.close()
  }
})

test('_expand and _embed that would join more than the limit are a 400 that names it and says how to narrow the query', async () => {
  const server = await startServer()
  try {
    // One parent of 300 KB and 20 children that point at it: joined, 6 MB of one document repeated.
    assertJson(await server.request('PUT', '/parents/p', { body: { t: filler(300_000) } }), 201)
    for (let index = 0; index < 20; index++) await server.request('PUT', `/kids/k${String(index).padStart(2, '0')}`, { body: { parentId: 'p' } })
    const limit = new RegExp(`_expand=parent would join more than ${MAX_JOINED_TEXT} characters.*the limit for relations.*_page=1&_per_page=10`)
    assertProblem(await server.request('GET', '/kids?_expand=parent'), 400, limit)
    assertProblem(await server.request('GET', '/kids?_embed=parent'), 400, /_embed=parent would join more than/)
    // Narrowed, it is answered.
    const page = await server.request('GET', '/kids?_expand=parent&_limit=3')
    assertJson(page, 200)
    assert.is(page.json.length, 3)
    assert.is(page.json[2].parent.t.length, 300_000)
    // Children embedded into one document count the same way.
    assertJson(await server.request('PUT', '/posts/1', { body: { title: 'a' } }), 201)
    for (let index = 0; index < 15; index++) await server.request('PUT', `/comments/c${index}`, { body: { postId: '1', t: filler(300_000) } })
    assertProblem(await server.request('GET', '/posts/1?_embed=comments'), 400, /_embed=comments would join more than/)
    assertProblem(await server.request('GET', '/posts?_embed=comments'), 400, /_embed=comments would join more than/)
    assert.is((await server.request('GET', '/posts/1?_embed=comments&_limit=1')).status, 400, 'a window of the posts does not narrow one post')
  } finally {
    await server.close()
  }
})

test('the API description names a bounded number of fields however wide the documents, and says it left some out', async () => {
  const server = await startServer()
  try {
    // Documents of 5 000 fields each in 6 collections, and 30 more collections of 150 fields.
    const wide = (count: number, prefix: string) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`${prefix}${index}`, index]))
    for (let index = 0; index < 6; index++) assertJson(await server.request('PUT', `/a${index}/1`, { body: wide(5000, `w${index}_`) }), 201)
    for (let index = 0; index < 30; index++) assertJson(await server.request('PUT', `/more${index}/1`, { body: wide(150, `m${index}_`) }), 201)
    const answer = await server.request('GET', '/?_openapi')
    assertJson(answer, 200)
    const schemas: Record<string, { properties?: object }> = answer.json.components.schemas
    const counts = Object.values(schemas).map((schema) => Object.keys(schema.properties ?? {}).length)
    assert.ok(Math.max(...counts) <= MAX_FIELDS_PER_OBJECT, `one schema names ${Math.max(...counts)} fields`)
    const total = counts.reduce((sum, count) => sum + count, 0)
    assert.ok(total <= MAX_FIELDS + 50, `the schemas name ${total} fields in all`) // 50: the declared resources' own
    assert.is(Object.keys(schemas.a0.properties!).length, MAX_FIELDS_PER_OBJECT, 'a wide collection is still described')
    assert.match(answer.json.info.description, /some fields are left out/)
    assert.ok(answer.text.length < 400_000, `the description is ${answer.text.length} characters`)
    const result = await validate(structuredClone(answer.json) as never)
    assert.ok(result.valid, compileErrors(result))
  } finally {
    await server.close()
  }
})

test.run()
