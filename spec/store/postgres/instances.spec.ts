import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { PostgresStore, StoreError } from '../../../lib/store/index.ts'
import { startServer, type TestServer } from '../../support/helpers.ts'
import { openStream, type ServerSentEvent } from '../../support/event-stream.ts'
import { adminQuery, freshSchema, startTestPostgres, type TestPostgres } from '../../support/postgres.ts'

// Many restdir processes on one PostgreSQL database (docs/postgres.md, "Many instances on one database"): each test starts three servers on one fresh schema, as
// three instances behind a proxy would run, and spreads its requests over them.
// The servers bring their own store, so this file runs once, on its own database.

let postgres: TestPostgres | undefined
let schema: { url: string; drop(): Promise<void> } | undefined
let instances: TestServer[] = []

test.before(async () => {
  postgres = await startTestPostgres()
})

test.after(async () => {
  await postgres?.dispose()
})

test.before.each(async () => {
  schema = await freshSchema(postgres!.url)
  // One after the other: the first makes the schema, the others find it.
  instances = []
  for (let index = 0; index < 3; index++) instances.push(await startServer({ store: schema.url }))
})

test.after.each(async () => {
  for (const instance of instances) await instance.close(true)
  await schema?.drop()
})

/** The instance a request number goes to, round robin, as a proxy would spread them. */
function on(index: number): TestServer {
  return instances[index % instances.length]
}

async function take(stream: { next(timeoutMs?: number): Promise<ServerSentEvent> }, count: number): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = []
  for (let index = 0; index < count; index++) events.push(await stream.next(5000))
  return events
}

test('batches moving units between counters over three instances conserve the total, each acknowledged one applied once, and a stream on another instance gets each batch whole (docs/http-api.md, "Batches")', async () => {
  const counters = ['a', 'b', 'c']
  // The stream opens first, and hears the counters made, so that no change of the setup can reach it among the batches'.
  const stream = await openStream(on(2).port, '/')
  assert.is((await stream.next(5000)).event, 'value')
  for (const name of counters) assert.is((await on(0).request('PUT', `/bank/${name}`, { body: { n: 50 } })).status, 201)
  assert.equal((await take(stream, counters.length)).map((event) => event.event), ['put', 'put', 'put'])
  let acknowledged = 0
  const client = async (seed: number) => {
    for (let move = 0; move < 6; move++) {
      const from = counters[(seed + move) % 3]
      const to = counters[(seed + move + 2) % 3]
      for (let attempt = 0; ; attempt++) {
        const server = on(seed + move + attempt)
        const [source, target] = [await server.request('GET', `/bank/${from}`), await server.request('GET', `/bank/${to}`)]
        const answer = await server.request('POST', '/?_batch', { body: { requests: [
          { method: 'PATCH', path: `/bank/${from}`, body: { n: source.json.n - 1 }, headers: { 'If-Match': String(source.headers.etag) } },
          { method: 'PATCH', path: `/bank/${to}`, body: { n: target.json.n + 1 }, headers: { 'If-Match': String(target.headers.etag) } },
          { method: 'POST', path: '/moves', body: { from, to } },
        ] } })
        if (answer.status === 412) continue
        assert.is(answer.status, 200, answer.text)
        acknowledged++
        break
      }
    }
  }
  await Promise.all([0, 1, 2, 3, 4, 5].map(client))
  const moves = (await on(1).request('GET', '/moves')).json as { from: string; to: string }[]
  assert.is(moves.length, acknowledged)
  let total = 0
  for (const name of counters) {
    const n = (await on(2).request('GET', `/bank/${name}`)).json.n
    assert.is(n, 50 - moves.filter((move) => move.from === name).length + moves.filter((move) => move.to === name).length, name)
    total += n
  }
  assert.is(total, 150)
  const events = await take(stream, acknowledged * 3)
  stream.close()
  // Each batch's three changes come together, numbered one after the other.
  for (let index = 0; index < events.length; index += 3) {
    const group = events.slice(index, index + 3)
    assert.equal(group.map((event) => event.event), ['patch', 'patch', 'put'], JSON.stringify(group))
    assert.equal(group.map((event) => Number(event.id) - Number(group[0].id)), [0, 1, 2])
  }
})

test('a write on one instance is read on the others at once, with the same ETag', async () => {
  const put = await on(0).request('PUT', '/notes/a', { body: { text: 'from the first' } })
  assert.is(put.status, 201)
  for (const instance of instances.slice(1)) {
    const read = await instance.request('GET', '/notes/a')
    assert.is(read.status, 200)
    assert.equal(read.json, { text: 'from the first', id: 'a' })
    assert.is(read.headers.etag, put.headers.etag)
  }
  assert.is((await on(2).request('DELETE', '/notes/a')).status, 200)
  assert.is((await on(1).request('GET', '/notes/a')).status, 404)
})

test('twenty writers holding one ETag, spread over the instances: exactly one wins, every other hears 412', async () => {
  const first = await on(0).request('PUT', '/counter', { body: { n: 0 } })
  const etag = first.headers.etag as string
  const answers = await Promise.all(Array.from({ length: 20 }, (_, index) =>
    on(index).request('PUT', '/counter', { body: { n: index + 1 }, headers: { 'if-match': etag } })))
  const statuses = answers.map((answer) => answer.status).sort()
  assert.equal(statuses, [200, ...Array(19).fill(412)])
  const winner = answers.findIndex((answer) => answer.status === 200)
  assert.equal((await on(1).request('GET', '/counter')).json, { n: winner + 1, id: 'counter' })
})

test('a username claimed at once on two instances is given once: one 201, the other 409, and one user holds it', async () => {
  for (let round = 0; round < 10; round++) {
    const username = `ada-${round}`
    const [a, b] = await Promise.all([
      on(0).request('POST', '/user', { body: { username } }),
      on(1).request('POST', '/user', { body: { username } }),
    ])
    assert.equal([a.status, b.status].sort(), [201, 409], `round ${round}`)
  }
  const users = (await on(2).request('GET', '/user')).json as { username: string }[]
  assert.is(users.length, 10)
  assert.is(new Set(users.map((user) => user.username)).size, 10)
})

test('a user deleted on one instance while playlists are made for it on the others leaves no playlist behind', async () => {
  for (let round = 0; round < 5; round++) {
    const user = (await on(0).request('POST', '/user', { body: { username: `gone-${round}` } })).json as { user_id: string }
    const base = `/user/${user.user_id}`
    const creations = Array.from({ length: 30 }, (_, index) =>
      on(1 + (index % 2)).request('POST', `${base}/playlist`, { body: { name: `p${index}` } }))
    const removal = new Promise((resolve) => setTimeout(resolve, 5)).then(() => on(0).request('DELETE', base))
    const answers = await Promise.all(creations)
    assert.is((await removal).status, 200)
    for (const answer of answers) assert.ok(answer.status === 201 || answer.status === 404, `a playlist is made or refused, got ${answer.status}`)
    assert.is((await on(1).request('GET', base)).status, 404)
    assert.is((await on(2).request('GET', `${base}/playlist`)).status, 404)
    const left = await adminQuery(postgres!.url, `SELECT parent, name FROM ${schemaName()}.restdir_nodes WHERE parent LIKE $1 OR (parent = '/user/' AND name = $2)`,
      [`/user/${user.user_id}/%`, user.user_id])
    assert.equal(left.rows, [], `round ${round}: nothing of the user is left in the database`)
  }
})

test('200 POSTs at once over three instances make 200 distinct documents', async () => {
  const answers = await Promise.all(Array.from({ length: 200 }, (_, index) =>
    on(index).request('POST', '/items', { body: { index } })))
  assert.ok(answers.every((answer) => answer.status === 201), 'every POST is created')
  const ids = new Set(answers.map((answer) => answer.headers.location))
  assert.is(ids.size, 200)
  const listed = (await on(0).request('GET', '/items')).json as { index: number }[]
  assert.is(listed.length, 200)
  assert.equal(listed.map((item) => item.index).sort((a, b) => a - b), Array.from({ length: 200 }, (_, index) => index))
})

test('an event stream on one instance sees the writes made on the others, in order per node, a 100 KB document included', async () => {
  const stream = await openStream(on(0).port, '/board')
  assert.is((await stream.next()).event, 'value')
  const big = { text: 'x'.repeat(100 * 1024) }
  await on(1).request('PUT', '/board/a', { body: { v: 1 } })
  await on(2).request('PUT', '/board/b', { body: big })
  await on(1).request('PATCH', '/board/a', { body: { v: 2 } })
  await on(2).request('DELETE', '/board/a')
  const events = await take(stream, 4)
  assert.equal(events.map((event) => [event.event, event.data.path]), [
    ['put', '/board/a'], ['put', '/board/b'], ['patch', '/board/a'], ['delete', '/board/a'],
  ])
  assert.ok(events[1].data.data.text === big.text, 'the big document arrives whole')
  assert.equal(events[2].data.data, { v: 2 })
  const ids = events.map((event) => Number(event.id))
  assert.equal(ids, [ids[0], ids[0] + 1, ids[0] + 2, ids[0] + 3], 'one id per change, whichever instance made it')
  stream.close()
})

test('a client resumes with Last-Event-ID on another instance than the one that gave the id, and on an instance started after it', async () => {
  const first = await openStream(on(0).port, '/feed')
  const value = await first.next()
  first.close()
  await on(1).request('PUT', '/feed/a', { body: { v: 1 } })
  await on(2).request('PUT', '/elsewhere', { body: {} })
  await on(0).request('PUT', '/feed/b', { body: { v: 2 } })
  const resumed = await openStream(on(2).port, '/feed', { 'Last-Event-ID': value.id! })
  const events = await take(resumed, 2)
  assert.equal(events.map((event) => [event.event, event.data.path]), [['put', '/feed/a'], ['put', '/feed/b']])
  resumed.close()

  // An instance that was not running when the changes were made reads them back from the database.
  const late = await startServer({ store: schema!.url })
  instances.push(late)
  const polled = await late.request('GET', `/feed?_changes&since=${value.id}`)
  assert.is(polled.status, 200)
  const answer = polled.json as { last: number; changes: { type: string; path: string }[] }
  assert.equal(answer.changes.map((change) => [change.type, change.path]), [['put', '/feed/a'], ['put', '/feed/b']])
  assert.is(answer.last, Number(events[1].id), 'the last change it knows is the last one made')
})

test('the feed crosses instances however the writes are spread: each stream gets every change once, in id order', async () => {
  const streams = await Promise.all(instances.map((instance) => openStream(instance.port, '/many')))
  for (const stream of streams) assert.is((await stream.next()).event, 'value')
  await Promise.all(Array.from({ length: 60 }, (_, index) => on(index).request('PUT', `/many/${index % 7}`, { body: { index } })))
  for (const stream of streams) {
    const events = await take(stream, 60)
    const ids = events.map((event) => Number(event.id))
    assert.equal(ids, [...ids].sort((a, b) => a - b), 'in id order')
    assert.is(new Set(ids).size, 60, 'each change once')
    assert.is(ids[59] - ids[0], 59, 'no change left out')
    stream.close()
  }
})

test('when the connection that listens drops, it comes back by itself and the stream gets what was written meanwhile', async () => {
  const stream = await openStream(on(0).port, '/watched')
  assert.is((await stream.next()).event, 'value')
  const cut = await adminQuery(postgres!.url, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN restdir_changes'`)
  assert.ok(cut.rows.length >= 3, 'every instance listened')
  await on(1).request('PUT', '/watched/a', { body: { v: 1 } })
  const event = await stream.next(10_000)
  assert.equal([event.event, event.data.path], ['put', '/watched/a'])
  await on(2).request('PUT', '/watched/b', { body: { v: 2 } })
  assert.equal((await stream.next(5000)).data.path, '/watched/b', 'and it listens again')
  stream.close()
})

test('the database keeps only the window of changes: older rows are pruned as changes are made', async () => {
  const small = await startServer({ store: schema!.url, changeWindow: 10 })
  instances.push(small)
  for (let index = 0; index < 150; index++) await small.request('PUT', `/pruned/${index % 5}`, { body: { index } })
  const kept = await adminQuery(postgres!.url, `SELECT count(*)::int AS count FROM ${schemaName()}.restdir_changes`)
  assert.ok(kept.rows[0].count <= 10 + 64, `at most the window and one pruning period are kept, found ${kept.rows[0].count}`)
  const gap = await small.request('GET', `/pruned?_changes&since=${Number((await small.request('GET', '/pruned?_changes')).json.last) - 100}`)
  assert.is((gap.json as { gap?: boolean }).gap, true, 'an id older than the window is a gap')
})

// The same guarantees one level down: two stores on one database, each with a pool of its own, as two processes have.

/** Two more stores on the test's schema; closed by the caller. */
async function twoStores(): Promise<[PostgresStore, PostgresStore]> {
  return [await PostgresStore.open(schema!.url, { log: () => {} }), await PostgresStore.open(schema!.url, { log: () => {} })]
}

function kindOf(outcome: PromiseSettledResult<unknown>): string {
  if (outcome.status === 'fulfilled') return 'written'
  return outcome.reason instanceof StoreError ? outcome.reason.kind : String(outcome.reason)
}

test('stores on one database: of twenty compare-and-set writes from one version, one lands and the others are version-changed', async () => {
  const stores = await twoStores()
  try {
    const { etag } = await stores[0].write(['counter'], { n: 0 })
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, index) =>
      stores[index % 2].write(['counter'], { n: index + 1 }, { expect: etag })))
    assert.equal(outcomes.map(kindOf).sort(), [...Array(19).fill('version-changed'), 'written'])
    const none = await Promise.allSettled([0, 1].map((index) => stores[index].write(['fresh'], { by: index }, { expect: null })))
    assert.equal(none.map(kindOf).sort(), ['version-changed', 'written'])
  } finally {
    for (const store of stores) await store.close()
  }
})

test('stores on one database: a create of one node from both at once makes it once; the other is told it was there already', async () => {
  const stores = await twoStores()
  try {
    for (let round = 0; round < 20; round++) {
      const made = await Promise.all([0, 1].map((index) => stores[index].create(['ids', `n${round}`], { by: index })))
      assert.is(made.filter((result) => result !== undefined).length, 1, `round ${round}`)
      const winner = made.findIndex((result) => result !== undefined)
      assert.equal((await stores[1 - winner].read(['ids', `n${round}`]))?.doc, { by: winner })
    }
  } finally {
    for (const store of stores) await store.close()
  }
})

test('stores on one database: a unique value written at once from both is taken once; the refused write names the holder', async () => {
  const stores = await twoStores()
  try {
    for (let round = 0; round < 10; round++) {
      const unique = { among: ['users'], field: 'username' }
      const outcomes = await Promise.allSettled([0, 1].map((index) =>
        stores[index].create(['users', `u${round}-${index}`], { username: `name-${round}` }, { unique })))
      assert.equal(outcomes.map(kindOf).sort(), ['taken', 'written'], `round ${round}`)
      const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult
      const winner = outcomes.findIndex((outcome) => outcome.status === 'fulfilled')
      assert.is((refused.reason as StoreError).reason, `u${round}-${winner}`)
    }
  } finally {
    for (const store of stores) await store.close()
  }
})

test('stores on one database: writes under an owner racing the removal of its subtree either land before it and go with it, or are refused', async () => {
  const stores = await twoStores()
  try {
    for (let round = 0; round < 10; round++) {
      const owner = ['users', `owner${round}`]
      await stores[0].write(owner, { name: 'owner' })
      const writes = Array.from({ length: 20 }, (_, index) =>
        stores[index % 2].create([...owner, 'playlists', `p${index}`], { index }, { owner }))
      const removal = stores[round % 2].remove(owner)
      const outcomes = await Promise.allSettled(writes)
      assert.ok((await removal).existed)
      for (const outcome of outcomes) assert.ok(['written', 'owner-missing'].includes(kindOf(outcome)), kindOf(outcome))
      assert.is(await stores[1].exists(owner), false, `round ${round}: nothing is left below the owner`)
      assert.is(await stores[0].children([...owner, 'playlists']), undefined)
    }
  } finally {
    for (const store of stores) await store.close()
  }
})

function schemaName(): string {
  return /search_path=(\w+)/.exec(new URL(schema!.url).searchParams.get('options') ?? '')![1]
}

test.run()
