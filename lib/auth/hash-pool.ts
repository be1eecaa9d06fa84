import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { HttpError } from '../http-error.ts'
import { DEFAULT_COST, MAX_COST, MIN_COST, parseHash, type BcryptVersion } from './bcrypt.ts'
import type { HashAnswer, HashJob } from './hash-worker.ts'

// A bcrypt hash of cost 10 takes about 100 ms of CPU: on the main thread, every
// login would hold up every other request for that long. The pool runs hashes
// on a few worker threads instead, each taking one job at a time. It is bounded
// twice: by its threads, and by the jobs that may wait for one; past that a
// caller gets a `HashPoolFull`, a 503 with Retry-After, at once, rather than a
// queue that grows with an attacker's requests.

/** The pool is full: the answer is 503 with Retry-After (RFC 9110 §15.6.4), nothing is queued. */
export class HashPoolFull extends HttpError {
  constructor(waiting: number) {
    super(503, `Too many password checks are waiting (${waiting}); try again in a moment.`, { 'Retry-After': '1' })
    this.name = 'HashPoolFull'
  }
}

export interface HashPoolOptions {
  /** Threads at most, started as jobs come; by default one fewer than the cores, from 1 to 4. */
  threads?: number
  /** Jobs that may wait for a thread; one more is a `HashPoolFull`. 64 by default. */
  maxQueue?: number
}

export interface HashPool {
  /** A bcrypt hash of `password` with a new random salt (`$2a$`, as bcryptjs writes, unless told). */
  hash(password: string, cost?: number, version?: BcryptVersion): Promise<string>
  /** Whether `password` matches `hash`; a hash that cannot be read rejects with `MalformedHash` before any thread is asked. */
  verify(password: string, hash: string): Promise<boolean>
  /** Ends every thread; what was waiting or running rejects. */
  close(): Promise<void>
  /** Threads running now, and jobs waiting for one. */
  readonly size: { threads: number; waiting: number }
}

interface Job {
  message: HashJob
  resolve(value: string | boolean): void
  reject(error: Error): void
}

interface Thread {
  worker: Worker
  job: Job | undefined
}

/** Where the thread's code is: beside this file, as TypeScript when run from the sources (tsx), as JavaScript when built into dist/. */
function workerEntry(): { code: URL | string; eval: boolean } {
  const fromSource = import.meta.url.endsWith('.ts')
  const script = new URL(fromSource ? './hash-worker.ts' : './hash-worker.js', import.meta.url)
  if (!fromSource) return { code: script, eval: false }
  // A thread does not inherit the loader tsx put on the main thread: it registers tsx itself first.
  const require = createRequire(import.meta.url)
  const tsxPackage = require.resolve('tsx/package.json')
  const tsxApi = (JSON.parse(readFileSync(tsxPackage, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api'].import.default
  const tsx = pathToFileURL(join(dirname(tsxPackage), tsxApi)).href
  return { code: `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(script.href)}) })`, eval: true }
}

export function createHashPool(options: HashPoolOptions = {}): HashPool {
  const maxThreads = Math.max(1, options.threads ?? Math.min(4, availableParallelism() - 1))
  const maxQueue = Math.max(0, options.maxQueue ?? 64)
  const threads: Thread[] = []
  const waiting: Job[] = []
  let closed = false
  let entry: ReturnType<typeof workerEntry> | undefined

  const startThread = (): Thread => {
    entry ??= workerEntry()
    const worker = new Worker(entry.code, { eval: entry.eval })
    const thread: Thread = { worker, job: undefined }
    worker.on('message', (answer: HashAnswer) => {
      const job = thread.job
      thread.job = undefined
      // An idle thread never keeps the process alive; one at work does, as a pending read would.
      worker.unref()
      if (job !== undefined) {
        if (answer.ok) job.resolve(answer.value)
        else job.reject(new Error(answer.message))
      }
      next()
    })
    const lost = (error: Error): void => {
      const index = threads.indexOf(thread)
      if (index >= 0) threads.splice(index, 1)
      thread.job?.reject(error)
      thread.job = undefined
      if (!closed) next()
    }
    worker.on('error', lost)
    worker.on('exit', (code) => lost(new Error(`the password hashing thread stopped (exit code ${code})`)))
    worker.unref()
    threads.push(thread)
    return thread
  }

  const next = (): void => {
    while (waiting.length > 0) {
      const thread = threads.find((candidate) => candidate.job === undefined) ?? (threads.length < maxThreads ? startThread() : undefined)
      if (thread === undefined) return
      const job = waiting.shift() as Job
      thread.job = job
      thread.worker.ref()
      thread.worker.postMessage(job.message)
    }
  }

  const run = (message: HashJob): Promise<string | boolean> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new Error('the password hashing pool is closed'))
      const busy = threads.filter((thread) => thread.job !== undefined).length
      if (busy >= maxThreads && waiting.length >= maxQueue) return reject(new HashPoolFull(waiting.length))
      waiting.push({ message, resolve, reject })
      next()
    })

  return {
    async hash(password, cost = DEFAULT_COST, version = '2a') {
      if (typeof password !== 'string') throw new TypeError('a password is a string')
      if (!Number.isInteger(cost) || cost < MIN_COST || cost > MAX_COST) throw new RangeError(`a bcrypt cost is an integer from ${MIN_COST} to ${MAX_COST}, not ${cost}`)
      if (!['2a', '2b', '2y'].includes(version)) throw new RangeError(`a bcrypt version is 2a, 2b or 2y, not ${String(version)}`)
      return (await run({ kind: 'hash', password, cost, version })) as string
    },
    async verify(password, hash) {
      parseHash(hash)
      if (typeof password !== 'string') return false
      return (await run({ kind: 'verify', password, hash })) as boolean
    },
    async close() {
      closed = true
      const error = new Error('the password hashing pool is closed')
      for (const job of waiting.splice(0)) job.reject(error)
      await Promise.all(threads.splice(0).map((thread) => {
        thread.job?.reject(error)
        thread.job = undefined
        return thread.worker.terminate()
      }))
    },
    get size() {
      return { threads: threads.length, waiting: waiting.length }
    },
  }
}
