import path from 'node:path'
import type { Settings, Timeouts } from './http/settings.ts'
import type { Store } from './store/store.ts'
import { defaultBodyLimits } from './http/body.ts'
import { defaultPathLimits } from './path.ts'
import { parseCorsList } from './http/guards.ts'
import { packageRoot } from './package.ts'
import { defaultListingLimits } from './listing/filters.ts'
import { defaultChangeWindow } from './data/changes.ts'
import { defaultStaticCache } from './static/static-cache.ts'
import { loadDeclarations, type Declarations, type Family } from './data/declarations.ts'
import { loadRewriteRules, type RewriteRules } from './middleware/rewrite.ts'
import type { Middleware } from './middleware/middlewares.ts'
import { isJsonFileLocation } from './store/open.ts'

/**
 * Options of `createHandler` and `createServer`; they mirror the command line, whose
 * table of flags (lib/cli/options-table.ts, printed in docs/cli.md) names each one's
 * flag. The defaults are `optionDefaults` below.
 */
export interface RestdirOptions {
  /** A folder for a FileStore (default `optionDefaults.store`, or a MemoryStore when `fixture` is given), a `postgres://` URL for a PostgresStore, or any Store. */
  store?: string | Store
  /**
   * A json-server db.json or a store folder: the store starts from it and
   * `POST /?_reset` or `reset()` puts it back (docs/http-api.md, "Resetting between tests").
   */
  fixture?: string
  /** Folder of static files (default: the bundled playground), or several: the first that has a file answers. */
  www?: string | string[]
  /**
   * What is kept in memory of the www folder's files (docs/speed.md, "Speed"): file contents up to
   * `maxBytes` in all, each up to `maxFileBytes` (defaults: `defaultStaticCache`,
   * lib/static/static-cache.ts); `false` keeps nothing and checks the disk on every request.
   */
  wwwCache?: { maxBytes?: number; maxFileBytes?: number } | false
  /** URL prefix of the data API, e.g. `/api` (none: the API is at `/`). */
  prefix?: string
  /** fsync every write (file and directory) before answering. */
  sync?: boolean
  /** Largest request body in bytes. */
  maxBody?: number
  /** Deepest JSON nesting accepted in a body. */
  maxJsonDepth?: number
  /** Longest path, longest segment and most segments. */
  maxPathLength?: number
  maxSegmentLength?: number
  maxPathDepth?: number
  /**
   * The address the server listens on (the command line's `--host`), for the DNS-rebinding
   * guard. createServer learns it by itself once listening; pass it to createHandler
   * when embedding restdir in a server bound elsewhere (otherwise each request is
   * judged by the local address of its connection).
   */
  host?: string
  /** Origins allowed CORS besides loopback ones: `*`, or a list such as `https://a.example`; `false` sends no CORS headers at all. */
  cors?: string | string[] | false
  /** Every write needs `Authorization: Bearer <token>`. */
  token?: string
  /** Refuse every write with 405 (403 in the json-server mode, as json-server's `--read-only`). */
  readonly?: boolean
  /**
   * Accounts and access rules (docs/accounts.md): on a db.json json-server-auth's flow (register and
   * log in for a token, guards such as `/600/…`); on the declared families the users family's
   * accounts, each user owning their subtree. Tokens are signed with `authSecret`, else with the
   * store's own secret (beside a db.json or in a store folder, owner-only; a table on PostgreSQL).
   */
  auth?: boolean
  /** The secret that signs `auth`'s tokens, at least 32 characters (the command line's `--auth-secret`, `RESTDIR_AUTH_SECRET`). */
  authSecret?: string
  /** Milliseconds a client has to send the request headers, and the whole request. */
  headersTimeout?: number
  requestTimeout?: number
  /** Most event streams open at once. */
  maxStreams?: number
  /** Most `_sort` fields, and most filter values (`q` included), in one listing query. */
  maxSortKeys?: number
  maxFilters?: number
  /** Changes kept for event streams that resume and for `?_changes`: most changes, and most bytes. */
  changeWindow?: number
  changeWindowBytes?: number
  /** Bytes an event stream may have waiting for a slow reader before it is closed (or 4 × maxBody when that is larger). */
  maxStreamBuffer?: number
  /** Milliseconds to wait before every data answer, to see a front end's loading states. */
  delay?: number
  /**
   * json-server 0.17's URL semantics beside restdir's own (docs/json-server.md, "The json-server
   * mode"): nested routes, cascading deletes, singular resources, integer ids, `GET /db`, `_delay`.
   * Default: on for a `db.json` store, off for every other (see jsonServerModeFor). `'1'` answers
   * as json-server 1.0 does where it differs from 0.17 (docs/json-server.md, "json-server 1.0's
   * mode"); `true` and `'0.17'` are 0.17's.
   */
  jsonServer?: boolean | '0.17' | '1'
  /**
   * What follows a collection's singular name in a foreign key, as json-server's
   * `--foreignKeySuffix`: `Id` (`postId`) unless told otherwise (`_id`: `post_id`), for nested
   * routes, `_embed`, `_expand` and cascading deletes.
   */
  foreignKeySuffix?: string
  /**
   * The field naming each item of a collection in the json-server mode, as json-server's `--id`:
   * `id` unless told otherwise (`_id`): the URL `/posts/1` is the post whose `_id` is 1, `POST`
   * gives the next `_id`, relations and cascades follow it. A db.json's items are named by it.
   */
  idField?: string
  /**
   * The declared resource families (docs/http-api.md, "Declaring resources"): an object as a
   * declaration file holds it, the path of such a file, or `'none'`. Default: the seed's users
   * and playlists (`seedDeclarations`, lib/data/declarations.ts), except on a db.json store, which
   * is its own declaration: none (docs/json-server.md, "Serving a db.json").
   */
  resources?: Declarations | string
  /**
   * json-server 0.17's rewrite rules (docs/json-server.md, "Rewrite rules"): an object of pattern →
   * target, as a routes.json holds it, or the path of such a file; applied before anything else answers.
   */
  routes?: RewriteRules | string
  /**
   * The app's own `(req, res, next)` middlewares, run in order before the data API with `req.body`
   * parsed as json-server's bodyParser parses it (docs/json-server.md, "Middlewares").
   */
  middlewares?: readonly Middleware[]
  /** No request log. */
  quiet?: boolean
  /** Where the request log goes (default: console.log). */
  log?: (line: string) => void
}

/** Options resolved to the values the server uses. */
export type { Settings }

export const bundledWww = path.join(packageRoot, 'www')

/**
 * What each option is when not given: written here once, or named from the module whose
 * limit it is. resolveSettings applies them; the command line's table of options
 * (lib/cli/options-table.ts) prints them in --help and docs/cli.md.
 */
export const optionDefaults = {
  store: './store',
  www: bundledWww,
  prefix: '',
  sync: false,
  maxBody: defaultBodyLimits.maxBody,
  delay: 0,
  foreignKeySuffix: 'Id',
  idField: 'id',
  readonly: false,
  maxPathLength: defaultPathLimits.maxPathLength,
  maxSegmentLength: defaultPathLimits.maxSegmentLength,
  maxPathDepth: defaultPathLimits.maxDepth,
  maxJsonDepth: defaultBodyLimits.maxDepth,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  maxStreams: 1000,
  maxSortKeys: defaultListingLimits.maxSortKeys,
  maxFilters: defaultListingLimits.maxFilters,
  changeWindow: defaultChangeWindow.maxChanges,
  changeWindowBytes: defaultChangeWindow.maxBytes,
  /** Or 4 × maxBody, when that is larger. */
  maxStreamBuffer: 8 * 1024 * 1024,
  quiet: false,
} satisfies RestdirOptions

/** Below node's own write buffer (16 KiB) a stream would be closed before it ever waits for a reader. */
const minStreamBuffer = 64 * 1024

export function resolveSettings(options: RestdirOptions): Settings {
  // A reset reads the fixture once and rewrites the store: the two must be apart.
  if (options.fixture !== undefined && typeof options.store === 'string' && path.resolve(options.fixture) === path.resolve(options.store)) {
    throw new Error(`fixture: ${options.fixture} is also the store folder; a fixture must be another folder or a db.json.`)
  }
  const jsonServer = jsonServerModeFor(options, typeof options.store === 'string' ? options.store : undefined)
  if (options.auth) checkAuthOptions(options, jsonServer)
  const families = loadDeclarations(options.resources ?? (servesDbJson(options.store) ? 'none' : undefined))
  if (options.auth && !servesDbJson(options.store)) checkAccountsFamily(families)
  return {
    www: [options.www ?? optionDefaults.www].flat().map((folder) => path.resolve(folder)),
    wwwCache: resolveWwwCache(options.wwwCache),
    prefix: normalizePrefix(options.prefix ?? optionDefaults.prefix),
    fixture: options.fixture === undefined ? undefined : path.resolve(options.fixture),
    families,
    sync: options.sync ?? optionDefaults.sync,
    delay: options.delay ?? optionDefaults.delay,
    jsonServer,
    jsonServerVersion: jsonServerVersionOf(options),
    foreignKeySuffix: foreignKeySuffixOf(options.foreignKeySuffix ?? optionDefaults.foreignKeySuffix),
    idField: idFieldOf(options.idField ?? optionDefaults.idField),
    bodyLimits: {
      maxBody: options.maxBody ?? optionDefaults.maxBody,
      maxDepth: options.maxJsonDepth ?? optionDefaults.maxJsonDepth,
    },
    pathLimits: {
      maxPathLength: options.maxPathLength ?? optionDefaults.maxPathLength,
      maxSegmentLength: options.maxSegmentLength ?? optionDefaults.maxSegmentLength,
      maxDepth: options.maxPathDepth ?? optionDefaults.maxPathDepth,
    },
    listingLimits: {
      maxSortKeys: positive('maxSortKeys', options.maxSortKeys ?? optionDefaults.maxSortKeys),
      maxFilters: positive('maxFilters', options.maxFilters ?? optionDefaults.maxFilters),
    },
    guards: {
      host: options.host,
      cors: parseCorsList(options.cors),
      // Under --auth a user's write carries their own token; the server's is the administrator's, checked by the access check.
      token: options.auth ? undefined : options.token,
      readonly: options.readonly ?? optionDefaults.readonly,
      // json-server's read-only refuses with 403 (docs/json-server.md, "Its command line").
      readonlyStatus: jsonServer ? 403 : 405,
      // json-server 0.17 names its own exposed headers, on its own answers only (docs/json-server.md).
      exposeOwn: !(jsonServer && jsonServerVersionOf(options) === '0.17'),
    },
    timeouts: resolveTimeouts(options),
    maxStreams: positive('maxStreams', options.maxStreams ?? optionDefaults.maxStreams),
    changeWindow: {
      maxChanges: positive('changeWindow', options.changeWindow ?? optionDefaults.changeWindow),
      maxBytes: positive('changeWindowBytes', options.changeWindowBytes ?? optionDefaults.changeWindowBytes),
    },
    maxStreamBuffer: Math.max(minStreamBuffer, positive('maxStreamBuffer', options.maxStreamBuffer
      ?? Math.max(optionDefaults.maxStreamBuffer, 4 * (options.maxBody ?? optionDefaults.maxBody)))),
    log: (options.quiet ?? optionDefaults.quiet) ? undefined : (options.log ?? ((line) => console.log(line))),
    rewrites: loadRewriteRules(options.routes, { guards: options.auth === true }),
    auth: options.auth === true,
    authSecret: options.authSecret,
    adminToken: options.auth ? options.token : undefined,
    middlewares: checkMiddlewares(options.middlewares ?? []),
  }
}

/**
 * `auth` serves json-server-auth's flow on a db.json, in the json-server 0.17 mode its users run
 * (docs/accounts.md); the declared families' accounts are not served yet. `token` would ask every
 * write for the server's key, where a signed-in user sends their own token.
 */
function checkAuthOptions(options: RestdirOptions, jsonServer: boolean): void {
  // On a store folder, memory or PostgreSQL the declared families hold the accounts (docs/accounts.md, "The declared families").
  if (!servesDbJson(options.store)) {
    if (jsonServer) throw new Error('auth: on a store folder, memory or PostgreSQL, --auth serves the declared families (POST /user, POST /login); json-server-auth\'s flow is served on a db.json: drop --json-server.')
    return
  }
  if (!jsonServer || jsonServerVersionOf(options) !== '0.17') throw new Error('auth: accounts follow json-server-auth, which runs on json-server 0.17: --auth needs the json-server mode as 0.17 answers (no --no-json-server, no --json-server 1).')
  if (options.token !== undefined) throw new Error('auth: --token and --auth cannot be used together yet: a user\'s write carries their own token, not the server\'s.')
}

/** `auth` on the declared families: the accounts are a top-level family keeping `username` unique, and `/login` is not a family's. */
function checkAccountsFamily(families: readonly Family[]): void {
  if (!families.some((family) => !family.parent && family.unique[0] === 'username')) {
    throw new Error('auth: --auth keeps its accounts in a top-level family whose unique field is "username", as the seed\'s user is ({"user": {"id": "user_id", "unique": ["username"]}}); declare one in --resources.')
  }
  if (families.some((family) => !family.parent && family.collection === 'login')) throw new Error('auth: under --auth, POST /login logs in; name the family "login" otherwise.')
}

/** A foreign key suffix is part of a field name: not empty, and no `.` (a path) or `/` (a URL). */
function foreignKeySuffixOf(suffix: string): string {
  if (suffix === '' || /[./]/.test(suffix) || suffix.length > 64) {
    throw new Error(`foreignKeySuffix: ${JSON.stringify(suffix.slice(0, 80))} cannot end a field name; give the text that follows a singular name in a foreign key, such as Id or _id.`)
  }
  return suffix
}

/** An id field is a plain field name: not empty, no `.` (a path) or `/` (a URL). */
function idFieldOf(field: string): string {
  if (field === '' || /[./]/.test(field) || field.length > 64) {
    throw new Error(`id: ${JSON.stringify(field.slice(0, 80))} is not a field name; give the field that names each item, such as id or _id.`)
  }
  return field
}

/**
 * A db.json is its own declaration (docs/json-server.md, "Serving a db.json"): its top-level keys
 * are its resources, as json-server reads them, and the seed's users and playlists are a store
 * folder's default, not the file's.
 */
function servesDbJson(store: RestdirOptions['store']): boolean {
  return typeof store === 'string' ? isJsonFileLocation(store) : store?.resources !== undefined
}

/**
 * Whether json-server's URL semantics are on (docs/json-server.md, "The json-server mode"): as
 * the option says, else on exactly when the store is a json-server database file (`restdir db.json`),
 * whose front ends were written against json-server. The one place that default is decided.
 */
export function jsonServerModeFor(options: Pick<RestdirOptions, 'jsonServer'>, storeLocation: string | undefined): boolean {
  if (options.jsonServer !== undefined) return options.jsonServer !== false
  return storeLocation !== undefined && /\.json5?$/i.test(storeLocation)
}

function checkMiddlewares(middlewares: readonly Middleware[]): Middleware[] {
  middlewares.forEach((middleware, index) => {
    if (typeof middleware !== 'function') throw new TypeError(`middlewares[${index}] is ${typeof middleware}; a middleware is a function (req, res, next).`)
  })
  return [...middlewares]
}

/** Which json-server the mode answers as: 0.17, npm's `json-server`, unless 1.0 is asked for by name. */
export function jsonServerVersionOf(options: Pick<RestdirOptions, 'jsonServer'>): '0.17' | '1' {
  const asked: unknown = options.jsonServer
  if (asked === '1') return '1'
  if (asked === undefined || typeof asked === 'boolean' || asked === '0.17') return '0.17'
  throw new RangeError(`jsonServer must be true, false, '0.17' or '1' (got ${JSON.stringify(asked)}).`)
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
  const request = positive('requestTimeout', options.requestTimeout ?? optionDefaults.requestTimeout)
  // node:http refuses a headers time-out longer than the request time-out; the request one bounds both.
  const headers = Math.min(positive('headersTimeout', options.headersTimeout ?? optionDefaults.headersTimeout), request)
  return { headers, request }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number (got ${value}).`)
  return value
}

/**
 * The one reading of an API prefix, for the library and the command line alike:
 * `api`, `/api/` and `/api` all mean `/api`, `/` and `` mean no prefix. A prefix is
 * matched against decoded segments (docs/cli.md, "The playground form: `--prefix /api`"),
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
