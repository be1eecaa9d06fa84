import type { IncomingMessage, ServerResponse } from 'node:http'
import { isIP, type Socket } from 'node:net'
import { createHash, timingSafeEqual } from 'node:crypto'
import { HttpError } from '../http-error.ts'

/** What the guards need to know; part of the server's Settings. */
export interface GuardSettings {
  /**
   * The address the server listens on. createServer sets it once listening;
   * when unknown (createHandler inside another server), each request is
   * judged by the local address of its connection.
   */
  host?: string
  /** Origins allowed besides loopback ones (`scheme://host[:port]`), `*` for any, or `none`: no CORS headers at all (`--no-cors`). */
  cors: '*' | 'none' | ReadonlySet<string>
  /** A Bearer token every write must carry. */
  token?: string
  /** Refuse every write. */
  readonly: boolean
  /** The status a refused write gets: 405 (RFC 9110 §15.5.6), or json-server's 403. */
  readonlyStatus?: 403 | 405
  /**
   * false: beside an allowed Origin, no `Access-Control-Expose-Headers` of restdir's own; the answers
   * name what json-server 0.17 names, where it names it (docs/json-server.md, "What still differs").
   */
  exposeOwn?: boolean
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const ALL_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'
const PREFLIGHT_MAX_AGE = '600'

/**
 * Runs before any routing, in this order: the Host check against DNS
 * rebinding, CORS (a preflight is answered here), read-only mode, then the
 * write token. Returns true when it has answered the request itself; throws
 * an HttpError to refuse it. The CORS headers the answer must carry are
 * pushed onto `headers` (names and values in turn), for whoever answers to write.
 */
export function answerByGuards(req: IncomingMessage, res: ServerResponse, guards: GuardSettings, headers: string[]): boolean {
  checkHeaderCount(req)
  checkHost(req, guards)
  const method = (req.method ?? 'GET').toUpperCase()
  if (applyCors(req, res, method, guards, headers)) return true
  const writes = !READ_METHODS.has(method)
  if (writes && guards.readonly) {
    throw new HttpError(guards.readonlyStatus ?? 405, `This server is read-only (--readonly): it answers GET, HEAD and OPTIONS, never ${method}.`, {
      Allow: 'GET, HEAD, OPTIONS',
    })
  }
  if (writes && guards.token !== undefined) checkToken(req, guards.token)
  return false
}

/**
 * DNS rebinding: a web page can make its own host name resolve to 127.0.0.1
 * and then talk to a local server as if same-origin. The Host header still
 * names the attacker's domain, so a loopback-only server answers only to
 * loopback names (RFC 9110 §7.2).
 */
function checkHost(req: IncomingMessage, guards: GuardSettings): void {
  if (req.headers.host === undefined && (req.httpVersionMajor > 1 || req.httpVersionMinor >= 1)) {
    throw new HttpError(400, 'An HTTP/1.1 request needs a Host header (RFC 9112 §3.2).')
  }
  // Node keeps the first of several Host lines; which one a proxy in front judged is anyone's guess.
  if (hostLines(req) > 1) throw new HttpError(400, 'The request has more than one Host header; send exactly one (RFC 9112 §3.2).')
  const boundAddress = guards.host ?? req.socket.localAddress
  if (boundAddress === undefined || !isLoopbackAddress(boundAddress)) return
  const host = req.headers.host
  // Only HTTP/1.0 may omit Host, and browsers never do.
  if (host === undefined) return
  if (isLoopbackHostHeader(host)) return
  throw new HttpError(
    403,
    `This server listens on loopback only and answers requests addressed to localhost or 127.0.0.1, ` +
      `not to ${JSON.stringify(host.slice(0, 100))} (a guard against DNS rebinding). ` +
      `To serve other host names, bind another address (--host 0.0.0.0, or the host option).`,
  )
}

/**
 * Node keeps a request's header lines up to its server's maxHeadersCount and
 * drops the rest without a word, so a second Host past the cap would never be
 * counted. A request that reaches the cap is refused rather than judged on part
 * of its headers (RFC 6585 §5), in whatever server the handler runs.
 */
function checkHeaderCount(req: IncomingMessage): void {
  const kept = headerLinesKept(req)
  if (req.rawHeaders.length / 2 >= kept) {
    throw new HttpError(431, `The request has ${kept} or more header lines, more than the server reads; send fewer.`)
  }
}

/** Node's maxHeadersCount: 0 keeps every line; unset, node:http keeps 1,000 (2,000 names and values in rawHeaders). */
function headerLinesKept(req: IncomingMessage): number {
  const count = (req.socket as (Socket & { server?: { maxHeadersCount?: number | null } }) | null)?.server?.maxHeadersCount
  if (count === 0) return Infinity
  return typeof count === 'number' && count > 0 ? count : 1000
}

function hostLines(req: IncomingMessage): number {
  const raw = req.rawHeaders
  let count = 0
  for (let index = 0; index < raw.length; index += 2) {
    if (raw[index].length === 4 && raw[index].toLowerCase() === 'host') count++
  }
  return count
}

/**
 * The request target in origin form (`/path?query`). A target in absolute form
 * (`http://localhost/notes`, as sent to proxies) must be accepted too, and its
 * authority then stands for the Host header (RFC 9112 §3.2.2): it becomes
 * `Host`, so the DNS-rebinding check judges it, and `req.url` its path.
 */
export function originFormOf(req: IncomingMessage): string {
  const target = req.url ?? '/'
  if (target[0] === '/') return target
  const absolute = /^([a-z][a-z\d+.-]*):\/\/([^/?#]*)([^#]*)/i.exec(target)
  if (!absolute) return target // neither form: the path check answers 400
  const [, scheme, authority, rest] = absolute
  if (!/^https?$/i.test(scheme)) throw new HttpError(400, `restdir serves http URLs, not ${JSON.stringify(scheme.slice(0, 20))} ones; send the path alone ("GET /notes").`)
  if (authority === '' || authority.includes('@')) {
    throw new HttpError(400, 'The absolute URL in the request line needs a host and no user information (RFC 9110 §4.2.1).')
  }
  req.headers.host = authority
  req.url = rest === '' ? '/' : rest[0] === '?' ? '/' + rest : rest
  return req.url
}

/** The host name of a Host header value: no port, no IPv6 brackets, lower case, no trailing dot. */
function hostnameOf(host: string): string {
  const trimmed = host.trim().toLowerCase()
  const name = trimmed.startsWith('[') ? trimmed.slice(1, trimmed.indexOf(']')) : trimmed.replace(/:\d*$/, '')
  return name.endsWith('.') ? name.slice(0, -1) : name
}

/** A predicate that remembers its answers: a server meets the same few Host values, and its own address, on every request. */
function remembered(test: (value: string) => boolean): (value: string) => boolean {
  const answers = new Map<string, boolean>()
  return (value) => {
    let answer = answers.get(value)
    if (answer === undefined) {
      if (answers.size >= 256) answers.clear()
      answer = test(value)
      answers.set(value, answer)
    }
    return answer
  }
}

const isLoopbackAddress = remembered(isLoopbackHost)
const isLoopbackHostHeader = remembered((host) => isLoopbackHost(hostnameOf(host)))

/** localhost and its subdomains (RFC 6761 §6.3), 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopbackHost(name: string): boolean {
  const lower = name.toLowerCase()
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true
  if (isIP(lower) === 4) return lower.startsWith('127.')
  if (isIP(lower) === 6) return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(lower)
  return false
}

/**
 * CORS (WHATWG Fetch §3.2). Loopback origins, the server's own origin and the
 * `--cors` list get CORS headers; a preflight from them is answered 204. From
 * any other origin a preflight or a write is refused with 403 (a browser would
 * send a form POST without asking), and a read is served without CORS headers,
 * so the browser keeps its answer from the page.
 *
 * An allowed origin is echoed with `Access-Control-Allow-Credentials: true`, so
 * a page that sends its cookies (`credentials: 'include'`) reads the answer, as
 * json-server answers it; with `--cors '*'` that is every origin, each echoed,
 * as Fetch §3.2.5 forbids the literal `*` beside credentials. The answer then
 * depends on Origin: `Vary: Origin` always.
 */
function applyCors(req: IncomingMessage, res: ServerResponse, method: string, guards: GuardSettings, headers: string[]): boolean {
  const origin = req.headers.origin
  headers.push('Vary', 'Origin')
  if (origin === undefined) return false
  const preflight = method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined
  if (guards.cors === 'none') {
    // No CORS headers (--no-cors): a browser lets only the server's own pages read; others may not write either.
    if ((preflight || !READ_METHODS.has(method)) && !sameOrigin(origin, req.headers.host)) {
      throw new HttpError(403, `Requests from the origin ${JSON.stringify(origin.slice(0, 200))} are not allowed: this server sends no CORS headers (--no-cors).`)
    }
    return false
  }
  if (!originAllowed(origin, req.headers.host, guards.cors)) {
    if (preflight || !READ_METHODS.has(method)) {
      throw new HttpError(
        403,
        `Requests from the origin ${JSON.stringify(origin.slice(0, 200))} are not allowed; ` +
          `start the server with --cors ${JSON.stringify(origin.slice(0, 200))} (or --cors '*') to allow them.`,
      )
    }
    return false
  }
  if (!preflight) {
    headers.push('Access-Control-Allow-Origin', origin, 'Access-Control-Allow-Credentials', 'true')
    if (guards.exposeOwn !== false) headers.push('Access-Control-Expose-Headers', EXPOSED_HEADERS)
    return false
  }

  const requestedHeaders = req.headers['access-control-request-headers']
  res.statusCode = 204
  res.setHeader('Access-Control-Allow-Origin', origin)
  res.setHeader('Access-Control-Allow-Credentials', 'true')
  res.setHeader('Access-Control-Allow-Methods', guards.readonly ? 'GET, HEAD, OPTIONS' : ALL_METHODS)
  // Any header the page wants to send is fine: what guards the data is the token, not a header list.
  if (requestedHeaders !== undefined && /^[\w!#$%&'*+.^`|~-]+(\s*,\s*[\w!#$%&'*+.^`|~-]+)*$/.test(requestedHeaders.trim())) {
    res.setHeader('Access-Control-Allow-Headers', requestedHeaders.trim())
  }
  res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE)
  res.setHeader('Vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers')
  res.setHeader('Content-Length', '0')
  res.end()
  return true
}

/**
 * Headers a browser script may read on a cross-origin answer (Fetch standard,
 * CORS protocol): listing totals and pages, where a new document went, versions.
 * Sent only beside `Access-Control-Allow-Origin`, without which it means nothing.
 */
const EXPOSED_HEADERS = 'X-Total-Count, Link, Location, ETag, X-Restdir-Skipped'

/** The page's origin is the server's own: the host it asked for. */
function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase()
  } catch {
    return false
  }
}

function originAllowed(origin: string, host: string | undefined, allowed: '*' | ReadonlySet<string>): boolean {
  if (allowed === '*') return true
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false // `null` (sandboxed frames, file: pages) and anything malformed
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  if (isLoopbackHost(url.hostname.replace(/^\[|\]$/g, ''))) return true
  // The server's own origin: the page it served calls back to the host it came from.
  if (host !== undefined && url.host === host.toLowerCase()) return true
  return allowed.has(url.origin)
}

/** The `--cors` value: `*`, or a comma-separated list of origins such as `https://a.example`; `false` is `--no-cors`. */
export function parseCorsList(value: string | readonly string[] | false | undefined): GuardSettings['cors'] {
  if (value === false) return 'none'
  if (value === undefined) return new Set()
  const entries = (typeof value === 'string' ? value.split(',') : value).map((entry) => entry.trim()).filter(Boolean)
  if (entries.includes('*')) return '*'
  const origins = new Set<string>()
  for (const entry of entries) {
    let url: URL
    try {
      url = new URL(entry)
    } catch {
      throw new Error(`cors: "${entry}" is not an origin such as https://app.example or http://localhost:5173.`)
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`cors: "${entry}" must start with http:// or https://.`)
    origins.add(url.origin)
  }
  return origins
}

/**
 * Bearer tokens (RFC 6750 §2.1, §3). Both sides are hashed first so the
 * comparison takes the same time whatever the length or content of a guess.
 */
function checkToken(req: IncomingMessage, token: string): void {
  const header = req.headers.authorization
  const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  if (!match) {
    throw new HttpError(401, 'Writing needs the server\'s token: send "Authorization: Bearer <token>".', {
      'WWW-Authenticate': 'Bearer realm="restdir"',
    })
  }
  if (!timingSafeEqual(digest(match[1]), digest(token))) {
    throw new HttpError(401, 'The Bearer token is not this server\'s token.', {
      'WWW-Authenticate': 'Bearer realm="restdir", error="invalid_token"',
    })
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}
