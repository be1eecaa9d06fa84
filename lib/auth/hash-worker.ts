import { parentPort } from 'node:worker_threads'
import { hashPassword, verifyPassword, type BcryptVersion } from './bcrypt.ts'

// One thread of the hash pool (lib/auth/hash-pool.ts): it takes one job at a
// time and answers with its result, or with the message of what it threw.

/** What the pool sends. */
export type HashJob =
  | { kind: 'hash'; password: string; cost: number; version: BcryptVersion }
  | { kind: 'verify'; password: string; hash: string }

/** What the thread answers. */
export type HashAnswer = { ok: true; value: string | boolean } | { ok: false; message: string }

parentPort?.on('message', (job: HashJob) => {
  let answer: HashAnswer
  try {
    answer = { ok: true, value: job.kind === 'hash' ? hashPassword(job.password, job.cost, undefined, job.version) : verifyPassword(job.password, job.hash) }
  } catch (error) {
    answer = { ok: false, message: error instanceof Error ? error.message : String(error) }
  }
  parentPort?.postMessage(answer)
})
