import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Answer, Answering, Context, RouteHandler } from './http/context.ts'
import type { Store } from './store/store.ts'
import { openStore } from './store/open.ts'
import { Documents } from './data/documents.ts'
import { HttpError } from './http-error.ts'
import { answersNotFound, sendProblem, toHttpError } from './http/problem.ts'
import { joinPath, pathPartOf, queryOf, splitPath } from './path.ts'
import { Router, type ListedRoute, type RouteMatch } from './http/router.ts'
import { optionDefaults, resolveSettings, type RestdirOptions, type Settings } from './options.ts'
import { StaticFolders } from './static/static-folders.ts'
import { eventsSent, serveChanges, wantsChanges } from './resources/events.ts'
import { keepChanges } from './data/changes.ts'
import { applyHeaders, noContent, writeAnswer } from './http/respond.ts'
import { handleGeneric } from './resources/generic.ts'
import { optionsHeaders } from './resources/patch.ts'
import { jsonServerGeneric } from './resources/json-server/mode.ts'
import { knowCollections } from './resources/json-server/collections.ts'
import { pushHandEdits } from './data/hand-edits.ts'
import { takeJsonServerParameters } from './resources/json-server/query.ts'
import { withErrorMember } from './resources/json-server/version-1.ts'
import { answerByGuards, originFormOf } from './http/guards.ts'
import { familyResources } from './resources/family.ts'
import { addDeclaredRoutes, ownersCheck } from './resources/declared.ts'
import { clientTargetOf, mountPathOf } from './http/mount.ts'
import { loadFixture, resetter, type ResetSummary } from './data/reset.ts'
import { answerReset } from './resources/reset.ts'
import { describeStore, storeHeaderValue, type StoreDescription } from './static/store-header.ts'
import { inConnectionOrder } from './http/connection-order.ts'
import { setTimeout as sleep } from 'node:timers/promises'
import { answerRules, asksForRules, rewriteTarget } from './middleware/rewrite.ts'
import { runMiddlewares } from './middleware/middlewares.ts'
import { parseBodyForMiddlewares, SentBody } from './http/body.ts'
import type { Accounts, AccessAnswer } from './resources/accounts.ts'

/** Methods that change nothing (RFC 9110 §9.2.1): pipelined in a row, they may run side by side. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])

export type Next = (error?: unknown) => void

export interface RestdirHandler {
  (req: IncomingMessage, res: ServerResponse, next?: Next): void
  /** Resolves once the store is open; rejects when it cannot be (e.g. another restdir holds the folder). */
  ready: Promise<void>
  settings: Settings
  /** The declared routes (the seed's: users, playlists), each pattern with its methods, as the router holds them. */
  readonly routes: ListedRoute[]
  /** The data layer, once the store is open. */
  readonly documents: Documents | undefined
  /** How many event streams are open. */
  readonly openStreams: number
  /** Ends every open event stream (so connections can drain before a shutdown). */
  endStreams(): void
  /** Ends event streams and closes the store (releasing the file store's lock). */
  close(): Promise<void>
  /** Puts the store back to the fixture (docs/http-api.md, "Resetting between tests"); rejects when started without one. */
  reset(): Promise<ResetSummary>
}

/**
 * The whole of restdir as one request handler (docs/cli.md, "The playground
 * form: `--prefix /api`"; docs/library.md, "Using restdir as a library"):
 * declared resources first, then static files, then the generic data API. Usable with `node:http` and as
 * Connect/Express middleware.
 */
export function createHandler(options: RestdirOptions = {}): RestdirHandler {
  const settings = resolveSettings(options)
  const router = new Router<RouteHandler>(settings.pathLimits)
  const declaredResources = familyResources(settings.families)
  addDeclaredRoutes(router, declaredResources)
  const requireOwners = ownersCheck(declaredResources)
  // json-server 0.17's URL semantics, when on, answer the generic API's paths (docs/json-server.md, "The json-server mode").
  const generic = settings.jsonServer ? jsonServerGeneric(declaredResources.map((resource) => resource.collection), settings.jsonServerVersion) : handleGeneric
  const prefixSegments = settings.prefix.split('/').filter(Boolean)
  const prefixUrl = prefixSegments.length === 0 ? '' : joinPath(prefixSegments)
  const streams = new Set<() => void>()
  // 0.17's per-request parameters and headers; json-server 1.0 has neither, and its error bodies carry `"error"`.
  const jsonServer017 = settings.jsonServer && settings.jsonServerVersion === '0.17'
  const jsonServer1 = settings.jsonServer && settings.jsonServerVersion === '1'
  const genericResource: RouteHandler = (context) => generic(context, requireOwners)

  /**
   * The one way from a request to its answer, for a request from the network and for each request
   * of a batch (docs/http-api.md, "Batches"), which so reaches what it would reach alone: the
   * reserved queries of the API root, the declared routes with their methods (`405` with `Allow`,
   * OPTIONS), event streams, then the generic data API. A rule that must see every request goes
   * first here: with `--auth`, the access check (lib/resources/access.ts). A thrown error is the
   * request's problem answer (lib/http/problem.ts).
   */
  const dispatch = (context: Context): Answering => dispatchMatched(context, router.match(context.method, context.path))
  // The network's request comes with the router's match, made once; under `--auth` the guard is taken off the path first, and what is left is matched.
  const dispatchMatched = (context: Context, match: RouteMatch<RouteHandler> | undefined): Answering =>
    accounts ? answerWithAccess!(context, accounts, (inside) => dispatchAllowed(inside, router.match(inside.method, inside.path))) : dispatchAllowed(context, match)
  const dispatchAllowed = (context: Context, match: RouteMatch<RouteHandler> | undefined): Answering => {
    const { method, path, query } = context
    // Reserved queries on the API root, like `?_children`: the root holds no document they could hide.
    if (path.length === 0 && query.size > 0) {
      // The API description's builder loads on the first ask for it (docs/speed.md, "Start-up").
      if (query.has('_openapi')) return import('./resources/openapi.ts').then(({ answerOpenApi }) => answerOpenApi(context))
      if (query.has('_reset')) return answerReset(context, reset)
      if (query.has('_batch')) return import('./resources/batch.ts').then(({ answerBatch }) => answerBatch(context, dispatch))
    }
    if (method === 'OPTIONS' && settings.guards.readonly) return noContent({ Allow: 'GET, HEAD, OPTIONS' })
    if (!match) return wantsChanges(context) ? serveChanges(context, streams, genericResource) : genericResource(context)
    context.params = match.params
    if (wantsChanges(context)) return serveChanges(context, streams, match.handler)
    if (method === 'OPTIONS') return noContent(optionsHeaders(match.allow))
    if (!match.handler) throw new HttpError(405, `${method} is not allowed here; this URL answers ${match.allow.join(', ')}.`, { Allow: match.allow.join(', ') })
    return match.handler(context)
  }
  /** Whether the generic data API answers a request the router matched (`match`): no reserved query of the root, no declared route, no event stream. */
  const reachesGeneric = (context: Context, match: RouteMatch<RouteHandler> | undefined) => !asksRoot(context) && !match && !wantsChanges(context)
  const www = new StaticFolders(settings.www, settings.wwwCache)

  // With a fixture and no store named, the store lives in memory: nothing on disk is replaced by a reset.
  const location = options.store === undefined && settings.fixture !== undefined ? { memory: true as const } : options.store ?? optionDefaults.store
  const opening: Promise<Store> = typeof location === 'object' && !('memory' in location)
    ? Promise.resolve(location)
    : openStore(location, { sync: settings.sync, changeWindow: settings.changeWindow, families: settings.families, idField: settings.idField, asJsonServer1: jsonServer1 })
  const storeDescription = describeStore(location)
  let documents: Documents | undefined
  let reset: (() => Promise<ResetSummary>) | undefined
  let stopHandEdits = () => {}
  // The accounts of `--auth`, with the db.json's signing secret (docs/accounts.md).
  let accounts: Accounts | undefined
  let answerWithAccess: AccessAnswer | undefined
  const ready = opening.then(async (store) => {
    if (settings.auth) {
      // Hashing, tokens and the access rules' answers load only under --auth (docs/speed.md, "Start-up").
      const [{ openAccounts, openFamilyAccounts }, access, familyAccess] = await Promise.all([import('./resources/accounts.ts'), import('./resources/access.ts'), import('./resources/family-access.ts')])
      accounts = settings.jsonServer
        ? await openAccounts({ file: typeof location === 'string' ? location : undefined, secret: settings.authSecret })
        : await openFamilyAccounts(store, settings.families.find((family) => !family.parent && family.unique[0] === 'username')!, settings.authSecret)
      answerWithAccess = accounts.family ? familyAccess.answerWithFamilyAccess : access.answerWithAccess
    }
    const opened = await Documents.open(store)
    keepChanges(opened, settings.changeWindow)
    if (settings.jsonServer) knowCollections(opened) // a collection emptied from now on is still one (docs/json-server.md)
    stopHandEdits = pushHandEdits(opened, () => streams.size > 0) // a store folder's, to the open event streams
    if (settings.fixture !== undefined) {
      reset = resetter(await loadFixture(settings.fixture, settings.families), () => opened)
      await reset() // the store starts from the fixture
    }
    documents = opened
  })
  ready.catch(() => {}) // reported through `ready`; requests meanwhile get a 503

  async function handle(req: IncomingMessage, res: ServerResponse, next: Next | undefined, headers: string[]): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase()
    const sent = originFormOf(req)
    // json-server's rewrite rules come before anything else answers (docs/json-server.md, "Rewrite rules").
    let target = settings.rewrites.length === 0 ? sent : (req.url = rewriteTarget(settings.rewrites, sent))
    let segments = splitPath(target, settings.pathLimits)
    let apiPath = belowPrefix(segments, prefixSegments)
    const base = mountPathOf(req) + prefixUrl
    // As middleware, what lies outside the prefix belongs to the host app, which guards its own.
    const hostAppsRequest = apiPath === undefined && next !== undefined
    if (!hostAppsRequest && answerByGuards(req, res, settings.guards, headers)) return
    if (settings.rewrites.length > 0 && (method === 'GET' || method === 'HEAD') && asksForRules(sent)) return answerRules(res, settings.rewrites, headers, method)

    if (apiPath === undefined) {
      // Outside the API prefix everything is static (docs/cli.md, "The playground form: `--prefix /api`").
      if ((method === 'GET' || method === 'HEAD') && (await serveStaticFile(req, res, segments, www, base, storeDescription, headers))) return
      if (next) return next()
      throw new HttpError(404, `There is no file at ${pathPartOf(target)}; the data API is under ${base}/.`)
    }

    if (settings.middlewares.length > 0) {
      // json-server serves its static files before the app's middlewares, which then run before its data API.
      const mayBeStatic = prefixSegments.length === 0 && (method === 'GET' || method === 'HEAD') && www.mayServe(segments)
      if (mayBeStatic && (await serveStaticFile(req, res, segments, www, base, storeDescription, headers))) return
      applyHeaders(res, headers)
      await parseBodyForMiddlewares(req, settings.bodyLimits)
      if (await runMiddlewares(settings.middlewares, req, res)) return
      // A middleware may send the request elsewhere (`req.url = …`), as in json-server.
      if (req.url !== target) {
        target = originFormOf(req)
        segments = splitPath(target, settings.pathLimits)
        apiPath = belowPrefix(segments, prefixSegments)
        if (apiPath === undefined) throw new HttpError(404, `There is no file at ${pathPartOf(target)}; the data API is under ${base}/.`)
      }
    }
    if (!documents) await ready.catch(() => {
      throw new HttpError(503, 'The store could not be opened; see the server log.')
    })
    const context: Context = {
      method,
      path: apiPath,
      target: req.url ?? '/',
      base,
      params: Object.create(null),
      query: queryOf(target),
      requestHeaders: req.headers,
      connection: req.socket ?? {},
      body: new SentBody(req, settings.bodyLimits),
      headers,
      documents: documents!,
      settings,
    }
    // Matched once: whether a static file may answer, and what dispatch answers.
    const match = router.match(method, apiPath)
    // The mode's per-request `_delay`, its first `q` only, and json-server's no-cache headers.
    const delay = jsonServer017 ? takeJsonServerParameters(context.query) || settings.delay : settings.delay
    if (jsonServer017) headers.push('Cache-Control', 'no-cache', 'Pragma', 'no-cache', 'Expires', '-1')
    // A static file answers where the data API would (not a route's, an event stream's or the root's reserved queries);
    // `?_children` always asks the data API, even where a static file shares the path (`/?_children`).
    if (prefixSegments.length === 0 && (method === 'GET' || method === 'HEAD') && !context.query.has('_children')) {
      // Checked synchronously first: most data URLs name no file, and they need not wait for one.
      if (www.mayServe(segments) && reachesGeneric(context, match) && (await serveStaticFile(req, res, segments, www, base, storeDescription, headers))) return
    }
    // `--delay` holds back data answers, not event streams and the root's reserved queries.
    if (delay > 0 && !asksRoot(context) && !wantsChanges(context)) await sleep(delay)
    const answering = dispatchMatched(context, match)
    // A hot document's answer is written in the turn it was asked for.
    if (!(answering instanceof Promise)) return writeAnswer(res, answering, headers, method === 'HEAD')
    let answer: Answer
    try {
      answer = await answering
    } catch (error) {
      // As middleware, a read the data API finds nothing for (no document, no collection, no file) goes on to the next middleware.
      if (next && (method === 'GET' || method === 'HEAD') && answersNotFound(error) && !res.headersSent && reachesGeneric(context, match)) return next()
      throw error
    }
    writeAnswer(res, answer, headers, method === 'HEAD')
  }

  const handler = ((req: IncomingMessage, res: ServerResponse, next?: Next) => {
    // A request handed on with next() is the host app's to answer and to log.
    let handedOn = false
    const passOn = next && ((error?: unknown) => ((handedOn = true), next(error)))
    if (settings.log) {
      const log = settings.log
      const started = performance.now()
      const target = clientTargetOf(req)
      const line = () => `${req.method} ${target} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`
      res.on('finish', () => handedOn || eventsSent(res) !== undefined || log(line()))
      // An event stream is logged once, when it closes, with how many events it sent.
      res.on('close', () => eventsSent(res) !== undefined && log(`${line()} stream, ${eventsSent(res)} event${eventsSent(res) === 1 ? '' : 's'}`))
    }
    const headers: string[] = []
    const answer = () =>
      handle(req, res, passOn, headers).catch((error: unknown) => {
        const httpError = jsonServer1 ? withErrorMember(toHttpError(error)) : toHttpError(error)
        if (httpError.status === 500) console.error(error) // a fault; a refusal such as 503 (too many streams) is an answer
        if (!res.headersSent) applyHeaders(res, headers)
        sendProblem(res, httpError, req.method === 'HEAD')
      })
    inConnectionOrder(req.socket, SAFE_METHODS.has(req.method ?? 'GET'), answer)
  }) as RestdirHandler

  handler.ready = ready
  handler.settings = settings
  Object.defineProperty(handler, 'routes', { get: () => router.routes() })
  Object.defineProperty(handler, 'documents', { get: () => documents })
  Object.defineProperty(handler, 'openStreams', { get: () => streams.size })
  handler.endStreams = () => {
    for (const close of [...streams]) close()
  }
  handler.reset = async () => {
    await ready
    if (!reset) throw new Error('Resetting is off: pass a fixture (the fixture option, or --fixture) to reset the store.')
    return reset()
  }
  handler.close = async () => {
    stopHandEdits()
    handler.endStreams()
    www.close()
    await accounts?.hashes.close()
    if (documents) await documents.close()
    else await opening.then((store) => store.close(), () => {})
  }
  return handler
}

/** Does the request ask the API root's reserved queries (`?_openapi`, `?_reset`, `?_batch`)? */
function asksRoot(context: Context): boolean {
  const { query } = context
  return context.path.length === 0 && (query.has('_openapi') || query.has('_reset') || query.has('_batch'))
}

/** The segments below the API prefix, or undefined when the path is outside it. */
function belowPrefix(segments: string[], prefix: string[]): string[] | undefined {
  if (prefix.length === 0) return segments
  if (segments.length < prefix.length) return undefined
  for (let index = 0; index < prefix.length; index++) if (segments[index] !== prefix[index]) return undefined
  return segments.slice(prefix.length)
}

/**
 * Static files tell the page where the API is (`X-Restdir-Api`), so the playground works with or without a prefix or mount path,
 * and what keeps the documents (`X-Restdir-Store`, lib/static/store-header.ts), so it can show where each one lives.
 */
async function serveStaticFile(req: IncomingMessage, res: ServerResponse, segments: string[], www: StaticFolders, base: string, store: StoreDescription, cors: string[]): Promise<boolean> {
  const headers = [...cors, 'X-Restdir-Api', base || '/', 'X-Restdir-Store', storeHeaderValue(store, req.socket.remoteAddress)]
  applyHeaders(res, headers)
  if (await www.serve(req, res, segments)) return true
  // Nothing was written: what follows (the data API, the next middleware) starts from a clean answer.
  for (let index = 0; index < headers.length; index += 2) res.removeHeader(headers[index])
  return false
}
