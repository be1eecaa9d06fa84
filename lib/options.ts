import path from 'node:path'
import type { Store } from './store/store.ts'
import { defaultBodyLimits, type BodyLimits } from './http/body.ts'
import { defaultPathLimits, type PathLimits } from './path.ts'
import { parseCorsList, type GuardSettings } from './http/guards.ts'
import { packageRoot } from './package.ts'
import { defaultListingLimits, type ListingLimits } from './listing/filters.ts'
import { defaultChangeWindow, type ChangeWindow } from './data/changes.ts'
import { defaultStaticCache } from './http/static-cache.ts'

/** Options of `createHandler` and `createServer`; they mirror the command line. */
export interface RestdirOptions {
  /** A folder for a FileStore (default `./store`, or a MemoryStore when `fixture` is given), a `postgres://` URL for a PostgresStore, or any Store. */
  store?: string | Store
  /**
   * A json-server db.json or a store folder: the store starts from it and
   * `POST /?_reset` or `reset()` puts it back (README, "Resetting between tests").
   */
  fixture?: string
  /** Folder of static files (default: the bundled playground). */
  www?: string
  /**
   * What is kept in memory of the www folder's files (README, "Speed"): file contents up to
   * `maxBytes` in all (default 16 MiB), each up to `maxFileBytes` (default 64 KiB); `false` keeps
   * nothing and checks the disk on every request.
   */
  wwwCache?: { maxBytes?: number; maxFileBytes?: number } | false
  /** URL prefix of the data API, e.g. `/api` (default: none, the API is at `/`). */
  prefix?: string
  /** fsync every write (file and directory) before answering. */
  sync?: boolean
  /** Largest request body in bytes (default 1 MiB). */
  maxBody?: number
  /** Deepest JSON nesting accepted in a body (default 64). */
  maxJsonDepth?: number
  /** Longest path, longest segment and most segments (defaults 8192, 1024, 32). */
  maxPathLength?: number
  maxSegmentLength?: number
  maxPathDepth?: number
  /**
   * The address the server listens on (default 127.0.0.1), for the DNS-rebinding
   * guard. createServer learns it by itself once listening; pass it to createHandler
   * when embedding restdir in a server bound elsewhere (otherwise each request is
   * judged by the local address of its connection).
   */
  host?: string
  /** Origins allowed CORS besides loopback ones: `*`, or a list such as `https://a.example`. */
  cors?: string | string[]
  /** Every write needs `Authorization: Bearer <token>`. */
  token?: string
  /** Refuse every write with 405. */
  readonly?: boolean
  /** Milliseconds a client has to send the request headers (default 10 000) and the whole request (default 30 000). */
  headersTimeout?: number
  requestTimeout?: number
  /** Most event streams open at once (default 1000). */
  maxStreams?: number
  /** Most `_sort` fields (default 8) and filter values, `q` included (default 32), in one listing query. */
  maxSortKeys?: number
  maxFilters?: number
  /** Changes kept for event streams that resume and for `?_changes`: most changes (default 1000) and most bytes (default 16 MiB). */
  changeWindow?: number
  changeWindowBytes?: number
  /** Bytes an event stream may have waiting for a slow reader before it is closed (default 8 MiB, or 4 × maxBody when larger). */
  maxStreamBuffer?: number
  /** Milliseconds to wait before every data answer, to see a front end's loading states (default 0). */
  delay?: number
  /** No request log. */
  quiet?: boolean
  /** Where the request log goes (default: console.log). */
  log?: (line: string) => void
}

/** Options resolved to the values the server uses. */
export interface Settings {
  www: string
  wwwCache: { maxBytes: number; maxFileBytes: number } | false
  prefix: string
  /** The fixture's path, when resets are on. */
  fixture?: string
  sync: boolean
  delay: number
  bodyLimits: BodyLimits
  pathLimits: PathLimits
  listingLimits: ListingLimits
  guards: GuardSettings
  timeouts: Timeouts
  maxStreams: number
  changeWindow: ChangeWindow
  maxStreamBuffer: number
  log?: (line: string) => void
}

export interface Timeouts {
  /** Milliseconds to receive the request headers, and the whole request (node:http's headersTimeout, requestTimeout). */
  headers: number
  request: number
}

export const defaultTimeouts: Timeouts = { headers: 10_000, request: 30_000 }
export const defaultMaxStreams = 1000
/** Below node's own write buffer (16 KiB) a stream would be closed before it ever waits for a reader. */
const minStreamBuffer = 64 * 1024

export const bundledWww = path.join(packageRoot, 'www')

export function resolveSettings(options: RestdirOptions): Settings {
  // A reset reads the fixture once and rewrites the store: the two must be apart.
  if (options.fixture !== undefined && typeof options.store === 'string' && path.resolve(options.fixture) === path.resolve(options.store)) {
    throw new Error(`fixture: ${options.fixture} is also the store folder; a fixture must be another folder or a db.json.`)
  }
  return {
    www: path.resolve(options.www ?? bundledWww),
    wwwCache: resolveWwwCache(options.wwwCache),
    prefix: normalizePrefix(options.prefix ?? ''),
    fixture: options.fixture === undefined ? undefined : path.resolve(options.fixture),
    sync: options.sync ?? false,
    delay: options.delay ?? 0,
    bodyLimits: {
      maxBody: options.maxBody ?? defaultBodyLimits.maxBody,
      maxDepth: options.maxJsonDepth ?? defaultBodyLimits.maxDepth,
    },
    pathLimits: {
      maxPathLength: options.maxPathLength ?? defaultPathLimits.maxPathLength,
      maxSegmentLength: options.maxSegmentLength ?? defaultPathLimits.maxSegmentLength,
      maxDepth: options.maxPathDepth ?? defaultPathLimits.maxDepth,
    },
    listingLimits: {
      maxSortKeys: positive('maxSortKeys', options.maxSortKeys ?? defaultListingLimits.maxSortKeys),
      maxFilters: positive('maxFilters', options.maxFilters ?? defaultListingLimits.maxFilters),
    },
    guards: {
      host: options.host,
      cors: parseCorsList(options.cors),
      token: options.token,
      readonly: options.readonly ?? false,
    },
    timeouts: resolveTimeouts(options),
    maxStreams: positive('maxStreams', options.maxStreams ?? defaultMaxStreams),
    changeWindow: {
      maxChanges: positive('changeWindow', options.changeWindow ?? defaultChangeWindow.maxChanges),
      maxBytes: positive('changeWindowBytes', options.changeWindowBytes ?? defaultChangeWindow.maxBytes),
    },
    maxStreamBuffer: Math.max(minStreamBuffer, positive('maxStreamBuffer', options.maxStreamBuffer
      ?? Math.max(8 * 1024 * 1024, 4 * (options.maxBody ?? defaultBodyLimits.maxBody)))),
    log: options.quiet ? undefined : (options.log ?? ((line) => console.log(line))),
  }
}

function resolveWwwCache(option: RestdirOptions['wwwCache']): Settings['wwwCache'] {
  if (option === false) return false
  return {
    maxBytes: nonNegative('wwwCache.maxBytes', option?.maxBytes ?? defaultStaticCache.maxBytes),
    maxFileBytes: nonNegative('wwwCache.maxFileBytes', option?.maxFileBytes ?? defaultStaticCache.maxFileBytes),
  }
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a number of bytes, 0 or more (got ${value}).`)
  return value
}

function resolveTimeouts(options: RestdirOptions): Timeouts {
  const request = positive('requestTimeout', options.requestTimeout ?? defaultTimeouts.request)
  // node:http refuses a headers time-out longer than the request time-out; the request one bounds both.
  const headers = Math.min(positive('headersTimeout', options.headersTimeout ?? defaultTimeouts.headers), request)
  return { headers, request }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number (got ${value}).`)
  return value
}

/**
 * The one reading of an API prefix, for the library and the command line alike:
 * `api`, `/api/` and `/api` all mean `/api`, `/` and `` mean no prefix. A prefix is
 * matched against decoded segments (README, "The playground form: `--prefix /api`"),
 * so a segment that is a dot-segment (RFC 3986 §5.2.4) or holds `%`, `?`, `#`, `\`
 * or white space could never be reached as written; it is refused, not guessed at.
 */
export function normalizePrefix(prefix: string, name = 'prefix'): string {
  const segments = prefix.split('/').filter(Boolean)
  if (segments.some((segment) => segment === '.' || segment === '..' || /[?#%\\\s]/.test(segment))) {
    throw new RangeError(`${name} "${prefix}" is not a plain path such as /api (no "." or ".." segment, no %, ?, #, \\ or white space).`)
  }
  return segments.length === 0 ? '' : '/' + segments.join('/')
}
