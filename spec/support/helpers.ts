import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { statSync, utimesSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createServer, type RestdirServer } from '../../lib/server.ts'
import type { RestdirOptions } from '../../lib/options.ts'
import { importDatabase } from '../../lib/data/import.ts'
import { FileStore, MemoryStore, PostgresStore, type Store } from '../../lib/store/index.ts'
import { freshSchema } from './postgres.ts'
import type { NodePath } from '../../lib/store/store.ts'

export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: any
}

export interface TestServer {
  url: string
  port: number
  /** The temporary store folder (when the test did not pass its own store). */
  dir: string
  server: RestdirServer
  request(method: string, target: string, options?: RequestOptions): Promise<Answer>
  /** Shuts the server down; `keep` leaves the store folder for a restart. */
  close(keep?: boolean): Promise<void>
}

export interface RequestOptions {
  /** An object or array is sent as JSON with Content-Type: application/json; a string or Buffer as is. */
  body?: unknown
  headers?: Record<string, string>
}

export async function makeTempDir(prefix = 'restdir-'): Promise<string> {
  return mkdtemp(path.join(tmpdir(), prefix))
}

/**
 * Which store a test server gets when the test names none: a temporary folder
 * (FileStore), a MemoryStore when RESTDIR_TEST_STORE=memory, or a PostgresStore
 * on a fresh schema of the run's database when RESTDIR_TEST_STORE=postgres
 * (spec/run.mjs starts one PostgreSQL server for that pass, see spec/support/postgres.ts,
 * and passes its database in RESTDIR_TEST_POSTGRES_URL). spec/run.mjs runs every
 * spec that uses `startServer` or `openTestStore` once with each, so the whole
 * API is held to the same answers on every store. A test that looks at the
 * files passes its own `store` folder.
 *
 * The MemoryStore of that pass waits a moment before and after each operation,
 * and inside each write between its checks and its change (see
 * memoryStoreWaitingOnIo), as a disk does, so requests that race interleave on
 * it too: a store that never waits would run each request's read and write back
 * to back, and a race test would pass even without the locks it is about.
 */
export const testStoreKind: 'file' | 'memory' | 'postgres' =
  process.env.RESTDIR_TEST_STORE === 'memory' ? 'memory' : process.env.RESTDIR_TEST_STORE === 'postgres' ? 'postgres' : 'file'

/** A PostgresStore on a fresh schema of the run's database; `dispose` closes it and drops the schema. */
async function openPostgresTestStore(): Promise<{ store: Store; dispose(): Promise<void> }> {
  const database = process.env.RESTDIR_TEST_POSTGRES_URL
  if (!database) throw new Error('RESTDIR_TEST_STORE=postgres needs RESTDIR_TEST_POSTGRES_URL: run the specs through spec/run.mjs.')
  const schema = await freshSchema(database)
  const store = await PostgresStore.open(schema.url, { maxConnections: 4, log: () => {} })
  return {
    store,
    async dispose() {
      await store.close()
      await schema.drop()
    },
  }
}

/** A fresh store of the kind this run tests (see testStoreKind), for tests that build their own handler; `dispose` closes and removes it. */
export async function openTestStore(): Promise<{ store: Store; dispose(): Promise<void> }> {
  if (testStoreKind === 'memory') {
    const store = memoryStoreWaitingOnIo()
    return { store, dispose: () => store.close() }
  }
  if (testStoreKind === 'postgres') return openPostgresTestStore()
  const dir = await makeTempDir()
  const store = await FileStore.open(dir)
  return {
    store,
    async dispose() {
      await store.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * The declaration file the servers of this run are started with, when a pass of spec/run.mjs
 * gives one (RESTDIR_TEST_RESOURCES): the same specs then hold for families declared in a file.
 */
export const testResources = process.env.RESTDIR_TEST_RESOURCES || undefined

/** Starts restdir on port 0 with a fresh temporary store (or the given options), on loopback unless told another address. */
export async function startServer(options: RestdirOptions = {}, listenHost = '127.0.0.1'): Promise<TestServer> {
  const dir = typeof options.store === 'string' ? options.store : await makeTempDir()
  const postgres = options.store === undefined && testStoreKind === 'postgres' ? await openPostgresTestStore() : undefined
  const defaultStore = postgres?.store ?? (testStoreKind === 'memory' ? memoryStoreWaitingOnIo() : dir)
  const server = createServer({ quiet: true, resources: testResources, ...options, store: options.store ?? defaultStore })
  await server.ready
  await new Promise<void>((resolve) => server.listen(0, listenHost, resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    server,
    request: (method, target, requestOptions) => send(port, method, target, requestOptions),
    async close(keep = false) {
      await server.shutdown()
      if (!keep && typeof options.store !== 'string') await rm(dir, { recursive: true, force: true })
      if (!keep) await postgres?.dispose()
    },
  }
}

/**
 * Starts restdir (as startServer, with `options`) on a fresh store of this run's kind (openTestStore)
 * holding `db`, imported as `restdir --import db.json` imports it; `close` disposes of the store too.
 */
export async function startServerWithData(db: object, options: RestdirOptions = {}): Promise<TestServer> {
  const { store, dispose } = await openTestStore()
  await importDatabase(store, structuredClone(db))
  const server = await startServer({ store, ...options })
  return {
    ...server,
    async close() {
      await server.close()
      await dispose()
    },
  }
}

/** One HTTP request with the path sent exactly as given (no client-side normalization). */
export function send(port: number, method: string, target: string, options: RequestOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers }
  let payload: Buffer | undefined
  if (options.body !== undefined) {
    if (typeof options.body === 'string' || Buffer.isBuffer(options.body)) payload = Buffer.from(options.body as string)
    else {
      payload = Buffer.from(JSON.stringify(options.body))
      headers['content-type'] ??= 'application/json'
    }
    headers['content-length'] ??= String(payload.length)
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: target, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try {
          json = text === '' ? undefined : JSON.parse(text)
        } catch {
          json = undefined
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/**
 * Starts restdir on a fresh temporary folder whatever RESTDIR_TEST_STORE says:
 * for specs about the HTTP layer, which meets a request before any store does
 * (spec/run.mjs then runs them once, not once per store). `close` removes the folder.
 */
export async function startServerOnFolder(options: RestdirOptions = {}, listenHost = '127.0.0.1'): Promise<TestServer> {
  const dir = await makeTempDir()
  const server = await startServer({ ...options, store: dir }, listenHost)
  return {
    ...server,
    async close(keep = false) {
      await server.close()
      if (!keep) await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A person's change lands a moment after the server's last one: moves a file's
 * or folder's mtime on by two seconds, so the store sees it changed whatever
 * the file system's clock granularity.
 */
export function touchLater(path: string): void {
  const { atime, mtime } = statSync(path)
  utimesSync(path, atime, new Date(mtime.getTime() + 2000))
}

/** The operations of a Store that name a node. */
export type StoreOperation = 'read' | 'readText' | 'children' | 'documentChildren' | 'exists' | 'write' | 'create' | 'remove' | 'query' | 'batch'

export interface StoreHooks {
  /** Runs before an operation reaches the store. */
  before?(operation: StoreOperation, path: NodePath): void | Promise<void>
  /** Runs once the store answered, before the caller gets the answer. */
  after?(operation: StoreOperation, path: NodePath): void | Promise<void>
}

/** A Store that passes every call to `inner`, with `hooks` around each; it has the optional methods `inner` has. */
export function wrapStore(inner: Store, hooks: StoreHooks): Store {
  const around = async <T>(operation: StoreOperation, path: NodePath, run: () => Promise<T>): Promise<T> => {
    await hooks.before?.(operation, path)
    const result = await run()
    await hooks.after?.(operation, path)
    return result
  }
  const store: Store = {
    read: (path) => around('read', path, () => inner.read(path)),
    children: (path) => around('children', path, () => inner.children(path)),
    exists: (path) => around('exists', path, () => inner.exists(path)),
    write: (path, doc, conditions) => around('write', path, () => inner.write(path, doc, conditions)),
    create: (path, doc, conditions) => around('create', path, () => inner.create(path, doc, conditions)),
    remove: (path, conditions) => around('remove', path, () => inner.remove(path, conditions)),
    close: () => inner.close(),
  }
  const { readText, documentChildren, subscribe, lastChangeId, query, batch } = inner
  if (batch) store.batch = (ops, staged) => around('batch', ops[0]?.path ?? [], () => batch.call(inner, ops, staged))
  if (subscribe) store.subscribe = (listener) => subscribe.call(inner, listener)
  if (lastChangeId) store.lastChangeId = () => lastChangeId.call(inner)
  if (query) store.query = (path, plan) => around('query', path, () => query.call(inner, path, plan))
  if (readText) store.readText = (path) => around('readText', path, () => readText.call(inner, path))
  if (documentChildren) {
    store.documentChildren = (path, start, end) => around('documentChildren', path, () => documentChildren.call(inner, path, start, end))
  }
  return store
}

/**
 * A MemoryStore that waits as a store on a disk does, outside its operations
 * (storeWaitingOnIo) and inside each write and removal, between its checks and
 * its change: a race test on it fails when the store's own locks are taken out.
 * A write waits `writeWait` milliseconds inside (at random between the two).
 */
export function memoryStoreWaitingOnIo(writeWait: [number, number] = [1, 5]): Store {
  const [least, most] = writeWait
  // A removal takes a whole subtree off the disk: it waits longer than a write.
  const pause = (operation: 'write' | 'remove') =>
    new Promise<void>((resolve) => setTimeout(resolve, operation === 'remove' ? 10 + Math.random() * 10 : least + Math.random() * (most - least)))
  return storeWaitingOnIo(new MemoryStore({ pause }))
}

/**
 * Options for a server on which racing requests overlap inside the store: on
 * the memory pass its writes wait 10 to 20 ms between their checks and their
 * change, longer than requests that each open a connection take to arrive one
 * after the other; other passes get the helpers' usual store.
 */
export function racingStoreOptions(): RestdirOptions {
  return testStoreKind === 'memory' ? { store: memoryStoreWaitingOnIo([10, 20]) } : {}
}

/**
 * `inner`, waiting before and after each operation as a store on a disk does:
 * zero to two turns of the event loop, and a millisecond or two once a read
 * has its answer. Other requests run meanwhile, so requests that race overlap
 * their reads and writes, as they do on the file store.
 */
export function storeWaitingOnIo(inner: Store): Store {
  const turns = async () => {
    for (let count = Math.floor(Math.random() * 3); count > 0; count--) await new Promise((resolve) => setImmediate(resolve))
  }
  const afterRead = (operation: StoreOperation) =>
    operation === 'read' || operation === 'readText' ? new Promise((resolve) => setTimeout(resolve, Math.random() * 2)).then(() => {}) : turns()
  return wrapStore(inner, { before: turns, after: afterRead })
}

/**
 * Runs a full garbage collection, so that a test's reading of the process's
 * memory (process.memoryUsage) is of what is still held, not of garbage not yet
 * collected. The specs run without --expose-gc: the flag is set here, and V8
 * hands the function to a new context.
 */
export function collectGarbage(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}
