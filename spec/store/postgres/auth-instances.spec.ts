import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createHmac } from 'node:crypto'
import { startServer, type TestServer } from '../../support/helpers.ts'
import { adminQuery, freshSchema, startTestPostgres, type TestPostgres } from '../../support/postgres.ts'

// `--auth` on the declared families with many instances on one PostgreSQL database
// (docs/accounts.md, "The declared families"): the signing secret is a table of the database,
// made once by whichever instance starts first, so two instances started together accept each
// other's tokens and apply the same rules.

let postgres: TestPostgres | undefined

test.before(async () => {
  postgres = await startTestPostgres()
})

test.after(async () => {
  await postgres?.dispose()
})

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })

test('two instances started together on one database share one secret: each accepts the other\'s tokens and refuses alike', async () => {
  const schema = await freshSchema(postgres!.url)
  let instances: TestServer[] = []
  try {
    instances = await Promise.all([0, 1].map(() => startServer({ store: schema.url, auth: true })))
    const { rows } = await adminQuery(schema.url, 'SELECT secret FROM restdir_secret')
    assert.is(rows.length, 1)
    const secret = String(rows[0].secret)
    const ada = await instances[0].request('POST', '/user', { body: { username: 'ada', password: 'bestPassw0rd' } })
    assert.is(ada.status, 201, ada.text)
    const [header, claims, signature] = String(ada.json.accessToken).split('.')
    assert.is(createHmac('sha256', secret).update(`${header}.${claims}`).digest('base64url'), signature)
    const again = await instances[1].request('POST', '/login', { body: { username: 'ada', password: 'bestPassw0rd' } })
    assert.is(again.status, 200, again.text)
    const adaId = ada.json.user.user_id
    const bobRegistered = await instances[1].request('POST', '/user', { body: { username: 'bob', password: 'bestPassw0rd' } })
    assert.is(bobRegistered.status, 201, bobRegistered.text)
    for (const instance of instances) {
      // A token from either instance reads its user on both; the other user is refused on both.
      assert.is((await instance.request('GET', `/user/${adaId}`, bearer(ada.json.accessToken))).status, 200)
      assert.is((await instance.request('GET', `/user/${adaId}`, bearer(again.json.accessToken))).status, 200)
      assert.is((await instance.request('GET', `/user/${adaId}`, bearer(bobRegistered.json.accessToken))).status, 403)
      assert.is((await instance.request('POST', `/user/${adaId}/playlist`, { ...bearer(bobRegistered.json.accessToken), body: { name: 'x' } })).status, 403)
    }
    // A password changed on one instance ends the older tokens on the other.
    assert.is((await instances[0].request('PATCH', `/user/${adaId}`, { ...bearer(ada.json.accessToken), body: { password: 'an0therPass' } })).status, 200)
    assert.is((await instances[1].request('GET', `/user/${adaId}`, bearer(ada.json.accessToken))).status, 401)
    // A restart keeps the secret: a token outlives it.
    await instances[1].close(true)
    instances[1] = await startServer({ store: schema.url, auth: true })
    assert.is((await instances[1].request('GET', `/user/${bobRegistered.json.user.user_id}`, bearer(bobRegistered.json.accessToken))).status, 200)
  } finally {
    for (const instance of instances) await instance.close(true)
    await schema.drop()
  }
})

test.run()
