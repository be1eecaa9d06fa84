import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import { pathPartOf } from '../path.ts'

/**
 * The few helpers of Express 4 that json-server's middlewares use (its README's `res.header('X-Hello',
 * 'World')`, `res.sendStatus(401)`, `res.status(…).json(…)`, `req.query`), given to a plain node
 * request and answer before the app's own middlewares run (lib/middleware/middlewares.ts), so that a file
 * written for `json-server --middlewares` runs unchanged. Under Express the request and answer have
 * them already, and nothing is added. JSON is written with two spaces, as json-server's app
 * (`express().set('json spaces', 2)`) writes it.
 */

interface ExpressRequest extends IncomingMessage {
  query?: Record<string, string | string[]>
  path?: string
  originalUrl?: string
  params?: Record<string, string>
  get?(name: string): string | string[] | undefined
  header?(name: string): string | string[] | undefined
}

interface ExpressResponse extends ServerResponse {
  locals?: Record<string, unknown>
  status?(code: number): ExpressResponse
  set?(field: string | Record<string, string>, value?: string | string[]): ExpressResponse
  header?(field: string | Record<string, string>, value?: string | string[]): ExpressResponse
  get?(field: string): string | number | string[] | undefined
  type?(type: string): ExpressResponse
  json?(body: unknown): ExpressResponse
  jsonp?(body: unknown): ExpressResponse
  send?(body?: unknown): ExpressResponse
  sendStatus?(code: number): ExpressResponse
  redirect?(statusOrUrl: number | string, url?: string): void
}

export function addExpressHelpers(request: IncomingMessage, response: ServerResponse): void {
  const req = request as ExpressRequest
  const res = response as ExpressResponse
  if (typeof res.send === 'function') return // Express's own
  const url = req.url ?? '/'
  req.originalUrl ??= url
  req.path ??= pathPartOf(url)
  req.params ??= {}
  req.query ??= queryObject(url)
  req.get = req.header = (name) => req.headers[name.toLowerCase() === 'referrer' ? 'referer' : name.toLowerCase()]
  res.locals ??= {}
  res.status = (code) => ((res.statusCode = code), res)
  res.set = res.header = (field, value) => {
    if (typeof field === 'object') for (const [name, text] of Object.entries(field)) res.setHeader(name, text)
    else res.setHeader(field, value ?? '')
    return res
  }
  res.get = (field) => res.getHeader(field)
  res.type = (type) => res.set!('Content-Type', type.includes('/') ? type : `${TYPES[type] ?? 'application/octet-stream'}`)
  res.json = res.jsonp = (body) => {
    if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/json; charset=utf-8')
    return end(res, JSON.stringify(body, null, 2) ?? '')
  }
  res.send = (body) => {
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) return res.json!(body)
    if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', Buffer.isBuffer(body) ? 'application/octet-stream' : 'text/html; charset=utf-8')
    return end(res, body === undefined || body === null ? '' : Buffer.isBuffer(body) ? body : String(body))
  }
  res.sendStatus = (code) => {
    res.statusCode = code
    res.setHeader('Content-Type', 'text/plain; charset=utf-8')
    return end(res, STATUS_CODES[code] ?? String(code))
  }
  res.redirect = (statusOrUrl, url) => {
    res.statusCode = typeof statusOrUrl === 'number' ? statusOrUrl : 302
    res.setHeader('Location', typeof statusOrUrl === 'number' ? url ?? '/' : statusOrUrl)
    end(res, '')
  }
}

const TYPES: Record<string, string> = { json: 'application/json; charset=utf-8', html: 'text/html; charset=utf-8', text: 'text/plain; charset=utf-8', txt: 'text/plain; charset=utf-8' }

function end(res: ExpressResponse, body: string | Buffer): ExpressResponse {
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(res.req?.method === 'HEAD' ? undefined : body)
  return res
}

/** `req.query` as Express 4's default parser gives it for flat keys: a string, or an array for a repeated key. */
export function queryObject(url: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null)
  const mark = url.indexOf('?')
  if (mark < 0) return query
  for (const [key, value] of new URLSearchParams(url.slice(mark + 1))) {
    const held = query[key]
    query[key] = held === undefined ? value : Array.isArray(held) ? [...held, value] : [held, value]
  }
  return query
}
