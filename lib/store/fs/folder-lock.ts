import { createHash } from 'node:crypto'
import { closeSync, existsSync, openSync, realpathSync, statSync, symlinkSync } from 'node:fs'
import { link, rename, readFile, unlink } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeTempFile } from './atomic.ts'
import { errorCode } from './fs-errors.ts'

/**
 * The lock a FileStore holds on its folder, so that one server at a time
 * writes there. What proves the holder alive is a socket it listens on
 * (`@lock.sock`; a named pipe on Windows): the kernel closes it when the
 * process dies, zombie or not, whatever its pid. `@lock` tells people who holds it.
 */
export interface StoreLock {
  /** `@lock`, the readable note: pid and run id. */
  readonly file: string
  /** What we wrote: the note is still ours while the file holds exactly this. */
  readonly content: string
  /** True when the previous holder died without releasing it: its run crashed. */
  readonly takenOver: boolean
  readonly server: net.Server
  readonly address: LockAddress
}

/**
 * Takes the lock of `directory`. A holder that answers on the lock socket
 * refuses with code ESTORELOCKED; a socket nobody listens on is what a dead
 * holder leaves, and is taken over, so a crash never keeps a store shut.
 */
export async function takeLock(directory: string, tempPath: string, runId: string): Promise<StoreLock> {
  const file = join(directory, '@lock')
  const content = JSON.stringify({ pid: process.pid, run: runId }) + '\n'
  const address = lockAddress(directory, runId)
  try {
    let takenOver = false
    for (let attempt = 0; attempt < 100; attempt++) {
      const server = await listenOn(address.bind, content)
      if (server) {
        // A note left behind means its run ended without releasing the lock.
        takenOver ||= existsSync(file)
        try {
          await writeTempFile(tempPath, content, false)
          await rename(tempPath, file)
        } catch (error) {
          await closeServer(server)
          throw error
        }
        return { file, content, takenOver, server, address }
      }
      const holder = await probe(address.bind)
      if (holder.state === 'alive') throw lockedError(directory, holder.pid)
      if (holder.state === 'unknown') throw holder.error
      if (address.socket) await clearDeadSocket(address)
      takenOver = true
    }
    throw new Error(`Could not take the lock of the store folder ${directory}: other programs keep changing it.`)
  } catch (error) {
    address.close()
    throw error
  }
}

/** Removes the note, unless someone else has taken the lock over since, then closes the socket (which removes it). */
export async function releaseLock(lock: StoreLock): Promise<void> {
  const content = await readFile(lock.file, 'utf8').catch(() => undefined)
  if (content === lock.content) await unlink(lock.file).catch(() => {})
  await closeServer(lock.server)
  lock.address.close()
}

/**
 * Where the lock socket is. Unix sockets take paths of at most 104 bytes
 * (macOS; 108 on Linux), so a deep store folder is reached through a short
 * alias of it: `/proc/self/fd/N` of the opened folder on Linux, a symbolic
 * link in the temp folder elsewhere. Both live as long as the lock does,
 * since closing the socket removes it through the same path.
 */
interface LockAddress {
  /** What to listen on and connect to. */
  bind: string
  /** The socket's real path, and a name beside it to move a dead one to (Unix only). */
  socket?: { file: string; aside: string; asideBind: string }
  /** Linux: an abstract socket that one start at a time holds while it clears a dead lock socket. */
  takeover?: string
  close(): void
}

const SOCKET_PATH_LIMIT = 100

function lockAddress(directory: string, runId: string): LockAddress {
  if (process.platform === 'win32') {
    // Named pipes live in their own namespace: one name per real folder, case-folded as Windows compares paths.
    const hash = createHash('sha256').update(realpathSync.native(directory).toLowerCase()).digest('hex').slice(0, 32)
    return { bind: `\\\\.\\pipe\\restdir-lock-${hash}`, close() {} }
  }
  const names = { file: '@lock.sock', aside: `@tmp-${runId}-lock.sock` }
  const within = (base: string, close: () => void): LockAddress => ({
    bind: join(base, names.file),
    socket: { file: join(directory, names.file), aside: join(directory, names.aside), asideBind: join(base, names.aside) },
    takeover: process.platform === 'linux' ? takeoverName(directory) : undefined,
    close,
  })
  if (Buffer.byteLength(join(directory, names.aside)) <= SOCKET_PATH_LIMIT) return within(directory, () => {})
  if (process.platform === 'linux') {
    const fd = openSync(directory, 'r')
    if (existsSync(`/proc/self/fd/${fd}`)) return within(`/proc/self/fd/${fd}`, () => closeSync(fd))
    closeSync(fd)
  }
  const alias = join(tmpdir(), `restdir-${runId}`)
  symlinkSync(directory, alias)
  return within(alias, () => void unlinkQuietly(alias))
}

/** Abstract socket names (a leading NUL) are no files: the kernel frees one when its process dies. One per folder. */
function takeoverName(directory: string): string {
  const { dev, ino } = statSync(directory, { bigint: true })
  return `\0restdir-takeover-${createHash('sha256').update(`${dev}:${ino}`).digest('hex').slice(0, 32)}`
}

/** Listens on the lock socket; undefined when something is there already (EADDRINUSE). */
function listenOn(path: string, content: string): Promise<net.Server | undefined> {
  const server = net.createServer((socket) => {
    socket.on('error', () => {})
    socket.end(content)
  })
  return new Promise((resolve, reject) => {
    server.once('error', (error) => (errorCode(error) === 'EADDRINUSE' ? resolve(undefined) : reject(error)))
    server.listen({ path, exclusive: true }, () => {
      server.removeAllListeners('error')
      server.on('error', () => {})
      server.unref() // the lock never keeps the process running
      resolve(server)
    })
  })
}

type Holder = { state: 'alive'; pid?: number } | { state: 'dead' } | { state: 'unknown'; error: Error }

/** Connects to a lock socket: someone answering holds the lock; refused or gone means its holder died. */
function probe(path: string): Promise<Holder> {
  return new Promise((resolve) => {
    const socket = net.connect(path)
    let connected = false
    let text = ''
    socket.setEncoding('utf8')
    socket.setTimeout(2000, () => socket.destroy()) // alive, if silent
    socket.on('connect', () => (connected = true))
    socket.on('data', (chunk: string) => (text = (text + chunk).slice(0, 200)))
    socket.on('error', (error) => {
      if (connected) return
      const code = errorCode(error)
      if (code === 'ECONNREFUSED' || code === 'ENOENT') resolve({ state: 'dead' })
      else if (code === 'EAGAIN') resolve({ state: 'alive' }) // listening, with a full backlog
      else resolve({ state: 'unknown', error })
    })
    socket.on('close', () => {
      if (connected) resolve({ state: 'alive', pid: pidIn(text) })
    })
  })
}

/**
 * Removes a dead lock socket. Between the check and the removal another start
 * may have taken the lock. On Linux the removal happens under the takeover
 * socket, held by one start at a time: while the dead socket is there nobody
 * else can listen, and only that start removes it. Elsewhere it is moved
 * aside, checked again and put back when it answers (which a third start
 * racing in that instant can still defeat).
 */
async function clearDeadSocket(address: LockAddress): Promise<void> {
  const { file, aside, asideBind } = address.socket!
  if (address.takeover) {
    const takeover = await listenOn(address.takeover, '')
    if (!takeover) return void (await new Promise((resolve) => setTimeout(resolve, 10))) // another start is at it: look again
    try {
      if ((await probe(address.bind)).state === 'dead') await unlinkQuietly(file)
    } finally {
      await closeServer(takeover)
    }
    return
  }
  try {
    await rename(file, aside)
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return
    throw error
  }
  if ((await probe(asideBind)).state !== 'dead') await link(aside, file).catch(() => {})
  await unlinkQuietly(aside)
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()))
}

async function unlinkQuietly(path: string): Promise<void> {
  await unlink(path).catch(() => {})
}

function pidIn(text: string): number | undefined {
  try {
    const { pid } = JSON.parse(text) as { pid?: unknown }
    return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function lockedError(directory: string, pid: number | undefined): Error {
  const error: NodeJS.ErrnoException = new Error(
    `The store folder ${directory} is in use by another restdir${pid === undefined ? '' : ` (pid ${pid})`}; stop that one first.`,
  )
  error.code = 'ESTORELOCKED'
  return error
}
