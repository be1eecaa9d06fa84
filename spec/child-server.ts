import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { makeTempDir } from './helpers.ts'

/** The command-line server running as a child process, as a user starts it. */
export interface ChildServer {
  child: ChildProcess
  port: number
  /** The store folder (a fresh temp folder unless one was given). */
  store: string
  /** The first line the server printed: `restdir <version> listening on http://…/`. */
  banner: string
  /** Everything the server wrote to stderr so far. */
  stderr(): string
  /** Resolves with the exit code and signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGTERM, then wait for the exit (the graceful shutdown). */
  stop(): Promise<void>
  /** SIGKILL, then wait for the exit: a crash at whatever instant it lands. */
  kill(): Promise<void>
}

const cliPath = fileURLToPath(new URL('../bin/restdir.ts', import.meta.url))

/**
 * Starts `restdir --port 0 --quiet` (plus `args`) with tsx, on a temp store
 * unless `--store` is among the args, and resolves once the banner shows the port.
 */
export async function startCli(args: string[] = [], env: Record<string, string> = {}): Promise<ChildServer> {
  const store = args.includes('--store') ? args[args.indexOf('--store') + 1] : await makeTempDir('restdir-cli-')
  const allArgs = ['--import', 'tsx', cliPath, '--port', '0', '--quiet', ...(args.includes('--store') ? [] : ['--store', store]), ...args]
  const child = spawn(process.execPath, allArgs, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let stdout = ''
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
  const banner = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const line = /^restdir .* listening on http:\/\/\S+\/$/m.exec(stdout)
      if (line) resolve(line[0])
    })
    exited.then(({ code, signal }) => reject(new Error(`restdir exited (${code ?? signal}) before listening:\n${stderr}`)))
  })
  const port = Number(/:(\d+)\/$/.exec(banner)![1])
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    await exited
  }
  return { child, port, store, banner, stderr: () => stderr, exited, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') }
}
