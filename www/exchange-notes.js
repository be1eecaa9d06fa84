import { decodePath } from './api.js'
import { curlCommand } from './curl.js'
import { h } from './dom.js'
import { documentLocation } from './store-location.js'

/**
 * Two notes under each exchange, so the page teaches what works without it:
 * the same request as a curl command to paste into a terminal, and where the
 * document lives in the store the server runs on.
 */

/** The curl command for an exchange, with a button that copies it. */
export function renderCurl(exchange) {
  const command = curlCommand({ method: exchange.method, url: exchange.url, headers: exchange.formHeaders, body: exchange.requestBody })
  const code = h('pre', { class: 'raw curl-command', tabindex: '0', role: 'group', 'aria-label': 'The same request as a curl command' }, command)
  const status = h('span', { class: 'copy-status', role: 'status' })
  const copy = h('button', { type: 'button', class: 'link-button copy-curl', onclick: () => copyText(command, code, status) }, 'Copy')
  return h('section', { class: 'exchange-part curl-part', 'aria-labelledby': 'curl-heading' },
    h('div', { class: 'field-head' },
      h('h3', { id: 'curl-heading', class: 'part-title' }, 'From a terminal', h('span', { class: 'part-note' }, 'the same request with curl')),
      h('span', {}, status, ' ', copy)),
    code,
  )
}

/**
 * Where the document of this exchange lives: the one a 201 names in Location, else the
 * node of the request path; for an answer that lists (an array), where its members live.
 * `store` is { kind, name? } from the server (www/store-location.js, parseStoreHeader).
 */
export function renderWhereStored(exchange, store, relativeLocation) {
  const status = exchange.response?.status
  const created = status === 201 && exchange.response.location
  const segments = decodePath(created ? relativeLocation(exchange.response.location) : exchange.path)
  const members = !created && Array.isArray(exchange.response?.json)
  const place = h('code', { class: 'store-location' }, '…')
  const note = exchange.method === 'DELETE' && status >= 200 && status < 300 ? ' (removed now)'
    : status === 404 ? ' (nothing there now)' : ''
  documentLocation(store, segments, sha256Hex(), { members }).then((location) => {
    place.textContent = location.text
    place.dataset.kind = location.kind
  })
  return h('section', { class: 'exchange-part where-part', 'aria-labelledby': 'where-heading' },
    h('h3', { id: 'where-heading', class: 'part-title' }, members ? 'Where its documents live' : 'Where it lives',
      h('span', { class: 'part-note' }, kindNote(store.kind))),
    h('p', { class: 'where-stored' }, place, note),
  )
}

function kindNote(kind) {
  return { folder: 'a file in the store folder', 'json-file': 'a place in the db.json', postgres: 'a row in PostgreSQL', memory: 'memory only' }[kind] ?? ''
}

/** SHA-256 as hex, for the rare folder name that is shortened with a hash; browsers offer it on localhost and HTTPS only. */
function sha256Hex() {
  if (!globalThis.crypto?.subtle) return undefined
  return async (text) => {
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
    return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('')
  }
}

/** The Clipboard API where the page may use it (localhost, HTTPS); else the command is selected for Ctrl+C. */
async function copyText(text, element, status) {
  try {
    await navigator.clipboard.writeText(text)
    status.textContent = 'Copied'
  } catch {
    getSelection().selectAllChildren(element)
    status.textContent = 'Selected: press Ctrl+C'
  }
}
