import { apiUrl, decodePath, relativeToBase } from './api.js'
import { h, fill } from './dom.js'
import { reasonPhrase } from './statuses.js'
import { accountsOf, signInTrack } from './file-lessons.js'
import { rememberedIds, signedInTrack, tracks } from './lesson-steps.js'

/**
 * Guided lessons on the page: the steps of lesson-steps.js, each with its
 * request and a button to send it. A step is done when a request like it
 * (same method and path) gets the status it expects, whether sent from the
 * lesson or typed by hand. Ids the server hands out are remembered from every
 * answer and fill the holes in later steps' paths. A track about declared
 * resources shows only when the server declares them (its `?_openapi` says).
 * `fileTracks`, on a db.json, is the promise of the tracks made from what the
 * file holds (file-lessons.js): they are shown instead of the built-in ones.
 */
export function createLessons(container, { base, onFill, onSend, fileTracks }) {
  const storageKey = `restdir.lessons ${base}`
  const state = loadState()
  const views = new Map()
  let lastRun
  let allSteps = []
  let shown = []
  const progress = h('progress', { max: 0, value: 0, 'aria-labelledby': 'lessons-progress-text' })
  const progressText = h('span', { id: 'lessons-progress-text' })
  const memory = h('p', { class: 'memory' })

  if (fileTracks) fileTracks.then(render, () => render([]))
  else showBuiltInTracks()

  function showBuiltInTracks() {
    render(tracks)
    fetch(apiUrl(base, '/') + '?_openapi', { headers: { Accept: 'application/json' } })
      .then((response) => (response.ok ? response.json() : undefined))
      .then((description) => {
        const routes = Object.keys(description?.paths ?? {})
        const declared = tracks.filter((track) => (track.needs ?? []).every((route) => routes.includes(route)))
        // Under --auth on the declared families each user owns their subtree (docs/accounts.md):
        // signing in comes first, and the seed's steps then send the token, on the user who signed in.
        const accounts = accountsOf(description)
        if (accounts?.families) render([signInTrack([], undefined, accounts), ...declared.flatMap((track) => signedInTrack(track) ?? [])])
        else if (description && declared.length < tracks.length) render(declared)
      })
      .catch(() => {}) // no description: every track stays
  }

  function render(shownTracks) {
    shown = shownTracks
    allSteps = shownTracks.flatMap((track) => track.steps)
    views.clear()
    progress.max = allSteps.length
    fill(container,
      h('div', { class: 'lessons-progress' }, progressText, progress,
        h('button', { type: 'button', class: 'link-button', onclick: reset }, 'Start over')),
      memory,
      shownTracks.map((track) => h('section', { class: 'track' },
        h('h3', { class: 'track-title' }, track.title),
        h('p', { class: 'track-intro' }, track.intro),
        h('ol', { class: 'steps' }, track.steps.map((step) => renderStep(step))),
      )),
    )
    refresh()
    openStep(firstUndone())
  }

  function renderStep(step) {
    const number = allSteps.indexOf(step) + 1
    const marker = h('span', { class: 'step-marker', 'aria-hidden': 'true' }, String(number))
    const doneLabel = h('span', { class: 'visually-hidden' })
    const preview = h('code', {})
    const needs = h('p', { class: 'step-needs' })
    const lastTry = h('p', { class: 'step-last-try', role: 'status' })
    const fillButton = h('button', { type: 'button', class: 'button secondary', onclick: () => run(step, false) }, 'Put in form')
    const sendButton = h('button', { type: 'button', class: 'button primary', onclick: () => run(step, true) }, 'Send it')
    const details = h('details', { class: 'step-details' },
      h('summary', {},
        marker,
        h('span', { class: 'step-title' }, step.title, doneLabel),
        h('span', { class: `method-tag method-${step.method.toLowerCase()}` }, step.method)),
      h('div', { class: 'step-body' },
        h('p', {}, richText(step.explain)),
        h('pre', { class: 'step-request' }, preview),
        h('p', { class: 'step-expect' },
          h('span', { class: 'expect-label' }, 'Expect'), ' ',
          step.expect.map((status, index) => [index ? ' or ' : '', h('strong', {}, `${status} ${reasonPhrase(status)}`)])),
        h('p', {}, richText(step.outcome)),
        step.note ? h('p', { class: 'step-note' }, richText(step.note)) : null,
        lastTry,
        needs,
        h('div', { class: 'step-actions' }, fillButton, sendButton),
      ),
    )
    const item = h('li', { class: 'step', 'data-step': step.id }, details)
    views.set(step.id, { item, details, marker, doneLabel, preview, needs, lastTry, buttons: [fillButton, sendButton] })
    return item
  }

  /** The step's path with remembered ids in it, or undefined while one is missing (of its path or its headers). */
  function resolvePath(step) {
    if (missingOf(step).length) return undefined
    return step.path.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(state.vars[name]))
  }

  /** The step's header lines with remembered values in them: the sign-in track's `{token}`. */
  function resolveHeaders(step, shorten = false) {
    return step.headers?.replace(/\{(\w+)\}/g, (_, name) => {
      const value = state.vars[name]
      if (!value) return `:${name}`
      return shorten ? shortened(value) : value
    })
  }

  function missingOf(step) {
    const holes = `${step.path} ${step.headers ?? ''}`.match(/\{\w+\}/g) ?? []
    return [...new Set(holes.map((hole) => hole.slice(1, -1)))].filter((name) => !state.vars[name])
  }

  function requestOf(step) {
    return { method: step.method, path: resolvePath(step), body: step.body, headers: resolveHeaders(step) }
  }

  function run(step, send) {
    if (!resolvePath(step)) return
    lastRun = step
    if (send) onSend(requestOf(step))
    else onFill(requestOf(step))
  }

  function refresh() {
    const doneCount = allSteps.filter((step) => state.done.includes(step.id)).length
    progress.value = doneCount
    progressText.textContent = `${doneCount} of ${allSteps.length} steps done`
    const known = remembered().filter((name) => state.vars[name])
    fill(memory, known.length
      ? ['Remembered from answers: ', known.map((name, index) => [index ? ', ' : '', h('code', {}, name), ' = ', h('code', { class: 'memory-value' }, shortened(state.vars[name]))])]
      : 'Ids the server hands out will be remembered here for the next steps.')

    for (const step of allSteps) {
      const view = views.get(step.id)
      const done = state.done.includes(step.id)
      view.item.classList.toggle('done', done)
      view.marker.textContent = done ? '✓' : String(allSteps.indexOf(step) + 1)
      view.doneLabel.textContent = done ? ' (done)' : ''
      const path = resolvePath(step)
      const shownPath = path ?? step.path.replace(/\{(\w+)\}/g, ':$1')
      const lines = [`${step.method} ${shownPath}`]
      if (step.headers) lines.push(resolveHeaders(step, true))
      if (step.body) lines.push('', JSON.stringify(step.body, null, 2))
      view.preview.textContent = lines.join('\n')
      const missing = missingOf(step)
      view.needs.hidden = missing.length === 0
      view.needs.textContent = missing.includes('token') ? 'Needs a token: register or log in first.'
        : missing.length ? `Needs a ${missing.join(' and a ')}: do the step that creates one first.` : ''
      for (const button of view.buttons) button.disabled = missing.length > 0
    }
  }

  function firstUndone() {
    return allSteps.find((step) => !state.done.includes(step.id))
  }

  function openStep(step) {
    if (step) views.get(step.id).details.open = true
  }

  /** Called with every exchange, whoever sent it. */
  function observe(exchange) {
    const response = exchange.response
    if (!response) return
    const sentPath = stripQuery(exchange.path)
    const current = firstUndone()
    const matching = allSteps.filter((step) => {
      const path = resolvePath(step)
      return path && !state.done.includes(step.id) && step.method === exchange.method && stripQuery(path) === sentPath
    })
    const passed = matching.filter((step) => step.expect.includes(response.status))
    for (const step of passed) {
      state.done.push(step.id)
      views.get(step.id).lastTry.textContent = ''
    }
    // A miss is only worth a word on the step the learner is working on.
    const missed = passed.length ? undefined : matching.find((step) => step === lastRun || step === current)
    if (missed) {
      views.get(missed.id).lastTry.textContent = `Your last try got ${response.status} ${response.statusText}. Read the answer's detail, adjust, and send again.`
    }
    learnIds(response)
    save()
    refresh()
    if (passed.length) advance(passed)
  }

  /** Folds the steps just done and opens the next one, taking focus along if it was inside a folded step. */
  function advance(passedSteps) {
    const next = firstUndone()
    let focusWasInside = false
    for (const step of passedSteps) {
      const { details } = views.get(step.id)
      if (details.contains(document.activeElement)) focusWasInside = true
      details.open = false
    }
    if (!next) return
    openStep(next)
    if (focusWasInside) views.get(next.id).details.querySelector('summary').focus()
  }

  function learnIds(response) {
    if (response.status < 200 || response.status > 299) return
    const body = response.json
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      for (const name of rememberedIds) if (typeof body[name] === 'string') state.vars[name] = body[name]
      // Register and log in answer { accessToken, user } (docs/accounts.md): the token and the user's id are kept for the next steps.
      if (signsIn() && typeof body.accessToken === 'string') {
        state.vars.token = body.accessToken
        const id = body.user?.id ?? body.user?.user_id
        if (typeof id === 'string' || typeof id === 'number') state.vars.me = String(id)
        return
      }
    }
    if (response.location) {
      const segments = decodePath(relativeToBase(base, response.location))
      // A track on a db.json's collection remembers the id of the item it created (its Location).
      if (segments.length === 2 && shown.some((track) => track.learnsFrom === segments[0])) state.vars.id = segments[1]
      if (segments[0] === 'user' && segments.length >= 2) state.vars.user_id = segments[1]
      if (segments[0] === 'user' && segments[2] === 'playlist' && segments.length >= 4) state.vars.playlist_id = segments[3]
    }
  }

  /** The ids the shown tracks use: the seed's, and `id` for a track on a db.json's collection. */
  function remembered() {
    return [...rememberedIds, ...(shown.some((track) => track.learnsFrom) ? ['id'] : []), ...(signsIn() ? ['me', 'token'] : [])]
  }

  function signsIn() {
    return shown.some((track) => track.signsIn)
  }

  function reset() {
    state.done = []
    state.vars = {}
    save()
    refresh()
    for (const view of views.values()) view.details.open = false
    openStep(firstUndone())
  }

  function loadState() {
    try {
      const saved = JSON.parse(localStorage.getItem(storageKey) ?? 'null')
      if (saved && Array.isArray(saved.done) && saved.vars && typeof saved.vars === 'object') return saved
    } catch {
      // Storage may be unavailable (private mode); lessons then start fresh each visit.
    }
    return { done: [], vars: {} }
  }

  function save() {
    try {
      localStorage.setItem(storageKey, JSON.stringify(state))
    } catch {
      // See loadState.
    }
  }

  return { observe }
}

/** A long value (a token) as the lessons show it: its start, enough to tell it apart. */
function shortened(value) {
  return value.length > 24 ? `${value.slice(0, 16)}…` : value
}

function stripQuery(path) {
  const bare = path.split('?')[0]
  return bare.length > 1 ? bare.replace(/\/+$/, '') : bare
}

/** `code` and *emphasis* in lesson text, as elements rather than markup. */
function richText(text) {
  return text.split(/(`[^`]+`|\*[^*]+\*)/).filter(Boolean).map((part) => {
    if (part.startsWith('`')) return h('code', {}, part.slice(1, -1))
    if (part.startsWith('*')) return h('em', {}, part.slice(1, -1))
    return part
  })
}
