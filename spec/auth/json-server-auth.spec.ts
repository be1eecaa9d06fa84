import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from 'node:http'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { hashPassword, verifyPassword } from '../../lib/auth/bcrypt.ts'
import { signToken, verifyToken } from '../../lib/auth/jwt.ts'
import { makeTempDir, send } from '../support/helpers.ts'

// json-server-auth 2.1 itself, started as its README starts it (json-server
// 0.17's app, its router on a db.json, json-server-auth's middlewares between),
// beside lib/auth/: its tokens and its password hashes are read here, and
// restdir's are read by it, so a db.json and its users move both ways. Its
// signing key is the constant of its source, which these tests borrow to sign
// as it does (restdir's own secret is the store's: lib/auth/secret.ts).

const require = createRequire(import.meta.url)
const jsonServer = require('json-server') as { create(): any; router(file: string): any }
const auth = require('json-server-auth') as unknown
const { JWT_SECRET_KEY } = require('json-server-auth/dist/constants.js') as { JWT_SECRET_KEY: string }

let folder: string
let file: string
let server: Server
let port: number

test.before(async () => {
  folder = await makeTempDir('restdir-json-server-auth-')
  file = join(folder, 'db.json')
  const db = {
    users: [
      // A user whose hash restdir made, at json-server-auth's cost.
      { id: 1, email: 'made-by-restdir@mail.com', password: hashPassword('restdir password', 10), firstname: 'Ada' },
    ],
    messages: [{ id: 1, userId: 1, text: 'hello' }],
  }
  await writeFile(file, JSON.stringify(db, null, 2))
  const app = jsonServer.create()
  const router = jsonServer.router(file)
  app.db = router.db
  app.use(auth)
  app.use(router)
  server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  port = (server.address() as AddressInfo).port
})

test.after(async () => {
  await new Promise((resolve) => server?.close(resolve))
  if (folder) await rm(folder, { recursive: true, force: true })
})

test('a user whose hash restdir made logs in at json-server-auth; a wrong password is its 400', async () => {
  const login = await send(port, 'POST', '/login', { body: { email: 'made-by-restdir@mail.com', password: 'restdir password' } })
  assert.is(login.status, 200, login.text)
  assert.equal(login.json.user, { id: 1, email: 'made-by-restdir@mail.com', firstname: 'Ada' })
  const wrong = await send(port, 'POST', '/login', { body: { email: 'made-by-restdir@mail.com', password: 'restdir passwor' } })
  assert.is(wrong.status, 400)
  assert.is(wrong.json, 'Incorrect password')
})

test('a user json-server-auth registered verifies here with the hash it wrote to the db.json', async () => {
  const register = await send(port, 'POST', '/register', { body: { email: 'olivier@mail.com', password: 'bestPassw0rd ✓' } })
  assert.is(register.status, 201, register.text)
  const users = (JSON.parse(await readFile(file, 'utf8')) as { users: Array<{ email: string; password: string }> }).users
  const stored = users.find((user) => user.email === 'olivier@mail.com')?.password ?? ''
  assert.match(stored, /^\$2a\$10\$/)
  assert.ok(verifyPassword('bestPassw0rd ✓', stored))
  assert.not.ok(verifyPassword('bestPassw0rd', stored))
})

test('the token json-server-auth gives at login verifies here with its key: sub is the user\'s id, email its email', async () => {
  const login = await send(port, 'POST', '/login', { body: { email: 'made-by-restdir@mail.com', password: 'restdir password' } })
  const verdict = verifyToken(login.json.accessToken, JWT_SECRET_KEY)
  assert.ok(verdict.ok, JSON.stringify(verdict))
  if (verdict.ok) {
    assert.is(verdict.claims.sub, '1')
    assert.is(verdict.claims.email, 'made-by-restdir@mail.com')
    assert.is(verdict.claims.exp - (verdict.claims.iat as number), 3600)
  }
  assert.is(verifyToken(login.json.accessToken, 'the key of another store, thirty-two characters or more').ok, false)
})

test('json-server-auth\'s own guards accept a token signed here with its key, and refuse it changed, expired or for someone else', async () => {
  const token = signToken({ sub: '1', email: 'made-by-restdir@mail.com' }, JWT_SECRET_KEY)
  const owner = await send(port, 'GET', '/600/messages/1', { headers: { authorization: `Bearer ${token}` } })
  assert.is(owner.status, 200, owner.text)
  assert.equal(owner.json, { id: 1, userId: 1, text: 'hello' })
  const stranger = await send(port, 'GET', '/600/messages/1', { headers: { authorization: `Bearer ${signToken({ sub: '2', email: 'x@mail.com' }, JWT_SECRET_KEY)}` } })
  assert.is(stranger.status, 403, stranger.text)
  const [header, , signature] = token.split('.')
  const changed = `${header}.${Buffer.from(JSON.stringify({ sub: '1', email: 'made-by-restdir@mail.com', iat: 1, exp: 4102444800 })).toString('base64url')}.${signature}`
  const forged = await send(port, 'GET', '/600/messages/1', { headers: { authorization: `Bearer ${changed}` } })
  assert.is(forged.status, 401)
  assert.is(forged.json, 'invalid signature')
  const old = signToken({ sub: '1', email: 'made-by-restdir@mail.com' }, JWT_SECRET_KEY, { now: Date.now() - 2 * 3600_000 })
  const expired = await send(port, 'GET', '/600/messages/1', { headers: { authorization: `Bearer ${old}` } })
  assert.is(expired.status, 401)
  assert.is(expired.json, 'jwt expired')
})

test.run()
