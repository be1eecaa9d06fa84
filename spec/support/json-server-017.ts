import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { join } from 'node:path'
import { freePort, root } from './process.ts'

/**
 * json-server 0.17.4 as its command line starts it (node_modules/json-server/lib/cli/bin.js),
 * unchanged, on a db.json of its own, for the side-by-side comparisons "as json-server does"
 * asks for. Its banner is kept so that a test can compare restdir's with it.
 */
export interface JsonServer017 {
  port: number
  /** What it printed so far. */
  stdout(): string
  close(): Promise<void>
}

const bin = join(root, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js')

export async function startJsonServer017(file: string, args: string[] = []): Promise<JsonServer017> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [bin, file, '--port', String(port), '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } })
  let stdout = ''
  let stderr = ''
  // Its colours, should a terminal's setting reach it, are left out.
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8').replace(/\x1b\[[0-9;]*m/g, '')))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
  const started = Date.now()
  // It prints its resources and "Home" as it asks to listen (run.js), not once it does: then it takes a connection.
  while (!/Home\s+http/.test(stdout) || !(await accepts(port))) {
    if (child.exitCode !== null || Date.now() - started > 20_000) {
      child.kill('SIGKILL')
      throw new Error(`json-server 0.17.4 did not start: ${stdout}${stderr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    port,
    stdout: () => stdout,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
