import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { runStep, sharedBrowser } from '../support/browser.ts'
import { startServerOnFolder, type TestServer } from '../support/helpers.ts'

// The playground on the declared families served with --auth (docs/accounts.md, "The declared
// families"), in a headless Chromium: the page learns from `?_openapi` that the users are the
// accounts and teaches signing in first (POST /user with a username, POST /login, the token sent
// as a bearer and shown in the curl view, a 401 without it, a 403 on another user's subtree); the
// seed's playlist steps then send the token. No password hash reaches the page.

const { closing, open } = sharedBrowser(test)

const BCRYPT = /\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}/
const SIGN_IN = ['signin-register', 'signin-login', 'signin-own', 'signin-no-token', 'signin-forbidden']

async function serve(auth: boolean): Promise<TestServer> {
  const server = await startServerOnFolder({ auth })
  closing.push(() => server.close())
  return server
}

function openPage(server: TestServer, ready: string): Promise<{ page: Page; problems: string[] }> {
  return open(server.url + '/', ready)
}

async function status(page: Page): Promise<string> {
  return await page.textContent('#exchange .status-code') ?? ''
}

/** Every file below `dir`, as text. */
async function storedTexts(dir: string): Promise<string> {
  const names = await readdir(dir, { recursive: true, withFileTypes: true })
  const texts = await Promise.all(names.filter((entry) => entry.isFile()).map((entry) => readFile(path.join(entry.parentPath, entry.name), 'utf8')))
  return texts.join('\n')
}

test('under --auth on the declared families the page teaches signing in first, and the playlist steps send the token', async () => {
  const server = await serve(true)
  const { page, problems } = await openPage(server, '[data-step="signin-register"]')
  assert.equal(await page.$$eval('.track-title', (titles) => titles.map((title) => title.textContent)), ['Sign in', 'Users and playlists'])
  const steps = await page.$$eval('[data-step]', (items) => items.map((item) => item.getAttribute('data-step')))
  assert.equal(steps.slice(0, SIGN_IN.length), SIGN_IN)
  assert.not.ok(steps.includes('create-user'), 'registering creates the user')
  assert.ok(await page.locator('[data-step="create-playlist"] .button.primary').isDisabled(), 'a playlist step waits for a token')

  await runStep(page, 'signin-register')
  assert.match(await status(page), / 201 /)
  await runStep(page, 'signin-login')
  const session = JSON.parse(await page.textContent('#exchange .raw.body') ?? 'null') as { accessToken: string; user: { user_id: string } }
  assert.match(session.accessToken, /^ey[\w-]+\.[\w-]+\.[\w-]+$/)
  assert.equal(Object.keys(session.user).sort(), ['name', 'user_id', 'username'])

  await runStep(page, 'signin-own')
  assert.is(JSON.parse(await page.textContent('#exchange .raw.body') ?? 'null').user_id, session.user.user_id)
  assert.match(await page.textContent('#exchange .curl-command') ?? '', `-H 'Authorization: Bearer ${session.accessToken}'`)

  await runStep(page, 'signin-no-token')
  assert.match(await status(page), / 401 /)
  assert.not.match(await page.textContent('#exchange .curl-command') ?? '', 'Authorization')

  await runStep(page, 'signin-forbidden')
  assert.match(await status(page), / 403 /)
  assert.match(await page.textContent('#exchange') ?? '', /Private resource access/)

  await runStep(page, 'create-playlist')
  assert.match(await status(page), / 201 /)
  assert.match(await page.textContent('#exchange .curl-command') ?? '', `-H 'Authorization: Bearer ${session.accessToken}'`)
  await runStep(page, 'read-playlist')
  await runStep(page, 'list-users')
  assert.equal((JSON.parse(await page.textContent('#exchange .raw.body') ?? 'null') as Array<{ user_id: string }>).map((user) => user.user_id), [session.user.user_id])

  const stored = await storedTexts(server.dir)
  assert.match(stored, BCRYPT, 'the store holds the password as a hash')
  assert.not.match(await page.evaluate(() => document.documentElement.innerHTML), BCRYPT)
  assert.equal(problems, [])
})

test('without --auth the store folder\'s page has no sign-in track, and creates its user', async () => {
  const server = await serve(false)
  const { page, problems } = await openPage(server, '[data-step="create-user"]')
  await page.waitForTimeout(300)
  assert.equal(await page.$$eval('.track-title', (titles) => titles.map((title) => title.textContent)), ['Users and playlists', 'Any URL is a document'])
  assert.is(await page.$('[data-step^="signin-"]'), null)
  assert.equal(problems, [])
})

test.run()
