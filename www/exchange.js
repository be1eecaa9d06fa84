import { apiUrl } from './api.js'
import { h, fill } from './dom.js'
import { renderCurl, renderWhereStored } from './exchange-notes.js'
import { renderJson } from './json-view.js'
import { explainStatus, reasonPhrase, statusKind } from './statuses.js'

/**
 * One request and its answer, captured for the raw-exchange view:
 * { method, path, target, url, requestHeaders, formHeaders, requestBody, durationMs, response?, error? }
 * where `path` is relative to the API base, `target` is the real request target and
 * `url` the absolute URL; `formHeaders` are the headers the form chose (no Host, Accept…).
 */
export async function sendExchange(base, { method, path, body, headers }) {
  const url = new URL(apiUrl(base, path), location.origin)
  const requestHeaders = new Headers(headers)
  const hasBody = body !== undefined && body !== ''
  if (hasBody && !requestHeaders.has('Content-Type')) requestHeaders.set('Content-Type', 'application/json')

  const exchange = {
    id: crypto.randomUUID(),
    method,
    path,
    target: url.pathname + url.search,
    url: url.href,
    requestHeaders: shownRequestHeaders(headers, requestHeaders, hasBody ? body : undefined),
    formHeaders: formHeaders(headers, requestHeaders, hasBody),
    requestBody: hasBody ? body : undefined,
    sentAt: new Date(),
    durationMs: 0,
  }

  const started = performance.now()
  try {
    // no-store: show what the server answers now, never a cached copy.
    const response = await fetch(url, { method, headers: requestHeaders, body: hasBody ? body : undefined, cache: 'no-store' })
    const text = method === 'HEAD' ? '' : await response.text()
    exchange.response = readResponse(response, text)
  } catch (error) {
    exchange.error = `The request did not reach the server (${error.message}). Is restdir still running?`
  }
  exchange.durationMs = Math.round(performance.now() - started)
  return exchange
}

/** The request headers as they go on the wire, in the order a reader expects them. */
function shownRequestHeaders(extraLines, headers, body) {
  const shown = [['Host', location.host]]
  if (!headers.has('Accept')) shown.push(['Accept', '*/*'])
  if (body !== undefined) {
    shown.push(['Content-Type', headers.get('Content-Type')])
    shown.push(['Content-Length', String(new TextEncoder().encode(body).length)])
  }
  for (const [name, value] of extraLines) {
    if (body !== undefined && name.toLowerCase() === 'content-type') continue
    shown.push([name, value])
  }
  return shown
}

/** The headers the form itself sets (Content-Type for a body, then the extra ones), as a terminal must send them too. */
function formHeaders(extraLines, headers, hasBody) {
  const sent = hasBody ? [['Content-Type', headers.get('Content-Type')]] : []
  for (const [name, value] of extraLines) {
    if (!(hasBody && name.toLowerCase() === 'content-type')) sent.push([name, value])
  }
  return sent
}

function readResponse(response, text) {
  const contentType = response.headers.get('Content-Type') ?? ''
  let json
  if (text && /[/+]json\b/i.test(contentType)) {
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
  }
  return {
    status: response.status,
    statusText: response.statusText || reasonPhrase(response.status),
    headers: [...response.headers].map(([name, value]) => [displayHeaderName(name), value]),
    location: response.headers.get('Location') ?? undefined,
    contentType,
    text,
    json,
    size: new TextEncoder().encode(text).length,
  }
}

const headerNameSpellings = { etag: 'ETag', 'www-authenticate': 'WWW-Authenticate', 'x-restdir-api': 'X-Restdir-Api' }

/** fetch lowercases header names; show them the way HTTP/1.1 texts spell them. */
function displayHeaderName(name) {
  return headerNameSpellings[name] ?? name.replace(/(^|-)([a-z])/g, (_, dash, letter) => dash + letter.toUpperCase())
}

/** True when the answer is an RFC 9457 problem with something to show. */
function problemOf(response) {
  if (!/problem\+json/i.test(response.contentType) || !response.json || typeof response.json !== 'object') return undefined
  return response.json
}

/**
 * Draws an exchange into `container`. `onFollow(path)` is offered for a
 * Location header, so the new resource is one click from a GET.
 */
export function renderExchange(container, exchange, { onFollow, relativeLocation, store }) {
  fill(container, renderRequest(exchange), renderCurl(exchange), renderAnswer(exchange, onFollow, relativeLocation),
    renderWhereStored(exchange, store, relativeLocation))
}

function renderRequest(exchange) {
  const raw = h('pre', { class: 'raw request-raw', tabindex: '0', role: 'group', 'aria-label': 'Request as sent' },
    h('span', { class: 'start-line' },
      h('span', { class: `method-name method-${exchange.method.toLowerCase()}` }, exchange.method),
      ' ', exchange.target, ' ', h('span', { class: 'muted-token' }, 'HTTP/1.1')),
    '\n',
    exchange.requestHeaders.map(([name, value]) => [headerLine(name, value), '\n']),
    exchange.requestBody !== undefined ? ['\n', h('span', { class: 'raw-body' }, exchange.requestBody)] : null,
  )
  return h('section', { class: 'exchange-part', 'aria-labelledby': 'request-heading' },
    h('h3', { id: 'request-heading', class: 'part-title' }, 'Request', h('span', { class: 'part-note' }, 'as sent')),
    raw,
    h('p', { class: 'fine-print' }, 'Your browser adds a few headers of its own, such as User-Agent and Accept-Language.'),
  )
}

function headerLine(name, value) {
  return h('span', { class: 'header-line' }, h('span', { class: 'header-name' }, name), ': ', h('span', { class: 'header-value' }, value))
}

function renderAnswer(exchange, onFollow, relativeLocation) {
  const heading = h('h3', { id: 'response-heading', class: 'part-title' }, 'Response')
  const part = h('section', { class: 'exchange-part', 'aria-labelledby': 'response-heading' }, heading)
  if (exchange.error) {
    part.append(h('div', { class: 'problem', role: 'note' }, h('strong', {}, 'No answer'), h('p', {}, exchange.error)))
    return part
  }
  const { response } = exchange
  heading.append(h('span', { class: 'part-note' }, `${exchange.durationMs} ms · ${formatBytes(response.size)}`))

  const kind = statusKind(response.status)
  part.append(h('div', { class: `status-line status-${kind}` },
    h('code', { class: 'status-code' }, 'HTTP/1.1 ', h('strong', {}, String(response.status)), ' ', response.statusText),
    h('p', { class: 'status-meaning' }, explainStatus(response.status)),
  ))

  const problem = problemOf(response)
  if (problem) {
    part.append(h('div', { class: 'problem', role: 'note' },
      h('strong', {}, problem.title ?? 'Problem'),
      problem.detail ? h('p', { class: 'problem-detail' }, problem.detail) : null,
    ))
  }

  part.append(h('pre', { class: 'raw response-headers', tabindex: '0', role: 'group', 'aria-label': 'Response headers' },
    response.headers.map(([name, value]) => {
      const follow = name === 'Location' && onFollow
        ? h('button', { type: 'button', class: 'inline-action', onclick: () => onFollow(relativeLocation(value)) }, 'GET it')
        : null
      return [headerLine(name, value), follow ? [' ', follow] : null, '\n']
    }),
  ))
  part.append(renderBody(exchange))
  return part
}

function renderBody(exchange) {
  const { response } = exchange
  let content
  if (exchange.method === 'HEAD') content = h('p', { class: 'empty-body' }, 'No body: HEAD asks for the headers only, as if it were a GET.')
  else if (response.text === '') content = h('p', { class: 'empty-body' }, response.status === 204 || response.status === 304 ? `No body: a ${response.status} never has one.` : 'The body is empty.')
  else if (response.json !== undefined) content = h('pre', { class: 'raw body', tabindex: '0', role: 'group', 'aria-label': 'Response body' }, renderJson(response.json))
  else content = h('pre', { class: 'raw body', tabindex: '0', role: 'group', 'aria-label': 'Response body' }, response.text)
  return h('div', { class: 'body-block' }, content)
}

function formatBytes(bytes) {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`
}
