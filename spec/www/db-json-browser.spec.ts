import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { runStep, sharedBrowser } from '../support/browser.ts'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'

// The playground on a db.json (docs/json-server.md, "Serving a db.json"), driven in a headless
// Chromium: the file is its own declaration, so the form starts on the file's first collection, the
// lessons teach on the file's own resources, and nothing the page does writes to the file unless
// the person sends it.

const { closing, open } = sharedBrowser(test)

/** A singular resource first, then the collections: the first collection is not the first key. */
const db = {
  profile: { name: 'typicode' },
  articles: [{ id: 1, title: 'json-server', views: 10 }, { id: 2, title: 'restdir', views: 20 }],
  user: { name: 'ann' },
  comments: [{ id: 1, articleId: 1, body: 'nice' }],
}
const text = JSON.stringify(db, null, 2)

async function serveFile(): Promise<{ server: TestServer; file: string }> {
  const folder = await makeTempDir('restdir-db-json-page-')
  closing.push(() => rm(folder, { recursive: true, force: true }))
  const file = path.join(folder, 'db.json')
  await writeFile(file, text)
  const server = await startServer({ store: file })
  closing.push(() => server.close())
  return { server, file }
}

function openPage(server: TestServer): Promise<{ page: Page; problems: string[] }> {
  return open(server.url + '/', '#live[data-state="live"]')
}

test('on a db.json the form reads the file\'s first collection, and Send leaves the file as it is', async () => {
  const { server, file } = await serveFile()
  const { page, problems } = await openPage(server)
  await page.waitForSelector('[data-step]') // the page has read the file's resources
  await page.click('#send')
  await page.waitForSelector('#exchange .status-code')
  await page.waitForTimeout(300)
  assert.is(await readFile(file, 'utf8'), text, 'the file is byte for byte as it was')
  assert.equal([await page.inputValue('#method'), await page.inputValue('#path')], ['GET', '/articles'])
  assert.match(await page.textContent('#exchange .status-code') ?? '', / 200 /)
  assert.equal(JSON.parse(await page.textContent('#exchange .raw.body') ?? 'null'), db.articles)
  assert.equal(problems, [])
})

test('on a db.json the lessons teach on the file\'s own resources, and only the steps sent change the file', async () => {
  const { server, file } = await serveFile()
  const { page, problems } = await openPage(server)
  await page.waitForSelector('[data-step="file-articles-list"]')
  assert.equal(await page.$$eval('.track-title', (titles) => titles.map((title) => title.textContent)), ['Your db.json'])
  assert.is(await page.$('[data-step="create-user"]'), null, 'no lesson about the seed\'s users')
  assert.is(await page.$('[data-step="put-note"]'), null)
  const steps = await page.$$eval('[data-step]', (items) => items.map((item) => item.getAttribute('data-step')))
  assert.equal(steps, [
    'file-articles-list', 'file-articles-read-one', 'file-articles-query', 'file-articles-create', 'file-articles-patch',
    'file-articles-delete', 'file-articles-gone', 'file-articles-singular-profile', 'file-articles-nested-comments',
  ])
  for (const step of steps.slice(0, 3)) await runStep(page, step!)
  assert.is(await readFile(file, 'utf8'), text, 'the reads wrote nothing')
  await runStep(page, 'file-articles-create')
  await page.waitForTimeout(100)
  const created = JSON.parse(await readFile(file, 'utf8')) as typeof db
  assert.equal(created.articles[2], { id: 3, title: 'json-server', views: 10 }, 'the new article is in the file, one like the first with the next id')
  for (const step of steps.slice(4)) await runStep(page, step!)
  assert.equal(JSON.parse(await readFile(file, 'utf8')), db, 'what the lesson added it took away again')
  assert.match(await page.textContent('.lessons-progress') ?? '', /^9 of 9 steps done/)
  assert.equal(problems, [])
})

test('a hand edit of the db.json shows in the tree within a second, with no request of the page or of anyone', async () => {
  const { server, file } = await serveFile()
  const { page, problems } = await openPage(server)
  await page.waitForSelector('[data-step]')
  const labels = () => page.$$eval('#tree [role="treeitem"]', (items) => items.map((item) => item.querySelector('.tree-label')?.textContent ?? ''))
  await page.waitForFunction(() => [...document.querySelectorAll('#tree .tree-label')].some((label) => label.textContent === 'articles'))
  assert.not.ok((await labels()).includes('tags'))
  await writeFile(file, JSON.stringify({ ...db, tags: [{ id: 1, name: 'by hand' }] }, null, 2))
  const started = Date.now()
  await page.waitForFunction(() => [...document.querySelectorAll('#tree .tree-label')].some((label) => label.textContent === 'tags'), undefined, { timeout: 3000 })
  assert.ok(Date.now() - started <= 1000, `shown after ${Date.now() - started} ms`)
  assert.equal(problems, [])
})

test.run()
