import type { IncomingMessage, ServerResponse } from 'node:http'
import { HttpError } from '../http-error.ts'
import { addExpressHelpers } from './express-like.ts'

/**
 * The app's own middlewares (`--middlewares FILE…`, the `middlewares` option; docs/json-server.md,
 * "Middlewares"), run as json-server 0.17 runs them in its Express app: in order, each handing on
 * with `next()`, before the data API, with `req.body` parsed as json-server's bodyParser parses it.
 * They are the user's own code and run with the server's rights (SECURITY.md). The caller parses
 * `req.body` first (lib/http/body.ts, parseBodyForMiddlewares), the one rule for every body.
 */

/**
 * A Connect/Express middleware: `(req, res, next)`, or `(error, req, res, next)` for errors. Its
 * parameters are left open: Express's request and answer types extend node's, and a type naming
 * node's would refuse a handler written for Express's.
 */
export type Middleware = (...args: any[]) => unknown

/**
 * Runs the middlewares in order. Resolves true when one of them answered (the answer finished or the
 * connection closed), false when the last handed on. An error passed to `next(error)`, thrown, or
 * rejected by an async middleware goes to the error middlewares after it, as Express does, and,
 * when none answers, is thrown: a 4xx status it carries (`status`, `statusCode`, as Express's
 * finalhandler reads them) as an HttpError with its message, anything else as a fault (a 500).
 */
export async function runMiddlewares(middlewares: readonly Middleware[], req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  addExpressHelpers(req, res)
  let failure: { error: unknown } | undefined
  for (const middleware of middlewares) {
    // Express calls a middleware of four parameters only with an error, and the others only without one.
    const handlesErrors = middleware.length >= 4
    if (handlesErrors !== (failure !== undefined)) continue
    const outcome = await runOne(middleware, handlesErrors ? [failure!.error, req, res] : [req, res], res)
    if (outcome === 'answered') return true
    failure = outcome === 'next' ? undefined : outcome
  }
  if (failure !== undefined) throw asHttpError(failure.error)
  return false
}

function runOne(middleware: Middleware, args: unknown[], res: ServerResponse): Promise<'next' | 'answered' | { error: unknown }> {
  return new Promise((resolve) => {
    const answered = () => settle('answered')
    const settle = (outcome: 'next' | 'answered' | { error: unknown }) => {
      res.off('finish', answered)
      res.off('close', answered)
      resolve(outcome)
    }
    res.once('finish', answered)
    res.once('close', answered)
    // `next('route')` and `next('router')` are Express's own ways to go on; any other value is an error.
    const next = (error?: unknown) => settle(error === undefined || error === null || error === 'route' || error === 'router' ? 'next' : { error })
    try {
      const returned = middleware(...args, next)
      if (returned instanceof Promise) returned.catch((error: unknown) => settle({ error }))
    } catch (error) {
      settle({ error })
    }
  })
}

function asHttpError(error: unknown): unknown {
  if (error instanceof HttpError) return error
  const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status ?? (error as { statusCode?: unknown } | null)?.statusCode
  if (typeof status !== 'number' || status < 400 || status > 499) return error // a fault: logged, answered 500 with nothing internal
  const message = error instanceof Error && error.message !== '' ? error.message : 'A middleware refused the request.'
  return new HttpError(status, message)
}
