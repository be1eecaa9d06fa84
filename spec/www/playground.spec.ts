import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdir } from 'node:fs/promises'
import type { Browser, Page } from 'playwright-core'
import { expectedHttpError, launchBrowser, runStep } from '../support/browser.ts'
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'
import { createServer, type RestdirServer } from '../../lib/server.ts'
import { FileStore } from '../../lib/store/index.ts'

// The playground driven in a headless Chromium (spec/support/browser.ts chooses which),
// against restdir running in this process: with the API at the root and under --prefix /api.
const desktop = { width: 1440, height: 900 }
const phone = { width: 375, height: 800 }

let browser: Browser | undefined
/** Why no browser started: each test fails with this line (uvu drops an error thrown by a hook). */
let browserFault = ''
let plain: TestServer
let prefixed: TestServer

test.before(async () => {
  await mkdir('artifacts', { recursive: true })
  try {
    browser = await launchBrowser()
  } catch (error) {
    browserFault = (error as Error).message
  }
  plain = await startServer()
  prefixed = await startServer({ prefix: '/api' })
})

test.after(async () => {
  await browser?.close()
  await plain?.close()
  await prefixed?.close()
})

interface OpenPage {
  page: Page
  /** Console errors and warnings, and uncaught page errors, seen so far. */
  problems: string[]
  /** Closes the page and fails when it logged a problem. */
  close(): Promise<void>
}


async function openPage(server: TestServer, viewport = desktop): Promise<OpenPage> {
  if (!browser) throw new Error(browserFault)
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  page.setDefaultTimeout(5000)
  const problems: string[] = []
  page.on('console', (message) => {
    if ((message.type() === 'error' || message.type() === 'warning') && !expectedHttpError.test(message.text())) {
      problems.push(`console ${message.type()}: ${message.text()}`)
    }
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  await page.goto(server.url + '/')
  await page.waitForSelector('html[data-ready]')
  await page.waitForSelector('#live[data-state="live"]')
  return {
    page,
    problems,
    async close() {
      await context.close()
      assert.equal(problems, [], 'the page logged no errors or warnings')
    },
  }
}

/** The API base a server was started with, as the page should name it. */
function apiBaseOf(server: TestServer): string {
  return server === prefixed ? '/api' : ''
}

/** Sends a request from outside the page, as another client of the store would. */
async function outside(server: TestServer, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(server.url + apiBaseOf(server) + path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

interface ShownExchange {
  requestLine: string
  statusLine: string
  meaning: string
  problem: string | undefined
  headers: string
  body: string
}

async function shownExchange(page: Page): Promise<ShownExchange> {
  return page.$eval('#exchange', (element) => ({
    requestLine: element.querySelector('.start-line')?.textContent ?? '',
    statusLine: element.querySelector('.status-code')?.textContent ?? '',
    meaning: element.querySelector('.status-meaning')?.textContent ?? '',
    problem: element.querySelector('.problem-detail')?.textContent ?? undefined,
    headers: element.querySelector('.response-headers')?.textContent ?? '',
    body: element.querySelector('.raw.body')?.textContent ?? '',
  }))
}

/** Labels of the tree items on screen, indented by level: "notes", "  first". */
async function visibleTree(page: Page): Promise<string[]> {
  return page.$$eval('#tree [role="treeitem"]', (items) => items
    .filter((item) => (item as HTMLElement).offsetParent !== null)
    .map((item) => '  '.repeat(Number(item.getAttribute('aria-level')) - 1) + (item.querySelector('.tree-label')?.textContent ?? '')))
}

async function waitForTree(page: Page, predicate: (labels: string[]) => boolean, what: string): Promise<string[]> {
  let labels: string[] = []
  for (let attempt = 0; attempt < 50; attempt++) {
    labels = await visibleTree(page)
    if (predicate(labels)) return labels
    await page.waitForTimeout(100)
  }
  assert.unreachable(`${what}; the tree shows:\n${labels.join('\n')}`)
  return labels
}

for (const mode of ['plain', 'prefixed'] as const) {
  const serverOf = () => (mode === 'plain' ? plain : prefixed)
  const name = (sentence: string) => `${sentence} (API at ${mode === 'plain' ? '/' : '/api'})`

  test(name('the page names the API base it learned from X-Restdir-Api'), async () => {
    const server = serverOf()
    const { page, close } = await openPage(server)
    assert.is(await page.textContent('#api-base'), apiBaseOf(server) || '/')
    assert.is(await page.textContent('#path-base'), apiBaseOf(server))
    await close()
  })

  test(name('the users lesson runs end to end, and the raw exchange shows each request, status and body'), async () => {
    const server = serverOf()
    const base = apiBaseOf(server)
    const { page, close } = await openPage(server)

    await runStep(page, 'create-user')
    let shown = await shownExchange(page)
    assert.is(shown.requestLine, `POST ${base}/user HTTP/1.1`)
    assert.is(shown.statusLine, 'HTTP/1.1 201 Created')
    assert.match(shown.meaning, /new resource was made/)
    assert.match(shown.headers, /Location: /)
    const user = JSON.parse(shown.body)
    assert.is(user.username, 'ada')
    assert.type(user.user_id, 'string')
    assert.ok(shown.body.includes('\n  "user_id": '), 'the body is pretty-printed')
    assert.match(await page.textContent('.memory') ?? '', user.user_id)

    await runStep(page, 'read-user')
    shown = await shownExchange(page)
    assert.is(shown.requestLine, `GET ${base}/user/${user.user_id} HTTP/1.1`)
    assert.is(shown.statusLine, 'HTTP/1.1 200 OK')
    assert.match(shown.meaning, /It worked/)
    assert.is(JSON.parse(shown.body).name, 'Ada Lovelace')

    await runStep(page, 'replace-user')
    shown = await shownExchange(page)
    assert.is(shown.requestLine, `PUT ${base}/user/${user.user_id} HTTP/1.1`)
    assert.is(JSON.parse(shown.body).name, 'Augusta Ada King')

    await runStep(page, 'patch-user')
    shown = await shownExchange(page)
    assert.is(shown.requestLine, `PATCH ${base}/user/${user.user_id} HTTP/1.1`)
    const patched = JSON.parse(shown.body)
    assert.is(patched.title, 'Countess of Lovelace')
    assert.is(patched.born, 1815, 'a merge patch keeps the fields it does not name')

    await runStep(page, 'create-playlist')
    shown = await shownExchange(page)
    assert.is(shown.statusLine, 'HTTP/1.1 201 Created')
    const playlist = JSON.parse(shown.body)
    assert.is(playlist.user_id, user.user_id)
    assert.is(playlist.songs.length, 2)

    await runStep(page, 'read-playlist')
    shown = await shownExchange(page)
    assert.is(shown.requestLine, `GET ${base}/user/${user.user_id}/playlist/${playlist.playlist_id} HTTP/1.1`)

    await runStep(page, 'list-playlists')
    assert.is(JSON.parse((await shownExchange(page)).body).length, 1)

    await runStep(page, 'list-users')
    assert.ok(JSON.parse((await shownExchange(page)).body).some((listed: { user_id: string }) => listed.user_id === user.user_id))

    await runStep(page, 'delete-user')
    shown = await shownExchange(page)
    assert.is(shown.requestLine, `DELETE ${base}/user/${user.user_id} HTTP/1.1`)
    assert.is(shown.statusLine, 'HTTP/1.1 200 OK')

    await runStep(page, 'user-gone')
    shown = await shownExchange(page)
    assert.is(shown.statusLine, 'HTTP/1.1 404 Not Found')
    assert.match(shown.meaning, /Nothing lives at this URL/)
    assert.ok(shown.problem, 'the problem detail is shown on its own')
    assert.match(shown.headers, /Content-Type: application\/problem\+json/)
    assert.is((await outside(server, 'GET', `/user/${user.user_id}/playlist/${playlist.playlist_id}`)).status, 404, 'the playlists went with the user')

    assert.match(await page.textContent('.lessons-progress') ?? '', /^10 of 13 steps done/)
    await page.screenshot({ path: `artifacts/playground${mode === 'plain' ? '' : '-prefix'}.png`, fullPage: true })
    await close()
  })

  test(name('the documents lesson stores a note, lists the folder and meets 412 on a stale If-Match'), async () => {
    const { page, close } = await openPage(serverOf())
    await runStep(page, 'put-note')
    await runStep(page, 'list-notes')
    await runStep(page, 'stale-update')
    const shown = await shownExchange(page)
    assert.is(shown.statusLine, 'HTTP/1.1 412 Precondition Failed')
    assert.ok(await page.$eval('.raw.request-raw', (element) => element.textContent?.includes('If-Match: "an-old-version"')), 'the extra header is shown as sent')
    await outside(serverOf(), 'DELETE', '/notes/first')
    await close()
  })

  test(name('writes from outside the page show up in the tree live, and deletes take their subtree'), async () => {
    const server = serverOf()
    const { page, close } = await openPage(server)
    await outside(server, 'PUT', '/live/first', { text: 'one' })
    await waitForTree(page, (labels) => labels.includes('  live'), 'a PUT from outside adds its node')

    await page.click('#tree .tree-row:has-text("live")')
    await waitForTree(page, (labels) => labels.includes('    first'), 'opening a node lists its children')
    assert.is(await page.inputValue('#method'), 'GET')
    assert.is(await page.inputValue('#path'), '/live')

    await outside(server, 'PUT', '/live/second one', { text: 'two' })
    await waitForTree(page, (labels) => labels.includes('    second one'), 'a new child appears under an open node, its name decoded')
    await outside(server, 'PATCH', '/live/first', { text: 'changed' })
    await page.waitForSelector('#tree .tree-row.flash:has-text("first")')

    await outside(server, 'DELETE', '/live/first')
    await waitForTree(page, (labels) => !labels.includes('    first') && labels.includes('    second one'), 'a deleted node leaves the tree')
    await outside(server, 'DELETE', '/live/second%20one')
    await waitForTree(page, (labels) => !labels.includes('  live'), 'an ancestor the store pruned leaves the tree too')

    await outside(server, 'POST', '/closed', { text: 'never opened' })
    await waitForTree(page, (labels) => labels.includes('  closed'), 'a POST from outside adds the collection')
    const [created] = await (await outside(server, 'GET', '/closed')).json()
    await outside(server, 'DELETE', `/closed/${created.id}`)
    await waitForTree(page, (labels) => !labels.includes('  closed'), 'a pruned node that was never opened leaves the tree')
    await close()
  })

  test(name('the tree lists what was stored before the page opened'), async () => {
    const server = serverOf()
    await outside(server, 'PUT', '/before/doc', { text: 'old' })
    const { page, close } = await openPage(server)
    await waitForTree(page, (labels) => labels.includes('  before'), 'GET <api>/?_children lists the root')
    assert.is(await page.isVisible('#tree-problem'), false, 'no listing problem is reported')
    await outside(server, 'DELETE', '/before/doc')
    await close()
  })
}

test('the tree follows the store across a restart of the server, without a reload', async () => {
  const dir = await makeTempDir()
  const first = await startServer({ store: dir })
  const port = first.port
  const { page, problems, close } = await openPage(first)
  let second: RestdirServer | undefined
  try {
    await fetch(`${first.url}/kept/doc`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{}' })
    await waitForTree(page, (labels) => labels.includes('  kept'), 'a PUT before the restart shows')
    await first.close(true)
    await page.waitForSelector('#live:not([data-state="live"])')
    // While no server runs, the store changes (as an import or a person would change it): no event tells of it.
    const store = await FileStore.open(dir)
    await store.write(['while-away', 'doc'], { id: 'doc' })
    await store.remove(['kept'])
    await store.close()
    second = createServer({ store: dir, quiet: true })
    await second.ready
    await new Promise<void>((resolve) => second!.listen(port, '127.0.0.1', resolve))
    await page.waitForSelector('#live[data-state="live"]', { timeout: 15_000 })
    await waitForTree(page, (labels) => labels.includes('  while-away') && !labels.includes('  kept'), 'the tree reads the store again after the gap')
    await fetch(`${first.url}/after/doc`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{}' })
    await waitForTree(page, (labels) => labels.includes('  after'), 'live changes follow again')
  } finally {
    // The browser reports the connections the stopped server refused; those are expected here.
    problems.splice(0, problems.length, ...problems.filter((problem) => !/ERR_CONNECTION_REFUSED/.test(problem)))
    await close()
    await second?.shutdown()
    await rm(dir, { recursive: true, force: true })
  }
})

test('the keyboard reaches the send button with Tab, and Ctrl+Enter sends', async () => {
  const { page, close } = await openPage(plain)
  await page.selectOption('#method', 'GET')
  await page.fill('#path', '/user')
  await page.focus('body')
  for (let presses = 0; presses < 8 && (await page.evaluate(() => document.activeElement?.id)) !== 'send'; presses++) {
    await page.keyboard.press('Tab')
  }
  assert.is(await page.evaluate(() => document.activeElement?.id), 'send', 'Tab reaches Send within a few presses')
  assert.is(await page.$eval('#send', (element) => getComputedStyle(element).outlineStyle), 'solid', 'the focused button shows a focus ring')

  await page.focus('#path')
  await page.keyboard.press('Control+Enter')
  await page.waitForSelector('#exchange .status-line')
  assert.is((await shownExchange(page)).requestLine, 'GET /user HTTP/1.1')
  await close()
})

test('the tree works from the keyboard: arrows move and open, Enter puts a GET in the form', async () => {
  // Under the prefix, so this test of the keyboard does not hang on how the root is listed at "/".
  await outside(prefixed, 'PUT', '/keys/a', { text: 'a' })
  const { page, close } = await openPage(prefixed)
  await waitForTree(page, (labels) => labels.includes('  keys'), 'the stored node is listed')
  await page.focus('#tree [role="treeitem"][aria-level="1"]')
  const focused = () => page.evaluate(() => document.activeElement?.querySelector('.tree-label')?.textContent)
  await page.keyboard.press('ArrowDown')
  // A few nodes may come before it (other tests store some): ArrowDown walks down to it.
  for (let presses = 1; (await focused()) !== 'keys' && presses < 50; presses++) await page.keyboard.press('ArrowDown')
  assert.is(await focused(), 'keys', 'ArrowDown reaches the node')
  await page.keyboard.press('ArrowRight')
  await waitForTree(page, (labels) => labels.includes('    a'), 'ArrowRight opens the node')
  await page.keyboard.press('ArrowRight')
  await page.keyboard.press('Enter')
  assert.is(await page.inputValue('#path'), '/keys/a')
  await outside(prefixed, 'DELETE', '/keys')
  await close()
})

test('invalid JSON is caught before sending, with a message that says where and why', async () => {
  const { page, close } = await openPage(plain)
  let sent = 0
  page.on('request', (request) => {
    if (request.method() === 'POST') sent++
  })
  await page.selectOption('#method', 'POST')
  await page.fill('#body', '{"name": "Ada",}')
  await page.click('#send')
  const message = await page.textContent('#body-message') ?? ''
  assert.match(message, /Line 1, column \d+/)
  assert.match(message, /no comma after the last item/)
  assert.is(await page.getAttribute('#body', 'aria-invalid'), 'true')
  assert.is(sent, 0, 'nothing was sent')
  assert.ok(await page.isVisible('#exchange .empty-state'))
  await close()
})

test('a POST with a tricky body is shown as the curl command that sends it, quoted for a POSIX shell', async () => {
  const { page, close } = await openPage(plain)
  await page.selectOption('#method', 'POST')
  await page.fill('#path', '/curl-shown')
  const body = '{\n  "say": "it\'s $HOME, `id` and \\\\ 🎉"\n}'
  await page.fill('#body', body)
  await page.click('#headers-box summary')
  await page.fill('#headers', 'X-Trace: it\'s "here"')
  await page.click('#send')
  await page.waitForSelector('#exchange .curl-command')
  assert.is(await page.textContent('#exchange .curl-command'), [
    `curl -i -X POST '${plain.url}/curl-shown' \\`,
    "  -H 'Content-Type: application/json' \\",
    `  -H 'X-Trace: it'\\''s "here"' \\`,
    "  --data-raw '{",
    `  "say": "it'\\''s $HOME, \`id\` and \\\\ 🎉"`,
    "}'",
  ].join('\n'))
  await page.click('#exchange .copy-curl')
  await page.waitForFunction(() => /Copied|Selected/.test(document.querySelector('#exchange .copy-status')?.textContent ?? ''))
  await outside(plain, 'DELETE', '/curl-shown')
  await close()
})

test('each exchange on a folder store names the file its document lives in, as the store spells it', async () => {
  const { page, close } = await openPage(plain)
  await page.selectOption('#method', 'PUT')
  await page.fill('#path', '/notes/Where Now')
  await page.fill('#body', '{"text": "here"}')
  await page.click('#send')
  await page.waitForSelector('#exchange .store-location[data-kind="folder"]')
  const shown = await page.textContent('#exchange .store-location') ?? ''
  assert.is(shown, `${path.basename(plain.dir)}/notes/!where%20!now/@.json`)
  // The name is the store folder's own, and the rest is the real file.
  const file = path.join(path.dirname(plain.dir), ...shown.split('/'))
  assert.equal(JSON.parse(await readFile(file, 'utf8')), { text: 'here', id: 'Where Now' })
  await outside(plain, 'DELETE', '/notes/Where%20Now')
  await close()
})

test('a mistake in the JSON body is shown with its line and column a moment after typing, without pressing Send', async () => {
  const { page, close } = await openPage(plain)
  let sent = 0
  page.on('request', (request) => {
    if (request.method() === 'POST') sent++
  })
  await page.selectOption('#method', 'POST')
  await page.click('#body')
  await page.keyboard.press('Control+A')
  await page.keyboard.press('Delete')
  await page.keyboard.type('{"a": 1,}')
  await page.waitForFunction(() => /Line 1, column 9/.test(document.querySelector('#body-message')?.textContent ?? ''), undefined, { timeout: 1000 })
  assert.match(await page.textContent('#body-message') ?? '', /no comma after the last item/)
  assert.is(await page.evaluate(() => document.activeElement?.id), 'body', 'still typing: the body kept the focus')
  assert.is(sent, 0, 'nothing was sent')
  await close()
})

test('at phone width the panels stack and nothing overflows sideways', async () => {
  await outside(plain, 'PUT', '/phone/a-rather-long-document-name-that-could-push-things-sideways', { text: 'x'.repeat(300) })
  const { page, close } = await openPage(plain, phone)
  await runStep(page, 'list-users')
  await page.fill('#path', '/phone/a-rather-long-document-name-that-could-push-things-sideways')
  await page.selectOption('#method', 'GET')
  await page.click('#send')
  // Wait for this answer (an earlier one is on screen already), then measure everything in one go, so no reflow falls between.
  await page.waitForFunction(() => (document.querySelector('#exchange .request-raw')?.textContent ?? '').includes('a-rather-long-document-name'))
  await page.waitForSelector('#exchange .raw.body')
  // No helper functions inside evaluate: the test runner's transform would name them with a helper the page lacks.
  const layout = await page.evaluate(() => ({
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    work: document.querySelector('.workbench')!.getBoundingClientRect().toJSON() as DOMRect,
    lessons: document.querySelector('.lessons-panel')!.getBoundingClientRect().toJSON() as DOMRect,
    tree: document.querySelector('.tree-panel')!.getBoundingClientRect().toJSON() as DOMRect,
  }))
  assert.is(layout.overflow, 0, 'no horizontal scrolling')
  assert.ok(layout.lessons.top >= layout.work.bottom, 'the lessons come below the request and answer')
  assert.ok(layout.tree.top >= layout.lessons.bottom, 'the tree comes last')
  for (const panel of [layout.work, layout.lessons, layout.tree]) assert.ok(panel.right <= phone.width, 'each panel fits the screen')
  await page.screenshot({ path: 'artifacts/playground-phone.png', fullPage: true })
  await outside(plain, 'DELETE', '/phone')
  await close()
})

test('the lessons about users and playlists show only when the server declares them', async () => {
  const undeclared = await startServer({ resources: 'none' })
  try {
    const { page, close } = await openPage(undeclared)
    await page.waitForFunction(() => document.querySelectorAll('.track').length === 1)
    assert.equal(await page.$$eval('.track-title', (titles) => titles.map((title) => title.textContent)), ['Any URL is a document'])
    assert.is(await page.$('[data-step="create-user"]'), null)
    assert.match(await page.textContent('.lessons-progress') ?? '', /^0 of 3 steps done/)
    await runStep(page, 'put-note')
    await outside(undeclared, 'DELETE', '/notes/first')
    await close()
  } finally {
    await undeclared.close()
  }
  const { page, close } = await openPage(plain)
  await page.waitForTimeout(300) // the description has been read: the seed's server keeps every track
  assert.is(await page.$$eval('.track', (tracks) => tracks.length), 2)
  await close()
})

test.run()
