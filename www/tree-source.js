import { apiUrl, encodePath } from './api.js'

/**
 * Where the tree's data comes from: the names of a node's children, with
 * `GET <node>?_children`, and every change in the store, through the
 * Server-Sent Events stream at the API root.
 */

/**
 * The names of the children of the node at `segments`; undefined when the
 * node is gone. When the server is away or answers something else, `known`
 * (the names shown now) stands, and `onProblem` hears why.
 */
export async function fetchChildNames(base, segments, { known, onProblem }) {
  const path = encodePath(segments)
  let response
  try {
    response = await fetch(apiUrl(base, path) + '?_children', { cache: 'no-store', headers: { Accept: 'application/json' } })
  } catch {
    return known // The server is away; the live connection reports it, and a refresh follows the reconnect.
  }
  // The root always exists, even when an empty store answers 404 for it.
  if (response.status === 404) return segments.length ? undefined : []
  const names = await response.json().catch(() => undefined)
  if (!response.ok || !Array.isArray(names) || names.some((name) => typeof name !== 'string')) {
    onProblem?.(`Could not list what is inside ${path}: GET ${apiUrl(base, path)}?_children answered ${response.status} without a list of names.`)
    return known
  }
  if (!segments.length) onProblem?.(undefined)
  return names
}

/**
 * Follows every change with one EventSource at the API root: `onChange(type,
 * payload)` for each put, patch and delete; `onLiveChange` with 'live',
 * 'reconnecting' or 'offline'; `onGap` when the server could not tell what
 * was missed while away (it was restarted, or the wait was too long), so
 * what is shown must be read again. Returns what closes it.
 *
 * Every event carries an id. After a dropped connection the browser comes
 * back by itself with the last one (`Last-Event-ID`) and the server sends
 * what was missed; when the browser gives up, a new EventSource resumes from
 * it with `?since=` (docs/http-api.md, "Live updates").
 */
export function watchChanges(base, { onChange, onLiveChange, onGap }) {
  let source
  let retryDelay = 1000
  let lastId

  function connect() {
    const url = apiUrl(base, '/')
    source = new EventSource(lastId === undefined ? url : `${url}?since=${encodeURIComponent(lastId)}`)
    source.addEventListener('open', () => {
      onLiveChange('live')
      retryDelay = 1000
    })
    source.addEventListener('value', (event) => {
      lastId = event.lastEventId
    })
    source.addEventListener('gap', () => onGap())
    for (const type of ['put', 'patch', 'delete']) {
      source.addEventListener(type, (event) => {
        lastId = event.lastEventId
        try {
          onChange(type, JSON.parse(event.data))
        } catch {
          // An event we cannot read changes nothing we show; the next refresh catches up.
        }
      })
    }
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CONNECTING) {
        onLiveChange('reconnecting')
        return
      }
      // The browser gave up (the server answered something other than a stream): retry quietly, slower each time.
      onLiveChange('offline')
      source.close()
      setTimeout(connect, retryDelay)
      retryDelay = Math.min(retryDelay * 2, 30000)
    })
  }

  connect()
  return { close: () => source?.close() }
}
