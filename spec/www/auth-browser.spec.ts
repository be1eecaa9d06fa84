import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { hashPassword } from '../../lib/auth/bcrypt.ts'
import { runStep, sharedBrowser } from '../support/browser.ts'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'

// The playground on a db.json served with --auth (docs/accounts.md, "The playground"), in a
// headless Chromium: the page learns from `?_openapi` that the server keeps accounts and adds the
// sign-in track: register, log in, the token sent with the next steps (and shown in the curl view),
// a 401 without it, a 403 on another user's record. No password hash reaches the page, and the
// page writes nothing to the file unless the person sends it.

const { closing, open } = sharedBrowser(test)

const BCRYPT = /\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}/
/** A user json-server-auth (or restdir) registered before: its password as a bcrypt hash, cost 4 to be quick. */
const db = {
  users: [{ id: 1, email: 'olivier@mail.com', password: hashPassword('bestPassw0rd', 4), firstname: 'Olivier' }],
  messages: [{ id: 1, userId: 1, text: 'hello' }],
}
const text = JSON.stringify(db, null, 2)

async function serveFile(auth: boolean): Promise<{ server: TestServer; file: string }> {
  const folder = await makeTempDir('restdir-auth-page-')
  closing.push(() => rm(folder, { recursive: true, force: true }))
  const file = path.join(folder, 'db.json')
  await writeFile(file, text)
  const server = await startServer({ store: file, auth })
  closing.push(() => server.close())
  return { server, file }
}

function openPage(server: TestServer): Promise<{ page: Page; problems: string[] }> {
  return open(server.url + '/', '[data-step]')
}

const SIGN_IN = ['signin-register', 'signin-login', 'signin-own', 'signin-no-token', 'signin-forbidden']

test('under --auth the page teaches signing in: register, log in, the token sent as a bearer and shown in curl, a 401 without it, a 403 on another\'s record', async () => {
  const { server, file } = await serveFile(true)
  const { page, problems } = await openPage(server)
  await page.waitForSelector('[data-step="signin-register"]')
  assert.equal(await page.$$eval('.track-title', (titles) => titles.map((title) => title.textContent)), ['Your db.json', 'Sign in'])
  const steps = await page.$$eval('[data-step]', (items) => items.map((item) => item.getAttribute('data-step')))
  assert.equal(steps.filter((step) => step!.startsWith('signin-')), SIGN_IN)
  assert.ok(steps.includes('file-messages-list'), 'the file\'s track is on messages: a POST to users registers')
  await page.waitForTimeout(200)
  assert.is(await readFile(file, 'utf8'), text, 'the page read, and wrote nothing')
  assert.ok(await page.locator('[data-step="signin-own"] .button.primary').isDisabled(), 'a guarded step waits for a token')

  await runStep(page, 'signin-register')
  const stored = JSON.parse(await readFile(file, 'utf8')) as typeof db
  assert.is(stored.users.length, 2)
  assert.match(stored.users[1].password, BCRYPT, 'the file holds the new password as a hash')
  await runStep(page, 'signin-login')
  const token = JSON.parse(await page.textContent('#exchange .raw.body') ?? 'null').accessToken as string
  assert.match(token, /^ey[\w-]+\.[\w-]+\.[\w-]+$/)

  await runStep(page, 'signin-own')
  assert.equal(JSON.parse(await page.textContent('#exchange .raw.body') ?? 'null'), { id: 2, email: 'ada@example.com', name: 'Ada' })
  assert.match(await page.textContent('#exchange .curl-command') ?? '', `-H 'Authorization: Bearer ${token}'`)
  assert.match(await page.textContent('.memory') ?? '', `token = ${token.slice(0, 16)}…`)

  await runStep(page, 'signin-no-token')
  assert.match(await page.textContent('#exchange .status-code') ?? '', / 401 /)
  assert.not.match(await page.textContent('#exchange .curl-command') ?? '', 'Authorization')

  await runStep(page, 'signin-forbidden')
  assert.match(await page.textContent('#exchange .status-code') ?? '', / 403 /)
  assert.match(await page.textContent('#exchange') ?? '', /Private resource access/)
  assert.equal(problems, [])
})

test('under --auth no password hash reaches the page: not in an answer of users, the lessons, the tree or where it is stored', async () => {
  const { server, file } = await serveFile(true)
  const { page, problems } = await openPage(server)
  await page.waitForSelector('[data-step="signin-register"]')
  await runStep(page, 'signin-register')
  await page.selectOption('#method', 'GET')
  await page.fill('#path', '/users/1')
  await page.click('#send')
  // The register step's exchange is on the page until this one replaces it.
  await page.waitForFunction(() => document.querySelector('#exchange .start-line')?.textContent?.includes('/users/1'))
  assert.equal(JSON.parse(await page.textContent('#exchange .raw.body') ?? 'null'), { id: 1, email: 'olivier@mail.com', firstname: 'Olivier' })
  await page.fill('#path', '/db')
  await page.click('#send')
  await page.waitForFunction(() => document.querySelector('#exchange .start-line')?.textContent?.includes('/db'))
  const hashes = (JSON.parse(await readFile(file, 'utf8')) as typeof db).users.map((user) => user.password)
  assert.is(hashes.length, 2)
  const shown = await page.evaluate(() => document.documentElement.innerHTML)
  for (const hash of hashes) assert.not.ok(shown.includes(hash), 'a hash of the file is on the page')
  assert.not.match(shown, BCRYPT)
  assert.equal(problems, [])
})

test('without --auth the db.json\'s page has no sign-in track', async () => {
  const { server } = await serveFile(false)
  const { page, problems } = await openPage(server)
  await page.waitForSelector('[data-step="file-users-list"]')
  await page.waitForTimeout(300)
  assert.equal(await page.$$eval('.track-title', (titles) => titles.map((title) => title.textContent)), ['Your db.json'])
  assert.is(await page.$('[data-step^="signin-"]'), null)
  assert.equal(problems, [])
})

test.run()
