/**
 * Where the data API lives. `restdir --prefix /api` moves it under a prefix;
 * the server names the base in an `X-Restdir-Api` header on the page itself,
 * and what keeps the documents in `X-Restdir-Store`.
 */

let pageAnswer

/** The headers of the server's answer for this page, asked for once. */
function pageHeaders() {
  pageAnswer ??= fetch(location.pathname, { method: 'HEAD', cache: 'no-store' }).then((response) => response.headers, () => new Headers())
  return pageAnswer
}

/** Asks the server for the API base: "/" or a prefix such as "/api". */
export async function discoverApiBase() {
  return normalizeBase((await pageHeaders()).get('X-Restdir-Api'))
}

/** What the server says keeps its documents (`X-Restdir-Store`, e.g. `folder; name="store"`), unparsed; null when it says nothing. */
export async function discoverStoreHeader() {
  return (await pageHeaders()).get('X-Restdir-Store')
}

function normalizeBase(header) {
  const base = (header ?? '').trim()
  if (!base.startsWith('/')) return '/'
  return base.length > 1 ? base.replace(/\/+$/, '') || '/' : '/'
}

/**
 * The real URL path for a path relative to the API base:
 * ("/api", "/user?_sort=name") → "/api/user?_sort=name"; ("/api", "/") → "/api/".
 */
export function apiUrl(base, relativePath) {
  const path = relativePath.startsWith('/') ? relativePath : '/' + relativePath
  return base === '/' ? path : base + path
}

/** The path relative to the API base, for a real URL path (a Location header, say). */
export function relativeToBase(base, urlPath) {
  const path = urlPath.replace(/^[a-z]+:\/\/[^/]+/i, '')
  if (base === '/') return path
  if (path === base) return '/'
  return path.startsWith(base + '/') ? path.slice(base.length) : path
}

/** Decoded segments → "/a/b%20c". The root is "/". */
export function encodePath(segments) {
  return '/' + segments.map(encodeURIComponent).join('/')
}

/** "/a/b%20c" → ["a", "b c"]. Leaves a segment as it is when it is not valid percent-encoding. */
export function decodePath(path) {
  return path.split('?')[0].split('/').filter(Boolean).map(percentDecodeOrKeep)
}

/** A segment with its percent-escapes decoded, or as it is when they are malformed. */
function percentDecodeOrKeep(segment) {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
