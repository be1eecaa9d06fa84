import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { freePort } from '../spec/support/postgres.ts'
import { jsonServer1Package } from './json-server-1/install.ts'
import { requestOnce } from './processes.ts'
import { DOCUMENT_PATH, itemDoc } from './workloads.ts'

/**
 * json-server, the one way the bench starts it: 1.0 (from bench/json-server-1/,
 * installed there on first use) or 0.17 (the root's `json-server-017` alias),
 * as its users start it (`json-server db.json`), so that restdir can be
 * measured beside it in the same run. No NODE_ENV is set, as its users start
 * it, so 1.0 watches db.json for edits.
 */
export type JsonServerVersion = '0.17' | '1.0'

export interface JsonServer {
  port: number
  pid: number
  stop(): Promise<void>
}

/** The posts in the db.json of writeJsonServerDb. */
export const POSTS = 1000

/**
 * A db.json in `folder` holding the bench's one generic document and POSTS
 * documents in /posts: every POST json-server answers rewrites that whole
 * file, which grows as it runs. Returns the file's path.
 */
export async function writeJsonServerDb(folder: string, documentBody: Buffer): Promise<string> {
  const file = join(folder, 'db.json')
  const [, collection, id] = DOCUMENT_PATH.split('/')
  const db = {
    [collection]: [{ ...JSON.parse(documentBody.toString()), id }],
    posts: Array.from({ length: POSTS }, (_, n) => ({ id: String(n + 1), ...itemDoc(n) })),
  }
  await writeFile(file, JSON.stringify(db, null, 2))
  return file
}

const STARTED_WITHIN_MS = 60_000

/**
 * json-server `version` serving `file` (its folder as the working directory), once `ready` answers 200.
 * `watch: false` starts 1.0 with NODE_ENV=production, which turns off its watch of the file: the
 * watch re-reads 1.0's own writes, and a re-read that lands after the next write undoes that write,
 * so requests that write one after another, compared one by one, need it off.
 */
export async function startJsonServer(version: JsonServerVersion, file: string, ready: string, options: { watch?: boolean } = {}): Promise<JsonServer> {
  const bin = await binOf(version)
  const port = await freePort()
  // 0.17 logs every request unless told not to; 1.0 logs to stdout, which is not read.
  const quiet = version === '0.17' ? ['--quiet'] : []
  const child = spawn(process.execPath, [bin, file, '--port', String(port), '--host', '127.0.0.1', ...quiet], {
    cwd: dirname(file),
    env: options.watch === false ? { ...process.env, NODE_ENV: 'production' } : process.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let errors = ''
  child.stderr!.on('data', (chunk) => (errors += chunk))
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`json-server ${version} exited (${code}): ${errors}`))))
  exited.catch(() => {}) // heard by the start-up loop below; an exit after it (the bench's stop) is expected
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    })
  for (let waited = 0; ; waited += 100) {
    const answer = await Promise.race([requestOnce(port, 'GET', ready).catch(() => undefined), exited])
    if (answer?.status === 200) break
    if (waited > STARTED_WITHIN_MS) {
      await stop()
      throw new Error(`json-server ${version} did not answer ${ready} within ${STARTED_WITHIN_MS / 1000} s${answer ? ` (${answer.status})` : ''}: ${errors}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { port, pid: child.pid!, stop }
}

/** The command's script: neither version exports its bin's path, so its package.json names it. */
async function binOf(version: JsonServerVersion): Promise<string> {
  const folder = version === '1.0' ? await jsonServer1Package() : dirname(createRequire(import.meta.url).resolve('json-server-017/package.json'))
  const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')) as { bin: string | Record<string, string> }
  return join(folder, typeof manifest.bin === 'string' ? manifest.bin : manifest.bin['json-server'])
}
