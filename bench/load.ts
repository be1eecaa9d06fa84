import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'

/**
 * A small HTTP/1.1 load generator: a fixed number of keep-alive connections,
 * each with one request in flight at a time (no pipelining), for a set time.
 * It writes prepared request bytes to plain sockets and parses only what it
 * needs of each answer (status and length), so on a two-core machine it
 * leaves the server as much CPU as it can.
 */

export interface LoadOptions {
  port: number
  host?: string
  connections: number
  /** Seconds to measure, after `warmup` seconds whose answers are not counted. */
  duration: number
  warmup?: number
  /** The next request to send on a connection, as raw HTTP/1.1 bytes (see `buildRequest`). */
  nextRequest: (connection: number) => Buffer
  /** The server's process, to measure the CPU time it spends per answer (Linux). */
  serverPid?: number
}

export interface LoadResult {
  requests: number
  /** Answers per second over the measured time. */
  rps: number
  /** Latency percentiles in milliseconds. */
  p50: number
  p99: number
  /** Answers with a status other than 2xx or 304, and connection failures. */
  errors: number
  statuses: Record<number, number>
  bytes: number
  /** CPU time the server process spent per answer, in microseconds (NaN where it cannot be read). */
  serverCpuUs: number
}

/** Raw bytes of one request with keep-alive; a body is sent as JSON. */
export function buildRequest(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Buffer {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
  let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n`
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
  if (payload) head += `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n`
  head += '\r\n'
  return payload ? Buffer.concat([Buffer.from(head), payload]) : Buffer.from(head)
}

const HEADER_END = Buffer.from('\r\n\r\n')

/**
 * Writes out what earlier phases left dirty before a write measurement
 * starts, so that one phase's writeback does not land in the next one's figures.
 */
export async function settleDisk(): Promise<void> {
  if (process.platform !== 'win32') execFileSync('sync')
  await new Promise((resolve) => setTimeout(resolve, 300))
}

/** Of rounds of one workload on one server (or loop), the one of median rate (the lower of the middle two). */
export function medianRound<Result extends { rps: number }>(results: Result[]): Result {
  const sorted = [...results].sort((a, b) => a.rps - b.rps)
  return sorted[(sorted.length - 1) >> 1]
}

/** `value` with `digits` decimals, rounded down: a figure short of a target never shows as the target (49.9% as 49%, not 50%). */
export function roundedDown(value: number, digits: number): string {
  const scale = 10 ** digits
  return (Math.floor(value * scale + 1e-9) / scale).toFixed(digits)
}

/** Runs the load and resolves with its figures. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = []
  const statuses: Record<number, number> = {}
  let errors = 0
  let bytes = 0
  let measuring = false
  const connections = drive(options.port, options.host, options.connections, options.nextRequest, (answer, latency) => {
    if (!measuring) return
    latencies.push(latency)
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
    if (!isSuccess(answer.status)) errors++
    bytes += answer.bodyBytes
  })
  await connections.opened
  await sleep((options.warmup ?? 0) * 1000)
  measuring = true
  const measuredFrom = performance.now()
  const cpuFrom = cpuTimeOf(options.serverPid)
  await sleep(options.duration * 1000)
  // A very short window on a slow machine may close before the first answer: wait for one (10 s at most).
  for (let waited = 0; latencies.length === 0 && waited < 10_000; waited += 50) await sleep(50)
  const elapsed = (performance.now() - measuredFrom) / 1000
  const cpuUs = cpuTimeOf(options.serverPid) - cpuFrom
  measuring = false
  await connections.drain(Math.max(5, options.duration) * 1000)
  connections.stop()
  const sorted = Float64Array.from(latencies).sort()
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    errors: errors + connections.failures(),
    statuses,
    bytes,
    serverCpuUs: cpuUs / latencies.length,
  }
}

/** What `runCalls` measures: runLoad's figures that are not HTTP's. */
export type CallsResult = Pick<LoadResult, 'requests' | 'rps' | 'p50' | 'p99' | 'errors'>

/**
 * runLoad's measurement for work that is not an HTTP request (a statement
 * sent straight to a database): `connections` loops, each awaiting one call
 * at a time, for `warmup` seconds not counted and then `duration` seconds.
 * A call that fails counts as an error.
 */
export async function runCalls(options: { connections: number; duration: number; warmup?: number; call: (connection: number) => Promise<unknown> }): Promise<CallsResult> {
  const latencies: number[] = []
  let errors = 0
  let measuring = false
  let stopping = false
  const loops = Array.from({ length: options.connections }, async (_, connection) => {
    while (!stopping) {
      const from = performance.now()
      const failed = await options.call(connection).then(() => false, () => true)
      if (measuring && failed) errors++
      else if (measuring) latencies.push(performance.now() - from)
      // A call that fails at once would otherwise loop without ever letting the timers run.
      if (failed) await sleep(10)
    }
  })
  await sleep((options.warmup ?? 0) * 1000)
  measuring = true
  const measuredFrom = performance.now()
  await sleep(options.duration * 1000)
  for (let waited = 0; latencies.length === 0 && waited < 10_000; waited += 50) await sleep(50)
  const elapsed = (performance.now() - measuredFrom) / 1000
  measuring = false
  stopping = true
  await Promise.all(loops)
  const sorted = Float64Array.from(latencies).sort()
  return { requests: latencies.length, rps: latencies.length / elapsed, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), errors }
}

/** User and system CPU time of a process in microseconds, from /proc (Linux); NaN elsewhere. */
function cpuTimeOf(pid: number | undefined): number {
  if (pid === undefined) return NaN
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    const ticksPerSecond = 100
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond
  } catch {
    return NaN
  }
}

/**
 * Sends every request of a list over `connections` connections and resolves
 * once all are answered, with the count of answers that were not a success.
 * For filling a store before a workload.
 */
export async function sendAll(port: number, connections: number, requests: Buffer[]): Promise<{ errors: number }> {
  let next = 0
  let answered = 0
  let errors = 0
  let finish!: () => void
  const finished = new Promise<void>((resolve) => (finish = resolve))
  if (requests.length === 0) return { errors }
  const driver = drive(port, undefined, Math.min(connections, requests.length), () => requests[next++], (answer) => {
    if (!isSuccess(answer.status)) errors++
    if (++answered === requests.length) finish()
  })
  await finished
  driver.stop()
  return { errors: errors + driver.failures() }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function isSuccess(status: number): boolean {
  return (status >= 200 && status < 300) || status === 304
}

interface Driver {
  /** Resolves once every connection is open. */
  opened: Promise<void>
  /**
   * Sends nothing more and waits (at most `limitMs`) for the answers still
   * due, so a slow workload's requests do not run on into the next one.
   */
  drain(limitMs: number): Promise<void>
  stop(): void
  /** Connection errors seen so far. */
  failures(): number
}

/**
 * Keeps `count` connections busy: each sends `next()`, waits for the whole
 * answer, reports it, and sends the next, until `next()` gives undefined or
 * `stop()` is called. A connection the server closes is opened again.
 */
function drive(
  port: number,
  host: string | undefined,
  count: number,
  next: (connection: number) => Buffer | undefined,
  onAnswer: (answer: AnswerParser, latencyMs: number) => void,
): Driver {
  const sockets = new Set<Socket>()
  let stopped = false
  let draining = false
  let inFlight = 0
  let drained: (() => void) | undefined
  let failures = 0
  let opened = 0
  let allOpened!: () => void
  let openFailed!: (error: Error) => void
  const openedPromise = new Promise<void>((resolve, reject) => {
    allOpened = resolve
    openFailed = reject
  })

  const startConnection = (index: number) => {
    const socket = connect({ port, host: host ?? '127.0.0.1', noDelay: true })
    sockets.add(socket)
    let sentAt = 0
    let isHead = false
    let connected = false
    let waiting = false
    const answer = new AnswerParser()
    const send = () => {
      if (stopped || draining) return
      const request = next(index)
      if (request === undefined) return
      isHead = request[0] === 0x48 && request[1] === 0x45 // "HE"AD
      sentAt = performance.now()
      waiting = true
      inFlight++
      socket.write(request)
    }
    socket.on('connect', () => {
      connected = true
      if (++opened === count) allOpened()
      send()
    })
    socket.on('data', (chunk: Buffer) => {
      let offset = 0
      while (offset < chunk.length) {
        offset += answer.feed(chunk, offset, isHead)
        if (!answer.done) continue
        onAnswer(answer, performance.now() - sentAt)
        answer.reset()
        waiting = false
        if (--inFlight === 0 && drained) drained()
        send()
      }
    })
    socket.on('error', (error) => {
      if (stopped) return
      failures++
      if (!connected) openFailed(error)
    })
    socket.on('close', () => {
      sockets.delete(socket)
      if (waiting) {
        // Its request will not be answered now.
        waiting = false
        if (--inFlight === 0 && drained) drained()
      }
      // A server may close a connection (e.g. after a 413); keep the load steady with a new one.
      if (!stopped && connected) startConnection(index)
    })
  }
  for (let index = 0; index < count; index++) startConnection(index)
  return {
    opened: openedPromise,
    drain(limitMs) {
      draining = true
      if (inFlight === 0) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, limitMs)
        drained = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    },
    stop() {
      stopped = true
      for (const socket of sockets) socket.destroy()
    },
    failures: () => failures,
  }
}

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]
}

/**
 * Reads one answer at a time from a byte stream: the head up to the blank
 * line, then a body of Content-Length bytes, or chunks up to the last one.
 */
class AnswerParser {
  status = 0
  bodyBytes = 0
  done = false
  private head: Buffer[] = []
  private headLength = 0
  private remaining = -1
  private chunked = false
  private chunkTail = Buffer.alloc(0)

  reset(): void {
    this.status = 0
    this.bodyBytes = 0
    this.done = false
    this.head = []
    this.headLength = 0
    this.remaining = -1
    this.chunked = false
    this.chunkTail = Buffer.alloc(0)
  }

  /** Consumes bytes from `chunk` at `offset`; returns how many it used (it stops at the end of an answer). */
  feed(chunk: Buffer, offset: number, isHead: boolean): number {
    if (this.remaining === -1 && !this.chunked) {
      // Still in the head: look for the blank line, also across chunk boundaries.
      const previous = this.headLength
      const joined = previous === 0 ? chunk.subarray(offset) : Buffer.concat([...this.head, chunk.subarray(offset)])
      const end = joined.indexOf(HEADER_END, Math.max(0, previous - 3))
      if (end === -1) {
        this.head = [Buffer.from(joined)]
        this.headLength = joined.length
        return chunk.length - offset
      }
      const bodyLength = this.parseHead(joined.toString('latin1', 0, end), isHead)
      this.head = []
      this.headLength = 0
      if (bodyLength === 0) this.done = true
      return end + 4 - previous
    }
    if (this.chunked) return this.feedChunked(chunk, offset)
    const take = Math.min(this.remaining, chunk.length - offset)
    this.remaining -= take
    this.bodyBytes += take
    if (this.remaining === 0) this.done = true
    return take
  }

  /** Reads the status and how the body is framed; returns the body's length (-1 when chunked). */
  private parseHead(head: string, isHead: boolean): number {
    this.status = Number(head.slice(9, 12))
    const lengthMatch = /\r\ncontent-length:\s*(\d+)/i.exec(head)
    const noBody = isHead || this.status === 304 || this.status === 204 || (this.status >= 100 && this.status < 200)
    if (noBody) this.remaining = 0
    else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) this.chunked = true
    else if (lengthMatch) this.remaining = Number(lengthMatch[1])
    else throw new Error(`An answer without a length cannot be measured on a kept-alive connection:\n${head}`)
    return this.chunked ? -1 : this.remaining
  }

  /** Chunked bodies are rare here (every answer of both servers has a length); this just finds the last chunk. */
  private feedChunked(chunk: Buffer, offset: number): number {
    const data = Buffer.concat([this.chunkTail, chunk.subarray(offset)])
    let position = 0
    for (;;) {
      const lineEnd = data.indexOf('\r\n', position)
      if (lineEnd === -1) break
      const size = parseInt(data.toString('latin1', position, lineEnd), 16)
      const next = lineEnd + 2 + size + 2
      if (next > data.length) break
      this.bodyBytes += size
      position = next
      if (size === 0) {
        this.done = true
        const used = position - this.chunkTail.length
        this.chunkTail = Buffer.alloc(0)
        return used
      }
    }
    this.chunkTail = data.subarray(position)
    return chunk.length - offset
  }
}
