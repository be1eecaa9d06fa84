import { buildRequest } from './load.ts'

/**
 * What the benchmark asks of restdir, each as a stream of requests plus the
 * body a bare server would answer with (the ceiling's answer).
 */
export interface Workload {
  name: string
  /** One line for the report. */
  description: string
  connections: number
  /** The restdir started plain, with `--sync` (the command then widens Node's thread pool to 32), or with `--sync` on Node's default pool of 4. */
  server: 'plain' | 'sync' | 'sync-pool4'
  nextRequest: (connection: number) => Buffer
  /** What the ceiling server answers every request with: the same body restdir gives. */
  ceilingBody: Buffer
  ceilingType?: string
  /** Also measured against sirv serving the same www folder (static files). */
  sirv?: boolean
  /** Also measured against json-server 1.0 serving the same request from its db.json (bench/json-server.ts). */
  jsonServer?: boolean
  /** The file-system ceiling this write workload is compared with, besides the HTTP one. */
  writeCeiling?: 'create' | 'replace' | 'replace-sync'
  /** Also measured against the ceiling slowed to restdir's own rate (see ceilingAtRate in bench/run.ts). */
  ceilingAtRate?: boolean
  /** Also measured against the bare HTTP read server, which answers each GET from its document's file as restdir does (bench/ceiling-server.ts). */
  bareRead?: boolean
}

/** The store the workloads run on, as the bench filled it. */
export interface Fixture {
  /** The big collection: `/items/<id>` for every id, ids in ascending order. */
  itemIds: string[]
  userId: string
  /** Exact bodies restdir answered once, so the ceiling answers byte for byte the same. */
  userBody: Buffer
  documentBody: Buffer
  pageBody: Buffer
  /** The first page of 20 in json-server 1.0's envelope. */
  envelopeBody: Buffer
  smallFile: Buffer
  largeFile: Buffer
}

export const COLLECTION = 'items'
export const DOCUMENT_PATH = '/notes/welcome'
export const SMALL_FILE = 'small.txt'
export const LARGE_FILE = 'large.bin'
/** Connections of the static-file workloads: many browsers' worth of page assets at once. */
const STATIC_CONNECTIONS = 50
/** Writes go round this many existing documents: enough that concurrent writes rarely queue on one node. */
const HOT_SET = 1000

/** The n-th document of the big collection: about 200 bytes, like a typical fake-back-end record. */
export function itemDoc(n: number): Record<string, unknown> {
  return {
    title: `Item number ${n}`,
    price: (n * 37) % 1000,
    inStock: n % 3 !== 0,
    tags: ['bench', `group-${n % 10}`],
    createdAt: new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString(),
    description: 'A plain record of the kind a front-end developer fakes a back end with.',
  }
}

export function itemId(n: number): string {
  return 'i' + String(n).padStart(6, '0')
}

export function defineWorkloads(fixture: Fixture): Workload[] {
  const hot = fixture.itemIds.slice(0, HOT_SET)
  const counter = { value: 0 }
  const nextOf = (requests: Buffer[]) => () => requests[counter.value++ % requests.length]
  const gets = hot.map((id) => buildRequest('GET', `/${COLLECTION}/${id}`))
  const puts = hot.map((id, n) => buildRequest('PUT', `/${COLLECTION}/${id}`, { ...itemDoc(n), revision: 1 }))
  const patches = hot.map((id, n) => buildRequest('PATCH', `/${COLLECTION}/${id}`, { price: n, revision: 2 }))
  const post = buildRequest('POST', '/posts', itemDoc(0))
  const postItem = buildRequest('POST', `/${COLLECTION}`, itemDoc(0))
  const page = buildRequest('GET', `/${COLLECTION}?_limit=20`)
  const putAnswer = Buffer.from(JSON.stringify({ id: hot[0], ...itemDoc(0), revision: 1 }))
  const random = (requests: Buffer[]) => requests[Math.floor(Math.random() * requests.length)]
  const allGets = fixture.itemIds.map((id) => buildRequest('GET', `/${COLLECTION}/${id}`))
  // Documents read often enough to be hot, five times as many as a store watches (lib/store/file/watched-hits.ts).
  const hotSet = allGets.slice(0, 5000)

  return [
    {
      name: 'get-user',
      description: 'GET one user, /user/:user_id',
      connections: 10,
      server: 'plain',
      nextRequest: nextOf([buildRequest('GET', `/user/${fixture.userId}`)]),
      ceilingBody: fixture.userBody,
    },
    {
      name: 'get-document',
      description: `GET one generic document, ${DOCUMENT_PATH}`,
      connections: 10,
      server: 'plain',
      nextRequest: nextOf([buildRequest('GET', DOCUMENT_PATH)]),
      ceilingBody: fixture.documentBody,
      jsonServer: true,
    },
    {
      name: 'get-random',
      description: `GET a random document of all ${fixture.itemIds.length} (mostly not in any cache)`,
      connections: 10,
      server: 'plain',
      nextRequest: () => random(allGets),
      ceilingBody: fixture.documentBody,
      ceilingAtRate: true,
      bareRead: true,
    },
    {
      name: 'list-page',
      description: `GET /${COLLECTION}?_limit=20 of a ${fixture.itemIds.length}-document collection`,
      connections: 10,
      server: 'plain',
      nextRequest: nextOf([buildRequest('GET', `/${COLLECTION}?_limit=20`)]),
      ceilingBody: fixture.pageBody,
    },
    {
      name: 'page-v1',
      description: `GET /${COLLECTION}?_page=1&_per_page=20, json-server 1.0's page, of the same collection`,
      connections: 10,
      server: 'plain',
      nextRequest: nextOf([buildRequest('GET', `/${COLLECTION}?_page=1&_per_page=20`)]),
      ceilingBody: fixture.envelopeBody,
    },
    // After the pages: its watches, busy until it ends, would leave theirs waiting a moment (WATCH_IDLE_MS).
    {
      name: 'get-hot',
      description: `GET a random document of ${hotSet.length}: more than the store watches, fewer than it caches`,
      connections: 10,
      server: 'plain',
      nextRequest: () => random(hotSet),
      ceilingBody: fixture.documentBody,
    },
    {
      name: 'post',
      description: 'POST a new document to /posts',
      connections: 100,
      server: 'plain',
      nextRequest: () => post,
      ceilingBody: Buffer.from(JSON.stringify({ id: '0000000000000', ...itemDoc(0) })),
      writeCeiling: 'create',
      jsonServer: true,
    },
    {
      name: 'put',
      description: `PUT over one of ${hot.length} existing documents`,
      connections: 100,
      server: 'plain',
      nextRequest: nextOf(puts),
      ceilingBody: putAnswer,
      writeCeiling: 'replace',
    },
    {
      name: 'put-sync',
      description: 'the same PUT, server started with --sync (the command runs it on a thread pool of 32)',
      connections: 100,
      server: 'sync',
      nextRequest: nextOf(puts),
      ceilingBody: putAnswer,
      writeCeiling: 'replace-sync',
    },
    {
      name: 'put-sync-pool4',
      description: "the same PUT with --sync on Node's default thread pool (UV_THREADPOOL_SIZE=4): what the pool of 32 buys",
      connections: 100,
      server: 'sync-pool4',
      nextRequest: nextOf(puts),
      ceilingBody: putAnswer,
      writeCeiling: 'replace-sync',
    },
    {
      name: 'patch',
      description: `PATCH one of ${hot.length} existing documents`,
      connections: 100,
      server: 'plain',
      nextRequest: nextOf(patches),
      ceilingBody: putAnswer,
      writeCeiling: 'replace',
    },
    {
      name: 'static-1k',
      description: `GET a 1 KiB static file, /${SMALL_FILE}, beside sirv serving the same folder`,
      connections: STATIC_CONNECTIONS,
      server: 'plain',
      sirv: true,
      nextRequest: nextOf([buildRequest('GET', `/${SMALL_FILE}`)]),
      ceilingBody: fixture.smallFile,
      ceilingType: 'text/plain; charset=utf-8',
    },
    {
      name: 'static-256k',
      description: `GET a 256 KiB static file, /${LARGE_FILE}, beside sirv serving the same folder`,
      connections: STATIC_CONNECTIONS,
      server: 'plain',
      sirv: true,
      nextRequest: nextOf([buildRequest('GET', `/${LARGE_FILE}`)]),
      ceilingBody: fixture.largeFile,
      ceilingType: 'application/octet-stream',
    },
    {
      name: 'mixed',
      description: `90% GET / 10% PUT over ${hot.length} documents, 100 connections`,
      connections: 100,
      server: 'plain',
      nextRequest: () => (Math.random() < 0.1 ? random(puts) : random(gets)),
      ceilingBody: putAnswer,
    },
    {
      // Last: its POSTs grow the big collection. Each changes the folder a page is listed from.
      name: 'list-while-posting',
      description: `90% GET /${COLLECTION}?_limit=20 / 10% POST to /${COLLECTION}, the ${fixture.itemIds.length}-document collection, 10 connections`,
      connections: 10,
      server: 'plain',
      nextRequest: () => (Math.random() < 0.1 ? postItem : page),
      ceilingBody: fixture.pageBody,
    },
  ]
}
