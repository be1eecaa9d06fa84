import { cpus, loadavg, release, totalmem } from 'node:os'
import { roundedDown, type LoadResult } from './load.ts'
import type { Memory } from './seed.ts'
import type { WriteCeilingResult } from './write-ceiling.ts'
import { postgresLines, type PostgresBench } from './postgres.ts'

export interface Measurement {
  workload: string
  description: string
  connections: number
  /** Milliseconds for one request alone before the load: the cold case. */
  firstMs: number
  ceiling: LoadResult
  /** sirv serving the same www folder, for static files. */
  sirv?: LoadResult
  /** json-server 1.0 answering the same requests from its db.json (bench/json-server.ts). */
  jsonServer?: LoadResult
  writeCeiling?: WriteCeilingResult
  /** The ceiling making the workload's own file-system calls before each answer (measureBare in bench/run.ts). */
  bare?: Bare
  restdir: LoadResult
  /** The ceiling spinning before each answer so as to answer at restdir's rate (ceilingAtRate in run.ts). */
  ceilingAtRate?: Calibration
}

export interface Report {
  machine: string
  launcher: string
  documents: number
  duration: number
  /** The rounds each measurement was split into, every side of it in turn (measure in bench/run.ts). */
  rounds: number
  quick: boolean
  loadAverage: { before: number[]; after: number[] }
  /** Milliseconds from spawn to first answer: restdir's, and a bare `node:http` server's started in turn with those on the filled store. */
  startup: { emptyStoreMs: number; filledStoreMs: number[]; bareNodeMs?: number[] }
  memory: Memory & { idleAfterRestart: number; afterWorkloads: number }
  measurements: Measurement[]
  /** The ceiling with busy work added per request (see calibrate in run.ts). */
  calibration: Calibration[]
  /** The PostgreSQL store beside the file store (bench/postgres.ts), unless left out with --only. */
  postgres?: PostgresBench
  /** The posts in json-server's db.json when it was started (bench/json-server.ts). */
  jsonServerPosts?: number
}

/** The bare HTTP write or read server's result, and where it made its calls (the faster way, for writes). */
export interface Bare {
  way: 'thread' | 'pool'
  result: LoadResult
}

export interface Calibration {
  busyUs: number
  result: LoadResult
}

/** The targets restdir holds itself to, checked against each run. */
const MB = 1024 * 1024
const targets = {
  readRatio: 0.8,
  /** The same target by CPU: a GET of one document costs the server at most this times the ceiling's answer. */
  readCpuRatio: 1.25,
  /** A GET of a random document among all (mostly cache misses), server CPU µs per answer. */
  randomReadCpuUs: 60,
  writeRatio: 0.6,
  /** Server CPU µs per POST. */
  postCpuUs: 150,
  syncToPlain: 0.5,
  pageRatio: 0.4,
  pageP99Ms: 20,
  /** A small static file: this much of the ceiling, and more than sirv; a big one, more than sirv. */
  smallFileRatio: 0.4,
  rssBytes: 150 * MB,
  /** RSS may grow this much while the store grows tenfold (a bounded cache, no per-document memory). */
  rssGrowthBytes: 25 * MB,
  startupMs: 300,
}

export function machineLine(): string {
  const cpu = cpus()
  return `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 1024 ** 3)} GiB RAM, ${process.platform} ${release()}, Node ${process.versions.node}`
}

export function loadAverage(): number[] {
  return loadavg().map((value) => Math.round(value * 100) / 100)
}

/** Prints the report as Markdown, ready to paste into bench/RESULTS.md. */
export function printReport(report: Report): void {
  const lines: string[] = []
  lines.push(`### ${report.quick ? 'Quick run (proves the script works; not a measurement)' : 'Run'}`)
  lines.push('')
  lines.push(`- machine: ${report.machine}`)
  lines.push(`- restdir: ${report.launcher}`)
  lines.push(
    `- store: ${report.documents} documents in one collection; ${report.duration} s a measurement, in ${report.rounds} rounds of ${+(report.duration / report.rounds).toFixed(2)} s ` +
      'that take turns with the ceiling (and the write loop, sirv, json-server where they are compared); each side\'s round of median rate is reported',
  )
  lines.push(`- load average before / after: ${report.loadAverage.before.join(' ')} / ${report.loadAverage.after.join(' ')}`)
  lines.push('')
  lines.push('| workload | conns | ceiling req/s | restdir req/s | ratio | p50 ms | p99 ms | server CPU µs/req, ceiling / restdir (ratio) | write loop/s (CPU µs/write) | ratio to loop | target |')
  lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|')
  const puts = report.measurements.filter((m) => m.workload === 'put')
  const plainPut = { rps: median(puts.map((m) => m.restdir.rps)), loopRps: median(puts.flatMap((m) => (m.writeCeiling ? [m.writeCeiling.rps] : []))) }
  for (const m of report.measurements) {
    const ratio = m.restdir.rps / m.ceiling.rps
    const loopRatio = m.writeCeiling ? m.restdir.rps / m.writeCeiling.rps : undefined
    const failed = m.restdir.errors > 0 ? ` (${m.restdir.errors} failed)` : ''
    lines.push(
      `| ${m.workload}${failed} | ${m.connections} | ${whole(m.ceiling.rps)} | ${whole(m.restdir.rps)} | ${ratio.toFixed(2)} | ` +
        `${m.restdir.p50.toFixed(2)} | ${m.restdir.p99.toFixed(2)} | ${whole(m.ceiling.serverCpuUs)} / ${whole(m.restdir.serverCpuUs)} (${(m.ceiling.serverCpuUs / m.restdir.serverCpuUs).toFixed(2)}) | ` +
        `${m.writeCeiling ? `${whole(m.writeCeiling.rps)} (${whole(m.writeCeiling.cpuUs)})` : ''} | ` +
        `${loopRatio === undefined ? '' : loopRatio.toFixed(2)} | ${verdict(m, ratio, loopRatio, plainPut)} |`,
    )
  }
  lines.push('')
  const bares = report.measurements.filter((m) => m.bare !== undefined)
  if (bares.length > 0) {
    lines.push(
      'The bare HTTP servers: the ceiling making the workload\'s own file-system calls before each answer, the write loop\'s for a write (on the event loop\'s ' +
        'thread and through the pool, the faster kept), for the random GET the file store\'s own read of the document\'s file (an open that follows no link, ' +
        'on Linux a readlink that asks where it landed, an fstat, one read, a close), then the answer a GET owes (parsed and checked exact, compact, ' +
        'its ETag). restdir does that work and more, so what they reach, with the load generator on the same cores, is the most any server can on this machine.',
    )
    lines.push('')
    lines.push('| workload | write loop/s (CPU µs/write) | bare server req/s (CPU µs/req), its calls | its ratio to the loop | restdir req/s (CPU µs/req) | restdir\'s ratio to it |')
    lines.push('|---|--:|--:|--:|--:|--:|')
    for (const m of bares) {
      const loop = m.writeCeiling
      const { way, result } = m.bare!
      lines.push(
        `| ${m.workload} | ${loop ? `${whole(loop.rps)} (${whole(loop.cpuUs)})` : ''} | ${whole(result.rps)} (${whole(result.serverCpuUs)}), ${way === 'pool' ? 'pool' : 'event loop'} | ` +
          `${loop ? (result.rps / loop.rps).toFixed(2) : ''} | ${whole(m.restdir.rps)} (${whole(m.restdir.serverCpuUs)}) | ${(m.restdir.rps / result.rps).toFixed(2)} |`,
      )
    }
    lines.push('')
  }
  const slowed = report.measurements.filter((m) => m.ceilingAtRate !== undefined)
  if (slowed.length > 0) {
    lines.push('The ceiling slowed to restdir\'s rate by spinning before each answer: its CPU beyond the spin is what answering at that rate costs this machine.')
    lines.push('')
    lines.push('| workload | spin µs/req | ceiling req/s | restdir req/s | ceiling CPU µs/req beyond its spin | restdir CPU µs/req | restdir\'s beyond it |')
    lines.push('|---|--:|--:|--:|--:|--:|--:|')
    for (const m of slowed) {
      const { busyUs, result } = m.ceilingAtRate!
      const beyond = result.serverCpuUs - busyUs
      lines.push(`| ${m.workload} | ${busyUs} | ${whole(result.rps)} | ${whole(m.restdir.rps)} | ${whole(beyond)} | ${whole(m.restdir.serverCpuUs)} | ${whole(m.restdir.serverCpuUs - beyond)} |`)
    }
    lines.push('')
  }
  const files = report.measurements.filter((m) => m.sirv !== undefined)
  if (files.length > 0) {
    lines.push('Static files: the ceiling, sirv 3 serving the same folder, and restdir, each as a fraction of the ceiling.')
    lines.push('')
    lines.push('| workload | conns | ceiling req/s | sirv req/s | restdir req/s | sirv ratio | restdir ratio | restdir / sirv | server CPU µs/req, ceiling / sirv / restdir | target |')
    lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|---|')
    for (const m of files) {
      const sirv = m.sirv!
      lines.push(
        `| ${m.workload} | ${m.connections} | ${whole(m.ceiling.rps)} | ${whole(sirv.rps)} | ${whole(m.restdir.rps)} | ${(sirv.rps / m.ceiling.rps).toFixed(2)} | ` +
          `${(m.restdir.rps / m.ceiling.rps).toFixed(2)} | ${(m.restdir.rps / sirv.rps).toFixed(2)} | ${whole(m.ceiling.serverCpuUs)} / ${whole(sirv.serverCpuUs)} / ${whole(m.restdir.serverCpuUs)} | ${fileVerdict(m)} |`,
      )
    }
    lines.push('')
  }
  lines.push('| workload | description | first request alone, ms |')
  lines.push('|---|---|--:|')
  for (const m of unique(report.measurements)) lines.push(`| ${m.workload} | ${m.description} | ${m.firstMs.toFixed(1)} |`)
  lines.push('')
  if (report.calibration.length > 0) {
    const bare = report.calibration[0].result
    lines.push('Calibration: the ceiling answering get-document after spinning a set time per request.')
    lines.push('')
    lines.push('| busy work per request, µs | req/s | ratio to the bare ceiling | server CPU µs/req |')
    lines.push('|--:|--:|--:|--:|')
    for (const { busyUs, result } of report.calibration) {
      lines.push(`| ${busyUs} | ${whole(result.rps)} | ${(result.rps / bare.rps).toFixed(2)} | ${whole(result.serverCpuUs)} |`)
    }
    lines.push('')
  }
  const { memory, startup } = report
  const growth = Math.max(memory.afterAll, memory.afterReadingAll) - memory.afterTenth
  const tenth = Math.ceil(report.documents / 10)
  lines.push(`- RSS after writing ${tenth} documents: ${megabytes(memory.afterTenth)}; after ${report.documents}: ${megabytes(memory.afterAll)}; ` +
    `after reading all ${report.documents} once: ${megabytes(memory.afterReadingAll)} ` +
    `(${check(memory.afterReadingAll < targets.rssBytes, `< ${megabytes(targets.rssBytes)}`)}; grew ${megabytes(growth)} while the store grew tenfold, ` +
    `${check(growth < targets.rssGrowthBytes, `< ${megabytes(targets.rssGrowthBytes)}`)})`)
  lines.push(`- RSS idle after a restart on the filled store: ${megabytes(memory.idleAfterRestart)}; after the workloads: ${megabytes(memory.afterWorkloads)}`)
  const startupMedian = median(startup.filledStoreMs)
  const bareStart = startup.bareNodeMs?.length ? median(startup.bareNodeMs) : undefined
  lines.push(`- start-up to first answer: ${startup.emptyStoreMs.toFixed(0)} ms on an empty store; ` +
    `${startup.filledStoreMs.map((ms) => ms.toFixed(0)).join(', ')} ms on the filled store ` +
    `(median ${startupMedian.toFixed(0)} ms, ${startupVerdict(startupMedian, bareStart)})` +
    (bareStart === undefined ? '' : `; a bare \`node:http\` server, started in turn and timed the same way: ` +
      `${startup.bareNodeMs!.map((ms) => ms.toFixed(0)).join(', ')} ms (median ${bareStart.toFixed(0)}), so restdir's own start costs ${(startupMedian - bareStart).toFixed(0)} ms`))
  const peers = report.measurements.filter((m) => m.jsonServer !== undefined)
  if (peers.length > 0) {
    lines.push('')
    lines.push(
      `json-server 1.0 (as \`json-server db.json\` starts it) answering the same requests from a db.json holding the one document and ${report.jsonServerPosts ?? '?'} posts, ` +
        `which every POST writes out whole; restdir's store holds the same document beside its ${report.documents}-document collection.`,
    )
    lines.push('')
    lines.push('| workload | conns | json-server req/s | restdir req/s | restdir / json-server | p99 ms, json-server / restdir | server CPU µs/req, json-server / restdir |')
    lines.push('|---|--:|--:|--:|--:|--:|--:|')
    for (const m of peers) {
      const peer = m.jsonServer!
      const failed = peer.errors > 0 ? ` (${peer.errors} failed on json-server)` : ''
      lines.push(
        `| ${m.workload}${failed} | ${m.connections} | ${whole(peer.rps)} | ${whole(m.restdir.rps)} | ${(m.restdir.rps / peer.rps).toFixed(1)} | ` +
          `${peer.p99.toFixed(2)} / ${m.restdir.p99.toFixed(2)} | ${whole(peer.serverCpuUs)} / ${whole(m.restdir.serverCpuUs)} |`,
      )
    }
  }
  if (report.postgres) lines.push('', ...postgresLines(report.postgres, cpus().length))
  process.stdout.write(lines.join('\n') + '\n')
}

/**
 * Whether one measurement meets its target, and by how much it misses.
 * `plainPut`: the run's PUT without `--sync`, restdir's rate and its write loop's, which `put-sync` is set beside.
 */
export function verdict(m: Measurement, ratio: number, loopRatio: number | undefined, plainPut: PlainPut): string {
  switch (m.workload) {
    case 'get-user':
    case 'get-document':
      return (
        `${check(ratio >= targets.readRatio, `≥ ${targets.readRatio} of ceiling`)}; ` +
        check(m.restdir.serverCpuUs <= targets.readCpuRatio * m.ceiling.serverCpuUs, `CPU ≤ ${targets.readCpuRatio}× the ceiling's`)
      )
    case 'get-random':
      return bareCpuCheck(m, targets.randomReadCpuUs)
    case 'post':
      return `${loopCheck(m, loopRatio!)}; ${bareCpuCheck(m, targets.postCpuUs)}`
    case 'put':
      return loopCheck(m, loopRatio!)
    case 'put-sync':
      return syncCheck(m, plainPut)
    case 'list-page':
      return `${check(ratio >= targets.pageRatio, `≥ ${targets.pageRatio} of ceiling`)}; ${check(m.restdir.p99 < targets.pageP99Ms, `p99 < ${targets.pageP99Ms} ms`)}`
    default:
      return ''
  }
}

/**
 * A write's ratio to the loop: met when restdir reaches it; else beyond this
 * machine where the bare HTTP write server, which makes the same calls with
 * nothing else, misses it too.
 */
function loopCheck(m: Measurement, loopRatio: number): string {
  const target = `≥ ${targets.writeRatio} of write loop`
  if (loopRatio >= targets.writeRatio) return check(true, target)
  const bare = m.bare && m.writeCeiling && m.bare.result.rps / m.writeCeiling.rps
  // Rounded down (past a float's last bit: 2900 / 5000 is 0.58), so that a bare server just short of the target never reads as reaching it.
  if (bare !== undefined && bare < targets.writeRatio) return `beyond this machine: ${target}, where the bare HTTP write server makes ${roundedDown(bare, 2)}`
  return check(false, target)
}

/** The run's PUT without `--sync`: restdir's rate and its write loop's (NaN where not run). */
export interface PlainPut {
  rps: number
  loopRps: number
}

/**
 * PUT with `--sync` against PUT without it: met at half its rate; else beyond
 * this machine where the write loop with its flushes makes less than half of
 * the loop without them, as no server can flush more often than the disk does.
 */
function syncCheck(m: Measurement, plainPut: PlainPut): string {
  if (Number.isNaN(plainPut.rps)) return 'compare with put (not run)'
  const ratio = m.restdir.rps / plainPut.rps
  const target = `≥ ${targets.syncToPlain} of put (${roundedDown(ratio, 2)})`
  if (ratio >= targets.syncToPlain) return check(true, target)
  const loops = m.writeCeiling && m.writeCeiling.rps / plainPut.loopRps
  if (loops !== undefined && loops < targets.syncToPlain) return `beyond this machine: ${target}, where the write loop with its flushes makes ${roundedDown(loops, 2)} of the loop without them`
  return check(false, target)
}

/** A CPU target: met when restdir keeps to it; else beyond this machine where the bare HTTP server making the same calls costs more. */
function bareCpuCheck(m: Measurement, limitUs: number): string {
  const target = `CPU ≤ ${limitUs} µs`
  if (m.restdir.serverCpuUs <= limitUs) return check(true, target)
  const bare = m.bare?.result.serverCpuUs
  if (bare !== undefined && bare > limitUs) return `beyond this machine: ${target}, where the bare HTTP ${m.writeCeiling ? 'write' : 'read'} server costs ${Math.round(bare)} µs`
  return check(false, target)
}

/** A static file above sirv in the same run; a small one also a share of the ceiling. */
function fileVerdict(m: Measurement): string {
  const aboveSirv = check(m.restdir.rps > m.sirv!.rps, 'above sirv')
  if (m.workload !== 'static-1k') return aboveSirv
  const ratio = m.restdir.rps / m.ceiling.rps
  return `${check(ratio >= targets.smallFileRatio, `≥ ${targets.smallFileRatio} of ceiling`)}; ${aboveSirv}`
}

/** Start-up: beyond this machine where Node alone, starting a bare server, takes the whole budget. */
function startupVerdict(ms: number, bareMs: number | undefined): string {
  const target = `< ${targets.startupMs} ms`
  if (ms >= targets.startupMs && bareMs !== undefined && bareMs >= targets.startupMs) return `beyond this machine: ${target}, where a bare Node server takes ${bareMs.toFixed(0)} ms`
  return check(ms < targets.startupMs, target)
}

function check(met: boolean, target: string): string {
  return `${met ? 'met' : 'MISSED'}: ${target}`
}

function unique(measurements: Measurement[]): Measurement[] {
  const seen = new Set<string>()
  return measurements.filter((m) => !seen.has(m.workload) && seen.add(m.workload))
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

function whole(value: number): string {
  return Math.round(value).toLocaleString('en-US')
}

function megabytes(bytes: number): string {
  return `${(bytes / MB).toFixed(0)} MB`
}
