import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { chooseBrowsers, launchBrowser } from '../support/browser.ts'

// The choice of browser for the playground's tests (spec/support/browser.ts), on
// folders made for each test, so it is checked with or without a Chromium
// installed on this machine.

let root: string

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'restdir-browser-'))
})

test.after(async () => {
  await rm(root, { recursive: true, force: true })
})

/** A folder for PATH holding the given files; `executable` ones get mode 755. */
async function binFolder(name: string, files: Record<string, { executable: boolean; script?: string }>): Promise<string> {
  const folder = join(root, name)
  await mkdir(folder, { recursive: true })
  for (const [file, { executable, script }] of Object.entries(files)) {
    await writeFile(join(folder, file), script ?? '#!/bin/sh\nexit 0\n')
    await chmod(join(folder, file), executable ? 0o755 : 0o644)
  }
  return folder
}

/** The message launchBrowser fails with; fails the test if a browser starts. */
async function launchFault(env: Record<string, string>): Promise<string> {
  try {
    const browser = await launchBrowser(env)
    await browser.close()
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`a browser started with ${JSON.stringify(env)}`)
}

test('a Chromium on PATH is tried first, and the npm browser after it', async () => {
  const empty = await binFolder('empty', {})
  const system = await binFolder('system', { chromium: { executable: true } })
  assert.equal(chooseBrowsers({ env: { PATH: [empty, system].join(delimiter) } }), [
    { source: 'PATH', path: join(system, 'chromium') },
    { source: 'npm' },
  ])
})

test('chromium-browser counts as a system Chromium too', async () => {
  const ubuntu = await binFolder('ubuntu', { 'chromium-browser': { executable: true } })
  assert.equal(chooseBrowsers({ env: { PATH: ubuntu } })[0], { source: 'PATH', path: join(ubuntu, 'chromium-browser') })
})

test('without a Chromium on PATH the npm browser is the only one tried', async () => {
  const plain = await binFolder('plain', { node: { executable: true } })
  const unrunnable = await binFolder('unrunnable', { chromium: { executable: false } })
  await mkdir(join(root, 'folder-named', 'chromium'), { recursive: true })
  const path = [plain, unrunnable, join(root, 'folder-named')].join(delimiter)
  assert.equal(chooseBrowsers({ env: { PATH: path } }), [{ source: 'npm' }])
  assert.equal(chooseBrowsers({ env: {} }), [{ source: 'npm' }])
})

test('RESTDIR_CHROMIUM names the one browser tried, even with a Chromium on PATH', async () => {
  const system = await binFolder('system-too', { chromium: { executable: true } })
  assert.equal(chooseBrowsers({ env: { PATH: system, RESTDIR_CHROMIUM: '/opt/chrome/chrome' } }), [
    { source: 'RESTDIR_CHROMIUM', path: '/opt/chrome/chrome' },
  ])
  assert.equal(chooseBrowsers({ env: { PATH: system, RESTDIR_CHROMIUM: 'npm' } }), [{ source: 'npm' }])
  assert.equal(chooseBrowsers({ env: { PATH: system, RESTDIR_CHROMIUM: '' } })[0], { source: 'PATH', path: join(system, 'chromium') })
})

test('when no browser starts, the error says in one line which was tried and why', async () => {
  const missing = join(root, 'nowhere', 'chromium')
  const refused = await launchFault({ RESTDIR_CHROMIUM: missing })
  assert.not.match(refused, /\n/)
  assert.ok(refused.startsWith(`no browser could start: ${missing} (RESTDIR_CHROMIUM): `), refused)

  const broken = await binFolder('broken', { chromium: { executable: true, script: '#!/bin/sh\necho "cannot open display" >&2\nexit 1\n' } })
  const crashed = await launchFault({ RESTDIR_CHROMIUM: join(broken, 'chromium') })
  assert.not.match(crashed, /\n/)
  assert.match(crashed, `${join(broken, 'chromium')} (RESTDIR_CHROMIUM): `)
})

test('the Chromium that ships in node_modules starts and runs a page', async () => {
  const browser = await launchBrowser({ RESTDIR_CHROMIUM: 'npm' })
  try {
    const page = await browser.newPage()
    await page.setContent('<p id="sum"></p><script>document.getElementById("sum").textContent = String(40 + 2)</script>')
    assert.is(await page.textContent('#sum'), '42')
  } finally {
    await browser.close()
  }
})

test.run()
