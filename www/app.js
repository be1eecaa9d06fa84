import { discoverApiBase, discoverStoreHeader, relativeToBase } from './api.js'
import { h, fill } from './dom.js'
import { renderExchange, sendExchange } from './exchange.js'
import { createLessons } from './lessons.js'
import { discoverAccounts, discoverResources, fileTrack, firstRequest, signInTrack } from './file-lessons.js'
import { createRequestForm } from './request-form.js'
import { reasonPhrase } from './statuses.js'
import { parseStoreHeader } from './store-location.js'
import { createTree } from './tree.js'

/** How many past exchanges the history keeps. */
const HISTORY_SIZE = 10

const base = await discoverApiBase()
const store = parseStoreHeader(await discoverStoreHeader())
const history = []
let shownExchange

document.getElementById('api-base').textContent = base
document.getElementById('path-base').textContent = base === '/' ? '' : base
document.documentElement.dataset.ready = 'true'
showShortcut()

const exchangeView = document.getElementById('exchange')
const historyBox = document.getElementById('history-box')
const historyList = document.getElementById('history')
const announcer = document.getElementById('announcer')

const form = createRequestForm(document.getElementById('request-form'), { onSubmit: send })

// On a db.json the form starts as a read, never the built-in POST /user: nothing is written to the
// person's file unless they send it (docs/json-server.md, "Serving a db.json"). It then reads the
// file's first collection, and the lessons teach on the file's own resources.
const fileResources = store.kind === 'json-file' ? discoverResources(base) : undefined
if (fileResources) {
  form.fill({ method: 'GET', path: '/', body: '' })
  fileResources.then((resources) => {
    // Unless the person has started on a request of their own meanwhile.
    if (document.getElementById('path').value === '/') form.fill(firstRequest(resources))
  })
}

const lessons = createLessons(document.getElementById('lessons'), {
  base,
  fileTracks: fileResources?.then((resources) => fileTracks(resources, store.name?.split('/').pop())),
  onFill: (request) => {
    form.fill(request)
    document.getElementById('path').focus()
  },
  onSend: (request) => {
    form.fill(request)
    form.submit()
  },
})

/**
 * The lessons on a db.json: its own resources, and, when the server keeps accounts (--auth), signing
 * in. There the file's track leaves `users` to the sign-in track: a POST to it registers.
 */
async function fileTracks(resources, fileName) {
  if (!(await discoverAccounts(base))) return [fileTrack(resources, fileName)]
  return [fileTrack(resources.filter((resource) => resource.name !== 'users'), fileName), signInTrack(resources, fileName)]
}

const liveLabels = { live: 'Live', reconnecting: 'Reconnecting…', offline: 'Offline, retrying' }
const liveIndicator = document.getElementById('live')
const treeProblem = document.getElementById('tree-problem')
const tree = createTree(document.getElementById('tree'), {
  base,
  onSelect: (path) => {
    form.fill({ method: 'GET', path })
    const formElement = document.getElementById('request-form')
    if (!isInView(formElement)) formElement.scrollIntoView({ block: 'nearest', behavior: smoothScroll() })
  },
  onLiveChange: (state) => {
    liveIndicator.dataset.state = state
    liveIndicator.lastChild.textContent = liveLabels[state]
  },
  onProblem: (message) => {
    treeProblem.hidden = !message
    treeProblem.textContent = message ?? ''
  },
})
document.getElementById('tree-refresh').addEventListener('click', () => tree.refresh())

async function send(request) {
  form.setBusy(true)
  try {
    const exchange = await sendExchange(base, request)
    history.unshift(exchange)
    history.length = Math.min(history.length, HISTORY_SIZE)
    show(exchange)
    lessons.observe(exchange)
    announcer.textContent = exchange.response
      ? `${exchange.method} ${exchange.path}: ${exchange.response.status} ${exchange.response.statusText}`
      : `${exchange.method} ${exchange.path}: no answer`
    // The answer may be out of sight (below the form, or below a long request): bring its status line into view.
    const statusLine = exchangeView.querySelector('.status-line, .problem')
    if (statusLine && !isInView(statusLine)) statusLine.scrollIntoView({ block: 'center', behavior: smoothScroll() })
  } finally {
    form.setBusy(false)
  }
}

function show(exchange) {
  shownExchange = exchange
  renderExchange(exchangeView, exchange, {
    onFollow: (path) => {
      form.fill({ method: 'GET', path })
      document.getElementById('send').focus()
    },
    relativeLocation: (location) => relativeToBase(base, location),
    store,
  })
  renderHistory()
}

function renderHistory() {
  historyBox.hidden = history.length < 2
  fill(historyList, history.map((exchange) => {
    const status = exchange.response?.status
    return h('li', {},
      h('button', {
        type: 'button',
        class: 'history-item',
        'aria-current': exchange === shownExchange ? 'true' : null,
        onclick: () => show(exchange),
      },
      h('span', { class: `method-tag method-${exchange.method.toLowerCase()}` }, exchange.method),
      h('span', { class: 'history-path' }, exchange.path),
      h('span', { class: `history-status status-${status ? Math.floor(status / 100) : 0}xx`, title: status ? `${status} ${reasonPhrase(status)}` : 'No answer' }, status ?? '—'),
      ))
  }))
}

function isInView(element) {
  const box = element.getBoundingClientRect()
  return box.top >= 0 && box.bottom <= window.innerHeight
}

function smoothScroll() {
  return matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth'
}

function showShortcut() {
  const isMac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent)
  document.getElementById('send-shortcut').textContent = isMac ? '⌘ Enter' : 'Ctrl Enter'
}
