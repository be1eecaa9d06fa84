#!/usr/bin/env node
import { parseArgs } from 'node:util'
import path from 'node:path'
import { createServer } from '../lib/server.ts'
import { packageVersion } from '../lib/package.ts'

const version = packageVersion()

const usage = `Usage: restdir [options]

Serves JSON documents from a folder, each at its own URL.

Options:
  --port N         port to listen on (default 3000, or $PORT; 0 picks a free one)
  --host HOST      address to bind (default 127.0.0.1; 0.0.0.0 exposes it)
  --store DIR      data folder (default ./store)
  --www DIR        folder of static files (default: the bundled playground)
  --sync           fsync every write before answering (survives power loss)
  --max-body SIZE  largest request body, e.g. 512kb, 2mb (default 1mb)
  --quiet          no request log
  --help           show this help
  --version        show the version
`

function fail(message: string): never {
  process.stderr.write(`restdir: ${message}\n\n${usage}`)
  process.exit(2)
}

/** `1048576`, `512kb`, `2mb`, `1gb` → bytes. */
function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(text.trim())
  if (!match) fail(`--max-body "${text}" is not a size such as 512kb or 2mb.`)
  const units: Record<string, number> = { b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 }
  return Math.floor(Number(match[1]) * units[(match[2] ?? 'b').toLowerCase()])
}

function parsePort(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 65535) fail(`--port "${text}" is not a port number (0-65535).`)
  return Number(text)
}

function parseOptions() {
  return parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      store: { type: 'string', default: './store' },
      www: { type: 'string' },
      sync: { type: 'boolean', default: false },
      'max-body': { type: 'string' },
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

const port = parsePort(args.port ?? process.env.PORT ?? '3000')
const storeDir = path.resolve(args.store)
const server = createServer({
  store: storeDir,
  www: args.www,
  sync: args.sync,
  maxBody: args['max-body'] === undefined ? undefined : parseSize(args['max-body']),
  quiet: args.quiet,
})

server.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EADDRINUSE') process.stderr.write(`restdir: port ${port} is in use; pick another with --port.\n`)
  else process.stderr.write(`restdir: ${error.message}\n`)
  process.exit(1)
})

await server.ready.catch(() => new Promise(() => {})) // the 'error' listener reports it and exits
server.listen(port, args.host, () => {
  const address = server.address()
  const actualPort = typeof address === 'object' && address ? address.port : port
  const host = args.host.includes(':') ? `[${args.host}]` : args.host
  const base = `http://${host}:${actualPort}`
  process.stdout.write(
    `restdir ${version} listening on ${base}/\n` +
      `store: ${storeDir}${args.sync ? ' (fsync on every write)' : ''}\n` +
      `routes:\n` +
      `  POST GET                    /user\n` +
      `  GET PUT PATCH DELETE        /user/:user_id\n` +
      `  POST GET                    /user/:user_id/playlist\n` +
      `  GET PUT PATCH DELETE        /user/:user_id/playlist/:playlist_id\n` +
      `  GET                         /  and any file in ${args.www ? path.resolve(args.www) : 'the bundled playground'}\n` +
      `  GET POST PUT PATCH DELETE   any other URL: a JSON document\n` +
      `Press Ctrl+C to stop.\n`,
  )
})

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
