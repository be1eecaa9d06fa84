import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { freePort } from '../spec/support/postgres.ts'
import { requestOnce } from './processes.ts'
import { DOCUMENT_PATH, itemDoc } from './workloads.ts'

/**
 * json-server 1.0 (a dev dependency, the one the dialect tests compare
 * with), started as its users start it (`json-server db.json`), so that GET
 * of one document and POST can be measured beside restdir's in the same run.
 * No NODE_ENV is set, as its users start it, so it watches db.json for edits.
 * Its db.json holds the bench's one generic document and POSTS documents in
 * /posts: every POST rewrites that whole file, which grows as it runs.
 */
export const POSTS = 1000

export interface JsonServer {
  port: number
  pid: number
  stop(): Promise<void>
}

export async function startJsonServer(folder: string, documentBody: Buffer): Promise<JsonServer> {
  const file = join(folder, 'db.json')
  const [, collection, id] = DOCUMENT_PATH.split('/')
  const db = {
    [collection]: [{ ...JSON.parse(documentBody.toString()), id }],
    posts: Array.from({ length: POSTS }, (_, n) => ({ id: String(n + 1), ...itemDoc(n) })),
  }
  await writeFile(file, JSON.stringify(db, null, 2))
  // The package exports no bin path: its package.json names it.
  const require = createRequire(import.meta.url)
  const packageFile = require.resolve('json-server/package.json')
  const bin = join(dirname(packageFile), (require(packageFile) as { bin: Record<string, string> }).bin['json-server'])
  const port = await freePort()
  const child = spawn(process.execPath, [bin, file, '--port', String(port), '--host', '127.0.0.1'], {
    cwd: folder,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let errors = ''
  child.stderr!.on('data', (chunk) => (errors += chunk))
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`json-server exited (${code}): ${errors}`))))
  exited.catch(() => {}) // heard by the start-up loop below; an exit after it (the bench's stop) is expected
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    })
  for (let waited = 0; ; waited += 100) {
    const answer = await Promise.race([requestOnce(port, 'GET', DOCUMENT_PATH).catch(() => undefined), exited])
    if (answer?.status === 200) break
    if (waited > 20_000) {
      await stop()
      throw new Error(`json-server did not answer ${DOCUMENT_PATH} within 20 s${answer ? ` (${answer.status})` : ''}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { port, pid: child.pid!, stop }
}
