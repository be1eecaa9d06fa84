import type { IncomingMessage } from 'node:http'
import { pathPartOf } from '../path.ts'

/** What Express and Connect add to a request when they pass it to mounted middleware. */
interface MountedRequest extends IncomingMessage {
  /** Express: the path the middleware is mounted at (`app.use('/data', …)` → `/data`). */
  baseUrl?: unknown
  /** Express and Connect: the request target before the mount path was cut off `url`. */
  originalUrl?: unknown
}

/**
 * The path restdir is mounted at by Express or Connect, as the client sent
 * it (`/data` for `app.use('/data', restdir)`), or `` when it is not mounted.
 * Both frameworks cut the mount path off `req.url`; URLs restdir hands out
 * (`Location`, `Link`) must put it back.
 */
export function mountPathOf(req: IncomingMessage): string {
  const { baseUrl, originalUrl } = req as MountedRequest
  if (typeof baseUrl === 'string') return withoutTrailingSlash(baseUrl)
  if (typeof originalUrl !== 'string') return ''
  const original = pathPartOf(originalUrl)
  const current = pathPartOf(req.url ?? '/')
  if (original === current) return ''
  if (current === '/') return withoutTrailingSlash(original)
  return original.endsWith(current) ? original.slice(0, original.length - current.length) : ''
}

/** The request target as the client sent it, mount path included (for the request log). */
export function clientTargetOf(req: IncomingMessage): string {
  const { originalUrl } = req as MountedRequest
  return typeof originalUrl === 'string' ? originalUrl : (req.url ?? '/')
}

function withoutTrailingSlash(path: string): string {
  return path.replace(/\/+$/, '')
}
