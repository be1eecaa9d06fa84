import { decodePath, relativeToBase } from './api.js'
import { h, fill } from './dom.js'
import { reasonPhrase } from './statuses.js'

/**
 * Guided lessons. Each step is one request with an idea behind it; a step is
 * done when a request like it (same method and path) gets the status it
 * expects, whether sent from the lesson or typed by hand. Ids the server hands
 * out are remembered from every answer and fill the `{user_id}` and
 * `{playlist_id}` holes in later steps.
 *
 * Text between backticks becomes code; between asterisks, emphasis.
 */
const tracks = [
  {
    title: 'Users and playlists',
    intro: 'A small music service: users, each with playlists. Follow the steps in order; each one uses what the one before created.',
    steps: [
      {
        id: 'create-user', title: 'Create a user', method: 'POST', path: '/user',
        body: { username: 'ada', name: 'Ada Lovelace' }, expect: [201],
        explain: 'POST adds a new item to a collection. You do not pick its id: the server does, and stores the user.',
        outcome: 'The answer carries a `Location` header with the new user\'s URL, and the user itself, now with a `user_id`. The playground remembers that id for the next steps.',
        note: 'Already have an `ada`? Usernames are unique, so a second one gets `409 Conflict`: change the username and send again.',
      },
      {
        id: 'read-user', title: 'Read it back', method: 'GET', path: '/user/{user_id}', expect: [200],
        explain: 'GET reads what lives at a URL. It is *safe*: it never changes anything, so send it as often as you like.',
        outcome: 'The answer is the user. Notice the `ETag` header: a version tag that changes whenever the user does.',
      },
      {
        id: 'replace-user', title: 'Replace it', method: 'PUT', path: '/user/{user_id}',
        body: { username: 'ada', name: 'Augusta Ada King', born: 1815 }, expect: [200],
        explain: 'PUT sends the *whole* new version of a resource. Fields you leave out are gone afterwards, so send everything you want to keep.',
        outcome: 'The answer is the user as now stored. PUT is *idempotent*: sending it twice leaves the same result as sending it once.',
      },
      {
        id: 'patch-user', title: 'Change one field', method: 'PATCH', path: '/user/{user_id}',
        body: { title: 'Countess of Lovelace' }, expect: [200],
        explain: 'PATCH sends only what changes, as a JSON Merge Patch: the fields you send are set, the others stay, and a field set to `null` is removed.',
        outcome: 'The answer is the merged user: `name` and `born` are still there, `title` is new.',
      },
      {
        id: 'create-playlist', title: 'Give it a playlist', method: 'POST', path: '/user/{user_id}/playlist',
        body: { name: 'Focus', songs: [{ title: 'Clair de Lune', artist: 'Claude Debussy' }, { title: 'Gymnopédie No. 1', artist: 'Erik Satie' }] },
        expect: [201],
        explain: 'Resources nest: a user\'s playlists live under the user\'s URL. POST to that collection to add one.',
        outcome: 'The answer is the playlist, with its own `playlist_id` and its owner\'s `user_id`. For a user that does not exist it would be `404`.',
      },
      {
        id: 'read-playlist', title: 'Read the playlist', method: 'GET', path: '/user/{user_id}/playlist/{playlist_id}', expect: [200],
        explain: 'Every playlist has a URL of its own, built from the ids the server handed out.',
        outcome: 'The answer is the playlist; its `songs` lists the songs in order.',
      },
      {
        id: 'list-playlists', title: 'List the user\'s playlists', method: 'GET', path: '/user/{user_id}/playlist', expect: [200],
        explain: 'GET on a collection lists its members as a JSON array.',
        outcome: 'An array holding the playlist. Lists can be sorted, filtered and paged: add `?_sort=name&_order=desc` to the path.',
      },
      {
        id: 'list-users', title: 'List all users', method: 'GET', path: '/user', expect: [200],
        explain: 'The same idea one level up: `/user` is the collection of all users.',
        outcome: 'An array of users. Filter with `/user?username=ada`, or page with `?_page=1&_limit=10` and look at the `X-Total-Count` and `Link` headers.',
      },
      {
        id: 'delete-user', title: 'Delete the user', method: 'DELETE', path: '/user/{user_id}', expect: [200],
        explain: 'DELETE removes what lives at a URL and everything below it: the user\'s playlists go too. Watch them leave the store tree.',
        outcome: 'The answer is the user that was deleted, for a last look.',
      },
      {
        id: 'user-gone', title: 'Check that it is gone', method: 'GET', path: '/user/{user_id}', expect: [404],
        explain: 'Ask for the deleted user again. An error is an answer too: restdir sends `application/problem+json`, whose `detail` says what went wrong.',
        outcome: 'The answer is a problem document. Error statuses are how HTTP says no; nothing is broken.',
      },
    ],
  },
  {
    title: 'Any URL is a document',
    intro: 'Outside the declared resources, every URL can hold a JSON document, with no setup: this is the fake back end for your front end.',
    steps: [
      {
        id: 'put-note', title: 'Store a note', method: 'PUT', path: '/notes/first',
        body: { text: 'Any URL can hold a JSON document.' }, expect: [201, 200],
        explain: 'PUT to a URL of your choosing stores a document right there. The folders on the way (`/notes`) appear by themselves.',
        outcome: 'The answer is the note, with an `id`: the last segment of its URL. `201` the first time, `200` when it replaces the note.',
      },
      {
        id: 'list-notes', title: 'List the folder', method: 'GET', path: '/notes', expect: [200],
        explain: '`/notes` has no document of its own, so GET answers with a *collection*: an array of the documents below it.',
        outcome: 'An array holding your note. A POST to `/notes` would add a note with a generated id.',
      },
      {
        id: 'stale-update', title: 'Guard against lost updates', method: 'PATCH', path: '/notes/first',
        headers: 'If-Match: "an-old-version"', body: { text: 'Edited' }, expect: [412],
        explain: 'Two people editing at once can overwrite each other\'s work. Send the `ETag` you last read in `If-Match`: the server only writes if the document has not changed since.',
        outcome: 'Nothing changes, because this made-up tag is not the current version. With the real `ETag` from your last answer the PATCH would give `200`.',
      },
    ],
  },
]

const allSteps = tracks.flatMap((track) => track.steps)
const remembered = ['user_id', 'playlist_id']

export function createLessons(container, { base, onFill, onSend }) {
  const storageKey = `restdir.lessons ${base}`
  const state = loadState()
  const views = new Map()
  let lastRun
  const progress = h('progress', { max: allSteps.length, value: 0, 'aria-labelledby': 'lessons-progress-text' })
  const progressText = h('span', { id: 'lessons-progress-text' })
  const memory = h('p', { class: 'memory' })

  fill(container,
    h('div', { class: 'lessons-progress' }, progressText, progress,
      h('button', { type: 'button', class: 'link-button', onclick: reset }, 'Start over')),
    memory,
    tracks.map((track) => h('section', { class: 'track' },
      h('h3', { class: 'track-title' }, track.title),
      h('p', { class: 'track-intro' }, track.intro),
      h('ol', { class: 'steps' }, track.steps.map((step) => renderStep(step))),
    )),
  )
  refresh()
  openStep(firstUndone())

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

  /** The step's path with remembered ids in it, or undefined while one is missing. */
  function resolvePath(step) {
    let missing = false
    const path = step.path.replace(/\{(\w+)\}/g, (_, name) => {
      if (!state.vars[name]) missing = true
      return encodeURIComponent(state.vars[name] ?? '')
    })
    return missing ? undefined : path
  }

  function requestOf(step) {
    return { method: step.method, path: resolvePath(step), body: step.body, headers: step.headers }
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
    const known = remembered.filter((name) => state.vars[name])
    fill(memory, known.length
      ? ['Remembered from answers: ', known.map((name, index) => [index ? ', ' : '', h('code', {}, name), ' = ', h('code', { class: 'memory-value' }, state.vars[name])])]
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
      if (step.headers) lines.push(step.headers)
      if (step.body) lines.push('', JSON.stringify(step.body, null, 2))
      view.preview.textContent = lines.join('\n')
      const missing = step.path.match(/\{\w+\}/g)?.map((hole) => hole.slice(1, -1)).filter((name) => !state.vars[name]) ?? []
      view.needs.hidden = missing.length === 0
      view.needs.textContent = missing.length ? `Needs a ${missing.join(' and a ')}: do the step that creates one first.` : ''
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
      for (const name of remembered) if (typeof body[name] === 'string') state.vars[name] = body[name]
    }
    if (response.location) {
      const segments = decodePath(relativeToBase(base, response.location))
      if (segments[0] === 'user' && segments.length >= 2) state.vars.user_id = segments[1]
      if (segments[0] === 'user' && segments[2] === 'playlist' && segments.length >= 4) state.vars.playlist_id = segments[3]
    }
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
