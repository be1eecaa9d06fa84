import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { jsonServer1Package } from '../../bench/json-server-1/install.ts'
import * as restdirJsonServer from '../../lib/json-server.ts'
import type { RestdirOptions } from '../../lib/options.ts'
import { makeTempDir, send, startServer, startServerWithData, type Answer, type RequestOptions } from './helpers.ts'
import { freePort, root, type Exit } from './process.ts'

/*
 * json-server beside restdir, for the comparisons "as json-server does" asks for
 * (docs/json-server.md): json-server 0.17.4 or 1.0, unchanged, started as its users
 * start it (its command, `json-server db.json`) or as its module's users do (in this
 * process), and restdir, each on its own copy of the same db.json; the same request
 * goes to both, and both files can be read back.
 *
 * startPair does all of that at once. Below it: startJsonServer and startRestdir start
 * one side each, on a source a test laid out itself (a URL, a seed.js, a db.json5), and
 * spawnProgram / startProgram / runProgram run any of the three commands in a folder of
 * the test's own, for a test about the command line itself.
 */

export type Program = 'restdir' | 'json-server 0.17' | 'json-server 1.0'
export type JsonServerVersion = '0.17' | '1.0'

/** One side of a comparison: a server on 127.0.0.1, serving its own copy of the db.json. */
export interface Side {
  port: number
  /** Its db.json (or the source it was started on). */
  file: string
  request(method: string, target: string, options?: RequestOptions): Promise<Answer>
  /** Its file as it is now, parsed. */
  data(): unknown
  /** What its command printed so far ('' in this process). */
  stdout(): string
  stderr(): string
  close(): Promise<void>
}

/** How json-server is started. */
export interface JsonServerStart {
  /** '0.17' (the default) or '1.0' (installed into bench/json-server-1/ on first use). */
  version?: JsonServerVersion
  /** Its command (the default), or its module in this process. */
  how?: 'command' | 'module'
  /** The command's flags after the source (it gets --port and --host besides). */
  args?: string[]
  /** The command's environment, over this process's (NODE_ENV unset, as its users start it). */
  env?: NodeJS.ProcessEnv
  /**
   * false starts 1.0 without its watch of the file (NODE_ENV=production, with the ./public it
   * then needs): the watch re-reads its own writes, and a re-read that lands after the next
   * write undoes that write, so requests compared one by one need it off.
   */
  watch?: boolean
  /** The module of 0.17 in this process: `router.db._.id` (its --id). */
  id?: string
  /** The module of 0.17 in this process: the router's foreignKeySuffix (its --foreignKeySuffix). */
  foreignKeySuffix?: string
  /** The module of 0.17 in this process: the app to serve, built from the module and the file (else create(), defaults(), router()). */
  app?: App
}

/** How restdir is started. */
export interface RestdirStart {
  /** In this process (the default, with `options`), or as its command (with `args`). */
  how?: 'module' | 'command'
  options?: RestdirOptions
  /** The command's flags after the source (it gets --port besides). */
  args?: string[]
  /** 'file' (the default): it serves the db.json; 'this pass': the db.json is imported into the store of this pass of the specs (see helpers.ts's testStoreKind). */
  store?: 'file' | 'this pass'
  /** In this process: the app to serve instead, built from restdir's json-server module (`restdir/json-server`, lib/json-server.ts) and the file. */
  app?: App
}

/** An app built from a json-server module (json-server's own, or restdir's) and the db.json it serves. */
export type App = (jsonServer: any, file: string) => { listen(port: number, host: string, ready: () => void): Server }

export interface Pair {
  jsonServer: Side
  restdir: Side
  /** The same request to both, one after the other (json-server writes its file as it answers, and the next request must see that): json-server's answer, then restdir's. */
  both(method: string, target: string, options?: RequestOptions): Promise<[Answer, Answer]>
  /** Both files, parsed, a moment after the last answer (json-server 0.17's lowdb writes without being awaited): json-server's, then restdir's. */
  files(): Promise<[unknown, unknown]>
  close(): Promise<void>
}

/**
 * json-server and restdir, each in a folder of its own holding a copy of `db` as db.json (a
 * db.json's text, or its data, written with two spaces as json-server writes it).
 */
export async function startPair(db: string | object, start: { jsonServer?: JsonServerStart; restdir?: RestdirStart } = {}): Promise<Pair> {
  const text = typeof db === 'string' ? db : JSON.stringify(db, null, 2)
  const dir = await makeTempDir('restdir-side-by-side-')
  const [theirFile, ourFile] = ['json-server', 'restdir'].map((side) => path.join(dir, side, 'db.json'))
  for (const file of [theirFile, ourFile]) {
    await mkdir(path.dirname(file))
    await writeFile(file, text)
  }
  const sides: Side[] = []
  const close = async () => {
    for (const side of sides.reverse()) await side.close()
    await rm(dir, { recursive: true, force: true })
  }
  try {
    const jsonServer = await startJsonServer(theirFile, start.jsonServer)
    sides.push(jsonServer)
    const restdir = start.restdir?.store === 'this pass' ? await startRestdirOnThisPass(JSON.parse(text), start.restdir) : await startRestdir(ourFile, start.restdir)
    sides.push(restdir)
    return {
      jsonServer,
      restdir,
      async both(method, target, options) {
        const theirs = await jsonServer.request(method, target, options)
        const ours = await restdir.request(method, target, options)
        return [theirs, ours]
      },
      async files() {
        await pause(100)
        return [jsonServer.data(), restdir.data()]
      },
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}

/** json-server on `source` (a file, a URL, a seed.js), its folder the working directory unless `cwd` says another. */
export async function startJsonServer(source: string, start: JsonServerStart & { cwd?: string } = {}): Promise<Side> {
  const version = start.version ?? '0.17'
  const cwd = start.cwd ?? path.dirname(path.resolve(source))
  const file = path.resolve(cwd, source)
  if (start.how === 'module') return version === '0.17' ? startJsonServer017Module(file, start) : startJsonServer1Module(file)
  const program: Program = version === '0.17' ? 'json-server 0.17' : 'json-server 1.0'
  const env = { ...start.env }
  if (start.watch === false) {
    env.NODE_ENV = 'production'
    // In production json-server 1.0 serves ./public, and stops at its start without one.
    await mkdir(path.join(cwd, 'public'), { recursive: true })
  }
  const port = await freePort()
  const args = start.args ?? []
  const running = await startProgram(program, [source, ...args, '--port', String(port), '--host', '127.0.0.1'], cwd, port, env)
  // 0.17 prints its resources and "Home" as it asks to listen (json-server/lib/cli/run.js): a test may compare its banner.
  if (version === '0.17' && !args.includes('--quiet') && !args.includes('-q')) await running.waitFor(/Home\s+http/)
  return { ...sideOn(port, file), stdout: running.stdout, stderr: running.stderr, close: async () => void (await running.stop()) }
}

/** restdir on `source` (a db.json, a URL, a seed.js, a db.json5), in this process or as its command run in `cwd` (the source's folder unless given). */
export async function startRestdir(source: string, start: RestdirStart & { cwd?: string } = {}): Promise<Side> {
  const cwd = start.cwd ?? path.dirname(path.resolve(source))
  const file = path.resolve(cwd, source)
  if (start.how === 'command') {
    const port = await freePort()
    const running = await startProgram('restdir', [source, ...(start.args ?? []), '--port', String(port)], cwd, port)
    return { ...sideOn(port, file), stdout: running.stdout, stderr: running.stderr, close: async () => void (await running.stop()) }
  }
  if (start.app) return listenOn(start.app(restdirJsonServer, file), file)
  const server = await startServer({ ...start.options, store: file })
  return { ...sideOn(server.port, file), stdout: () => '', stderr: () => '', close: () => server.close() }
}

/** restdir in this process on a fresh store of this pass's kind, `db` imported into it: it has no file to read back. */
export async function startRestdirOnThisPass(db: object, start: Pick<RestdirStart, 'options'> = {}): Promise<Side> {
  const server = await startServerWithData(db, start.options)
  return {
    ...sideOn(server.port, ''),
    data: () => {
      throw new Error('restdir on the store of this pass has no db.json to read back')
    },
    stdout: () => '',
    stderr: () => '',
    close: () => server.close(),
  }
}

/**
 * Every kind of listing query json-server 0.17 takes, on the collection `name`: `more` of them
 * come before the last, its nested route under /posts/1.
 */
export function listingQueries(name: string, more: string[] = []): string[] {
  return [
    `/${name}`,
    `/${name}?_start=0&_end=10`,
    `/${name}?_start=1&_limit=2`,
    `/${name}?_page=1`,
    `/${name}?_page=2&_limit=5`,
    `/${name}?_limit=3`,
    `/${name}?_sort=body`,
    `/${name}?_sort=body&_order=desc&_page=1&_limit=2`,
    `/${name}?postId=1`,
    `/${name}?body_like=a`,
    `/${name}?id_gte=1`,
    `/${name}?q=a`,
    ...more,
    `/posts/1/${name}`,
  ]
}

function sideOn(port: number, file: string) {
  return {
    port,
    file,
    request: (method: string, target: string, options?: RequestOptions) => send(port, method, target, options),
    data: () => JSON.parse(readFileSync(file, 'utf8')) as unknown,
  }
}

/** json-server 0.17.4's module as its command line uses it (json-server/lib/cli/run.js: create(), defaults(), router(file, { foreignKeySuffix }), `router.db._.id = argv.id`), or the test's own app. */
async function startJsonServer017Module(file: string, start: JsonServerStart): Promise<Side> {
  const jsonServer = createRequire(path.join(root, 'package.json'))('json-server')
  return listenOn(start.app?.(jsonServer, file) ?? defaultApp(jsonServer, file, start), file)
}

/** Serves `app` on port 0 of 127.0.0.1, in this process. */
async function listenOn(app: ReturnType<App>, file: string): Promise<Side> {
  const server: Server = await new Promise((resolve) => {
    const listening: Server = app.listen(0, '127.0.0.1', () => resolve(listening))
  })
  return { ...sideOn((server.address() as AddressInfo).port, file), stdout: () => '', stderr: () => '', close: () => closeServer(server) }
}

function defaultApp(jsonServer: any, file: string, start: JsonServerStart) {
  const app = jsonServer.create()
  const router = jsonServer.router(file, start.foreignKeySuffix ? { foreignKeySuffix: start.foreignKeySuffix } : undefined)
  app.use(jsonServer.defaults({ logger: false, bodyParser: true }))
  router.db._.id = start.id ?? 'id'
  app.use(router)
  return app
}

/** json-server 1.0's module as its command line (json-server/lib/bin.js) uses it, without its watch of the file. */
async function startJsonServer1Module(file: string): Promise<Side> {
  const own = createRequire(path.join(await jsonServer1Package(), 'package.json'))
  const load = (specifier: string) => import(pathToFileURL(own.resolve(specifier)).href)
  const { createApp } = await load('./lib/app.js')
  const { NormalizedAdapter } = await load('./lib/adapters/normalized-adapter.js')
  const { Observer } = await load('./lib/adapters/observer.js')
  const { Low } = await load('lowdb')
  const { JSONFile } = await load('lowdb/node')
  const database = new Low(new Observer(new NormalizedAdapter(new JSONFile(file))), {})
  await database.read()
  const app = createApp(database, { logger: false })
  const server: Server = await new Promise((resolve) => {
    const listening: Server = app.listen(0, () => resolve(listening), '127.0.0.1')
  })
  return { ...sideOn((server.address() as AddressInfo).port, file), stdout: () => '', stderr: () => '', close: () => closeServer(server) }
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

/** A command started by spawnProgram, in the folder of its test. */
export interface Running {
  program: Program
  port: number
  /** The folder it runs in. */
  cwd: string
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<Exit>
  /** Types `text` on the process's standard input, as on a terminal. */
  type(text: string): void
  /** Resolves once `pattern` is in the output (stdout, else stderr); rejects on exit or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>
  stop(): Promise<Exit>
}

/** Every process is killed after this long. */
const limitMs = 60_000
const started = new Set<ChildProcess>()

async function commandOf(program: Program): Promise<string[]> {
  if (program === 'restdir') {
    // The folder of the test is not the repository's, so tsx is named by its file, as Node finds no package there.
    const tsx = pathToFileURL(createRequire(path.join(root, 'package.json')).resolve('tsx')).href
    return [process.execPath, '--import', tsx, path.join(root, 'bin', 'restdir.ts')]
  }
  if (program === 'json-server 0.17') return [process.execPath, path.join(root, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js')]
  return [process.execPath, path.join(await jsonServer1Package(), 'lib', 'bin.js')]
}

/** Runs `program` with `args` in `cwd`, `env` over this process's; its stdin is a pipe, to type into. */
export async function spawnProgram(program: Program, args: string[], cwd: string, port = 0, env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const [command, ...commandArgs] = await commandOf(program)
  // json-server 0.17 keeps its request log quiet when NODE_ENV is `test`, which its users do not set.
  const { NODE_ENV: _unset, ...inherited } = process.env
  const child = spawn(command, [...commandArgs, ...args], { cwd, env: { ...inherited, FORCE_COLOR: '0', ...env }, stdio: ['pipe', 'pipe', 'pipe'], timeout: limitMs })
  started.add(child)
  const output = { stdout: '', stderr: '' }
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (output.stdout += text))
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (output.stderr += text))
  child.stdin!.on('error', () => {}) // a process that exited reads nothing more
  let done: Exit | undefined
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => {
      started.delete(child)
      resolve((done = { code, signal }))
    }),
  )
  const said = () => `${program} ${args.join(' ')}\nstdout: ${output.stdout}\nstderr: ${output.stderr}`
  return {
    program,
    port,
    cwd,
    child,
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    exited,
    type: (text) => void child.stdin!.write(text),
    async waitFor(pattern, timeoutMs = 20_000) {
      for (const deadline = Date.now() + timeoutMs; !pattern.test(output.stdout + output.stderr); await pause(50)) {
        if (done) throw new Error(`exited before printing ${pattern}: ${said()}`)
        if (Date.now() > deadline) throw new Error(`printed no ${pattern} within ${timeoutMs} ms: ${said()}`)
      }
    },
    async stop() {
      if (!done) child.kill('SIGTERM')
      return exited
    },
  }
}

/** Starts `program` and resolves once it answers HTTP on `port` (json-server prints nothing with --quiet). */
export async function startProgram(program: Program, args: string[], cwd: string, port: number, env?: NodeJS.ProcessEnv): Promise<Running> {
  const running = await spawnProgram(program, args, cwd, port, env)
  let exitedEarly = false
  running.exited.then(() => (exitedEarly = true))
  for (const deadline = Date.now() + 30_000; ; await pause(100)) {
    if (exitedEarly) throw new Error(`${program} ${args.join(' ')} exited before answering:\n${running.stdout()}\n${running.stderr()}`)
    if (await send(port, 'GET', '/__ready').then(() => true, () => false)) return running
    if (Date.now() > deadline) {
      await running.stop()
      throw new Error(`${program} ${args.join(' ')} did not answer on port ${port} within 30 s:\n${running.stdout()}\n${running.stderr()}`)
    }
  }
}

/** Runs `program` to its end (a start that must fail), killed after the time limit. */
export async function runProgram(program: Program, args: string[], cwd: string): Promise<Exit & { output: string }> {
  const running = await spawnProgram(program, args, cwd)
  const exit = await running.exited
  return { ...exit, output: running.stdout() + running.stderr() }
}

/** Ends every process started here that still runs (for `test.after`). */
export async function stopPrograms(): Promise<void> {
  await Promise.all([...started].map((child) => new Promise((resolve) => {
    child.once('close', resolve)
    child.kill('SIGKILL')
  })))
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
