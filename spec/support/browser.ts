import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import type { Test } from 'uvu'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { delimiter, join, sep } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'

// Which Chromium the browser tests drive (docs/library.md, "Building the package"):
// RESTDIR_CHROMIUM when set (a path, or `npm` for the one in node_modules),
// else a Chromium on PATH, else the one that @sparticuz/chromium carries in
// its npm tarball, so `npm ci` alone is enough to run every test.

/** Flags for a headless browser run as root in a container, with no network chatter. */
export const launchArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

/** Names a system Chromium goes by on PATH (Debian, Ubuntu, Fedora, Arch). */
const systemNames = ['chromium', 'chromium-browser']

export type BrowserChoice =
  | { source: 'RESTDIR_CHROMIUM' | 'PATH'; path: string }
  | { source: 'npm' }

export interface ChoiceInput {
  env: Record<string, string | undefined>
  /** Whether a file may be run; a parameter so the choice can be tested without the browsers. */
  isExecutable?: (path: string) => boolean
}

/** The browsers to try, in order: an explicit choice alone, else the system's, then npm's. */
export function chooseBrowsers({ env, isExecutable = canExecute }: ChoiceInput): BrowserChoice[] {
  const chosen = env.RESTDIR_CHROMIUM?.trim()
  if (chosen === 'npm') return [{ source: 'npm' }]
  if (chosen) return [{ source: 'RESTDIR_CHROMIUM', path: chosen }]
  const directories = (env.PATH ?? '').split(delimiter).filter(Boolean)
  const system = systemNames.flatMap((name) => directories.map((directory) => join(directory, name))).find(isExecutable)
  return system ? [{ source: 'PATH', path: system }, { source: 'npm' }] : [{ source: 'npm' }]
}

/**
 * Starts the first browser of `chooseBrowsers` that starts. When none does,
 * the error says in one line what was tried and why each failed.
 */
export async function launchBrowser(env: Record<string, string | undefined> = process.env): Promise<Browser> {
  const faults: string[] = []
  for (const choice of chooseBrowsers({ env })) {
    const name = choice.source === 'npm' ? 'the Chromium of @sparticuz/chromium' : `${choice.path} (${choice.source})`
    try {
      const executablePath = choice.source === 'npm' ? await unpackNpmChromium() : choice.path
      return await chromium.launch({ executablePath, args: launchArgs, headless: true })
    } catch (error) {
      faults.push(`${name}: ${firstLine(error)}`)
    }
  }
  throw new Error(`no browser could start: ${faults.join('; ')}`)
}

/**
 * @sparticuz/chromium keeps the browser compressed and unpacks it into the
 * temporary folder on first use. Each version unpacks into a folder of its
 * own, made under another name and renamed into place, so test runs that
 * start at once never run a half-written browser or another version's.
 */
async function unpackNpmChromium(): Promise<string> {
  // The package's exports hide its package.json; find it beside the entry point.
  const entry = createRequire(import.meta.url).resolve('@sparticuz/chromium')
  const packageJson = join(entry.slice(0, entry.lastIndexOf(`${sep}build${sep}`)), 'package.json')
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }
  const home = join(tmpdir(), `restdir-chromium-${version}-${process.getuid?.() ?? 'user'}`)
  const binary = join(home, 'chromium')
  if (existsSync(binary)) return binary
  const partial = `${home}.partial-${process.pid}`
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial, { recursive: true })
  const { default: Chromium } = await import('@sparticuz/chromium')
  // The package unpacks into os.tmpdir(), which follows TMPDIR.
  const savedTmpdir = process.env.TMPDIR
  process.env.TMPDIR = partial
  try {
    await Chromium.executablePath()
  } finally {
    if (savedTmpdir === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = savedTmpdir
  }
  try {
    renameSync(partial, home)
  } catch (error) {
    // Another run put its copy in place first: use that one.
    rmSync(partial, { recursive: true, force: true })
    if (!existsSync(binary)) throw error
  }
  return binary
}

function canExecute(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n').map((line) => line.trim()).find(Boolean) ?? 'failed without a message'
}

/** Chrome logs the 4xx a lesson asks for as a failed load: an answer, not a fault of the page. */
export const expectedHttpError = /^Failed to load resource: the server responded with a status of 4\d\d/

/**
 * The playground at `url` in a context of its own, once `ready` (a selector) shows, with what went
 * wrong on the page: its console's errors and warnings (a 4xx's failed load aside) and uncaught errors.
 * `closing` gets the context's close.
 */
export async function openPlayground(browser: Browser, url: string, ready: string, closing: Array<() => Promise<void>>): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
  closing.push(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(5000)
  const problems: string[] = []
  page.on('console', (message) => {
    if ((message.type() === 'error' || message.type() === 'warning') && !expectedHttpError.test(message.text())) problems.push(`console ${message.type()}: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  await page.goto(url)
  await page.waitForSelector('html[data-ready]')
  await page.waitForSelector(ready)
  return { page, problems }
}

/** Opens a lesson's step if it is closed, sends it, and waits until it is done. */
export async function runStep(page: Page, step: string): Promise<void> {
  const details = page.locator(`[data-step="${step}"] details`)
  if (!(await details.evaluate((element) => (element as HTMLDetailsElement).open))) await page.click(`[data-step="${step}"] summary`)
  await page.click(`[data-step="${step}"] .button.primary`)
  await page.waitForSelector(`[data-step="${step}"].done`)
}

/**
 * The browser a spec file's tests share: launched before them and closed after them, and what each
 * test opens (`closing`, a page's context among them) closed after it, last first. A browser that
 * cannot start fails each test that opens a page, naming why (uvu drops an error thrown by a hook).
 */
export function sharedBrowser(suite: Test): { closing: Array<() => Promise<void>>; open(url: string, ready: string): Promise<{ page: Page; problems: string[] }> } {
  let browser: Browser | undefined
  let fault = ''
  const closing: Array<() => Promise<void>> = []
  suite.before(async () => {
    try {
      browser = await launchBrowser()
    } catch (error) {
      fault = (error as Error).message
    }
  })
  suite.after(async () => {
    await browser?.close()
  })
  suite.after.each(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })
  return {
    closing,
    open(url, ready) {
      if (!browser) throw new Error(fault)
      return openPlayground(browser, url, ready, closing)
    },
  }
}
