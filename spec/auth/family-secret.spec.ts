import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, stat } from 'node:fs/promises'
import { createHmac } from 'node:crypto'
import { join } from 'node:path'
import { MemoryStore } from '../../lib/store/index.ts'
import { makeTempDir, send, startServer, type TestServer } from '../support/helpers.ts'
import { startCli } from '../support/process.ts'

// The secret that signs the declared families' tokens under --auth (docs/accounts.md, "The
// declared families"): a store folder's own `@secret`, kept across restarts; in memory a fresh one
// per process; `--auth-secret` instead of either. PostgreSQL's shared table is
// spec/store/postgres/auth-instances.spec.ts's.

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })

async function registered(server: TestServer, username: string): Promise<{ id: string; token: string }> {
  const answer = await server.request('POST', '/user', { body: { username, password: 'bestPassw0rd' } })
  assert.is(answer.status, 201, answer.text)
  return { id: answer.json.user.user_id, token: answer.json.accessToken }
}

test('a store folder signs with its @secret, made at the first start (mode 0600) and kept across restarts', async () => {
  const folder = await makeTempDir('restdir-auth-folder-')
  try {
    const first = await startServer({ store: folder, auth: true })
    const ada = await registered(first, 'ada')
    await first.close(true)
    const secretFile = join(folder, '@secret')
    assert.is((await stat(secretFile)).mode & 0o777, 0o600)
    const secret = (await readFile(secretFile, 'utf8')).trim()
    const [header, claims, signature] = ada.token.split('.')
    assert.is(createHmac('sha256', secret).update(`${header}.${claims}`).digest('base64url'), signature)
    const again = await startServer({ store: folder, auth: true })
    try {
      assert.is((await again.request('GET', `/user/${ada.id}`, bearer(ada.token))).status, 200)
    } finally {
      await again.close(true)
    }
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
})

test('in memory each process has a secret of its own: a token of one is refused by another, unless both are given --auth-secret', async () => {
  const servers = [await startServer({ store: new MemoryStore(), auth: true }), await startServer({ store: new MemoryStore(), auth: true })]
  try {
    const ada = await registered(servers[0], 'ada')
    assert.is((await servers[1].request('POST', '/user', { body: { username: 'ada', password: 'bestPassw0rd' } })).status, 201)
    const refused = await servers[1].request('GET', `/user/${ada.id}`, bearer(ada.token))
    assert.is(refused.status, 401, refused.text)
    assert.match(refused.json.detail, /invalid signature/)
  } finally {
    for (const server of servers) await server.close()
  }
  const authSecret = 'a given secret of at least thirty-two characters'
  const given = [await startServer({ store: new MemoryStore(), auth: true, authSecret }), await startServer({ store: new MemoryStore(), auth: true, authSecret })]
  try {
    const ada = await registered(given[0], 'ada')
    const [header, claims, signature] = ada.token.split('.')
    assert.is(createHmac('sha256', authSecret).update(`${header}.${claims}`).digest('base64url'), signature)
    // The other process has no such user: the signature is good, the user is not there.
    const other = await given[1].request('GET', `/user/${ada.id}`, bearer(ada.token))
    assert.is(other.status, 401, other.text)
    assert.match(other.json.detail, /no longer exists/)
  } finally {
    for (const server of given) await server.close()
  }
})

test('the command line: --store with --auth and --token starts, its banner says what is guarded, and the token is the administrator\'s', async () => {
  const folder = await makeTempDir('restdir-auth-cli-')
  try {
    const cli = await startCli(['--store', folder, '--auth', '--token', 'the-administrators-own-key', '--port', '0'])
    try {
      assert.match(cli.stdout(), /accounts \(--auth\): POST \/user registers and POST \/login answers a token; each user reads and writes their own subtree, the administrator \(--token\) everything/)
      assert.not.match(cli.stdout(), /every write needs/)
      const ada = await send(cli.port, 'POST', '/user', { body: { username: 'ada', password: 'bestPassw0rd' } })
      assert.is(ada.status, 201, ada.text)
      const own = await send(cli.port, 'POST', `/user/${ada.json.user.user_id}/playlist`, { headers: { authorization: `Bearer ${ada.json.accessToken}` }, body: { name: 'mine' } })
      assert.is(own.status, 201, own.text)
      assert.is((await send(cli.port, 'GET', '/?_children', { headers: { authorization: `Bearer ${ada.json.accessToken}` } })).status, 403)
      assert.is((await send(cli.port, 'GET', '/?_children', { headers: { authorization: 'Bearer the-administrators-own-key' } })).status, 200)
    } finally {
      await cli.stop()
    }
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
})

test.run()
