import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { jsonServer1Package } from '../../bench/json-server-1/install.ts'
import { send } from './helpers.ts'
import { root, type Exit } from './process.ts'

/**
 * restdir's command and json-server's, each started as its users start it, in a folder of the
 * test's own (where its db.json, ./public, json-server.json are), so that a test gives both the
 * same command line and compares what they answer. Every process is killed after `limitMs`.
 */
export type Program = 'restdir' | 'json-server 0.17' | 'json-server 1.0'

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

/** Runs `program` with `args` in `cwd`; its stdin is a pipe, to type into. */
export async function spawnProgram(program: Program, args: string[], cwd: string, port = 0): Promise<Running> {
  const [command, ...commandArgs] = await commandOf(program)
  // json-server 0.17 keeps its request log quiet when NODE_ENV is `test`, which its users do not set.
  const { NODE_ENV: _unset, ...env } = process.env
  const child = spawn(command, [...commandArgs, ...args], { cwd, env: { ...env, FORCE_COLOR: '0' }, stdio: ['pipe', 'pipe', 'pipe'], timeout: limitMs })
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
export async function startProgram(program: Program, args: string[], cwd: string, port: number): Promise<Running> {
  const running = await spawnProgram(program, args, cwd, port)
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
