import { execFileSync } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildRequest, medianRound, roundedDown, runLoad, settleDisk, type LoadResult } from './load.ts'
import { restdirLauncher, startRestdir, type Launcher } from './processes.ts'
import { POSTS, startJsonServer, writeJsonServerDb } from './json-server.ts'
import { DOCUMENT_PATH, itemDoc } from './workloads.ts'

/**
 * `POST /posts` into a db.json of 1 000 posts (docs/json-server.md, "Serving
 * a db.json"): json-server 1.0 on its file, restdir on a copy of the same file
 * (`restdir db.json`), and restdir's store folder holding the same posts, on
 * as many connections, taking turns as the workloads of bench/run.ts do: the
 * three run at once, each measured `rounds` times for its share of
 * `duration`, the order flipped each round, and each one's round of median
 * rate reported; so the disk's state (a write right after many files were
 * removed costs much more on ext4) falls on the three alike. The targets:
 * restdir on the db.json at least 5× json-server's writes per second, and at
 * least half of the store folder's.
 *
 *   node --import tsx bench/json-file.ts [seconds] [rounds]     alone
 *   npm run bench -- --only json-file                   within the whole bench
 */
export const JSON_FILE_WORKLOADS = ['json-file-post']

export interface JsonFileBench {
  posts: number
  connections: number
  /** The turns each side took; each side's figures are its round of median rate. */
  rounds: number
  jsonServer: LoadResult
  restdirJsonFile: LoadResult
  restdirFolder: LoadResult
}

export interface JsonFileBenchOptions {
  launcher: Launcher
  duration: number
  warmup: number
  /** The turns the three take (bench/run.ts's `--rounds`). */
  rounds: number
  work: string
  selected: (workload: string) => boolean
  log: (line: string) => void
  /** Servers started here are added, so that an interrupted run stops them. */
  running: Array<{ stop(): Promise<void> }>
}

const CONNECTIONS = 32

export async function benchJsonFile(options: JsonFileBenchOptions): Promise<JsonFileBench | undefined> {
  if (!JSON_FILE_WORKLOADS.some(options.selected)) return undefined
  const { log, duration, warmup, launcher, rounds } = options
  const folder = join(options.work, 'json-file')
  await mkdir(join(folder, 'json-server'), { recursive: true })
  const post = buildRequest('POST', '/posts', itemDoc(0))
  const started: Array<{ stop(): Promise<void> }> = []
  const running = <Server extends { port: number; pid: number; stop(): Promise<void> }>(server: Server) => {
    started.push(server)
    options.running.push(server)
    return server
  }

  try {
    // json-server writes its db.json (a document and POSTS posts) as it starts: the others get a copy of it as it was.
    const jsonServerDb = await writeJsonServerDb(join(folder, 'json-server'), Buffer.from(JSON.stringify({ title: 'welcome' })))
    const jsonServer = running(await startJsonServer('1.0', jsonServerDb, DOCUMENT_PATH))
    const file = join(folder, 'db.json')
    await copyFile(jsonServerDb, file)
    const storeFolder = join(folder, 'store')
    execFileSync(launcher.command, [...launcher.args, '--import', file, '--store', storeFolder], { stdio: 'ignore' })
    const sides = [
      { label: 'json-server 1.0 on its db.json', server: jsonServer, results: [] as LoadResult[] },
      { label: 'restdir db.json', server: running(await startRestdir(launcher, [file])), results: [] as LoadResult[] },
      { label: 'restdir on a store folder', server: running(await startRestdir(launcher, ['--store', storeFolder])), results: [] as LoadResult[] },
    ]
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        await settleDisk()
        log(`json-file-post: ${side.label}, round ${round + 1} of ${rounds}`)
        const { port, pid } = side.server
        const result = await runLoad({ port, serverPid: pid, connections: CONNECTIONS, duration: duration / rounds, warmup: round === 0 ? warmup : warmup / 2, nextRequest: () => post })
        if (result.errors > 0) log(`json-file-post: ${side.label} gave ${result.errors} failed answers ${JSON.stringify(result.statuses)}`)
        side.results.push(result)
      }
    }
    const [jsonServerResult, restdirJsonFile, restdirFolder] = sides.map((side) => medianRound(side.results))
    const result = { posts: POSTS, connections: CONNECTIONS, rounds, jsonServer: jsonServerResult, restdirJsonFile, restdirFolder }
    for (const line of reportLines(result)) log(line)
    return result
  } finally {
    for (const server of started) {
      await server.stop()
      options.running.splice(options.running.indexOf(server), 1)
    }
  }
}

/** The figures and the two targets, as lines. */
export function reportLines(bench: JsonFileBench): string[] {
  const row = (label: string, result: LoadResult) => `${label.padEnd(34)}${Math.round(result.rps).toString().padStart(8)} writes/s   p50 ${result.p50.toFixed(1)} ms   p99 ${result.p99.toFixed(1)} ms`
  const overJsonServer = bench.restdirJsonFile.rps / bench.jsonServer.rps
  const ofFolder = bench.restdirJsonFile.rps / bench.restdirFolder.rps
  return [
    `POST /posts into a db.json of ${bench.posts} posts, ${bench.connections} connections, the round of median rate of ${bench.rounds} on each, the three in turns:`,
    row('json-server 1.0 (its db.json)', bench.jsonServer),
    row('restdir db.json', bench.restdirJsonFile),
    row('restdir, store folder', bench.restdirFolder),
    `restdir db.json: ${roundedDown(overJsonServer, 1)}× json-server (${overJsonServer >= 5 ? 'met' : 'MISSED'}: ≥ 5×), ${roundedDown(100 * ofFolder, 0)}% of the store folder (${ofFolder >= 0.5 ? 'met' : 'MISSED'}: ≥ 50%)`,
  ]
}

/** Runs the bench alone, in a temporary folder of its own. */
async function runAlone(seconds: number, rounds: number): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'restdir-bench-json-file-'))
  const running: Array<{ stop(): Promise<void> }> = []
  try {
    await benchJsonFile({
      launcher: restdirLauncher('auto'),
      duration: seconds,
      warmup: 1,
      rounds,
      work,
      selected: () => true,
      log: (line) => process.stderr.write(`  ${line}\n`),
      running,
    })
  } finally {
    await Promise.all(running.map((server) => server.stop()))
    await rm(work, { recursive: true, force: true })
  }
}

// Run alone: `node --import tsx bench/json-file.ts [seconds] [rounds]` (no top-level await: the specs import this file for reportLines).
if (process.argv[1]?.endsWith('json-file.ts')) {
  runAlone(Number(process.argv[2] ?? 8), Number(process.argv[3] ?? 3)).catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
