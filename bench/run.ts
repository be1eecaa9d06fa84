/**
 * `npm run bench`: in one run, measures a bare `node:http` server (the
 * ceiling) and restdir on the same workloads, one after the other, and
 * prints restdir's figures as a fraction of the ceiling's. Writes are also
 * compared with a bare loop of the file store's atomic write sequence, and
 * static files with sirv serving the same folder.
 *
 *   npm run bench                      full run (100 000 documents, 8 s a measurement, in 3 rounds that take turns)
 *   npm run bench -- --quick           a few seconds a workload, a small store (proves the script works)
 *   npm run bench -- --only get,list   only the workloads whose name contains one of these
 *   npm run bench -- --repeat 3        measure each workload three times
 *   npm run bench -- --rounds 5        the turns each measurement is split into (3; --quick: 2); the PostgreSQL part makes as many of the whole duration
 *   npm run bench -- --json out.json   also write every figure as JSON
 *   npm run bench -- --launcher source run bin/restdir.ts through tsx even when dist/ is built
 *   npm run bench -- --checkout DIR    measure the restdir in another folder (e.g. an older commit)
 *   npm run bench -- --pg-docs N       documents in the PostgreSQL store's big collection (1 000 000; --quick: 2 000)
 *   npm run bench -- --pg-file-docs N  documents in the file store's collection it is compared with (20 000; --quick: 500)
 *   npm run bench -- --listing-sizes 1000,10000   collection sizes of bench/listing-sizes.ts (1 000 to 100 000; --quick: 1 000, 5 000)
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { buildRequest, medianRound, runLoad, sendAll, settleDisk, type LoadResult } from './load.ts'
import { bareNodeStartMs, restdirLauncher, startCeiling, startRestdir, startSirv, type BareServer, type CeilingServer, type RunningServer, type SirvServer } from './processes.ts'
import { fillStore, writeStaticFiles } from './seed.ts'
import { measureWriteCeiling, type WriteCeilingResult } from './write-ceiling.ts'
import { defineWorkloads, DOCUMENT_PATH, type Workload } from './workloads.ts'
import { loadAverage, machineLine, printReport, type Bare, type Calibration, type Measurement, type Report } from './report.ts'
import { benchPostgres } from './postgres.ts'
import { POSTS as JSON_SERVER_POSTS, startJsonServer, writeJsonServerDb, type JsonServer } from './json-server.ts'
import { benchListingSizes } from './listing-sizes.ts'
import { benchJsonFile } from './json-file.ts'

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    repeat: { type: 'string', default: '1' },
    rounds: { type: 'string' },
    docs: { type: 'string' },
    duration: { type: 'string' },
    json: { type: 'string' },
    launcher: { type: 'string', default: 'auto' },
    checkout: { type: 'string' },
    'pg-docs': { type: 'string' },
    'pg-file-docs': { type: 'string' },
    'listing-sizes': { type: 'string' },
  },
})

const quick = args.quick!
const documentCount = Number(args.docs ?? (quick ? 500 : 100_000))
const duration = Number(args.duration ?? (quick ? 0.5 : 8))
const warmup = quick ? 0.2 : 1
const repeat = Math.max(1, Number(args.repeat))
const rounds = Math.max(1, Number(args.rounds ?? (quick ? 2 : 3)))
const only = args.only?.split(',').filter(Boolean)
const launcher = restdirLauncher(args.launcher as 'built' | 'source' | 'auto', args.checkout && resolve(args.checkout))
const log = (line: string) => process.stderr.write(`  ${line}\n`)

const work = await mkdtemp(join(tmpdir(), 'restdir-bench-'))
const store = join(work, 'store')
const www = join(work, 'www')
await mkdir(www)
const running: Array<{ stop(): Promise<void> }> = []
process.on('SIGINT', async () => {
  await Promise.all(running.map((server) => server.stop()))
  await rm(work, { recursive: true, force: true })
  process.exit(130)
})

try {
  const report = await benchmark()
  printReport(report)
  if (args.json) await writeFile(args.json, JSON.stringify(report, null, 2))
} finally {
  await Promise.all(running.map((server) => server.stop()))
  await rm(work, { recursive: true, force: true })
}

async function benchmark(): Promise<Report> {
  const startedLoad = loadAverage()
  log(`machine: ${machineLine()}`)
  log(`restdir: ${launcher.label}`)
  const files = await writeStaticFiles(www)
  const ceiling = await startCeiling()
  running.push(ceiling)
  const sirv = await startSirv(www)
  running.push(sirv)

  const restdirFlags = ['--store', store, '--www', www]
  let server = await start(restdirFlags)
  const startupEmpty = server.startupMs
  log(`filling the store with ${documentCount} documents through the API`)
  const { fixture, memory } = await fillStore(server, documentCount, log)
  await stop(server)

  // Start-up on the filled store, three times: it must not depend on the store's size. Each
  // after a bare Node server's start, what the machine charges any start in these minutes.
  const startups: number[] = []
  const bareNode: number[] = []
  const restarts = quick ? 1 : 3
  for (let run = 0; run < restarts; run++) {
    bareNode.push(await bareNodeStartMs())
    server = await start(restdirFlags)
    startups.push(server.startupMs)
    if (run < restarts - 1) await stop(server)
  }
  const idleRss = server.rss()

  const workloads = defineWorkloads({ ...fixture, ...files }).filter(
    (workload) => !only || only.some((part) => workload.name.includes(part)),
  )
  let jsonServer: JsonServer | undefined
  if (workloads.some((workload) => workload.jsonServer)) {
    const folder = join(work, 'json-server')
    await mkdir(folder)
    jsonServer = await startJsonServer('1.0', await writeJsonServerDb(folder, fixture.documentBody), DOCUMENT_PATH)
    running.push(jsonServer)
  }
  const measurements: Measurement[] = []
  for (const mode of ['plain', 'sync', 'sync-pool4'] as const) {
    const group = workloads.filter((workload) => workload.server === mode)
    if (group.length === 0) continue
    if (mode !== 'plain') {
      await stop(server)
      server = await start([...restdirFlags, '--sync'], mode === 'sync-pool4' ? { UV_THREADPOOL_SIZE: '4' } : {})
    }
    for (let run = 0; run < repeat; run++) {
      for (const workload of group) measurements.push(await measure(workload, server, ceiling, sirv, jsonServer))
    }
  }
  const rssAfterWorkloads = server.rss()
  await stop(server)
  if (jsonServer) await stop(jsonServer)
  const calibration = workloads.some((workload) => workload.name === 'get-document') ? await calibrate(ceiling, fixture.documentBody) : []

  // The PostgreSQL store, beside a file store of its own (bench/postgres.ts).
  const postgres = await benchPostgres({
    launcher,
    documents: Number(args['pg-docs'] ?? (quick ? 2000 : 1_000_000)),
    fileDocuments: Number(args['pg-file-docs'] ?? (quick ? 500 : 20_000)),
    duration,
    warmup,
    rounds,
    work,
    selected: (name) => !only || only.some((part) => name.includes(part)),
    log,
    running,
  })

  const listingSizes = !only || only.some((part) => 'listing-sizes'.includes(part))
    ? await benchListingSizes({ launcher, sizes: (args['listing-sizes'] ?? (quick ? '1000,5000' : '1000,10000,50000,100000')).split(',').map(Number), rounds: 15, work, log, running })
    : undefined
  // POST into a db.json served as the store, beside json-server 1.0 and a store folder (bench/json-file.ts); it logs its own figures.
  await benchJsonFile({ launcher, duration, warmup, rounds, work, selected: (name) => !only || only.some((part) => name.includes(part)), log, running })

  return {
    ...(listingSizes && { listingSizes }),
    machine: machineLine(),
    launcher: launcher.label,
    documents: documentCount,
    duration,
    rounds,
    quick,
    loadAverage: { before: startedLoad, after: loadAverage() },
    startup: { emptyStoreMs: startupEmpty, filledStoreMs: startups, bareNodeMs: bareNode },
    memory: { ...memory, idleAfterRestart: idleRss, afterWorkloads: rssAfterWorkloads },
    measurements,
    calibration,
    postgres,
    jsonServerPosts: jsonServer ? JSON_SERVER_POSTS : undefined,
  }
}

/**
 * What a ratio to the ceiling means on this machine: the bare server again,
 * spinning a set number of microseconds before each answer of get-document.
 * With the load generator on the same host, each microsecond of work costs
 * more than a microsecond of throughput (the client waits, and waking it
 * costs the kernel more), so these rows show how little work per request a
 * given ratio leaves a server.
 */
async function calibrate(ceiling: CeilingServer, body: Buffer): Promise<Calibration[]> {
  const rows: Calibration[] = []
  const options = { connections: 10, duration, warmup, nextRequest: () => buildRequest('GET', DOCUMENT_PATH), port: ceiling.port, serverPid: ceiling.pid }
  for (const busyUs of [0, 10, 20, 40]) {
    log(`calibration: the ceiling spinning ${busyUs} µs a request`)
    await ceiling.answerWith(body, undefined, busyUs)
    rows.push({ busyUs, result: await runLoad(options) })
  }
  await ceiling.answerWith(body)
  return rows
}

async function measure(
  workload: Workload,
  server: RunningServer,
  ceilingServer: CeilingServer,
  sirvServer: SirvServer,
  jsonServer: JsonServer | undefined,
): Promise<Measurement> {
  await ceilingServer.answerWith(workload.ceilingBody, workload.ceilingType)
  const options = { connections: workload.connections, duration, warmup, nextRequest: workload.nextRequest }
  // One request alone first: it proves the workload is answered, and times the cold case
  // (for a page of a big collection, the first listing after start builds the folder's index).
  const firstFrom = performance.now()
  const first = await sendAll(server.port, 1, [workload.nextRequest(0)])
  const firstMs = performance.now() - firstFrom
  if (first.errors > 0) log(`${workload.name}: the first request failed`)

  // Every side of the comparison in turn, `rounds` times, the order flipped each round: the drift of a
  // shared machine over a minute (the ceiling alone has moved by two fifths between neighbouring
  // workloads) falls on all sides alike, as in bench/ab.ts. Each side's round of median rate is reported.
  const http = (port: number, pid: number) => (seconds: number, warm: number) => runLoad({ ...options, duration: seconds, warmup: warm, port, serverPid: pid })
  const sides: Array<{ name: string; run: (seconds: number, warm: number) => Promise<LoadResult | WriteCeilingResult> }> = [
    { name: 'ceiling', run: http(ceilingServer.port, ceilingServer.pid) },
    ...(workload.sirv ? [{ name: 'sirv', run: http(sirvServer.port, sirvServer.pid) }] : []),
    ...(workload.jsonServer && jsonServer ? [{ name: 'json-server', run: http(jsonServer.port, jsonServer.pid) }] : []),
    ...(workload.writeCeiling ? [{ name: 'write loop', run: (seconds: number) => writeLoop(workload, seconds) }] : []),
    ...bareSides(workload).map(({ way, as }) => ({ name: `bare ${way}`, run: asBare(ceilingServer, workload, as, http(ceilingServer.port, ceilingServer.pid)) })),
    { name: 'restdir', run: http(server.port, server.pid) },
  ]
  const results = new Map<string, Array<LoadResult | WriteCeilingResult>>(sides.map((side) => [side.name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      // Each write starts on a disk that holds no other phase's unwritten pages.
      if (workload.writeCeiling) await settleDisk()
      log(`${workload.name}: ${sideLabel(workload, side.name)}, round ${round + 1} of ${rounds}`)
      const result = await side.run(duration / rounds, round === 0 ? warmup : warmup / 2)
      if ('errors' in result && result.errors > 0) log(`${workload.name}: ${side.name} gave ${result.errors} failed answers ${JSON.stringify(result.statuses)}`)
      results.get(side.name)!.push(result)
    }
  }
  const median = (name: string) => (results.has(name) ? medianRound(results.get(name)!) : undefined)
  // Of the bare server's ways (a write's calls on the event loop's thread or through the pool), the faster.
  const bare = bareSides(workload)
    .map(({ way }): Bare => ({ way, result: median(`bare ${way}`) as LoadResult }))
    .reduce<Bare | undefined>((best, next) => (best === undefined || next.result.rps > best.result.rps ? next : best), undefined)
  const ceiling = median('ceiling') as LoadResult
  const restdir = median('restdir') as LoadResult
  const atRate = workload.ceilingAtRate ? await ceilingAtRate(workload, ceilingServer, options, ceiling.rps, restdir.rps) : undefined
  return {
    workload: workload.name,
    description: workload.description,
    connections: workload.connections,
    firstMs,
    ceiling,
    sirv: median('sirv') as LoadResult | undefined,
    jsonServer: median('json-server') as LoadResult | undefined,
    writeCeiling: median('write loop') as WriteCeilingResult | undefined,
    bare,
    restdir,
    ceilingAtRate: atRate,
  }
}

/** The bare write loop (bench/write-ceiling.ts) for `seconds`, as many writes in flight as the workload has connections. */
function writeLoop(workload: Workload, seconds: number): Promise<WriteCeilingResult> {
  return measureWriteCeiling({
    dir: join(work, 'scratch'),
    mode: workload.writeCeiling === 'create' ? 'create' : 'replace',
    sync: workload.writeCeiling === 'replace-sync',
    inFlight: workload.connections,
    duration: seconds,
    text: workload.ceilingBody.toString(),
  })
}

/**
 * The ceiling making a workload's own file-system calls before each answer
 * (bench/ceiling-server.ts): for a write workload the bare HTTP write
 * server, once with the calls on the event loop's thread and once through
 * the pool (the faster is reported); for the random GET the bare HTTP read
 * server, which also parses, checks and compacts the document and makes its
 * ETag. restdir does this work and more, so where even this misses a target,
 * the target is beyond the machine. Each way is a side of the workload's
 * rounds, measured in turns with restdir in the same minutes (docs/speed.md):
 * measured once before the rounds, the bare read server's figure was that of
 * other seconds than restdir's.
 */
function bareSides(workload: Workload): Array<{ way: Bare['way']; as: BareServer }> {
  if (workload.bareRead) return [{ way: 'thread', as: { read: store } }]
  const mode = workload.writeCeiling
  if (mode !== 'create' && mode !== 'replace') return []
  return (['thread', 'pool'] as const).map((way) => ({ way, as: { write: { dir: join(work, 'scratch'), mode, pool: way === 'pool' } } }))
}

/** A round of the ceiling as the bare server `as`, then the plain ceiling again for the sides after it. */
function asBare(
  ceilingServer: CeilingServer,
  workload: Workload,
  as: BareServer,
  run: (seconds: number, warm: number) => Promise<LoadResult>,
): (seconds: number, warm: number) => Promise<LoadResult> {
  return async (seconds, warm) => {
    await ceilingServer.answerWith(workload.ceilingBody, workload.ceilingType, 0, as)
    try {
      return await run(seconds, warm)
    } finally {
      await ceilingServer.answerWith(workload.ceilingBody, workload.ceilingType)
    }
  }
}

function sideLabel(workload: Workload, name: string): string {
  if (name === 'write loop') return `write ceiling (${workload.writeCeiling})`
  if (name === 'bare thread' || name === 'bare pool') {
    if (workload.bareRead) return 'the bare HTTP read server'
    return `the bare HTTP write server (${workload.writeCeiling}, its calls ${name === 'bare pool' ? 'through the pool' : "on the event loop's thread"})`
  }
  return name
}

/**
 * The bare server slowed to restdir's own rate by spinning before each
 * answer: what answering at that rate costs this machine before restdir does
 * anything. A server that answers slower leaves the load generator waiting,
 * and each answer then wakes it: on a virtual machine those wake-ups cost
 * several times what they cost a server the client keeps busy. The spin is a
 * first guess from the two rates, then corrected once by the rate it gave;
 * the closer of the two is kept.
 */
async function ceilingAtRate(
  workload: Workload,
  ceilingServer: CeilingServer,
  options: Omit<Parameters<typeof runLoad>[0], 'port' | 'serverPid'>,
  bareRps: number,
  restdirRps: number,
): Promise<Calibration> {
  let busyUs = Math.max(0, Math.round(1e6 / restdirRps - 1e6 / bareRps))
  let best: Calibration | undefined
  for (let attempt = 0; attempt < 2; attempt++) {
    log(`${workload.name}: the ceiling spinning ${busyUs} µs a request, to answer at restdir's rate`)
    await ceilingServer.answerWith(workload.ceilingBody, workload.ceilingType, busyUs)
    const result = await runLoad({ ...options, port: ceilingServer.port, serverPid: ceilingServer.pid })
    if (best === undefined || Math.abs(result.rps - restdirRps) < Math.abs(best.result.rps - restdirRps)) best = { busyUs, result }
    busyUs = Math.max(0, Math.round(busyUs + 1e6 / restdirRps - 1e6 / result.rps))
  }
  await ceilingServer.answerWith(workload.ceilingBody, workload.ceilingType)
  return best!
}

async function start(flags: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  const server = await startRestdir(launcher, flags, env)
  running.push(server)
  return server
}

async function stop(server: { stop(): Promise<void> }): Promise<void> {
  await server.stop()
  running.splice(running.indexOf(server), 1)
}
