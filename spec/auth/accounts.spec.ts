import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createHmac } from 'node:crypto'
import { join } from 'node:path'
import { signToken } from '../../lib/auth/jwt.ts'
import { createHandler } from '../../lib/handler.ts'
import { makeTempDir, send, startServer, type TestServer } from '../support/helpers.ts'
import { runCli, startCli } from '../support/process.ts'

// What `--auth` does that json-server-auth does not (docs/accounts.md): the
// store's own signing secret, every refused token named, a password change or
// a deleted user ending a token, logins slowed, one account per email, a
// batch checked as its caller, an event stream behind a guard.

interface Started {
  server: TestServer
  folder: string
  file: string
  close(): Promise<void>
}

async function start(options: { authSecret?: string } = {}): Promise<Started> {
  const folder = await makeTempDir('restdir-auth-')
  const file = join(folder, 'db.json')
  await writeFile(file, JSON.stringify({ users: [], messages: [{ id: 1, userId: 1, text: 'alice 1' }, { id: 2, userId: 2, text: 'bob 1' }] }, null, 2))
  const server = await startServer({ store: file, auth: true, ...options })
  return { server, folder, file, close: async () => (await server.close(), await rm(folder, { recursive: true, force: true })) }
}

async function registered(server: TestServer, email: string, password = 'bestPassw0rd'): Promise<{ id: number; token: string }> {
  const answer = await server.request('POST', '/register', { body: { email, password } })
  assert.is(answer.status, 201, answer.text)
  return { id: answer.json.user.id, token: answer.json.accessToken }
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })

test('the signing secret is made at the first start beside the db.json, readable by its owner only, and kept across restarts', async () => {
  const { server, folder, file, close } = await start()
  try {
    const secretFile = join(folder, '.db.json.secret')
    const mode = (await stat(secretFile)).mode & 0o777
    assert.is(mode, 0o600)
    const secret = (await readFile(secretFile, 'utf8')).trim()
    assert.ok(secret.length >= 32)
    const alice = await registered(server, 'alice@mail.com')
    // A token signed with json-server-auth's constant key is refused; one signed with the file's key is the store's.
    const constant = signToken({ sub: String(alice.id), email: 'alice@mail.com' }, 'json-server-auth-123456')
    assert.is((await server.request('GET', '/600/messages/1', bearer(constant))).status, 401)
    await server.close(true)
    const again = await startServer({ store: file, auth: true })
    try {
      assert.is((await readFile(secretFile, 'utf8')).trim(), secret)
      assert.is((await again.request('GET', '/600/messages/1', bearer(alice.token))).status, 200)
    } finally {
      await again.close(true)
    }
  } finally {
    await close().catch(() => {})
  }
})

test('--auth-secret signs the tokens instead; a short one is refused', async () => {
  const authSecret = 'a given secret of at least thirty-two characters'
  const { server, folder, close } = await start({ authSecret })
  try {
    const alice = await registered(server, 'alice@mail.com')
    const [header, claims, signature] = alice.token.split('.')
    assert.is(createHmac('sha256', authSecret).update(`${header}.${claims}`).digest('base64url'), signature)
    assert.is(await stat(join(folder, '.db.json.secret')).then(() => 'made', (error: NodeJS.ErrnoException) => error.code), 'ENOENT')
  } finally {
    await close()
  }
  const other = await makeTempDir('restdir-auth-')
  try {
    await writeFile(join(other, 'db.json'), '{"users": []}')
    const handler = createHandler({ store: join(other, 'db.json'), auth: true, authSecret: 'short' })
    const refused = await handler.ready.then(() => 'started', (error: Error) => error.message)
    await handler.close()
    assert.match(refused, /at least 32/)
  } finally {
    await rm(other, { recursive: true, force: true })
  }
})

test('each refused token is a 401 naming why: another algorithm, a bad signature, expired, a deleted user, a password changed since', async () => {
  const { server, folder, close } = await start()
  try {
    const alice = await registered(server, 'alice@mail.com')
    const bob = await registered(server, 'bob@mail.com')
    const secret = (await readFile(join(folder, '.db.json.secret'), 'utf8')).trim()
    const refusal = async (token: string) => {
      const answer = await server.request('GET', '/600/messages/1', bearer(token))
      assert.is(answer.status, 401, answer.text)
      assert.is(answer.headers['content-type'], 'application/problem+json')
      assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="restdir"/)
      return answer.json.detail as string
    }
    const [, claims, signature] = alice.token.split('.')
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${claims}.`
    assert.match(await refusal(none), /^invalid algorithm: /)
    const hs512 = `${Buffer.from('{"alg":"HS512","typ":"JWT"}').toString('base64url')}.${claims}.${signature}`
    assert.match(await refusal(hs512), /^invalid algorithm: /)
    const otherClaims = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(claims, 'base64url').toString()), sub: String(bob.id) })).toString('base64url')
    assert.match(await refusal(`${alice.token.split('.')[0]}.${otherClaims}.${signature}`), /^invalid signature: /)
    const pwd = JSON.parse(Buffer.from(claims, 'base64url').toString()).pwd
    const expired = signToken({ sub: String(alice.id), email: 'alice@mail.com' }, secret, { now: Date.now() - 2 * 3600_000, claims: { pwd } })
    assert.match(await refusal(expired), /^jwt expired: /)
    // The same token, fresh, is let in: what was refused was its time.
    assert.is((await server.request('GET', '/600/messages/1', bearer(signToken({ sub: String(alice.id), email: 'alice@mail.com' }, secret, { claims: { pwd } })))).status, 200)
    // A password change ends every token issued before it; the new one works.
    const changed = await server.request('PATCH', '/600/users/1', { ...bearer(alice.token), body: { password: 'a new password' } })
    assert.is(changed.status, 200, changed.text)
    assert.not.ok(changed.text.includes('password'))
    assert.match(await refusal(alice.token), /issued before the user's password changed/)
    const stored = JSON.parse(await readFile(join(folder, 'db.json'), 'utf8')).users[0].password
    assert.match(stored, /^\$2a\$10\$/)
    const login = await server.request('POST', '/login', { body: { email: 'alice@mail.com', password: 'a new password' } })
    assert.is(login.status, 200)
    assert.is((await server.request('GET', '/600/messages/1', bearer(login.json.accessToken))).status, 200)
    // A deleted user's token is no one's.
    assert.is((await server.request('DELETE', '/600/users/2', bearer(bob.token))).status, 200)
    assert.match(await refusal(bob.token), /its user no longer exists/)
  } finally {
    await close()
  }
})

test('logins are slowed per account and per address: 429 with Retry-After, the right password included', async () => {
  const { server, close } = await start()
  try {
    await registered(server, 'alice@mail.com')
    for (let attempt = 0; attempt < 5; attempt++) {
      assert.is((await server.request('POST', '/login', { body: { email: 'alice@mail.com', password: `guess ${attempt}` } })).status, 400)
    }
    const slowed = await server.request('POST', '/login', { body: { email: 'alice@mail.com', password: 'bestPassw0rd' } })
    assert.is(slowed.status, 429, slowed.text)
    assert.ok(Number(slowed.headers['retry-after']) > 0)
    assert.is(slowed.headers['content-type'], 'application/problem+json')
  } finally {
    await close()
  }
  // From one address, guesses spread over many accounts are slowed too.
  const other = await start()
  try {
    const statuses = []
    for (let attempt = 0; attempt < 6; attempt++) statuses.push((await other.server.request('POST', '/login', { body: { email: `someone${attempt}@mail.com`, password: 'guess' } })).status)
    assert.equal(statuses, [400, 400, 400, 400, 400, 429])
  } finally {
    await other.close()
  }
})

test('registrations of one email sent at once make one account', async () => {
  const { server, file, close } = await start()
  try {
    const answers = await Promise.all(Array.from({ length: 8 }, () => server.request('POST', '/register', { body: { email: 'twice@mail.com', password: 'bestPassw0rd' } })))
    assert.equal(answers.map((answer) => answer.status).sort(), [201, 400, 400, 400, 400, 400, 400, 400])
    const users = JSON.parse(await readFile(file, 'utf8')).users
    assert.is(users.filter((user: { email: string }) => user.email === 'twice@mail.com').length, 1)
  } finally {
    await close()
  }
})

test('a batch is checked as its caller: one refused request refuses the batch, and nothing of it is stored', async () => {
  const { server, file, close } = await start()
  try {
    const alice = await registered(server, 'alice@mail.com')
    await registered(server, 'bob@mail.com')
    const batch = await server.request('POST', '/?_batch', {
      ...bearer(alice.token),
      body: { requests: [{ method: 'PATCH', path: '/600/messages/1', body: { text: 'mine' } }, { method: 'PATCH', path: '/600/messages/2', body: { text: 'his' } }] },
    })
    assert.is(batch.status, 403, batch.text)
    assert.match(batch.json.detail, /Request 1 of the batch/)
    const messages = JSON.parse(await readFile(file, 'utf8')).messages
    assert.equal(messages.map((message: { text: string }) => message.text), ['alice 1', 'bob 1'])
    const anonymous = await server.request('POST', '/?_batch', { body: { requests: [{ method: 'PATCH', path: '/600/messages/1', body: { text: 'anyone' } }] } })
    assert.is(anonymous.status, 401)
    const allowed = await server.request('POST', '/?_batch', { ...bearer(alice.token), body: { requests: [{ method: 'PATCH', path: '/600/messages/1', body: { text: 'mine' } }] } })
    assert.is(allowed.status, 200, allowed.text)
  } finally {
    await close()
  }
})

test('an event stream behind a guard needs a token (spec/auth/event-streams.spec.ts: what it tells); _children behind an owner\'s guard is refused', async () => {
  const { server, close } = await start()
  try {
    const alice = await registered(server, 'alice@mail.com')
    const stream = { accept: 'text/event-stream' }
    assert.is((await server.request('GET', '/600/messages', { headers: stream })).status, 401)
    assert.is((await server.request('GET', '/600/messages?_changes', bearer(alice.token))).status, 200)
    assert.is((await server.request('GET', '/600/messages?_children', bearer(alice.token))).status, 403)
    // HEAD is checked as GET: json-server-auth lets it past its owner guards.
    assert.is((await server.request('HEAD', '/600/messages/2', bearer(alice.token))).status, 403)
    assert.is((await server.request('HEAD', '/600/messages/1', bearer(alice.token))).status, 200)
  } finally {
    await close()
  }
})

test('the banner says what --auth guards; POST behind a guard answers a Location that keeps it', async () => {
  const folder = await makeTempDir('restdir-auth-cli-')
  try {
    await writeFile(join(folder, 'db.json'), '{"users": [], "messages": []}')
    const cli = await startCli([join(folder, 'db.json'), '--auth', '--port', '0'])
    try {
      assert.match(cli.stdout(), /accounts \(--auth\): POST \/register and POST \/login answer a token; \/600\/\.\.\./)
      assert.match(cli.stdout(), /let only their owner or signed-in users in; a URL without a guard stays open\n/)
      const { port } = cli
      const alice = (await send(port, 'POST', '/register', { body: { email: 'alice@mail.com', password: 'bestPassw0rd' } })).json
      const created = await send(port, 'POST', '/600/messages', { body: { userId: alice.user.id, text: 'hi' }, headers: { authorization: `Bearer ${alice.accessToken}` } })
      assert.is(created.status, 201, created.text)
      assert.is(created.headers.location, '/600/messages/1')
    } finally {
      await cli.stop()
    }
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
})

test('the command line: --auth on a store folder in the json-server mode, on a db.json with --token, or a short secret stops with a message', async () => {
  const folder = await makeTempDir('restdir-auth-cli-')
  try {
    await writeFile(join(folder, 'db.json'), '{"users": []}')
    const onFolder = await runCli(['--store', join(folder, 'store'), '--auth', '--json-server', '--port', '0'])
    assert.is(onFolder.code, 2, onFolder.stderr)
    assert.match(onFolder.stderr, /--auth serves the declared families/)
    const withToken = await runCli([join(folder, 'db.json'), '--auth', '--token', 'admin', '--port', '0'])
    assert.is(withToken.code, 2, withToken.stderr)
    const short = await runCli([join(folder, 'db.json'), '--auth', '--port', '0'], { RESTDIR_AUTH_SECRET: 'too short' })
    assert.is(short.code, 1, short.stderr)
    assert.match(short.stderr, /at least 32/)
    const guardWithoutAuth = join(folder, 'routes.json')
    await writeFile(guardWithoutAuth, '{"messages": 600}')
    const noAuth = await runCli([join(folder, 'db.json'), '--routes', guardWithoutAuth, '--port', '0'])
    assert.is(noAuth.code, 2, noAuth.stderr)
    assert.match(noAuth.stderr, /start with --auth/)
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
})

test.run()
