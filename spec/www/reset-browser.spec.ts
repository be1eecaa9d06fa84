import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser } from '../support/browser.ts'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'

// A front end's end-to-end suite, as docs/http-api.md, "Resetting between tests" shows
// it: the fake back end is put back to its fixture before each test, and
// every test sees the fixture whatever the one before it did. Driven in a
// headless Chromium (spec/support/browser.ts) through the playground's request form.

const fixtureData = {
  posts: [
    { id: 1, title: 'first' },
    { id: 2, title: 'second' },
  ],
  profile: { name: 'typicode' },
}
const fixturePosts = [
  { id: 1, title: 'first' },
  { id: 2, title: 'second' },
]

let browser: Browser | undefined
let browserFault = ''
let folder: string
let plain: TestServer
let prefixed: TestServer
let readonly: TestServer
let page: Page | undefined

test.before(async () => {
  try {
    browser = await launchBrowser()
  } catch (error) {
    browserFault = (error as Error).message
  }
  folder = await makeTempDir('restdir-e2e-')
  const fixture = path.join(folder, 'db.json')
  await writeFile(fixture, JSON.stringify(fixtureData))
  plain = await startServer({ fixture })
  prefixed = await startServer({ fixture, prefix: '/api' })
  readonly = await startServer({ fixture, readonly: true })
})

test.after(async () => {
  await browser?.close()
  await plain?.close()
  await prefixed?.close()
  await readonly?.close()
  await rm(folder, { recursive: true, force: true })
})

// What an end-to-end suite does before each test: one request puts the fake back end back.
test.before.each(async () => {
  const answer = await fetch(`${plain.url}/?_reset`, { method: 'POST' })
  if (answer.status !== 200) throw new Error(`the reset answered ${answer.status}`)
})

test.after.each(async () => {
  await page?.context().close()
  page = undefined
})

async function openPage(server: TestServer): Promise<Page> {
  if (!browser) throw new Error(browserFault)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  page = await context.newPage()
  page.setDefaultTimeout(5000)
  await page.goto(server.url + '/')
  await page.waitForSelector('html[data-ready]')
  await page.waitForSelector('html[data-readonly]')
  return page
}

/** Sends a request with the page's form and waits for its answer to be shown. */
async function sendFromPage(page: Page, method: string, target: string, body?: unknown): Promise<string> {
  await page.selectOption('#method', method)
  await page.fill('#path', target)
  if (body !== undefined) await page.fill('#body', JSON.stringify(body))
  await page.click('#send')
  const line = `${method} ${target} HTTP/1.1`
  await page.waitForFunction((expected) => document.querySelector('#exchange .start-line')?.textContent === expected, line)
  return (await page.textContent('#exchange .status-code')) ?? ''
}

/** The posts as the page's own fetch sees them. */
function postsSeenByPage(page: Page): Promise<unknown> {
  return page.evaluate(async () => (await fetch('/posts', { cache: 'no-store' })).json())
}

test('the first test sees the fixture, then changes a post and adds one from the page', async () => {
  const page = await openPage(plain)
  assert.equal(await postsSeenByPage(page), fixturePosts)
  assert.is(await sendFromPage(page, 'PATCH', '/posts/1', { title: 'changed' }), 'HTTP/1.1 200 OK')
  assert.is(await sendFromPage(page, 'POST', '/posts', { title: 'third' }), 'HTTP/1.1 201 Created')
  assert.is(((await postsSeenByPage(page)) as unknown[]).length, 3)
})

test('the next test sees the fixture again, then deletes every post from the page', async () => {
  const page = await openPage(plain)
  assert.equal(await postsSeenByPage(page), fixturePosts)
  assert.is(await sendFromPage(page, 'DELETE', '/posts'), 'HTTP/1.1 204 No Content')
  assert.is(await sendFromPage(page, 'GET', '/posts'), 'HTTP/1.1 404 Not Found')
})

test('the third test sees the fixture again, in the live tree too', async () => {
  const page = await openPage(plain)
  assert.equal(await postsSeenByPage(page), fixturePosts)
  await page.waitForSelector('#tree .tree-label:text-is("posts")')
  await page.waitForSelector('#tree .tree-label:text-is("profile")')
})

test('the header links to the API description at the reserved ?_openapi, with or without a prefix', async () => {
  for (const [server, href] of [[plain, '/?_openapi'], [prefixed, '/api/?_openapi']] as const) {
    const page = await openPage(server)
    await page.waitForFunction((expected) => document.getElementById('api-description')?.getAttribute('href') === expected, href)
    const description = await page.evaluate(async () => (await fetch((document.getElementById('api-description') as HTMLAnchorElement).href)).json())
    assert.is(description.openapi, '3.1.0')
    assert.ok(description.paths['/posts'], 'the fixture collection is described')
    await page.context().close()
  }
})

test('the header says read-only on a --readonly server, and only there', async () => {
  const writable = await openPage(plain)
  assert.is(await writable.getAttribute('html', 'data-readonly'), 'false')
  assert.not.ok(await writable.isVisible('#read-only'))
  await writable.context().close()
  const page = await openPage(readonly)
  assert.is(await page.getAttribute('html', 'data-readonly'), 'true')
  assert.ok(await page.isVisible('#read-only'))
  assert.is((await page.textContent('#read-only'))?.trim(), 'read-only')
})

test.run()
