/**
 * Two restdirs compared on one machine, in the same minutes: the bench's
 * workloads measured A, B, A, B… (the order flips each round), so that the
 * noise of a shared machine falls on both alike. Prints, per workload, the
 * median rate and server CPU per answer of each side and their ratios, and
 * the median of each round's own B/A ratios (rate, CPU) with how many rounds
 * B did worse in (a round's two sides run within seconds of each other).
 *
 *   node --import tsx bench/ab.ts --a 5ef1bba --b .
 *   node --import tsx bench/ab.ts --a main --b . --only get-document,list-page --rounds 7
 *   node --import tsx bench/ab.ts --a main --b . --only list-page --prof b
 *
 * `--a` and `--b` name a commit (extracted with `git archive` into a
 * temporary folder that uses this checkout's node_modules) or `.`, this
 * checkout as it is, uncommitted changes included (copied likewise). Both are built and run
 * as the package's command (`--source`: through tsx instead, whose
 * compiled code differs) on copies of one store filled through side A's API
 * (`--docs`, 20 000 by default). `--ceiling` also measures the bare
 * `node:http` server (bench/ceiling-server.ts) each round, and `--loop` the
 * bare write loop (bench/write-ceiling.ts) before each write workload's
 * round. `--prof a|b` runs that side under `node --cpu-prof` and prints
 * where its main thread spent the time (self time per function, per answer);
 * `--keep-profile DIR` keeps the profiles there (for Chrome's DevTools).
 */
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { execFileSync, execSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { runLoad, sendAll, settleDisk, type LoadResult } from './load.ts'
import { restdirLauncher, startCeiling, startRestdir, type CeilingServer, type Launcher, type RunningServer } from './processes.ts'
import { fillStore, writeStaticFiles } from './seed.ts'
import { defineWorkloads, type Workload } from './workloads.ts'
import { measureWriteCeiling } from './write-ceiling.ts'
import { loadAverage } from './report.ts'

const root = fileURLToPath(new URL('..', import.meta.url))
const { values: args } = parseArgs({
  options: {
    a: { type: 'string', default: 'main' },
    b: { type: 'string', default: '.' },
    only: { type: 'string', default: 'get-document,get-user,list-page,post,put' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '2' },
    docs: { type: 'string', default: '20000' },
    ceiling: { type: 'boolean', default: false },
    loop: { type: 'boolean', default: false },
    prof: { type: 'string' },
    source: { type: 'boolean', default: false },
    'keep-profile': { type: 'string' },
  },
})
const rounds = Number(args.rounds)
const duration = Number(args.duration)
const warmup = 0.5
const only = args.only!.split(',').filter(Boolean)
const log = (line: string) => process.stderr.write(`  ${line}\n`)

const work = await mkdtemp(join(tmpdir(), 'restdir-ab-'))
const running: Array<{ stop(): Promise<void> }> = []
process.on('SIGINT', async () => {
  await Promise.all(running.map((server) => server.stop()))
  await rm(work, { recursive: true, force: true })
  process.exit(130)
})

interface Side {
  name: 'a' | 'b'
  ref: string
  launcher: Launcher
  server?: RunningServer
  profileDir?: string
  answered: number
  /** CLOCK_MONOTONIC in µs (the clock of V8's profiles) when this side's first measurement began. */
  measuredFrom?: number
}

try {
  await main()
} finally {
  await Promise.all(running.map((server) => server.stop()))
  await rm(work, { recursive: true, force: true })
}

async function main(): Promise<void> {
  const sides: Side[] = []
  for (const name of ['a', 'b'] as const) {
    const ref = args[name]!
    const folder = await checkout(ref, name)
    if (!args.source) build(folder)
    let launcher = restdirLauncher(args.source ? 'source' : 'built', folder)
    let profileDir: string | undefined
    if (args.prof === name) {
      profileDir = join(work, `profile-${name}`)
      launcher = { ...launcher, args: ['--cpu-prof', '--cpu-prof-dir', profileDir, ...launcher.args] }
    }
    sides.push({ name, ref: ref === '.' ? `. (${gitDescribe()})` : ref, launcher, profileDir, answered: 0 })
  }
  const www = join(work, 'www')
  await mkdir(www)
  const files = await writeStaticFiles(www)
  const storeA = join(work, 'store-a')
  const filler = await startRestdir(sides[0].launcher, ['--store', storeA, '--www', www])
  running.push(filler)
  log(`filling a store with ${args.docs} documents through A`)
  const { fixture } = await fillStore(filler, Number(args.docs), () => {})
  await filler.stop()
  running.splice(running.indexOf(filler), 1)
  if (sides[0].profileDir) await rm(sides[0].profileDir, { recursive: true, force: true })
  await cp(storeA, join(work, 'store-b'), { recursive: true })

  for (const side of sides) {
    side.server = await startRestdir(side.launcher, ['--store', join(work, `store-${side.name}`), '--www', www])
    running.push(side.server)
  }
  const ceiling = args.ceiling ? await startCeiling() : undefined
  if (ceiling) running.push(ceiling)

  const workloads = defineWorkloads({ ...fixture, ...files }).filter((workload) => workload.server === 'plain' && only.some((part) => workload.name === part))
  const loadBefore = loadAverage()
  const lines: string[] = []
  for (const workload of workloads) lines.push(await compare(workload, sides, ceiling))
  const loadAfter = loadAverage()

  for (const side of sides) {
    await side.server!.stop()
    running.splice(running.indexOf(side.server!), 1)
  }
  console.log(`A = ${sides[0].ref}, B = ${sides[1].ref}; ${args.docs} documents, ${rounds} rounds of ${duration} s each, load average ${loadBefore.join(' ')} / ${loadAfter.join(' ')}`)
  console.log('')
  console.log('| workload | A req/s | B req/s | B/A | A CPU µs/req | B CPU µs/req | B/A CPU | B/A by round (rounds B was slower) | B/A CPU by round (rounds B cost more) |' + (args.ceiling ? ' ceiling req/s, CPU | A/ceiling | B/ceiling |' : '') + (args.loop ? ' loop writes/s | A/loop | B/loop |' : ''))
  console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|' + (args.ceiling ? '--:|--:|--:|' : '') + (args.loop ? '--:|--:|--:|' : ''))
  for (const line of lines) console.log(line)
  for (const side of sides) if (side.profileDir) await summarizeProfile(side)
}

/** The workload measured `rounds` times on each side, alternating which goes first. */
async function compare(workload: Workload, sides: Side[], ceiling: CeilingServer | undefined): Promise<string> {
  const results: Record<'a' | 'b' | 'c', LoadResult[]> = { a: [], b: [], c: [] }
  const loops: number[] = []
  const options = { connections: workload.connections, duration, warmup, nextRequest: workload.nextRequest }
  // One request alone on each side first: a page's first listing builds the folder's index.
  for (const side of sides) await sendAll(side.server!.port, 1, [workload.nextRequest(0)])
  if (ceiling) await ceiling.answerWith(workload.ceilingBody, workload.ceilingType)
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse()
    if (ceiling) results.c.push(await runLoad({ ...options, port: ceiling.port, serverPid: ceiling.pid }))
    if (args.loop && workload.writeCeiling) {
      await settleDisk()
      const loop = await measureWriteCeiling({ dir: join(work, 'scratch'), mode: workload.writeCeiling === 'create' ? 'create' : 'replace', sync: false, inFlight: workload.connections, duration, text: workload.ceilingBody.toString() })
      loops.push(loop.rps)
    }
    for (const side of order) {
      if (workload.writeCeiling) await settleDisk()
      side.measuredFrom ??= Number(process.hrtime.bigint() / 1000n)
      const result = await runLoad({ ...options, port: side.server!.port, serverPid: side.server!.pid })
      if (result.errors > 0) log(`${workload.name} ${side.name}: ${result.errors} failed answers ${JSON.stringify(result.statuses)}`)
      side.answered += result.requests
      results[side.name].push(result)
    }
    log(`${workload.name} round ${round + 1}: A ${results.a.at(-1)!.rps.toFixed(0)}/s ${results.a.at(-1)!.serverCpuUs.toFixed(0)} µs, B ${results.b.at(-1)!.rps.toFixed(0)}/s ${results.b.at(-1)!.serverCpuUs.toFixed(0)} µs`)
  }
  const rps = (side: 'a' | 'b' | 'c') => median(results[side].map((result) => result.rps))
  const cpu = (side: 'a' | 'b' | 'c') => median(results[side].map((result) => result.serverCpuUs))
  // Each round's two sides ran within seconds of each other, so their ratio leaves out the machine's drift between rounds.
  const pairedRps = results.a.map((a, round) => results.b[round].rps / a.rps)
  const pairedCpu = results.a.map((a, round) => results.b[round].serverCpuUs / a.serverCpuUs)
  const bSlower = pairedRps.filter((ratio) => ratio < 1).length
  const bCostlier = pairedCpu.filter((ratio) => ratio > 1).length
  let line = `| ${workload.name} | ${fmt(rps('a'))} | ${fmt(rps('b'))} | ${(rps('b') / rps('a')).toFixed(2)} | ${cpu('a').toFixed(0)} | ${cpu('b').toFixed(0)} | ${(cpu('b') / cpu('a')).toFixed(2)} | ${median(pairedRps).toFixed(2)} (${bSlower} of ${rounds}) | ${median(pairedCpu).toFixed(2)} (${bCostlier} of ${rounds}) |`
  if (args.ceiling) line += ` ${fmt(rps('c'))}, ${cpu('c').toFixed(0)} | ${(rps('a') / rps('c')).toFixed(2)} | ${(rps('b') / rps('c')).toFixed(2)} |`
  if (args.loop) {
    const loop = loops.length ? median(loops) : NaN
    line += loops.length ? ` ${fmt(loop)} | ${(rps('a') / loop).toFixed(2)} | ${(rps('b') / loop).toFixed(2)} |` : ' | | |'
  }
  return line
}

/**
 * A folder holding `ref`: the commit extracted with `git archive`, or for `.`
 * a copy of this checkout's files as they are (tracked and new, not ignored),
 * so that building it leaves this checkout alone.
 */
async function checkout(ref: string, name: string): Promise<string> {
  const folder = join(work, `tree-${name}`)
  await mkdir(folder)
  const into = `tar -x -i -C ${JSON.stringify(folder)}`
  if (ref === '.') execSync(`git ls-files -z --cached --others --exclude-standard | xargs -0 tar -c --ignore-failed-read | ${into}`, { cwd: root })
  else execSync(`git archive --format=tar ${JSON.stringify(ref)} | ${into}`, { cwd: root })
  await symlink(join(root, 'node_modules'), join(folder, 'node_modules'))
  return folder
}

/** Builds the package in `folder` (its dist/), as users run it: with its own build script (the command bundled), or `tsc` alone where a commit has none. */
function build(folder: string): void {
  const script = join(folder, 'scripts', 'build.mjs')
  if (existsSync(script)) execFileSync(process.execPath, [script], { cwd: folder, stdio: 'inherit' })
  else execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: folder, stdio: 'inherit' })
}

function gitDescribe(): string {
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim()
  return dirty ? `${head} with uncommitted changes` : head
}

/** Where the profiled side's main thread spent its time: self time per function, in µs per answer measured. */
async function summarizeProfile(side: Side): Promise<void> {
  const files = (await readdir(side.profileDir!)).filter((file) => file.endsWith('.cpuprofile'))
  if (args['keep-profile']) await cp(side.profileDir!, args['keep-profile'], { recursive: true })
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(side.profileDir!, file), 'utf8')) as CpuProfile
    const self = new Map<number, number>()
    const intervals = profile.timeDeltas
    // Only what the measurements saw: start-up (loading modules, opening the store) is left out.
    let time = profile.startTime
    for (let index = 0; index < profile.samples.length; index++) {
      time += intervals[index] ?? 0
      if (time < side.measuredFrom!) continue
      self.set(profile.samples[index], (self.get(profile.samples[index]) ?? 0) + (intervals[index] ?? 0))
    }
    const byFunction = new Map<string, number>()
    let total = 0
    let idle = 0
    for (const node of profile.nodes) {
      const time = self.get(node.id) ?? 0
      const frame = node.callFrame
      if (frame.functionName === '(idle)') {
        idle += time
        continue
      }
      total += time
      const where = frame.url ? `${frame.url.replace(/^file:\/\/.*?\/(lib|bench|bin|node_modules)\//, '$1/')}:${frame.lineNumber + 1}` : ''
      const key = `${frame.functionName || '(anonymous)'} ${where}`
      byFunction.set(key, (byFunction.get(key) ?? 0) + time)
    }
    const perAnswer = (us: number) => (us / side.answered).toFixed(2)
    console.log('')
    console.log(`Profile of ${side.name.toUpperCase()} (${file}; thread 0 is the main thread): ${(total / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle, ${side.answered} answers measured (their warm-ups not counted, start-up left out): ${perAnswer(total)} µs busy per answer`)
    console.log('| self µs per answer | share | function |')
    console.log('|--:|--:|---|')
    const top = [...byFunction].sort((x, y) => y[1] - x[1]).slice(0, 40)
    for (const [key, time] of top) console.log(`| ${perAnswer(time)} | ${((time / total) * 100).toFixed(1)}% | ${key} |`)
  }
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

function fmt(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en') : ''
}

