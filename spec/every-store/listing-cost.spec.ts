import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { openTestStore, startServer, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem } from '../support/assertions.ts'
import type { Store } from '../../lib/store/store.ts'

// Every per-request cost of a listing is bounded (docs/http-api.md, "Listing queries"):
// caps on what a query may ask, and big collections worked on in slices.

let api: TestServer
test.before(async () => {
  api = await startServer({ maxSortKeys: 3, maxFilters: 4 })
  await api.request('PUT', '/few/a', { body: { n: 1 } })
})
test.after(async () => {
  await api.close()
})

test('_sort with more fields than --max-sort-keys is a 400 that says the cap, and the cap itself is allowed', async () => {
  assertJson(await api.request('GET', '/few?_sort=a,b,c'), 200)
  assertProblem(await api.request('GET', '/few?_sort=a,b,c,d'), 400, /_sort names more than 3 fields; that is the limit \(--max-sort-keys\)/)
  const many = Array.from({ length: 1500 }, (_, index) => `f${index}`).join(',')
  assertProblem(await api.request('GET', `/few?_sort=${many}`), 400, /more than 3 fields/)
})

test('more filter values than --max-filters is a 400 that says the cap, repeated values and q counting each', async () => {
  assertJson(await api.request('GET', '/few?a=1&b=2&q=x&n_gte=0'), 200)
  assertProblem(await api.request('GET', '/few?a=1&b=2&q=x&n_gte=0&c=3'), 400, /more than 4 filter values.*\(--max-filters\)/)
  assertProblem(await api.request('GET', '/few?id=1&id=2&id=3&id=4&id=5'), 400, /more than 4 filter values/)
  assertProblem(await api.request('GET', '/few?q=a&q=b&q=c&q=d&q=e'), 400, /more than 4 filter values/)
})

test('a q, filter value or field longer than 256 characters is a 400 that says the cap', async () => {
  const long = 'x'.repeat(257)
  assertJson(await api.request('GET', `/few?q=${'x'.repeat(256)}`), 200, [])
  assertProblem(await api.request('GET', `/few?q=${long}`), 400, /longer than 256 characters/)
  assertProblem(await api.request('GET', `/few?n_like=${long}`), 400, /longer than 256 characters/)
  assertProblem(await api.request('GET', `/few?${long}=1`), 400, /longer than 256 characters/)
  assertProblem(await api.request('GET', `/few?_sort=${long}`), 400, /longer than 256 characters/)
})

test('the default caps are 8 sort fields and 32 filter values', async () => {
  const server = await startServer()
  try {
    await server.request('PUT', '/few/a', { body: { n: 1 } })
    const fields = (count: number) => Array.from({ length: count }, (_, index) => `f${index}`).join(',')
    assertJson(await server.request('GET', `/few?_sort=${fields(8)}`), 200)
    assertProblem(await server.request('GET', `/few?_sort=${fields(9)}`), 400, /more than 8 fields/)
    const filters = (count: number) => Array.from({ length: count }, (_, index) => `n_ne=${index + 10}`).join('&')
    assertJson(await server.request('GET', `/few?${filters(32)}`), 200)
    assertProblem(await server.request('GET', `/few?${filters(33)}`), 400, /more than 32 filter values/)
  } finally {
    await server.close()
  }
})

// The stall test: the most expensive listing the caps allow, on 2 000 documents, several at once.

const COMMON = 'the quick brown fox jumps over the lazy dog '.repeat(6).slice(0, 256)

async function fill(store: Store, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    const doc: Record<string, unknown> = { id: String(index), text: `${index} ${COMMON} ${'lorem ipsum '.repeat(20)}` }
    // Few distinct values per field, so the sort compares every key.
    for (let field = 0; field < 8; field++) doc[`f${field}`] = field % 2 === 0 ? (index * (field + 3)) % 3 : `v${(index * (field + 5)) % 2}`
    for (let extra = 0; extra < 20; extra++) doc[`x${extra}`] = { deep: [extra, `word ${index % 7}`, { flag: index % 2 === 0 }] }
    await store.write(['big', String(index)], doc)
  }
}

test('an unrelated GET is answered quickly while the most expensive allowed listing runs on 2 000 documents, eight at once', async () => {
  const { store, dispose } = await openTestStore()
  await fill(store, 2000)
  const server = await startServer({ store })
  const delay = monitorEventLoopDelay({ resolution: 1 })
  try {
    await server.request('PUT', '/other/x', { body: { unrelated: true } })
    const sort = Array.from({ length: 8 }, (_, field) => (field % 3 === 0 ? `-f${field}` : `f${field}`)).join(',')
    // 32 filter values that every document passes: q, then 31 comparisons, so all 2 000 are filtered and sorted.
    const filters = [`q=${encodeURIComponent(COMMON)}`, ...Array.from({ length: 31 }, (_, index) => `x${index % 20}.deep.1_ne=nothing${index}`)].join('&')
    const target = `/big?${filters}&_sort=${sort}&_limit=10`
    const first = await server.request('GET', target)
    assertJson(first, 200)
    assert.is(first.headers['x-total-count'], '2000', 'every document passed the filters')
    delay.enable()
    const latencies: number[] = []
    const answers: Promise<{ status: number }>[] = []
    // Eight at once, again while fewer than five GETs were measured (a listing index answers them quickly).
    for (let round = 0; round < 20 && latencies.length < 5; round++) {
      const listings = Array.from({ length: 8 }, () => server.request('GET', target))
      answers.push(...listings)
      let done = false
      void Promise.all(listings).then(() => (done = true))
      while (!done) {
        const started = performance.now()
        assertJson(await server.request('GET', '/other/x'), 200, { id: 'x', unrelated: true })
        latencies.push(performance.now() - started)
      }
    }
    delay.disable()
    for (const answer of await Promise.all(answers)) assert.is(answer.status, 200)
    // Other processes share the cores, so one answer may be late for reasons of their own: the median
    // says how long a GET waits behind the listings, the 90th percentile that none waits for a whole one.
    latencies.sort((a, b) => a - b)
    const median = latencies[Math.floor(latencies.length / 2)]
    const p90 = latencies[Math.floor(latencies.length * 0.9)]
    console.log(`  unrelated GETs: ${latencies.length}: median ${median.toFixed(1)} ms, 90% ${p90.toFixed(1)} ms, slowest ${latencies.at(-1)!.toFixed(1)} ms; longest event-loop block ${(delay.max / 1e6).toFixed(1)} ms`)
    assert.ok(latencies.length >= 5, `the unrelated GET was answered while the listings ran (${latencies.length} times)`)
    assert.ok(median < 100, `an unrelated GET took ${median.toFixed(1)} ms (median)`)
    assert.ok(p90 < 200, `an unrelated GET took ${p90.toFixed(1)} ms (90th percentile)`)
  } finally {
    delay.disable()
    await server.close()
    await dispose()
  }
})

test.run()
