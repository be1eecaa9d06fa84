import { readFileSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { RestdirOptions } from '../../lib/options.ts'
import { makeTempDir, send, startServer, type Answer, type RequestOptions, type TestServer } from './helpers.ts'

/*
 * json-server 0.17.4 and `restdir db.json` side by side: the same db.json is
 * copied for each, json-server is started as its command line starts it
 * (lib/cli/run.js: create(), defaults(), router(file, { foreignKeySuffix }),
 * `router.db._.id = argv.id`), in this process on port 0, and restdir serves
 * its own copy as `restdir db.json` does. Each request goes to both.
 */

const require = createRequire(import.meta.url)

export interface JsonServerOptions {
  /** json-server's `--id`. */
  id?: string
  /** json-server's `--foreignKeySuffix`. */
  foreignKeySuffix?: string
}

export interface Side {
  port: number
  file: string
  request(method: string, target: string, options?: RequestOptions): Promise<Answer>
  /** The db.json as it is now, parsed. */
  data(): unknown
}

export interface Pair {
  jsonServer: Side
  restdir: Side & { server: TestServer }
  /** The same request to both: json-server's answer, then restdir's. */
  both(method: string, target: string, options?: RequestOptions): Promise<[Answer, Answer]>
  close(): Promise<void>
}

/** Starts json-server 0.17.4 and restdir on two copies of `text` (a db.json's text). */
export async function startPair(text: string, options: JsonServerOptions & { restdir?: RestdirOptions } = {}): Promise<Pair> {
  const dir = await makeTempDir('restdir-pair-')
  const theirFile = join(dir, 'json-server', 'db.json')
  const ourFile = join(dir, 'restdir', 'db.json')
  for (const file of [theirFile, ourFile]) {
    await import('node:fs/promises').then((fs) => fs.mkdir(join(file, '..'), { recursive: true }))
    writeFileSync(file, text)
  }
  const jsonServer = await startJsonServer(theirFile, options)
  const server = await startServer({ ...options.restdir, store: ourFile })
  const side = (port: number, file: string) => ({
    port,
    file,
    request: (method: string, target: string, requestOptions?: RequestOptions) => send(port, method, target, requestOptions),
    data: () => JSON.parse(readFileSync(file, 'utf8')) as unknown,
  })
  const restdir = { ...side(server.port, ourFile), server }
  const theirs = side(jsonServer.port, theirFile)
  return {
    jsonServer: theirs,
    restdir,
    async both(method, target, requestOptions) {
      const first = await theirs.request(method, target, requestOptions)
      const second = await restdir.request(method, target, requestOptions)
      return [first, second]
    },
    async close() {
      await server.close()
      await jsonServer.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

async function startJsonServer(file: string, options: JsonServerOptions): Promise<{ port: number; close(): Promise<void> }> {
  const jsonServer = require('json-server')
  const app = jsonServer.create()
  const router = jsonServer.router(file, options.foreignKeySuffix ? { foreignKeySuffix: options.foreignKeySuffix } : undefined)
  app.use(jsonServer.defaults({ logger: false, bodyParser: true }))
  router.db._.id = options.id ?? 'id'
  app.use(router)
  const server: Server = await new Promise((resolve) => {
    const listening: Server = app.listen(0, '127.0.0.1', () => resolve(listening))
  })
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
