import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { chmod, copyFile, link, lstat, mkdir, readdir, readFile, readlink, symlink } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root, where `bin/restdir.ts` and `package.json` live. */
export const root = fileURLToPath(new URL('../..', import.meta.url))

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface CliProcess {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<Exit>
  /** Resolves with the first match of `pattern` in stdout (or stderr); rejects on exit or after `timeoutMs`. */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr', timeoutMs?: number): Promise<RegExpMatchArray>
}

export interface RunningCli extends CliProcess {
  url: string
  port: number
  /** Sends a signal and waits for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>
}

/** Processes started here and not yet ended, with whether each leads its own process group. */
const running = new Map<ChildProcess, boolean>()

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv
  command?: string[]
  detached?: boolean
  /** Another user to run as (the tests must run as root); see unprivilegedUser. */
  user?: Account
  /** The folder to run in, the repository root unless given. */
  cwd?: string
}

export interface Account {
  uid: number
  gid: number
}

/**
 * Runs `command` (by default the CLI: `node --import tsx bin/restdir.ts ...args`)
 * in the repository root, or `cwd`, as `user` if given. `detached` puts it in its own process group, so
 * `killGroup` can end a tree such as npm → sh → tsx → node.
 */
export function spawnCli(args: string[], options: SpawnOptions = {}): CliProcess {
  const [program, ...programArgs] = options.command ?? [process.execPath, '--import', 'tsx', 'bin/restdir.ts']
  const child = spawn(program, [...programArgs, ...args], {
    ...options.user,
    cwd: options.cwd ?? root,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  })
  running.set(child, options.detached ?? false)
  const output = { stdout: '', stderr: '' }
  const listeners = new Set<() => void>()
  const notify = () => {
    for (const listener of [...listeners]) listener()
  }
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    output.stdout += text
    notify()
  })
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    output.stderr += text
    notify()
  })
  let hasExited = false
  // 'close' comes after the process exited and its output streams ended, so the output is complete.
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child)
      hasExited = true
      resolve({ code, signal })
      notify()
    })
  })

  function waitFor(pattern: RegExp, stream: 'stdout' | 'stderr' = 'stdout', timeoutMs = 20_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output[stream])
        if (match) return finish(() => resolve(match))
        if (hasExited) return finish(() => reject(new Error(`restdir exited before printing ${pattern}.\nstdout: ${output.stdout}\nstderr: ${output.stderr}`)))
      }
      const timer = setTimeout(
        () => finish(() => reject(new Error(`restdir printed no ${pattern} within ${timeoutMs} ms.\nstdout: ${output.stdout}\nstderr: ${output.stderr}`))),
        timeoutMs,
      )
      const finish = (settle: () => void) => {
        clearTimeout(timer)
        listeners.delete(check)
        settle()
      }
      listeners.add(check)
      check()
    })
  }

  return { child, stdout: () => output.stdout, stderr: () => output.stderr, exited, waitFor }
}

/** Starts the CLI and waits for its banner; the URL and port come from the banner (so `--port 0` works). */
export async function startCli(args: string[], options: SpawnOptions = {}): Promise<RunningCli> {
  const cli = spawnCli(args, options)
  // A server that never printed its banner in time is ended, so that it does not go on writing to a store the test removes.
  const [, url, port] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:(\d+))\/\n/).catch(async (error: unknown) => {
    if (cli.child.exitCode === null && cli.child.signalCode === null) {
      if (options.detached) killGroup(cli.child, 'SIGKILL')
      else cli.child.kill('SIGKILL')
    }
    await cli.exited
    throw error
  })
  return {
    ...cli,
    url,
    port: Number(port),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill(signal)
      return cli.exited
    },
  }
}

/** How long runCli waits for the command to end, by default: a command that should end at once and hangs fails its test instead of holding `npm test`. */
export const RUN_CLI_TIMEOUT_MS = 60_000

/** Runs the CLI to its end (for --help, --version and bad flags); one that has not ended within `timeoutMs` is killed and the promise rejects, with its output. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = RUN_CLI_TIMEOUT_MS): Promise<Exit & { stdout: string; stderr: string }> {
  const cli = spawnCli(args, { env })
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      cli.child.kill('SIGKILL')
      reject(new Error(`restdir ${args.join(' ')} did not end within ${timeoutMs} ms.\nstdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`))
    }, timeoutMs)
  })
  try {
    const exit = await Promise.race([cli.exited, timedOut])
    return { ...exit, stdout: cli.stdout(), stderr: cli.stderr() }
  } finally {
    clearTimeout(timer)
  }
}

/** Ends every process these helpers started that is still running (for `test.after`). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map(([child, detached]) => {
    const closed = new Promise((resolve) => child.once('close', resolve))
    if (detached) killGroup(child, 'SIGKILL')
    else child.kill('SIGKILL')
    return closed
  }))
}

/** Sends a signal to the process group a detached child leads. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  process.kill(-child.pid!, signal)
}

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** Every `@.json` document file under a store folder, with its parsed content (throws if one does not parse). */
export async function readDocumentFiles(dir: string): Promise<Map<string, unknown>> {
  const found = new Map<string, unknown>()
  async function walk(folder: string): Promise<void> {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) await walk(full)
      else if (entry.name === '@.json') {
        const text = await readFile(full, 'utf8')
        try {
          found.set(path.relative(dir, full), JSON.parse(text))
        } catch {
          throw new Error(`${path.relative(dir, full)} does not parse: ${JSON.stringify(text.slice(0, 200))}`)
        }
      }
    }
  }
  await walk(dir)
  return found
}

let built: string[] | undefined

/**
 * The `restdir` command as an installed package runs it: `node bin/restdir.cjs`,
 * which starts the compiled CLI in dist/. Builds dist/ once per test run.
 */
export function builtCommand(): string[] {
  if (!built) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, encoding: 'utf8', timeout: 120_000 })
    if (build.status !== 0) throw new Error(`npm run build failed (${build.status ?? build.signal}):\n${build.stdout}\n${build.stderr}`)
    built = [process.execPath, path.join(root, 'bin', 'restdir.cjs')]
  }
  return built
}

/** The pids whose parent is `pid` (Linux: read from /proc). */
export function childPids(pid: number): number[] {
  const children: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const fields = processStat(Number(name))
    if (fields && Number(fields[1]) === pid) children.push(Number(name))
  }
  return children
}

/** The state letter of a process (R, S, Z for a zombie…), or undefined once it is gone (Linux). */
export function processState(pid: number): string | undefined {
  return processStat(pid)?.[0]
}

/** The fields of /proc/PID/stat after the command name: state, ppid, … */
function processStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/**
 * A user without privileges to run a process as, for a test that must not run
 * as root (which may write anywhere): `nobody`. Or why there is none usable,
 * such as a node that only root can reach.
 */
export function unprivilegedUser(): Account | { reason: string } {
  let user: Account
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))
    user = { uid: id('-u'), gid: id('-g') }
  } catch {
    return { reason: 'this machine has no `nobody` user to run it as' }
  }
  const probe = spawnSync(process.execPath, ['-e', ''], { ...user, cwd: '/', timeout: 20_000 })
  if (probe.error || probe.status !== 0) return { reason: `nobody cannot run ${process.execPath}: ${probe.error?.message ?? `exit ${probe.status}`}` }
  return user
}

/**
 * The `restdir` command as builtCommand gives it, from a copy of the package's
 * files (package.json and its "files", as npm installs them) in `folder`, open
 * to every user: the repository may lie in a folder only its owner enters.
 */
export async function reachableCommand(folder: string): Promise<string[]> {
  builtCommand()
  await chmod(folder, 0o755)
  const manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { files: string[] }
  for (const name of ['package.json', ...manifest.files]) {
    const parents = path.dirname(name).split('/').filter((part) => part !== '.')
    for (let depth = 1; depth <= parents.length; depth++) {
      const parent = path.join(folder, ...parents.slice(0, depth))
      await mkdir(parent).then(() => chmod(parent, 0o755), () => {}) // made by an earlier name
    }
    await copyReadableByAll(path.join(root, name), path.join(folder, name))
  }
  return [process.execPath, path.join(folder, 'bin', 'restdir.cjs')]
}

/**
 * Gives `to` the tree (or file) at `from`, readable by every user and
 * runnable where it was runnable: hard links to files that already are so,
 * copies of the others (and of files on another disk).
 */
export async function copyReadableByAll(from: string, to: string): Promise<void> {
  const stats = await lstat(from)
  if (stats.isSymbolicLink()) return symlink(await readlink(from), to)
  if (stats.isDirectory()) {
    await mkdir(to)
    await chmod(to, 0o755) // whatever the umask
    for (const name of await readdir(from)) await copyReadableByAll(path.join(from, name), path.join(to, name))
    return
  }
  const open = stats.mode | (stats.mode & 0o100 ? 0o555 : 0o444)
  if (open === stats.mode && (await link(from, to).then(() => true, () => false))) return
  await copyFile(from, to)
  await chmod(to, open & 0o7777)
}
