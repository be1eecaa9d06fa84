import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { makeTempDir, send, startServerOnFolder } from '../support/helpers.ts'
import { startCeiling } from '../../bench/processes.ts'
import { verdict, type Measurement, type Report } from '../../bench/report.ts'
import { getVerdict, pageVerdict } from '../../bench/postgres.ts'
import { medianRound, type LoadResult } from '../../bench/load.ts'
import { listingVerdicts, type ListingSizesRow } from '../../bench/listing-sizes.ts'
import { reportLines } from '../../bench/json-file.ts'

// The benchmark's quick mode, as a smoke test: every workload runs and gives
// figures. It asserts nothing about speed (that is measured only in bench/).

const workloads = ['get-user', 'get-document', 'get-random', 'get-hot', 'list-page', 'page-v1', 'post', 'put', 'put-sync', 'put-sync-pool4', 'patch', 'static-1k', 'static-256k', 'mixed', 'list-while-posting']
const writeWorkloads = ['post', 'put', 'put-sync', 'put-sync-pool4', 'patch']

test('npm run bench -- --quick measures every workload beside its ceiling, with memory and start-up', async () => {
  const dir = await makeTempDir('restdir-bench-spec-')
  try {
    const json = join(dir, 'report.json')
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--quick', '--duration', '0.25', '--launcher', 'source', '--json', json], {
      encoding: 'utf8',
      // The PostgreSQL part starts a server of its own (bench/postgres.ts): on a busy machine that takes a while.
      timeout: 240_000,
    })
    assert.is(run.status, 0, run.stderr)
    assert.match(run.stdout, '| workload | conns | ceiling req/s | restdir req/s | ratio |')
    const report = JSON.parse(readFileSync(json, 'utf8')) as Report
    assert.equal(report.measurements.map((m) => m.workload).sort(), [...workloads].sort())
    for (const m of report.measurements) {
      assert.ok(m.ceiling.requests > 0, `${m.workload}: the ceiling answered`)
      assert.ok(m.restdir.requests > 0, `${m.workload}: restdir answered`)
      assert.is(m.restdir.errors, 0, `${m.workload}: ${JSON.stringify(m.restdir.statuses)}`)
      assert.ok(Number.isFinite(m.restdir.p99), `${m.workload}: latencies`)
      assert.ok(m.firstMs > 0, `${m.workload}: a first request alone`)
      assert.is(m.writeCeiling !== undefined && m.writeCeiling.writes > 0, writeWorkloads.includes(m.workload), `${m.workload}: write loop`)
      const bare = m.bare?.result
      assert.is(bare !== undefined && bare.requests > 0 && bare.errors === 0, ['get-random', 'post', 'put', 'patch'].includes(m.workload), `${m.workload}: the bare HTTP server`)
      assert.is(m.sirv !== undefined && m.sirv.requests > 0 && m.sirv.errors === 0, m.workload.startsWith('static-'), `${m.workload}: sirv beside it`)
      const peer = m.jsonServer
      assert.is(peer !== undefined && peer.requests > 0 && peer.errors === 0, ['get-document', 'post'].includes(m.workload), `${m.workload}: json-server beside it`)
    }
    // Each measurement in rounds that take turns, the order flipped each round.
    assert.is(report.rounds, 2)
    assert.match(run.stdout, /0\.25 s a measurement, in 2 rounds of 0\.13 s that take turns with the ceiling/)
    const logged = (line: string) => run.stderr.indexOf(`  ${line}\n`)
    for (const round of [1, 2]) for (const side of ['ceiling', 'json-server', 'write ceiling (create)', 'restdir']) assert.ok(logged(`post: ${side}, round ${round} of 2`) >= 0, `post: ${side}, round ${round}`)
    assert.ok(logged('static-1k: sirv, round 2 of 2') >= 0)
    // The bare HTTP servers take turns with restdir too, each way of the write server apart: the same minutes for both.
    for (const round of [1, 2]) {
      for (const way of ["on the event loop's thread", 'through the pool']) assert.ok(logged(`post: the bare HTTP write server (create, its calls ${way}), round ${round} of 2`) >= 0, `post: ${way}, round ${round}`)
      assert.ok(logged(`put: the bare HTTP write server (replace, its calls through the pool), round ${round} of 2`) >= 0, `put, round ${round}`)
    }
    const bareRead = (round: number) => logged(`get-random: the bare HTTP read server, round ${round} of 2`)
    const restdirRandom = (round: number) => logged(`get-random: restdir, round ${round} of 2`)
    assert.ok(logged('get-random: ceiling, round 1 of 2') < bareRead(1) && bareRead(1) < restdirRandom(1), 'the bare read server between the ceiling and restdir in the first round')
    assert.ok(restdirRandom(1) < restdirRandom(2) && restdirRandom(2) < bareRead(2), 'restdir before the bare read server in the second')
    // POST into a db.json: json-server 1.0, restdir on the db.json and on a store folder take turns too.
    for (const round of [1, 2]) for (const side of ['json-server 1.0 on its db.json', 'restdir db.json', 'restdir on a store folder']) assert.ok(logged(`json-file-post: ${side}, round ${round} of 2`) >= 0, `json-file-post: ${side}, round ${round}`)
    assert.ok(logged('json-file-post: json-server 1.0 on its db.json, round 1 of 2') < logged('json-file-post: restdir on a store folder, round 1 of 2'), 'json-server first in the first round')
    assert.ok(logged('json-file-post: restdir on a store folder, round 2 of 2') < logged('json-file-post: json-server 1.0 on its db.json, round 2 of 2'), 'the store folder first in the second')
    assert.match(run.stderr, /restdir db\.json: [\d.]+× json-server \((met|MISSED): ≥ 5×\), \d+% of the store folder/)
    assert.ok(logged('get-document: ceiling, round 1 of 2') < logged('get-document: restdir, round 1 of 2'), 'the ceiling first in the first round')
    assert.ok(logged('get-document: restdir, round 2 of 2') < logged('get-document: ceiling, round 2 of 2'), 'restdir first in the second')
    assert.equal(report.calibration.map((row) => row.busyUs), [0, 10, 20, 40])
    for (const row of report.calibration) assert.ok(row.result.requests > 0 && row.result.errors === 0, `calibration at ${row.busyUs} µs answered`)
    assert.match(run.stdout, '| busy work per request, µs |')
    assert.match(run.stdout, /\| post \| [\d,]+ \(\d[\d,]*\) \| [\d,]+ \(\d[\d,]*\), (pool|event loop) \| [\d.]+ \| [\d,]+ \(\d[\d,]*\) \| [\d.]+ \|/)
    assert.match(run.stdout, /\| get-random \|  \| [\d,]+ \(\d[\d,]*\), event loop \|  \| [\d,]+ \(\d[\d,]*\) \| [\d.]+ \|/)
    assert.match(run.stdout, '| workload | conns | ceiling req/s | sirv req/s | restdir req/s |')
    assert.match(run.stdout, '| workload | conns | json-server req/s | restdir req/s | restdir / json-server |')
    assert.ok(report.memory.afterReadingAll > 0 && report.memory.afterTenth > 0)
    assert.ok(report.startup.filledStoreMs.every((ms) => ms > 0) && report.startup.emptyStoreMs > 0)
    assert.is(report.startup.bareNodeMs?.length, report.startup.filledStoreMs.length, 'a bare Node start beside each start on the filled store')
    assert.ok(report.startup.bareNodeMs!.every((ms) => ms > 0))
    assert.match(run.stdout, /so restdir's own start costs -?\d+ ms/)
    // The PostgreSQL store beside the file store, and two instances on one database.
    const postgres = report.postgres!
    assert.equal(postgres.measurements.map((m) => m.workload), ['pg-get', 'pg-page', 'pg-post', 'pg-put'])
    for (const m of postgres.measurements) {
      assert.ok(m.file.requests > 0 && m.postgres.requests > 0, `${m.workload}: both stores answered`)
      assert.is(m.file.errors + m.postgres.errors, 0, `${m.workload}: ${JSON.stringify([m.file.statuses, m.postgres.statuses])}`)
    }
    const get = postgres.measurements.find((m) => m.workload === 'pg-get')!
    assert.ok(get.floor !== undefined && get.floor.requests > 0 && get.floor.errors === 0, 'the reads straight to PostgreSQL')
    assert.match(run.stdout, /pg-get, PostgreSQL alone: the statement restdir reads a document with, .*: [\d,]+ reads\/s \([\d.]+ of the file store\)/)
    const page = postgres.measurements.find((m) => m.workload === 'pg-page')!
    assert.ok(page.alone !== undefined && page.alone.requests > 0 && page.alone.errors === 0, 'the page one request at a time')
    assert.match(run.stdout, /pg-page, one request at a time \(one connection, \d+ requests\)/)
    assert.ok(page.floor !== undefined && page.floor.requests > 0 && page.floor.errors === 0, 'the least statement straight to PostgreSQL')
    assert.match(run.stdout, /pg-page, PostgreSQL alone: the least statement that answers the page .*: [\d,]+ pages\/s, p50 [\d.]+ ms, p99 [\d.]+ ms/)
    assert.match(run.stdout, /\| static-1k \|.*\| (met|MISSED): ≥ 0\.4 of ceiling; (met|MISSED): above sirv \|/)
    assert.ok(postgres.instances!.one.requests > 0 && postgres.instances!.two.every((result) => result.requests > 0 && result.errors === 0), 'two instances answered')
    assert.match(run.stdout, '| workload | conns | file store req/s | PostgreSQL req/s |')
    assert.match(run.stdout, /two restdir on one database: PUT/)
    assert.match(run.stdout, /the round of median rate of 2 on each store, the stores in turn/)
    // The quick run's collections (1 000 and 5 000) are not the sizes the listing targets name.
    assert.match(run.stdout, '- not measured in this run: the filtered, sorted page and q at 10 000 and 50 000 documents faster than both json-servers')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('of the rounds of a workload on one store, the bench reports the one of median rate', () => {
  const round = (rps: number) => ({ rps }) as LoadResult
  assert.is(medianRound([round(9), round(3), round(5)]).rps, 5)
  assert.is(medianRound([round(8), round(2), round(6), round(4)]).rps, 4, 'the lower of the middle two')
  assert.is(medianRound([round(7)]).rps, 7)
})

test('the bare HTTP read server answers a document as restdir does: its compact text and its ETag, the same store folder read', async () => {
  const server = await startServerOnFolder()
  const ceiling = await startCeiling()
  try {
    const document = { title: 'Read by hand', tags: ['a', 'b'], nested: { price: 12.5, note: 'é "quoted"' } }
    assert.is((await server.request('PUT', '/notes/n1', { body: document })).status, 201)
    // A file a person saved in an editor's layout: the answer owes its compact form.
    mkdirSync(join(server.dir, 'notes', 'n2'))
    writeFileSync(join(server.dir, 'notes', 'n2', '@.json'), '{\n    "title" :  "by hand",\n\t"count": 3\n}\n')
    await ceiling.answerWith(Buffer.from('{}'), undefined, 0, { read: server.dir })
    for (const path of ['/notes/n1', '/notes/n2']) {
      const bare = await send(ceiling.port, 'GET', path)
      const restdir = await server.request('GET', path)
      assert.is(restdir.status, 200, path)
      assert.is(bare.text, restdir.text, `${path}: the body`)
      assert.is(bare.headers.etag, restdir.headers.etag, `${path}: the ETag`)
    }
  } finally {
    await ceiling.stop()
    await server.close()
  }
})

test('the page with many at once is checked against its target unless PostgreSQL alone misses it too', () => {
  assert.is(pageVerdict(30, 20), 'met: p99 < 50 ms on PostgreSQL')
  assert.is(pageVerdict(80, 20), 'MISSED: p99 < 50 ms on PostgreSQL')
  assert.is(pageVerdict(80, undefined), 'MISSED: p99 < 50 ms on PostgreSQL')
  assert.is(pageVerdict(80, 55.4), 'beyond this machine: p99 < 50 ms on PostgreSQL, where PostgreSQL alone has p99 55 ms with the least statement')
  assert.is(pageVerdict(40, 50), 'beyond this machine: p99 < 50 ms on PostgreSQL, where PostgreSQL alone has p99 50 ms with the least statement')
})

test('the PostgreSQL GET is checked against its target unless PostgreSQL alone, one read a statement, misses it too', () => {
  assert.is(getVerdict(0.6, 0.3), 'met: ≥ 0.5 of the file store')
  assert.is(getVerdict(0.4, 0.7), 'MISSED: ≥ 0.5 of the file store')
  assert.is(getVerdict(0.4, undefined), 'MISSED: ≥ 0.5 of the file store')
  assert.is(getVerdict(0.32, 0.499), 'beyond this machine: ≥ 0.5 of the file store, where PostgreSQL alone, one read a statement, makes 0.49')
  assert.is(getVerdict(0.4, 0.5), 'MISSED: ≥ 0.5 of the file store', 'PostgreSQL alone at the target leaves restdir short of it')
})

test('a target restdir meets is met; one it misses is beyond the machine where the bare HTTP server making the same calls (for --sync, the write loop with its flushes) misses it too, else MISSED', () => {
  const noPut = { rps: NaN, loopRps: NaN }
  const load = (rps: number, serverCpuUs: number) => ({ rps, serverCpuUs }) as LoadResult
  const measurement = (workload: string, restdir: LoadResult, bare?: LoadResult, loop?: number): Measurement =>
    ({ workload, restdir, ...(bare && { bare: { way: 'thread', result: bare } }), ...(loop && { writeCeiling: { rps: loop } }) }) as Measurement
  const random = (restdirCpu: number, bareCpu?: number) => verdict(measurement('get-random', load(5000, restdirCpu), bareCpu === undefined ? undefined : load(6000, bareCpu)), 0, undefined, noPut)
  assert.is(random(183, 92.4), 'beyond this machine: CPU ≤ 60 µs, where the bare HTTP read server costs 92 µs')
  assert.is(random(55, 40), 'met: CPU ≤ 60 µs')
  assert.is(random(70, 40), 'MISSED: CPU ≤ 60 µs')
  assert.is(random(70), 'MISSED: CPU ≤ 60 µs')
  const post = (restdir: LoadResult, bare: LoadResult, loop: number) => verdict(measurement('post', restdir, bare, loop), 0, restdir.rps / loop, noPut)
  assert.is(post(load(2400, 422), load(3475, 270), 9000), 'beyond this machine: ≥ 0.6 of write loop, where the bare HTTP write server makes 0.38; beyond this machine: CPU ≤ 150 µs, where the bare HTTP write server costs 270 µs')
  assert.is(post(load(2400, 200), load(6000, 120), 9000), 'MISSED: ≥ 0.6 of write loop; MISSED: CPU ≤ 150 µs')
  assert.is(post(load(5500, 140), load(6000, 120), 9000), 'met: ≥ 0.6 of write loop; met: CPU ≤ 150 µs')
  assert.is(post(load(5500, 132), load(5000, 151), 9000), 'met: ≥ 0.6 of write loop; met: CPU ≤ 150 µs', 'what restdir meets is met, whatever the bare server did')
  const put = (restdirRps: number, bareRps: number) => verdict(measurement('put', load(restdirRps, 500), load(bareRps, 300), 5000), 0, restdirRps / 5000, noPut)
  assert.is(put(2445, 3846), 'MISSED: ≥ 0.6 of write loop')
  assert.is(put(2445, 2900), 'beyond this machine: ≥ 0.6 of write loop, where the bare HTTP write server makes 0.58')
  assert.is(put(2445, 2998), 'beyond this machine: ≥ 0.6 of write loop, where the bare HTTP write server makes 0.59', 'just short of the target, rounded down')
  assert.is(put(3100, 3846), 'met: ≥ 0.6 of write loop')
  assert.is(put(3100, 2900), 'met: ≥ 0.6 of write loop')
  assert.is(random(58, 92.4), 'met: CPU ≤ 60 µs')
  // PUT with --sync beside PUT without it (5000/s, its loop 6000/s): the sync loop below half the plain one puts the target beyond the machine.
  const putSync = (restdirRps: number, syncLoopRps?: number) => verdict(measurement('put-sync', load(restdirRps, 500), undefined, syncLoopRps), 0, undefined, { rps: 5000, loopRps: 6000 })
  assert.is(putSync(2600, 2000), 'met: ≥ 0.5 of put (0.52)')
  assert.is(putSync(2100, 2069), 'beyond this machine: ≥ 0.5 of put (0.42), where the write loop with its flushes makes 0.34 of the loop without them')
  assert.is(putSync(2100, 3300), 'MISSED: ≥ 0.5 of put (0.42)')
  assert.is(putSync(2100), 'MISSED: ≥ 0.5 of put (0.42)')
  assert.is(verdict(measurement('put-sync', load(2100, 500), undefined, 2069), 0, undefined, noPut), 'compare with put (not run)')
})

test('the listing targets are met only when every store beats json-server at 10 000 and 50 000, and the page of 50 000 takes under 10 ms', () => {
  const timing = (medianMs: number) => ({ medianMs, firstMs: medianMs })
  const row = (documents: number, query: string, dialect: '0.17' | '1.0', stores: [number, number, number], jsonServer: number): ListingSizesRow => ({
    documents,
    query: `${query}: …`,
    dialect,
    folder: timing(stores[0]),
    memory: timing(stores[1]),
    dbJson: timing(stores[2]),
    jsonServer: timing(jsonServer),
  })
  const fast = [10_000, 50_000].flatMap((size) => ['filtered page', 'q'].flatMap((query) => (['0.17', '1.0'] as const).map((dialect) => row(size, query, dialect, [2, 3, 4], 20))))
  assert.equal(listingVerdicts(fast).map((line) => line.split(':')[0]), ['met', 'met', 'met'])
  const slowQ = fast.map((one) => (one.documents === 50_000 && one.query.startsWith('q:') && one.dialect === '1.0' ? { ...one, memory: timing(25) } : one))
  assert.equal(listingVerdicts(slowQ)[0], 'MISSED: the filtered, sorted page and q at 10 000 and 50 000 documents faster than both json-servers, on every store (50,000 q (1.0): memory 25.0 ms against 20.0)')
  const slowPage = fast.map((one) => (one.documents === 50_000 && one.query.startsWith('filtered page') ? { ...one, folder: timing(12) } : one))
  assert.match(listingVerdicts(slowPage)[1], /^MISSED: the filtered page of 50 000 documents under 10 ms p50 .*folder 12\.0 ms/)
  assert.match(listingVerdicts(slowPage)[0], /^met: /, '12 ms still beats json-server\'s 20')
  const behindDbJson = fast.map((one) => (one.documents === 10_000 && one.query.startsWith('filtered page') && one.dialect === '0.17' ? { ...one, dbJson: timing(21) } : one))
  assert.match(listingVerdicts(behindDbJson)[2], /^MISSED: the filtered, sorted page of a 10 000-post db.json .*21\.0 ms against 20\.0/)
  assert.equal(listingVerdicts([row(1_000, 'q', '1.0', [9, 9, 9], 1)]).map((line) => line.split(':')[0]), ['not measured in this run', 'not measured in this run', 'not measured in this run'])
})

test('a db.json POST is met at 5 times json-server and half the store folder, MISSED below either, its figures rounded down', () => {
  const load = (rps: number) => ({ rps, p50: 1, p99: 2 }) as LoadResult
  const verdictLine = (jsonServer: number, dbJson: number, folder: number) =>
    reportLines({ posts: 1000, connections: 32, rounds: 3, jsonServer: load(jsonServer), restdirJsonFile: load(dbJson), restdirFolder: load(folder) }).at(-1)
  assert.is(verdictLine(400, 2000, 4000), 'restdir db.json: 5.0× json-server (met: ≥ 5×), 50% of the store folder (met: ≥ 50%)')
  assert.is(verdictLine(400, 1900, 3000), 'restdir db.json: 4.7× json-server (MISSED: ≥ 5×), 63% of the store folder (met: ≥ 50%)')
  assert.is(verdictLine(300, 2000, 4100), 'restdir db.json: 6.6× json-server (met: ≥ 5×), 48% of the store folder (MISSED: ≥ 50%)')
  // Figures are rounded down: one short of a target never reads as the target itself.
  assert.is(verdictLine(400, 1998, 4003), 'restdir db.json: 4.9× json-server (MISSED: ≥ 5×), 49% of the store folder (MISSED: ≥ 50%)')
})

test('bench/ab.ts builds a commit beside this checkout, alternates their measurements and profiles one side', () => {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'bench/ab.ts', '--a', 'HEAD', '--b', '.', '--docs', '50', '--rounds', '2', '--duration', '0.25', '--only', 'get-document,list-page', '--prof', 'b'],
    { encoding: 'utf8', timeout: 180_000 },
  )
  assert.is(run.status, 0, run.stderr)
  assert.match(run.stdout, '| workload | A req/s | B req/s | B/A | A CPU µs/req | B CPU µs/req | B/A CPU |')
  for (const workload of ['get-document', 'list-page']) assert.match(run.stdout, new RegExp(`^\\| ${workload} \\| [\\d,]+ \\| [\\d,]+ \\| [\\d.]+ \\|`, 'm'))
  assert.match(run.stdout, /Profile of B .*thread 0 is the main thread/)
  assert.match(run.stdout, /^\| [\d.]+ \| [\d.]+% \| /m)
})

test.run()
