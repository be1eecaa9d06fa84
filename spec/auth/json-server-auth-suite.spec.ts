import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { makeTempDir, send, startServer, type Answer, type TestServer } from '../support/helpers.ts'
import { root } from '../support/process.ts'

// json-server-auth's own test suite, its files unchanged, run against
// `restdir db.json --auth --routes routes.json` through real HTTP.
//
// spec/support/fixtures/json-server-auth/ holds json-server-auth 2.1's
// src/__tests__/users.ts and guards.ts as they are at its commit 58c64cf8
// (MIT, its LICENSE beside them), and its shared/tools.ts for reference. Each
// file is compiled as jest's ts-jest compiles it, to CommonJS, and run with
// jest's globals (describe, test, beforeEach, expect) and two modules in the
// place of theirs, as jest's moduleNameMapper would: `supertest`, whose calls
// become HTTP requests to restdir, and `./shared/tools`, whose
// `inMemoryJsonServer(db, guards)` writes `db` to a db.json and `guards` to a
// routes.json and starts restdir on them with the options `--auth --routes
// routes.json` gives (in this process: a command line per case would triple
// the run; spec/auth/accounts.spec.ts starts the command line itself). Every case runs as the
// suite wrote it, expectations included, except where restdir differs on
// purpose (docs/accounts.md, "What restdir does that json-server-auth does
// not"): there the case is run as written and must fail exactly at that
// difference, then restdir's documented answer is asserted on a fresh app of
// the same beforeEach (`differences`, below), and the test's name says why. The suite's third file, cli.ts, starts json-server-auth's own
// command line and is not a case of the flow.

const require = createRequire(import.meta.url)
// The project's `typescript` is the native compiler, without transpileModule; TypeScript 5's compiles as ts-jest does.
const ts = require('typescript5') as typeof import('typescript5')

const FIXTURES = join(root, 'spec/support/fixtures/json-server-auth')

/* ---------- `./shared/tools`: the app is restdir on a db.json ---------- */

/** As shared/tools.ts has it. */
const USER = { email: 'jeremy@mail.com', password: '123456', name: 'Jeremy' }

/** What `inMemoryJsonServer` gives `supertest`: restdir starting on the case's db.json and routes.json. */
interface App {
  db: object
  guards: Record<string, number>
  server: Promise<TestServer>
}

/** The app of the case running, for the cases restdir answers otherwise on purpose. */
let lastApp: App | undefined

/** The servers and folders of the case running, closed when it ends. */
const running: Array<() => Promise<void>> = []

function inMemoryJsonServer(db: object = {}, resourceGuardMap: Record<string, number> = {}): App {
  const server = (async () => {
    const folder = await makeTempDir('restdir-jsa-suite-')
    running.push(() => rm(folder, { recursive: true, force: true }))
    await writeFile(join(folder, 'db.json'), JSON.stringify(db, null, 2))
    await writeFile(join(folder, 'routes.json'), JSON.stringify(resourceGuardMap, null, 2))
    const started = await startServer({ store: join(folder, 'db.json'), auth: true, routes: join(folder, 'routes.json') })
    running.unshift(() => started.close())
    return started
  })()
  // A start that fails is told by the case's first request; this keeps it from being unhandled meanwhile.
  server.catch(() => {})
  lastApp = { db: structuredClone(db), guards: resourceGuardMap, server }
  return lastApp
}

/* ---------- `supertest`: its calls the suite makes, as requests to restdir ---------- */

/** supertest's response, the fields the suite reads. */
interface Response {
  status: number
  text: string
  body: any
  headers: Answer['headers']
  ok: boolean
  notFound: boolean
  badRequest: boolean
}

function responseOf(answer: Answer): Response {
  const type = String(answer.headers['content-type'] ?? '')
  // superagent parses a JSON body (application/json and +json types), and gives {} otherwise.
  const body = /[/+]json(\s*;|$)/.test(type) && answer.text !== '' ? JSON.parse(answer.text) : {}
  const { status } = answer
  return { status, text: answer.text, body, headers: answer.headers, ok: status >= 200 && status < 300, notFound: status === 404, badRequest: status === 400 }
}

/** One supertest request: `.send`, `.set`, `.expect(status[, body])`, awaited. */
class Request implements PromiseLike<Response> {
  private readonly headers: Record<string, string> = {}
  private body: unknown
  private readonly checks: Array<(response: Response) => void> = []

  constructor(
    private readonly app: App,
    private readonly method: string,
    private readonly path: string,
  ) {}

  send(body: unknown): this {
    this.body = body
    return this
  }

  set(field: string | Record<string, string>, value?: string): this {
    Object.assign(this.headers, typeof field === 'string' ? { [field]: value } : field)
    return this
  }

  /** supertest's expect: the status, then the body, a pattern of its text, its text, or deeply equal to its JSON. */
  expect(status: number, body?: RegExp | string | object): this {
    const what = `${this.method} ${this.path}`
    this.checks.push((response) => {
      assert.is(response.status, status, `${what}: expected ${status}, got ${response.status} ${response.text}`)
      if (body instanceof RegExp) assert.match(response.text, body, `${what}: expected body ${response.text} to match ${body}`)
      else if (typeof body === 'string') assert.is(response.text, body, what)
      else if (body !== undefined) assert.ok(isDeepStrictEqual(response.body, body), `${what}: expected ${JSON.stringify(body)}, got ${response.text}`)
    })
    return this
  }

  then<A = Response, B = never>(fulfilled?: ((response: Response) => A | PromiseLike<A>) | null, rejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.run().then(fulfilled, rejected)
  }

  private async run(): Promise<Response> {
    const server = await this.app.server
    const response = responseOf(await send(server.port, this.method, this.path, { body: this.body, headers: this.headers }))
    for (const check of this.checks) check(response)
    return response
  }
}

function supertest(app: App) {
  const request = (method: string) => (path: string) => new Request(app, method, path)
  return { get: request('GET'), post: request('POST'), put: request('PUT'), patch: request('PATCH'), delete: request('DELETE'), options: request('OPTIONS'), head: request('HEAD') }
}

/* ---------- jest's globals, the matchers the suite uses ---------- */

function subset(actual: unknown, expected: unknown): boolean {
  if (typeof expected !== 'object' || expected === null) return Object.is(actual, expected)
  if (typeof actual !== 'object' || actual === null) return false
  return Object.entries(expected).every(([key, value]) => subset((actual as Record<string, unknown>)[key], value))
}

/** jest's toEqual: deep equality that ignores properties whose value is undefined. */
function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined).map(([key, field]) => [key, withoutUndefined(field)]))
}

function expect(actual: any) {
  const shown = JSON.stringify(actual)
  const matchers = {
    toBe: (expected: unknown) => assert.ok(Object.is(actual, expected), `expected ${shown} to be ${JSON.stringify(expected)}`),
    toMatch: (expected: RegExp | string) => {
      assert.type(actual, 'string', `expected a string to match ${expected}, got ${shown}`)
      assert.ok(typeof expected === 'string' ? actual.includes(expected) : expected.test(actual), `expected ${shown} to match ${expected}`)
    },
    toStrictEqual: (expected: unknown) => assert.ok(isDeepStrictEqual(actual, expected), `expected ${shown} to strictly equal ${JSON.stringify(expected)}`),
    toEqual: (expected: unknown) => assert.ok(isDeepStrictEqual(withoutUndefined(actual), withoutUndefined(expected)), `expected ${shown} to equal ${JSON.stringify(expected)}`),
    toHaveLength: (expected: number) => assert.is(actual?.length, expected, `expected ${shown} to have length ${expected}`),
    toMatchObject: (expected: object) => assert.ok(subset(actual, expected), `expected ${shown} to match ${JSON.stringify(expected)}`),
  }
  type Matcher = (expected: any) => void
  const not = Object.fromEntries(
    Object.entries(matchers).map(([name, matcher]) => [
      name,
      (expected: unknown) => {
        let held = true
        try {
          ;(matcher as Matcher)(expected)
        } catch {
          held = false
        }
        assert.not.ok(held, `expected not ${name} ${JSON.stringify(expected)}, got ${shown}`)
      },
    ]),
  ) as Record<keyof typeof matchers, Matcher>
  return { ...matchers, not }
}

/* ---------- loading a file of the suite ---------- */

interface Case {
  /** `file › describe › test`, as jest names it. */
  name: string
  /** The file's beforeEach hooks. */
  before(): Promise<void>
  body(): Promise<unknown>
}

/** The cases of one file of the suite, each with the file's beforeEach. */
function loadSuite(file: string): Case[] {
  const source = readFileSync(join(FIXTURES, `${file}.txt`), 'utf8')
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 }, fileName: file })
  const modules: Record<string, unknown> = { supertest, './shared/tools': { inMemoryJsonServer, USER } }
  const requireMapped = (name: string) => {
    if (!(name in modules)) throw new Error(`${file} requires ${name}, which this spec does not provide`)
    return modules[name]
  }
  const cases: Case[] = []
  const hooks: Array<() => unknown> = []
  const prefix: string[] = [file]
  const describe = (name: string, body: () => void) => {
    prefix.push(name)
    body()
    prefix.pop()
  }
  const testCase = (name: string, body: () => unknown) => {
    cases.push({
      name: [...prefix, name].join(' › '),
      async before() {
        for (const hook of hooks) await hook()
      },
      async body() {
        return body()
      },
    })
  }
  const beforeEach = (hook: () => unknown) => hooks.push(hook)
  const module = { exports: {} }
  new Function('require', 'exports', 'module', 'describe', 'test', 'beforeEach', 'expect', outputText)(requireMapped, module.exports, module, describe, testCase, beforeEach, expect)
  return cases
}

/* ---------- json-server-auth itself, for a case whose answer comes from how the suite mounts it ---------- */

const jsonServer = require('json-server') as { create(): any; router(file: string): any; defaults(options?: object): any[] }
const jsonServerAuth = require('json-server-auth') as unknown[] & { rewriter(rules: Record<string, unknown>): unknown }

/** json-server-auth 2.1 on json-server 0.17 as its README and json-server's command line mount it (json-server's defaults first), on a copy of the app's db.json. */
async function jsonServerAuthBeside(app: App): Promise<{ port: number; close(): Promise<void> }> {
  const folder = await makeTempDir('restdir-jsa-beside-')
  await writeFile(join(folder, 'db.json'), JSON.stringify(app.db, null, 2))
  const express = jsonServer.create()
  const router = jsonServer.router(join(folder, 'db.json'))
  express.db = router.db
  express.use(jsonServer.defaults({ logger: false }))
  express.use(jsonServerAuth.rewriter(app.guards))
  express.use(jsonServerAuth)
  express.use(router)
  const server: Server = express.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise((resolve) => server.close(resolve))
      await rm(folder, { recursive: true, force: true })
    },
  }
}

/* ---------- where restdir differs on purpose ---------- */

/**
 * The cases restdir does not pass on purpose. Each is run as the suite wrote it first, and
 * must fail exactly where `fails` says (so that a difference that goes away is seen); then,
 * on a fresh app made by the same beforeEach, `instead` asserts what restdir answers, as
 * docs/accounts.md says it does.
 */
interface Difference {
  /** The row of docs/accounts.md, "What restdir does that json-server-auth does not", or why else. */
  why: string
  fails: RegExp
  instead(app: App): Promise<void>
}

async function signedIn(app: App): Promise<Record<string, string>> {
  const login = await supertest(app).post('/login').send(USER).expect(200)
  return { Authorization: `Bearer ${login.body.accessToken}` }
}

const differences: Record<string, Difference> = {
  'guards.ts › 600: owner can read/write › [SAD] cannot list all users': {
    why: 'a guarded listing answers only the caller\'s documents, 200 with its own, not 403',
    fails: /^GET \/users: expected 403, got 200/,
    async instead(app) {
      const rq = supertest(app)
      await rq.get('/users').expect(401)
      // User 1 (albert@gmail.com) is not the caller's: the listing holds the caller alone, without its hash.
      await rq.get('/users').set(await signedIn(app)).expect(200, [{ id: 2, email: USER.email, name: USER.name }])
    },
  },
  'guards.ts › [HAPPY] other methods pass through': {
    why: 'HEAD is checked as GET (401 without a token); OPTIONS is json-server\'s CORS 204, as json-server-auth under json-server\'s own defaults answers it',
    fails: /^OPTIONS \/users\/1: expected 200, got 204/,
    async instead(app) {
      const rq = supertest(app)
      const beside = await jsonServerAuthBeside(app)
      try {
        // The suite mounts json-server-auth on a bare Express app, whose OPTIONS is Express's 200;
        // json-server's command line, and json-server-auth's README, mount it after json-server's defaults.
        const theirs = await send(beside.port, 'OPTIONS', '/users/1')
        assert.is(theirs.status, 204)
        await rq.options('/users/1').expect(theirs.status)
        // json-server-auth lets HEAD past its guards; restdir checks it as GET: its Content-Length tells about a private document.
        assert.is((await send(beside.port, 'HEAD', '/users/1')).status, 200)
      } finally {
        await beside.close()
      }
      await rq.head('/users/1').expect(401)
      const bearer = await signedIn(app)
      await rq.head('/users/1').set(bearer).expect(403)
      await rq.head('/users/2').set(bearer).expect(200)
    },
  },
}

/* ---------- the run ---------- */

const all = ['users.ts', 'guards.ts'].flatMap(loadSuite)

async function closeRunning(): Promise<void> {
  while (running.length > 0) await running.shift()!()
}

test('the suite is loaded whole: its 27 cases, of users.ts and guards.ts', () => {
  assert.is(all.length, 27, all.map((each) => each.name).join('\n'))
  for (const name of Object.keys(differences)) assert.ok(all.some((each) => each.name === name), `${name} is a case of the suite`)
})

for (const each of all) {
  const difference = differences[each.name]
  test(difference ? `${each.name} — differs on purpose: ${difference.why}` : each.name, async () => {
    try {
      await each.before()
      if (!difference) return void (await each.body())
      const failed = await each.body().then(
        () => 'passed',
        (error: Error) => error.message,
      )
      assert.match(failed, difference.fails, `as the suite wrote it, the case fails where the difference is: ${failed}`)
      await closeRunning()
      await each.before()
      await difference.instead(lastApp!)
    } finally {
      await closeRunning()
    }
  })
}

test.run()
