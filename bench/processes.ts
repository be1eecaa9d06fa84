import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { request } from 'node:http'

const root = fileURLToPath(new URL('..', import.meta.url))

/** How restdir is started: the built binary when there is one, else the TypeScript source through tsx. */
export interface Launcher {
  label: string
  command: string
  args: string[]
}

/** `checkout` is the restdir folder to measure: this one by default, another (e.g. an older commit) to compare. */
export function restdirLauncher(prefer: 'built' | 'source' | 'auto' = 'auto', checkout = root): Launcher {
  const base = checkout.endsWith('/') ? checkout : checkout + '/'
  const where = base === root ? '' : ` in ${base}`
  const built = `${base}dist/bin/restdir.js`
  if (prefer === 'built' || (prefer === 'auto' && existsSync(built))) {
    if (!existsSync(built)) throw new Error(`There is no built binary (${built}); run npm run build first.`)
    // The package's command: its CommonJS launcher sizes the thread pool, then runs the build.
    const launcher = `${base}bin/restdir.cjs`
    if (existsSync(launcher)) return { label: `built binary (node bin/restdir.cjs, running dist/)${where}`, command: process.execPath, args: [launcher] }
    return { label: `built binary (node dist/bin/restdir.js)${where}`, command: process.execPath, args: [built] }
  }
  return { label: `source (node --import tsx bin/restdir.ts)${where}`, command: process.execPath, args: ['--import', 'tsx', `${base}bin/restdir.ts`] }
}

export interface RunningServer {
  port: number
  pid: number
  /** Milliseconds from spawning the process to the answer of its first request. */
  startupMs: number
  /** Resident set size now, in bytes. */
  rss(): number
  stop(): Promise<void>
}

/** Starts restdir on a free port with the given flags and sends it one request, timing the whole. */
export function startRestdir(launcher: Launcher, flags: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  return startAnswering('restdir', launcher.command, [...launcher.args, '--port', '0', '--quiet', ...flags], env)
}

/**
 * What a start costs this machine before restdir does anything: Node itself
 * starting a bare `node:http` server, which says where it listens as restdir
 * does and answers its first request, timed the same way.
 */
export async function bareNodeStartMs(): Promise<number> {
  const server = await startAnswering('The bare Node server', process.execPath, ['-e', BARE_NODE_SERVER])
  await server.stop()
  return server.startupMs
}

const BARE_NODE_SERVER = `const server = require('node:http').createServer((req, res) => res.end('ok'))
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port + '/'))`

/** Spawns a server that prints where it listens, and times it from the spawn to the answer of its first request. */
async function startAnswering(name: string, command: string, args: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  const startedAt = performance.now()
  const child = spawn(command, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  let errorOutput = ''
  child.stderr!.on('data', (chunk) => (errorOutput += chunk))
  const port = await new Promise<number>((resolve, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk) => {
      output += chunk
      const match = /listening on http:\/\/\S+:(\d+)\//.exec(output)
      if (match) resolve(Number(match[1]))
    })
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before listening:\n${errorOutput}${output}`)))
  })
  await requestOnce(port, 'GET', '/')
  const startupMs = performance.now() - startedAt
  return { port, pid: child.pid!, startupMs, rss: () => rssOf(child.pid!), stop: () => stopChild(child) }
}

export interface CeilingServer {
  port: number
  pid: number
  /**
   * Sets the body every request is answered with and how many microseconds to spin before each answer (to
   * calibrate); `as` makes it the bare HTTP write server (each request's body first written into a new folder
   * of `write.dir` or over one of its documents, the calls on the event loop's thread or through the pool) or
   * the bare HTTP read server (each GET answered as restdir answers it, from its document's file in the store folder `read`), as
   * bench/ceiling-server.ts says.
   */
  answerWith(body: Buffer, contentType?: string, busyUs?: number, as?: BareServer): Promise<void>
  stop(): Promise<void>
}

/** What the ceiling does before it answers, beside spinning: nothing, a write, or a read of a document file. */
export interface BareServer {
  write?: { dir: string; mode: 'create' | 'replace'; pool: boolean }
  read?: string
}

export async function startCeiling(): Promise<CeilingServer> {
  const child = fork(`${root}bench/ceiling-server.ts`, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port))
    child.once('exit', (code) => reject(new Error(`The ceiling server exited (${code}).`)))
  })
  return {
    port,
    pid: child.pid!,
    answerWith(body, contentType, busyUs, as) {
      return new Promise((resolve) => {
        child.once('message', () => resolve())
        child.send({ body: body.toString('base64'), encoding: 'base64', contentType, busyUs, ...as })
      })
    },
    stop: () => stopChild(child),
  }
}

export interface SirvServer {
  port: number
  pid: number
  stop(): Promise<void>
}

/** sirv serving `www` (bench/sirv-server.ts), the static-file server restdir's files are compared with. */
export async function startSirv(www: string): Promise<SirvServer> {
  const child = fork(`${root}bench/sirv-server.ts`, [www], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port))
    child.once('exit', (code) => reject(new Error(`The sirv server exited (${code}).`)))
  })
  return { port, pid: child.pid!, stop: () => stopChild(child) }
}

export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** One plain request (no keep-alive), for the first answer, filling the store and checks. A body goes as JSON. */
export function requestOnce(port: number, method: string, path: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
  const headers = payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }))
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** Resident set size of a process in bytes (Linux /proc; elsewhere `ps`). */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]) * 1024
  } catch {
    return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) * 1024
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}
