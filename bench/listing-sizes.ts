import { execFileSync } from 'node:child_process'
import { copyFile, mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { startJsonServer, type JsonServerVersion } from './json-server.ts'
import { requestOnce, startRestdir, type Launcher } from './processes.ts'

/**
 * Listings as collections grow: a filtered, sorted page, `q` and a plain
 * deep page of one collection of 1 000 to 100 000 documents, on restdir's
 * folder and memory stores beside json-server 0.17 and 1.0 serving the same
 * db.json, in the same run. Each figure is the median of `rounds`
 * sequential requests after one that warms the server up (its time is
 * shown as `first`); restdir's RSS after them is beside.
 *
 *   npm run bench -- --only listing-sizes --listing-sizes 1000,10000
 */

export interface ListingSizesOptions {
  launcher: Launcher
  sizes: number[]
  rounds: number
  work: string
  log: (line: string) => void
  running: Array<{ stop(): Promise<void> }>
}

interface Query {
  name: string
  /** The query string as each server is asked (json-server 0.17's dialect, 1.0's); restdir is asked both, each its own row. */
  v017: string
  v10: string
}

const QUERIES: Query[] = [
  { name: 'filtered page', v017: 'author=a7&_sort=views&_order=desc&_limit=20', v10: 'author:eq=a7&_sort=-views&_page=1&_per_page=20' },
  { name: 'q', v017: 'q=needle&_limit=20', v10: 'q=needle&_limit=20' },
  { name: 'deep page', v017: '_page=50&_limit=20', v10: '_page=50&_per_page=20' },
]

export interface ListingSizesRow {
  documents: number
  query: string
  dialect: '0.17' | '1.0'
  /** Median milliseconds per server; the first (cold) request's time beside. */
  folder: Timing
  memory: Timing
  /** `restdir db.json`: the file as the store (docs/json-server.md, "Serving a db.json"). */
  dbJson: Timing
  jsonServer: Timing
}

interface Timing {
  medianMs: number
  firstMs: number
  total?: string
}

export interface ListingSizesResult {
  rows: ListingSizesRow[]
  /** restdir's RSS in bytes after the listings, per size and store. */
  rss: { documents: number; folder: number; memory: number; dbJson: number }[]
}

export function postDoc(n: number): Record<string, unknown> {
  return {
    id: n + 1,
    title: `Post number ${n}`,
    author: `a${n % 100}`,
    views: (n * 7919) % 100_000,
    body: n % 97 === 0 ? 'a post with the needle in it' : 'a plain post about nothing much at all, of the usual length',
  }
}

export async function benchListingSizes(options: ListingSizesOptions): Promise<ListingSizesResult> {
  const result: ListingSizesResult = { rows: [], rss: [] }
  for (const size of options.sizes) {
    const folder = join(options.work, `listing-${size}`)
    await mkdir(folder, { recursive: true })
    const db = join(folder, 'db.json')
    await writeFile(db, JSON.stringify({ posts: Array.from({ length: size }, (_, n) => postDoc(n)) }))
    const store = join(folder, 'store')
    options.log(`listing-sizes: ${size} documents: importing into a store folder`)
    execFileSync(options.launcher.command, [...options.launcher.args, '--store', store, '--import', db], { stdio: 'ignore' })
    const restdirDb = join(folder, 'restdir-db.json')
    await copyFile(db, restdirDb)
    const servers = {
      folder: await startRestdir(options.launcher, ['--store', store]),
      dbJson: await startRestdir(options.launcher, [restdirDb]),
      memory: await startRestdir(options.launcher, ['--fixture', db]),
      v017: await startJsonServerOnCopy('0.17', db),
      v10: await startJsonServerOnCopy('1.0', db),
    }
    options.running.push(...Object.values(servers))
    try {
      for (const query of QUERIES) {
        for (const dialect of ['0.17', '1.0'] as const) {
          const text = dialect === '0.17' ? query.v017 : query.v10
          options.log(`listing-sizes: ${size} documents: ${query.name} (${dialect})`)
          const peer = dialect === '0.17' ? servers.v017 : servers.v10
          result.rows.push({
            documents: size,
            query: `${query.name}: ${text}`,
            dialect,
            folder: await timeRequests(servers.folder.port, `/posts?${text}`, options.rounds),
            memory: await timeRequests(servers.memory.port, `/posts?${text}`, options.rounds),
            dbJson: await timeRequests(servers.dbJson.port, `/posts?${text}`, options.rounds),
            jsonServer: await timeRequests(peer.port, `/posts?${text}`, options.rounds),
          })
        }
      }
      result.rss.push({ documents: size, folder: servers.folder.rss(), memory: servers.memory.rss(), dbJson: servers.dbJson.rss() })
    } finally {
      for (const server of Object.values(servers)) {
        await server.stop()
        options.running.splice(options.running.indexOf(server), 1)
      }
    }
  }
  printListingSizes(result)
  return result
}

async function timeRequests(port: number, path: string, rounds: number): Promise<Timing> {
  const once = async () => {
    const started = performance.now()
    const answer = await requestOnce(port, 'GET', path)
    if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.toString().slice(0, 200)}`)
    return { ms: performance.now() - started, total: answer.headers['x-total-count'] as string | undefined }
  }
  const first = await once()
  const times: number[] = []
  for (let round = 0; round < rounds; round++) times.push((await once()).ms)
  times.sort((a, b) => a - b)
  return { medianMs: times[Math.floor(times.length / 2)], firstMs: first.ms, total: first.total }
}

/** json-server `version` on its own copy of db.json (each writes its file back), as its users start it. */
async function startJsonServerOnCopy(version: JsonServerVersion, db: string) {
  const own = join(dirname(db), `json-server-${version}.json`)
  await copyFile(db, own)
  return startJsonServer(version, own, '/posts?_limit=1')
}

function printListingSizes(result: ListingSizesResult): void {
  const lines = [
    '',
    'Listings as collections grow (median of sequential requests, ms; the first request in brackets)',
    '',
    '| documents | query | restdir folder | restdir memory | restdir db.json | json-server (same dialect) | X-Total-Count |',
    '|--:|---|--:|--:|--:|--:|--:|',
  ]
  const cell = (timing: Timing) => `${timing.medianMs.toFixed(1)} (${timing.firstMs.toFixed(0)})`
  for (const row of result.rows) {
    lines.push(`| ${row.documents.toLocaleString('en')} | ${row.query} | ${cell(row.folder)} | ${cell(row.memory)} | ${cell(row.dbJson)} | ${row.dialect}: ${cell(row.jsonServer)} | ${row.folder.total ?? ''} |`)
  }
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`
  lines.push('', '| documents | restdir folder RSS | restdir memory RSS | restdir db.json RSS |', '|--:|--:|--:|--:|')
  for (const rss of result.rss) lines.push(`| ${rss.documents.toLocaleString('en')} | ${mib(rss.folder)} | ${mib(rss.memory)} | ${mib(rss.dbJson)} |`)
  lines.push('', ...listingVerdicts(result.rows).map((line) => `- ${line}`))
  process.stdout.write(lines.join('\n') + '\n')
}

/** The most a filtered page of 50 000 documents may take on the folder and memory stores (docs/speed.md, "The targets"). */
const PAGE_AT_50K_MS = 10

/**
 * The listing targets (docs/speed.md, "The targets"), each `met` or `MISSED`
 * with the figures that decide it, or said not measured when the run left out
 * the sizes it names (`--listing-sizes`, `--quick`).
 */
export function listingVerdicts(rows: readonly ListingSizesRow[]): string[] {
  const median = (timing: Timing) => timing.medianMs.toFixed(1)
  const rowName = (row: ListingSizesRow) => `${row.documents.toLocaleString('en')} ${row.query.split(':')[0]} (${row.dialect})`
  const at = (sizes: number[], queries: string[]) => rows.filter((row) => sizes.includes(row.documents) && queries.some((query) => row.query.startsWith(`${query}:`)))
  const verdict = (target: string, checked: ListingSizesRow[], failing: string[]) =>
    checked.length === 0 ? `not measured in this run: ${target}` : `${failing.length === 0 ? 'met' : 'MISSED'}: ${target}${failing.length === 0 ? '' : ` (${failing.join('; ')})`}`

  const raced = at([10_000, 50_000], ['filtered page', 'q'])
  const slower = raced.flatMap((row) =>
    (['folder', 'memory', 'dbJson'] as const).filter((store) => row[store].medianMs >= row.jsonServer.medianMs).map((store) => `${rowName(row)}: ${store} ${median(row[store])} ms against ${median(row.jsonServer)}`),
  )
  const pages = at([50_000], ['filtered page'])
  const slow = pages.flatMap((row) =>
    (['folder', 'memory'] as const).filter((store) => row[store].medianMs >= PAGE_AT_50K_MS).map((store) => `${rowName(row)}: ${store} ${median(row[store])} ms`),
  )
  const dbJson = at([10_000], ['filtered page'])
  const behind = dbJson.filter((row) => row.dbJson.medianMs > row.jsonServer.medianMs).map((row) => `${rowName(row)}: ${median(row.dbJson)} ms against ${median(row.jsonServer)}`)
  return [
    verdict('the filtered, sorted page and q at 10 000 and 50 000 documents faster than both json-servers, on every store', raced, slower),
    verdict(`the filtered page of 50 000 documents under ${PAGE_AT_50K_MS} ms p50 on the folder and memory stores`, pages, slow),
    verdict('the filtered, sorted page of a 10 000-post db.json no slower than json-server 0.17 and 1.0', dbJson, behind),
  ]
}
