#!/usr/bin/env node
import { parseArgs } from 'node:util'
import path from 'node:path'
import { createServer } from '../lib/server.ts'
import { normalizePrefix } from '../lib/options.ts'
import { isLoopbackHost } from '../lib/http/guards.ts'
import { packageVersion } from '../lib/package.ts'
import { FileStore, MissingPgError, redactUrl, type Store } from '../lib/store/index.ts'
import { isPostgresUrl, openStore } from '../lib/store/open.ts'
import { loadPg } from '../lib/store/postgres/pg.ts'
import { firstMissingFolder, removeEmptyFolders } from '../lib/store/file/folder.ts'
import { importDatabaseFile } from '../lib/data/import.ts'
import { copyStore, sameStoreProblem, sourceKind } from '../lib/data/copy.ts'

const version = packageVersion()

const usage = `Usage: restdir [options]

Serves JSON documents from a folder, each at its own URL.

Options:
  --port N         port to listen on (default 3000, or $PORT; 0 picks a free one)
  --host HOST      address to bind (default 127.0.0.1; 0.0.0.0 exposes it)
  --store DIR|URL  data folder (default ./store), or a postgres:// URL (needs npm install pg);
                   when not given: $RESTDIR_STORE, then a postgres:// $DATABASE_URL
  --www DIR        folder of static files (default: the bundled playground)
  --prefix PATH    serve the data API under PATH, e.g. /api; other URLs are static only
  --sync           fsync every write before answering (survives power loss)
  --max-body SIZE  largest request body, e.g. 512kb, 2mb (default 1mb)
  --delay MS       wait MS milliseconds before every data answer (to see loading states)
  --import SOURCE  copy a store folder, a postgres:// URL or a json-server db.json into
                   the store, then exit
  --force          with --import: merge into a store that holds documents, replacing
                   those at the same paths
  --fixture PATH   start from a db.json or a store folder; POST /?_reset puts it back
                   (without --store, the store is kept in memory)
  --cors LIST      origins allowed besides localhost ones: '*' or https://a.example,https://b.example
  --token SECRET   every write needs "Authorization: Bearer SECRET" (or set $RESTDIR_TOKEN)
  --readonly       refuse every write (405)
  --quiet          no request log
  --help           show this help
  --version        show the version

Limits (TIME is 500ms, 10s, 2m; a bare number is milliseconds):
  --max-path N            longest URL path in characters (default 8192)
  --max-segment N         longest path segment in characters (default 1024)
  --max-depth N           most path segments (default 32)
  --max-json-depth N      deepest JSON nesting in a body (default 64)
  --header-timeout TIME   time to send the request headers (default 10s)
  --request-timeout TIME  time to send the whole request, body included (default 30s)
  --max-streams N         most event streams open at once (default 1000)
  --max-sort-keys N       most _sort fields in a listing query (default 8)
  --max-filters N         most filter values in a listing query, q included (default 32)
  --change-window N       changes kept for clients that resume (default 1000)
  --change-window-size SIZE   most memory those changes take (default 16mb)
  --max-stream-buffer SIZE    unread bytes a stream may hold before it is closed (default 8mb, or 4 x --max-body)
`

function fail(message: string): never {
  process.stderr.write(`restdir: ${message}\n\n${usage}`)
  process.exit(2)
}

/** `1048576`, `512kb`, `2mb`, `1gb` → bytes. */
function parseSize(text: string, flag = 'max-body'): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(text.trim())
  if (!match) fail(`--${flag} "${text}" is not a size such as 512kb or 2mb.`)
  const units: Record<string, number> = { b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 }
  return Math.floor(Number(match[1]) * units[(match[2] ?? 'b').toLowerCase()])
}

/** A size flag of the event streams, when given: at least one byte. */
function parseStreamSize(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const size = parseSize(text, flag)
  if (size < 1) fail(`--${flag} "${text}" is not a size of at least one byte.`)
  return size
}

/** `500ms`, `10s`, `2m`; a bare number is milliseconds. */
function parseDuration(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/i.exec(text.trim())
  if (!match || Number(match[1]) <= 0) fail(`--${flag} "${text}" is not a duration such as 500ms, 10s or 2m.`)
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000 }
  return Math.ceil(Number(match[1]) * units[(match[2] ?? 'ms').toLowerCase()])
}

function parseCount(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d+$/.test(text) || Number(text) < 1) fail(`--${flag} "${text}" is not a whole number of at least 1.`)
  return Number(text)
}

/** `source` names where the value came from (`--port` or `PORT`), so the message points at what to fix. */
function parsePort(text: string, source: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 65535) fail(`${source} "${text}" is not a port number (0-65535).`)
  return Number(text)
}

/** The library's own prefix rule (`normalizePrefix`); a prefix it refuses is a usage error. */
function parsePrefix(text: string): string {
  try {
    return normalizePrefix(text, '--prefix')
  } catch (error) {
    fail((error as Error).message)
  }
}

function parseDelay(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 600_000) fail(`--delay "${text}" is not a number of milliseconds (0-600000).`)
  return Number(text)
}

/**
 * `--import SOURCE`: loads a json-server database, a store folder or a
 * database (README, "Moving a store") into the store and exits: 0 when done,
 * 1 when refused, 2 when the source is the store itself.
 */
async function importAndExit(source: string, storeDir: string, force: boolean, sync: boolean): Promise<never> {
  const sourceLabel = isPostgresUrl(source) ? redactUrl(source) : path.resolve(source)
  let store: Store | undefined
  let from: Store | undefined
  // A refused import leaves no store folder it made: the next one starts from the same place.
  const madeStore = isPostgresUrl(storeDir) ? undefined : firstMissingFolder(storeDir)
  try {
    const kind = await sourceKind(source)
    const sameStore = kind === 'db.json' ? undefined : sameStoreProblem(source, storeDir)
    if (sameStore) fail(`--import ${sourceLabel}: ${sameStore}.`)
    // The source first: a folder in use by a server is refused before the target is touched.
    if (kind !== 'db.json') from = await openSource(source)
    store = await openStore(storeDir, { sync })
    const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`
    if (from) {
      const summary = await copyStore(from, store, { force, sourceLabel })
      process.stdout.write(`copied ${plural(summary.documents, 'document')} from ${sourceLabel} into ${storeLabel}\n`)
      if (summary.rewritten > 0) {
        process.stdout.write(`${plural(summary.rewritten, 'document')} of the source ${summary.rewritten === 1 ? 'was' : 'were'} not in restdir's own form (edited by hand?): written in it, with a new ETag\n`)
      }
    } else {
      const summary = await importDatabaseFile(store, source, { force })
      process.stdout.write(`imported ${plural(summary.documents, 'document')} (${plural(summary.collections, 'collection')}) from ${source} into ${storeLabel}\n`)
      for (const name of summary.empty) process.stdout.write(`${JSON.stringify(name)} is an empty array: no collection was created for it\n`)
    }
    await Promise.all([store.close(), from?.close()])
    process.exit(0)
  } catch (error) {
    await Promise.all([store?.close().catch(() => {}), from?.close().catch(() => {})])
    if (madeStore !== undefined) await removeEmptyFolders(storeDir, madeStore)
    process.stderr.write(`restdir: ${(error as Error).message}\n`)
    process.exit(error instanceof MissingPgError ? 2 : 1)
  }
}

/**
 * A database or a store folder to copy from. A folder is held by its lock
 * meanwhile, so no server starts on it, and refused while one runs there.
 */
async function openSource(location: string): Promise<Store> {
  try {
    const source = await openStore(location, { log: () => {} })
    if (source instanceof FileStore) await source.recovery
    return source
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESTORELOCKED') throw error
    throw new Error(`${(error as Error).message.replace(/; stop that one first\.$/, '')}; stop it before importing from the folder, or import from where it serves.`)
  }
}

function parseOptions() {
  return parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      store: { type: 'string' },
      fixture: { type: 'string' },
      www: { type: 'string' },
      prefix: { type: 'string' },
      delay: { type: 'string' },
      import: { type: 'string' },
      force: { type: 'boolean', default: false },
      sync: { type: 'boolean', default: false },
      'max-body': { type: 'string' },
      cors: { type: 'string' },
      token: { type: 'string' },
      readonly: { type: 'boolean', default: false },
      'max-path': { type: 'string' },
      'max-segment': { type: 'string' },
      'max-depth': { type: 'string' },
      'max-json-depth': { type: 'string' },
      'header-timeout': { type: 'string' },
      'request-timeout': { type: 'string' },
      'max-streams': { type: 'string' },
      'max-sort-keys': { type: 'string' },
      'max-filters': { type: 'string' },
      'change-window': { type: 'string' },
      'change-window-size': { type: 'string' },
      'max-stream-buffer': { type: 'string' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      version: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  }).values
}

let args: ReturnType<typeof parseOptions>
try {
  args = parseOptions()
} catch (error) {
  fail((error as Error).message)
}

if (args.help) {
  process.stdout.write(usage)
  process.exit(0)
}
if (args.version) {
  process.stdout.write(`${version}\n`)
  process.exit(0)
}

/**
 * Where the store is: --store, else $RESTDIR_STORE (a folder or a URL), else
 * $DATABASE_URL when it is a postgres:// URL (the variable many hosts set), else ./store.
 */
function chosenStore(): string | undefined {
  if (args.store !== undefined) return args.store
  if (process.env.RESTDIR_STORE) return process.env.RESTDIR_STORE
  const databaseUrl = process.env.DATABASE_URL
  if (databaseUrl && isPostgresUrl(databaseUrl)) return databaseUrl
  return undefined
}

const chosen = chosenStore()
// With a fixture and no store chosen, the store lives in memory: nothing on disk is replaced by a reset.
const inMemory = args.fixture !== undefined && chosen === undefined
const location = chosen ?? './store'
const onPostgres = isPostgresUrl(location)
const storeDir = onPostgres ? location : path.resolve(location)
/** What the banner and messages show of the store: a connection string never with its password. */
const storeLabel = onPostgres ? redactUrl(location) : storeDir
if (onPostgres) {
  if (args.sync) fail('--sync is for a store folder; PostgreSQL makes every commit durable itself (its own fsync setting).')
  try {
    await loadPg()
  } catch (error) {
    if (!(error instanceof MissingPgError)) throw error
    process.stderr.write(`restdir: ${error.message}\n`)
    process.exit(2)
  }
}
if (args.force && args.import === undefined) fail('--force only goes with --import SOURCE.')
if (args.import !== undefined) await importAndExit(args.import, storeDir, args.force, args.sync)

const port = args.port !== undefined ? parsePort(args.port, '--port') : parsePort(process.env.PORT ?? '3000', 'PORT')
const prefix = args.prefix === undefined ? '' : parsePrefix(args.prefix)
const token = args.token ?? process.env.RESTDIR_TOKEN
if (token !== undefined && token.trim() === '') fail('--token (or $RESTDIR_TOKEN) must not be empty.')
// What this start makes of the store folder (looked at before opening it makes any), so that a failed start can take it away again.
const madeStore = onPostgres || inMemory ? undefined : firstMissingFolder(storeDir)
let server: ReturnType<typeof createServer>
try {
  server = createServer({
    store: inMemory ? undefined : storeDir,
    fixture: args.fixture,
    www: args.www,
    sync: args.sync,
    prefix,
    delay: args.delay === undefined ? undefined : parseDelay(args.delay),
    maxBody: args['max-body'] === undefined ? undefined : parseSize(args['max-body']),
    cors: args.cors,
    token,
    readonly: args.readonly,
    maxPathLength: parseCount('max-path', args['max-path']),
    maxSegmentLength: parseCount('max-segment', args['max-segment']),
    maxPathDepth: parseCount('max-depth', args['max-depth']),
    maxJsonDepth: parseCount('max-json-depth', args['max-json-depth']),
    headersTimeout: parseDuration('header-timeout', args['header-timeout']),
    requestTimeout: parseDuration('request-timeout', args['request-timeout']),
    maxStreams: parseCount('max-streams', args['max-streams']),
    maxSortKeys: parseCount('max-sort-keys', args['max-sort-keys']),
    maxFilters: parseCount('max-filters', args['max-filters']),
    changeWindow: parseCount('change-window', args['change-window']),
    changeWindowBytes: parseStreamSize('change-window-size', args['change-window-size']),
    maxStreamBuffer: parseStreamSize('max-stream-buffer', args['max-stream-buffer']),
    quiet: args.quiet,
  })
} catch (error) {
  fail((error as Error).message) // an option out of range, e.g. a --cors entry that is not an origin
}

server.on('error', async (error: NodeJS.ErrnoException) => {
  if (error.code === 'EADDRINUSE') process.stderr.write(`restdir: port ${port} is in use; pick another with --port.\n`)
  else process.stderr.write(`restdir: ${error.message}\n`)
  // A failed start leaves nothing the next one trips over: the lock is released, a folder it made and left empty goes.
  await server.shutdown().catch(() => {})
  if (madeStore !== undefined) await removeEmptyFolders(storeDir, madeStore)
  process.exit(1)
})

await server.ready.catch(() => new Promise(() => {})) // the 'error' listener reports it and exits
server.listen(port, args.host, () => {
  const address = server.address()
  const actualPort = typeof address === 'object' && address ? address.port : port
  const host = args.host.includes(':') ? `[${args.host}]` : args.host
  const base = `http://${host}:${actualPort}`
  const routes =
      server.handler.routes.map((route) => `  ${route.methods.join(' ').padEnd(28)}${prefix}${route.pattern}\n`).join('') +
      `  GET                         ${prefix ? `any URL outside ${prefix}/: a file in` : '/  and any file in'} ${args.www ? path.resolve(args.www) : 'the bundled playground'}\n` +
      `  GET POST PUT PATCH DELETE   any other URL${prefix ? ` under ${prefix}/` : ''}: a JSON document\n` +
      `  GET                         ${prefix || '/'}?_openapi: the API description (OpenAPI 3.1)\n` +
      (args.fixture === undefined ? '' : `  POST                        ${prefix || '/'}?_reset: put the store back to the fixture\n`)
  process.stdout.write(
    `restdir ${version} listening on ${base}/\n` +
      `store: ${inMemory ? 'in memory' : storeLabel}${args.sync ? ' (fsync on every write)' : ''}\n` +
      (args.fixture === undefined ? '' : `fixture: ${path.resolve(args.fixture)}${args.readonly ? '' : ` (reset with POST ${prefix || '/'}?_reset)`}\n`) +
      (args.readonly ? `read-only (--readonly): every write is refused\n` : '') +
      `routes:\n` +
      (args.readonly ? readOnlyRoutes(routes) : routes) +
      (args.delay ? `every data answer waits ${args.delay} ms (--delay)\n` : '') +
      `Press Ctrl+C to stop.\n`,
  )
  if (!isLoopbackHost(args.host) && token === undefined && !args.readonly) {
    process.stderr.write(`restdir: warning: ${args.host} is reachable from other machines and anyone there can write; consider --token or --readonly.\n`)
  }
  if (server.handler.settings.guards.cors === '*' && token === undefined && !args.readonly) {
    process.stderr.write(`restdir: warning: --cors '*' lets every web page you visit write to this server; consider a list of origins, --token or --readonly.\n`)
  }
})

/** The banner's routes as a read-only server answers them: write methods left out, and routes left with none dropped. */
function readOnlyRoutes(routes: string): string {
  return routes
    .split('\n')
    .map((line) => line.replace(/^  ((?:[A-Z]+ )+)\s*/, (column) => {
      const reads = column.trim().split(' ').filter((method) => method === 'GET').join(' ')
      return reads === '' ? '' : ('  ' + reads).padEnd(column.length)
    }))
    .filter((line) => line.trim() !== '' && line.startsWith('  '))
    .map((line) => line + '\n')
    .join('')
}

let stopping = false
function stop(signal: string): void {
  if (stopping) return
  stopping = true
  if (!args.quiet) process.stdout.write(`\n${signal}: finishing in-flight requests…\n`)
  server.shutdown().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`restdir: ${(error as Error).message}\n`)
      process.exit(1)
    },
  )
}
process.on('SIGINT', () => stop('SIGINT'))
process.on('SIGTERM', () => stop('SIGTERM'))
