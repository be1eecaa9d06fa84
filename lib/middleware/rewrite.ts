/**
 * json-server 0.17's rewrite rules (`--routes routes.json`, docs/json-server.md, "Rewrite rules"):
 * an object of pattern → target, each rule tried in order on the request target, query included,
 * each seeing what the rules before it made of it. A pattern is read as json-server reads it, through
 * express-urlrewrite 1.4 and path-to-regexp 1.x: `:name` is one segment, `:name(\\d+)` one that
 * matches the group, `?`, `*` and `+` after a parameter make it optional or repeated, `*` alone
 * is anything (slashes and the query too), `\\` escapes a character; the match ignores case and a
 * trailing slash. A target takes `$1` (the pattern's captures, in order) and `:name`.
 */

import { readFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { guardRewriteRules, isGuard } from '../auth/access-rules.ts'

/** A rules object as a routes.json holds it. */
export type RewriteRules = Record<string, string>

export interface RewriteRule {
  pattern: string
  target: string
  matcher: RegExp
  /** Each `:name` of the pattern, with the capture that holds it (1 for the first). */
  captureOf: Map<string, number>
}

/** A rule that cannot work: which one, and what to change. */
export class RewriteRuleError extends Error {}

/**
 * How rules are read: with `guards` (`--auth`), json-server-auth's short form `{ "users": 600 }`
 * is its rewrite rule `{ "/users*": "/600/users$1" }` (docs/accounts.md, "Guards").
 */
export interface RewriteReading {
  guards?: boolean
}

/** The rules of the `routes` option: an object, or the path of a JSON file holding one; none when not given. */
export function loadRewriteRules(routes: RewriteRules | string | undefined, reading: RewriteReading = {}): RewriteRule[] {
  if (routes === undefined) return []
  if (typeof routes !== 'string') return compileRewriteRules(routes, 'routes', reading)
  let text: string
  try {
    text = readFileSync(routes, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new RewriteRuleError(`${routes}: the rewrite rules cannot be read (${code === 'ENOENT' ? 'there is no such file' : code ?? (error as Error).message}); give the path of a routes.json.`)
  }
  let rules: unknown
  try {
    rules = JSON.parse(text)
  } catch (error) {
    throw new RewriteRuleError(`${routes} is not valid JSON (${(error as Error).message}); rewrite rules are a JSON object such as { "/api/*": "/$1" }.`)
  }
  return compileRewriteRules(rules, routes, reading)
}

/** The rules, each compiled once; a rule that cannot work throws a RewriteRuleError naming it and the fix. */
export function compileRewriteRules(rules: unknown, source = 'routes', reading: RewriteReading = {}): RewriteRule[] {
  if (typeof rules !== 'object' || rules === null || Array.isArray(rules)) {
    throw new RewriteRuleError(`${source} must be a JSON object of rewrite rules, such as { "/api/*": "/$1" }, not ${Array.isArray(rules) ? 'an array' : rules === null ? 'null' : `a ${typeof rules}`}.`)
  }
  const read = reading.guards ? guardRewriteRules(rules as Record<string, unknown>) : (rules as Record<string, unknown>)
  return Object.entries(read).map(([pattern, target]) => compileRule(pattern, target, source))
}

function compileRule(pattern: string, target: unknown, source: string): RewriteRule {
  const rule = `${source}: "${pattern}"`
  if (isGuard(target)) throw new RewriteRuleError(`${rule} is given json-server-auth's guard ${JSON.stringify(target)}; guards need accounts: start with --auth.`)
  if (typeof target !== 'string' || target === '') {
    throw new RewriteRuleError(`${rule} rewrites to ${JSON.stringify(target)}; a target is a non-empty string, such as "/posts/:id" or "/$1".`)
  }
  let compiled: { matcher: RegExp; names: Array<string | number> }
  try {
    compiled = patternToRegExp(pattern)
  } catch (error) {
    throw new RewriteRuleError(`${rule} is not a pattern that compiles (${(error as Error).message}); escape a literal ( ) [ ] or ? with \\\\ in routes.json.`)
  }
  const captureOf = new Map<string, number>()
  compiled.names.forEach((name, index) => typeof name === 'string' && captureOf.set(name, index + 1))
  // express-urlrewrite throws on each request for a :name its pattern lacks; found once here instead.
  for (const [, , name] of target.matchAll(TARGET_PARAMETER)) {
    if (name !== undefined && !captureOf.has(name)) {
      const named = [...captureOf.keys()].map((known) => `:${known}`).join(', ')
      throw new RewriteRuleError(`${rule} rewrites to "${target}", whose :${name} the pattern does not have; use ${named === '' ? '$1 for a * of the pattern' : `one of ${named}`}.`)
    }
  }
  return { pattern, target, matcher: compiled.matcher, captureOf }
}

/** `$1` or `:name` in a target, as express-urlrewrite 1.4 replaces them. */
const TARGET_PARAMETER = /\$(\d+)|(?::(\w+))/g

/** Whether the request asks json-server's rewriter for its rules: `GET /__rules` (as Express matches a route: any case, a trailing slash). */
export function asksForRules(target: string): boolean {
  return /^\/__rules\/?(?:\?|$)/i.test(target)
}

/** `GET /__rules`: the rules as given, as json-server's rewriter answers them. */
export function answerRules(res: ServerResponse, rules: readonly RewriteRule[], headers: readonly string[], method: string): void {
  const body = JSON.stringify(rulesObject(rules), null, 2)
  // The CORS headers held for this answer, as names and values in turn (Context.headers).
  for (let index = 0; index < headers.length; index += 2) res.setHeader(headers[index], headers[index + 1])
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) })
  res.end(method === 'HEAD' ? undefined : body)
}

/**
 * The target after every rule, in order: a rule whose pattern matches the whole target (query
 * included) replaces it by its own target, filled in; the next rules see the new one.
 */
export function rewriteTarget(rules: readonly RewriteRule[], target: string): string {
  let current = target
  for (const rule of rules) {
    const match = rule.matcher.exec(current)
    if (!match) continue
    // As express-urlrewrite: a capture that took no part is written as `undefined`, as JavaScript writes it.
    current = rule.target.replace(TARGET_PARAMETER, (_whole, number: string | undefined, name: string | undefined) =>
      String(name !== undefined ? match[rule.captureOf.get(name)!] : match[Number(number)]))
  }
  return current
}

/** The rules as given, for `GET /__rules`. */
export function rulesObject(rules: readonly RewriteRule[]): RewriteRules {
  return Object.fromEntries(rules.map((rule) => [rule.pattern, rule.target]))
}

interface Parameter {
  name: string | number
  prefix: string
  optional: boolean
  repeat: boolean
  partial: boolean
  pattern: string
}

/**
 * path-to-regexp 1.9's reading of a pattern (its PATH_REGEXP): an escaped character, or a
 * parameter with its prefix (`/` or `.`), name, custom group and modifier, or a `*`.
 */
const PATH_TOKEN = /(\\.)|([/.])?(?:(?::(\w+)(?:\(((?:\\.|[^\\()])+)\))?|\(((?:\\.|[^\\()])+)\))([+*?])?|(\*))/g

/** path-to-regexp 1.9's `pathToRegexp(pattern, keys)` with its defaults: not case-sensitive, not strict, to the end. */
function patternToRegExp(pattern: string): { matcher: RegExp; names: Array<string | number> } {
  const tokens = parsePattern(pattern)
  const names: Array<string | number> = []
  let route = ''
  for (const token of tokens) {
    if (typeof token === 'string') {
      route += escapeRegExp(token)
      continue
    }
    names.push(token.name)
    const prefix = escapeRegExp(token.prefix)
    let capture = `(?:${token.pattern})`
    if (token.repeat) capture += `(?:${prefix}${capture})*`
    if (token.optional) capture = token.partial ? `${prefix}(${capture})?` : `(?:${prefix}(${capture}))?`
    else capture = `${prefix}(${capture})`
    route += capture
  }
  // Not strict: a trailing slash may follow, and one the pattern ends with is optional.
  route = (route.endsWith('\\/') ? route.slice(0, -2) : route) + '(?:\\/(?=$))?$'
  return { matcher: new RegExp(`^${route}`, 'i'), names }
}

function parsePattern(pattern: string): Array<string | Parameter> {
  const tokens: Array<string | Parameter> = []
  let key = 0
  let index = 0
  let text = ''
  for (const found of pattern.matchAll(PATH_TOKEN)) {
    const [whole, escaped, prefix, name, capture, group, modifier, asterisk] = found
    text += pattern.slice(index, found.index)
    index = found.index! + whole.length
    if (escaped) {
      text += escaped[1]
      continue
    }
    const next = pattern[index]
    if (text) {
      tokens.push(text)
      text = ''
    }
    const delimiter = prefix || '/'
    const custom = capture || group
    const previous = prefix || (typeof tokens[tokens.length - 1] === 'string' ? (tokens[tokens.length - 1] as string) : '')
    tokens.push({
      name: name || key++,
      prefix: prefix || '',
      optional: modifier === '?' || modifier === '*',
      repeat: modifier === '+' || modifier === '*',
      partial: prefix != null && next != null && next !== prefix,
      pattern: custom ? custom.replace(/([=!:$/()])/g, '\\$1') : asterisk ? '.*' : segmentPattern(delimiter, previous),
    })
  }
  if (index < pattern.length) text += pattern.slice(index)
  if (text) tokens.push(text)
  return tokens
}

/** path-to-regexp 1.9's restrictBacktrack: a parameter runs to the next delimiter. */
function segmentPattern(delimiter: string, previous: string): string {
  if (!previous || previous.includes(delimiter)) return `[^${escapeRegExp(delimiter)}]+?`
  return `${escapeRegExp(previous)}|(?:(?!${escapeRegExp(previous)})[^${escapeRegExp(delimiter)}])+?`
}

function escapeRegExp(text: string): string {
  return text.replace(/([.+*?=^!:${}()[\]|/\\])/g, '\\$1')
}
