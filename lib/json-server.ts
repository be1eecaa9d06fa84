import { existsSync } from 'node:fs'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'
import { createHandler, type Next, type RestdirHandler } from './handler.ts'
import type { RestdirOptions } from './options.ts'
import { packageRoot } from './package.ts'
import { MemoryStore } from './store/memory.ts'
import { importDatabase } from './data/import.ts'
import { answerRules, asksForRules, compileRewriteRules, rewriteTarget, type RewriteRules } from './middleware/rewrite.ts'
import { defaultBodyLimits, parseBodyForMiddlewares } from './http/body.ts'
import { answerByGuards, parseCorsList } from './http/guards.ts'
import { applyHeaders } from './http/respond.ts'
import { StaticFiles } from './static/static.ts'
import { sendProblem, toHttpError } from './http/problem.ts'
import { HttpError } from './http-error.ts'
import { queryObject } from './middleware/express-like.ts'
import { splitPath } from './path.ts'
import { Mirror, type LowDatabase } from './json-server-db.ts'

/**
 * `restdir/json-server`: json-server 0.17's module (`require('json-server')`) for Express apps, each
 * part a Connect middleware, so that its README's examples run with only the import changed
 * (docs/json-server.md, "The json-server module"): `create()`, `router(fileOrData)` with its `render`
 * and `db`, `defaults()`, `rewriter(rules)` and `bodyParser`.
 */

/** A Connect/Express middleware, as Express's `app.use` takes it. */
export type ConnectMiddleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void

/** json-server's bodyParser limit for JSON bodies (its json-server/lib/server/body-parser.js: `limit: '10mb'`). */
const BODY_LIMITS = { ...defaultBodyLimits, maxBody: 10 * 1024 * 1024 }

/** json-server's router serves no static files (its defaults() do): a www folder that does not exist serves none. */
const NO_STATIC_FILES = path.join(packageRoot, '.no-static-files')

/**
 * The Express app `create()` makes. restdir carries no Express types (it depends on nothing), so its
 * members are left open, as a JavaScript caller sees them.
 */
export interface ExpressApp {
  use(...handlers: unknown[]): ExpressApp
  listen(...args: unknown[]): Server
  // Express's many other members (get, post, set, …), as Express's own types would give them.
  [member: string]: any
}

/**
 * An Express app, as json-server's `create()` makes it (`express().set('json spaces', 2)`). restdir
 * depends on nothing, Express included: it is the app's own, found from the app's folder.
 */
export function create(): ExpressApp {
  let express: (() => ExpressApp) | undefined
  for (const from of [path.join(process.cwd(), 'package.json'), path.join(packageRoot, 'package.json')]) {
    try {
      express = createRequire(from)('express')
      break
    } catch {
      // not installed there; try the next folder
    }
  }
  if (express === undefined) throw new Error('create() makes an Express app, and Express is not installed: npm install express (restdir itself depends on nothing).')
  const app = express()
  app.set('json spaces', 2)
  return app
}

export interface Router extends ConnectMiddleware {
  /** Resolves once the data is loaded and the store open. */
  ready: Promise<void>
  /** Closes the store (and a db.json's lock). */
  close(): Promise<void>
  handler: RestdirHandler
  /**
   * json-server's `router.render(req, res)`: replaced by the app, it is given each answer json-server
   * passes through it, its data in `res.locals.data` (see renderThrough).
   */
  render: (req: any, res: any) => void
  /** json-server's `router.db`: lowdb 1 over the router's store (lib/json-server-db.ts). */
  readonly db: LowDatabase
}

/** json-server 0.17's own render (its router/index.js): the data as JSON. */
function jsonServerRender(_req: unknown, res: any): void {
  res.jsonp(res.locals.data)
}

/**
 * json-server's router: a db.json served as `restdir db.json` serves it (the json-server mode, every
 * change written back into the file), or an object of collections held in memory, seeded with a copy of it.
 * `options` are restdir's own (docs/library.md, "Options").
 */
export function router(source: string | Record<string, unknown>, options: RestdirOptions = {}): Router {
  const shared: RestdirOptions = { jsonServer: true, quiet: true, maxBody: BODY_LIMITS.maxBody, www: NO_STATIC_FILES, ...options }
  let handler: RestdirHandler
  let opening: Promise<void>
  if (typeof source === 'string') {
    handler = createHandler({ ...shared, store: source })
    opening = handler.ready
  } else {
    const store = new MemoryStore()
    const seeding = importDatabase(store, structuredClone(source), { force: true })
    handler = createHandler({ ...shared, store })
    opening = Promise.all([seeding, handler.ready]).then(() => {})
  }
  const mirror = new Mirror(handler.settings.idField)
  const loading = opening.then(() => mirror.load(handler.documents!))
  loading.catch(() => {}) // reported to each request, and through `ready`
  const middleware = ((req: IncomingMessage, res: ServerResponse, next: Next) => {
    // A router.db write() is stored before the next request is answered, which so sees it.
    loading.then(() => mirror.settled).then(() => {
      if (middleware.render === jsonServerRender) handler(req, res, next)
      else renderThrough(middleware.render, handler, req, res, next)
    }, (error: unknown) => next(error))
  }) as Router
  middleware.ready = loading
  middleware.handler = handler
  middleware.close = () => handler.close()
  middleware.render = jsonServerRender
  Object.defineProperty(middleware, 'db', { get: () => mirror.database(), enumerable: true })
  return middleware
}

/** Headers of restdir's answer that are not the rendered answer's: its body is the app's render's, and Express tags it. */
const NOT_RENDERED = new Set(['content-type', 'content-length', 'etag', 'last-modified'])

/**
 * The app's own `router.render` given each answer json-server 0.17 passes through its render (its
 * router/index.js): a listing, an item, a singular resource, what a POST, PUT, PATCH or DELETE answers,
 * with `res.locals.data` the data, the status and headers (X-Total-Count, Link, Location, CORS) already
 * set; and a `404` with `{}` as its data, for anything the router does not hold. The others are
 * restdir's as they are: `GET /db` (json-server answers it without render), an event stream,
 * a refusal other than 404 (json-server's are its error handler's `500`, never rendered).
 */
function renderThrough(render: (req: any, res: any) => void, handler: RestdirHandler, req: IncomingMessage, res: ServerResponse, next: Next): void {
  const method = req.method ?? 'GET'
  const pathname = (req.url ?? '/').split('?')[0]
  const accept = req.headers.accept ?? ''
  const reads = method === 'GET' || method === 'HEAD'
  const passes = reads && (/^\/db\/?$/.test(pathname) || accept.includes('text/event-stream') || /[?&]_changes(=|&|$)/.test(req.url ?? ''))
  if (passes) return handler(req, res, next)
  const writeHead = res.writeHead
  const end = res.end
  let head: { status: number; headers: unknown } | undefined
  // A HEAD is asked as the GET it answers (restdir's HEAD carries no data), and rendered as a HEAD: Express
  // sends the rendered answer's headers without its body, as it does for json-server's.
  if (method === 'HEAD') req.method = 'GET'
  const restore = () => {
    res.writeHead = writeHead
    res.end = end
    req.method = method
  }
  const renderData = (status: number, data: unknown, headers: Array<[string, string]>) => {
    restore()
    for (const [name, value] of headers) {
      if (NOT_RENDERED.has(name.toLowerCase())) continue
      const before = res.getHeader(name)
      // A name given twice (Vary) keeps both values, as setHeader would have been asked twice.
      res.setHeader(name, before === undefined || name.toLowerCase() !== 'vary' ? value : `${before}, ${value}`)
    }
    for (const name of NOT_RENDERED) res.removeHeader(name)
    res.statusCode = status
    const express = res as ServerResponse & { locals?: Record<string, unknown> }
    express.locals ??= {}
    express.locals.data = data
    try {
      render(req, res)
    } catch (error) {
      next(error)
    }
  }
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    head = { status, headers: rest.find((part) => typeof part === 'object') }
    return res
  }) as typeof res.writeHead
  res.end = ((body?: unknown) => {
    const status = head?.status ?? res.statusCode
    const headers = headerPairs(head?.headers)
    const type = String(headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? res.getHeader('content-type') ?? '')
    if (status === 404) return renderData(404, {}, headers)
    if (status >= 200 && status < 300 && type.startsWith('application/json') && body !== undefined) {
      try {
        return renderData(status, JSON.parse(String(body)), headers)
      } catch {
        // not JSON after all: sent as it is
      }
    }
    restore()
    if (head) res.writeHead(head.status, head.headers as any)
    return res.end(body as any)
  }) as typeof res.end
  // json-server's router hands nothing on: what it does not hold is its 404, rendered.
  handler(req, res, (error?: unknown) => (error === undefined ? ((res.statusCode = 404), res.end()) : (restore(), next(error))))
}

/** The headers given to writeHead, a flat list of names and values or an object, as pairs. */
function headerPairs(headers: unknown): Array<[string, string]> {
  if (Array.isArray(headers)) {
    const pairs: Array<[string, string]> = []
    for (let index = 0; index + 1 < headers.length; index += 2) pairs.push([String(headers[index]), String(headers[index + 1])])
    return pairs
  }
  if (headers && typeof headers === 'object') return Object.entries(headers).map(([name, value]) => [name, String(value)])
  return []
}

export interface DefaultsOptions {
  /** A folder of static files (default: `./public` when it exists, else restdir's playground). */
  static?: string
  /** A log line for each request (default: true). */
  logger?: boolean
  /** json-server's bodyParser (default: false, as json-server's defaults() has it). */
  bodyParser?: boolean
  /** No CORS: restdir's own CORS answers (loopback origins, docs/http-api.md, "Security") are left out. */
  noCors?: boolean
  /** Accepted: restdir does not compress. */
  noGzip?: boolean
  /** Every request but a GET is refused with 403, as json-server's readOnly refuses it. */
  readOnly?: boolean
}

/**
 * json-server's defaults(): CORS, static files, a request log, its no-cache headers, read-only, and
 * with `bodyParser: true` its bodyParser, as an array of middlewares (Express's `use` takes an array).
 */
export function defaults(options: DefaultsOptions = {}): ConnectMiddleware[] {
  const middlewares: ConnectMiddleware[] = []
  if (!options.noCors) {
    // restdir's own CORS, not json-server's every-origin-with-credentials (docs/json-server.md, "CORS in the mode");
    // like json-server's, it names no exposed headers: the router's answers name 0.17's own.
    const guards = { cors: parseCorsList(undefined), readonly: false, exposeOwn: false }
    middlewares.push(guarded((req, res, next) => {
      const headers: string[] = []
      if (answerByGuards(req, res, guards, headers)) return
      applyHeaders(res, headers)
      next()
    }))
  }
  const publicFolder = path.resolve('public')
  const files = new StaticFiles(options.static ?? (existsSync(publicFolder) ? publicFolder : path.join(packageRoot, 'www')))
  middlewares.push(guarded((req, res, next) => {
    const url = req.url ?? '/'
    files.serve(req, res, splitPath(url)).then((served) => served || next(), next)
  }))
  if (options.logger ?? true) {
    middlewares.push((req, res, next) => {
      const started = performance.now()
      const target = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url
      res.on('finish', () => console.log(`${req.method} ${target} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`))
      next()
    })
  }
  // json-server's no-cache headers (for Internet Explorer, its comment says).
  middlewares.push((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-cache')
    res.setHeader('Pragma', 'no-cache')
    res.setHeader('Expires', '-1')
    next()
  })
  if (options.readOnly) {
    middlewares.push((req, res, next) => {
      if (req.method === 'GET') return next()
      sendProblem(res, new HttpError(403, `This server is read-only (readOnly): it answers GET only, never ${req.method}.`))
    })
  }
  if (options.bodyParser) middlewares.push(bodyParser)
  return middlewares
}

/**
 * json-server's rewriter(rules): each rule rewrites `req.url` (and `req.originalUrl`, as
 * express-urlrewrite does) in order, and `GET /__rules` answers the rules. A rule that cannot work
 * throws here, naming it (lib/middleware/rewrite.ts).
 */
export function rewriter(rules: RewriteRules): ConnectMiddleware {
  const compiled = compileRewriteRules(rules, 'rewriter')
  return (req, res, next) => {
    const request = req as IncomingMessage & { originalUrl?: string; query?: unknown }
    const url = req.url ?? '/'
    if ((req.method === 'GET' || req.method === 'HEAD') && asksForRules(url)) return answerRules(res, compiled, [], req.method)
    const rewritten = rewriteTarget(compiled, url)
    if (rewritten !== url) {
      req.url = request.originalUrl = rewritten
      // express-urlrewrite reads the query again when the new target has one.
      if (rewritten.includes('?')) request.query = queryObject(rewritten)
    }
    next()
  }
}

/**
 * json-server's bodyParser: `req.body` is the JSON (10 MiB at most) or form body parsed, or `{}`
 * (lib/http/body.ts, parseBodyForMiddlewares); a body it cannot parse goes to `next(error)` with
 * its status (400, 413), as body-parser hands it on.
 */
export const bodyParser: ConnectMiddleware = (req, _res, next) => {
  parseBodyForMiddlewares(req, BODY_LIMITS).then(() => next(), (error: unknown) => next(error))
}

/** A middleware whose refusal (an HttpError thrown) is answered as problem+json, as restdir answers it. */
function guarded(middleware: ConnectMiddleware): ConnectMiddleware {
  return (req, res, next) => {
    try {
      middleware(req, res, next)
    } catch (error) {
      sendProblem(res, toHttpError(error), req.method === 'HEAD')
    }
  }
}

export default { create, router, defaults, rewriter, bodyParser }
