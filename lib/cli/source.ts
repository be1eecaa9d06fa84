import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { statSync } from 'node:fs'

/*
 * The sources json-server 0.17 loads into memory rather than serves from a
 * file (docs/json-server.md, "A URL or a seed.js"): a remote JSON fetched once
 * at start, and a JavaScript module whose export is the data or a function
 * that returns it. Each becomes the data restdir serves from a memory store;
 * one that cannot be had stops the start with what went wrong.
 */

/** What the one argument names when it is data to load rather than a store to open. */
export type LoadedSourceKind = 'url' | 'module'

/** A source that cannot be loaded: the message says which and why. */
export class SourceError extends Error {}

/** How long a remote JSON may take, headers and body, before the start gives up on it. */
export const FETCH_TIMEOUT_MS = 30_000

/** `http://…` or `https://…`: a remote JSON (json-server 0.17's `is.URL`). */
export function isUrlSource(location: string): boolean {
  return /^https?:\/\//i.test(location)
}

/** A `.js`, `.cjs` or `.mjs` file: a module whose export is the data (json-server 0.17's `is.JS`, and the module kinds Node tells apart). */
export function isModuleSource(location: string): boolean {
  return /\.[cm]?js$/i.test(location)
}

export function loadedSourceKind(location: string): LoadedSourceKind | undefined {
  if (isUrlSource(location)) return 'url'
  if (isModuleSource(location)) return 'module'
  return undefined
}

/** The data of a URL or a module, parsed; a SourceError says why there is none, naming the source by `label` (a URL without its password). */
export function loadSource(kind: LoadedSourceKind, location: string, label: string): Promise<unknown> {
  return kind === 'url' ? fetchJson(location, label) : moduleData(location)
}

/**
 * A remote JSON, as json-server 0.17 takes it: one GET at start, its body the
 * database. A user and password in the URL are sent as Basic credentials
 * (RFC 7617), as Node's http.get, which json-server uses, sends them.
 */
async function fetchJson(location: string, url: string): Promise<unknown> {
  let response: Response
  let text: string
  try {
    const target = new URL(location)
    const headers: Record<string, string> = { Accept: 'application/json' }
    if (target.username || target.password) {
      headers.Authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`
      target.username = ''
      target.password = ''
    }
    response = await fetch(target, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers })
    text = await response.text()
  } catch (error) {
    throw new SourceError(`cannot load ${url}: ${fetchFailure(error)}.`)
  }
  if (!response.ok) throw new SourceError(`cannot load ${url}: it answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}, not the JSON of a database.`)
  return parseJsonText(text, url)
}

function fetchFailure(error: unknown): string {
  const { name, message, cause } = error as Error & { cause?: NodeJS.ErrnoException }
  if (name === 'TimeoutError') return `no whole answer within ${FETCH_TIMEOUT_MS / 1000} s`
  if (cause?.code === 'ECONNREFUSED') return 'the connection was refused (is the server running?)'
  if (cause?.code === 'ENOTFOUND') return 'the host name is not known'
  return cause?.message ?? cause?.code ?? message
}

/**
 * The text of a database, read by the one reading of a db.json's text (lib/store/json-file/read-database.ts):
 * broken JSON names its line and column, values JSON.parse would change their path. An answer of
 * nothing is no database here: json-server fails on it too, and a URL that answers nothing is more
 * likely a mistake than an empty database.
 */
async function parseJsonText(text: string, label: string): Promise<unknown> {
  if (text.trim() === '') throw new SourceError(`${label} answered nothing, not the JSON of a database.`)
  // The reader loads only for a run that reads a URL's JSON (docs/speed.md, "Start-up").
  const { DatabaseProblem, inexactProblem, parseDatabase } = await import('../store/json-file/read-database.ts')
  try {
    const { value, inexact } = parseDatabase(text, label)
    if (inexact.length > 0) throw inexactProblem(label, inexact)
    return value
  } catch (error) {
    if (error instanceof DatabaseProblem) throw new SourceError(`${error.message}.`)
    throw error
  }
}

/**
 * A module's data, as json-server 0.17 loads a seed.js: its export (CommonJS
 * `module.exports` or ESM `export default`) called when it is a function, or
 * taken as it is. The module is the user's own code, run as Node runs it.
 */
async function moduleData(file: string): Promise<unknown> {
  const resolved = path.resolve(file)
  if (!statSync(resolved, { throwIfNoEntry: false })?.isFile()) throw new SourceError(`cannot load ${file}: there is no such file.`)
  let exported: unknown
  try {
    const module = (await import(pathToFileURL(resolved).href)) as { default?: unknown }
    exported = module.default
  } catch (error) {
    throw new SourceError(`cannot load ${file}: ${(error as Error).message}`)
  }
  if (exported === undefined) throw new SourceError(`${file} exports nothing: export the data, or a function returning it (module.exports = () => ({ posts: [] })).`)
  let data: unknown
  try {
    data = typeof exported === 'function' ? await (exported as () => unknown)() : exported
  } catch (error) {
    throw new SourceError(`${file}'s exported function threw: ${(error as Error).message}`)
  }
  // As JSON, as every answer will be: what JSON cannot hold (a Date, undefined, a function) becomes what JSON makes of it.
  let json: string | undefined
  try {
    json = JSON.stringify(data)
  } catch (error) {
    throw new SourceError(`${file}'s data cannot be written as JSON: ${(error as Error).message}`)
  }
  if (json === undefined) throw new SourceError(`${file}'s data is ${typeof data}, not a database.`)
  return JSON.parse(json)
}
