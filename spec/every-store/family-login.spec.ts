import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openTestStore, startServer, wrapStore, type TestServer } from '../support/helpers.ts'
import { assertProblem } from '../support/assertions.ts'

// `POST /login` on the declared families (docs/accounts.md, "The declared families") finds its user
// by the exact username, as the listing `?username=` finds it, among many users: the right user, and
// no other whose name is a prefix or a case variant of it; and without reading every user.

const PASSWORD = 'bestPassw0rd'
const MANY = 300

/** Registers `username` through HTTP: its id. */
async function register(api: TestServer, username: string, password = PASSWORD): Promise<string> {
  const answer = await api.request('POST', '/user', { body: { username, password } })
  assert.is(answer.status, 201, answer.text)
  return answer.json.user.user_id
}

/** MANY more users, written straight through the server's documents with `template`'s password hash (no hashing for each). */
async function addMany(api: TestServer, templateId: string): Promise<void> {
  const documents = api.server.handler.documents!
  const template = (await documents.read(['user', templateId]))!.doc
  for (let index = 0; index < MANY; index++) {
    const id = `m${index}`
    await documents.write(['user', id], () => ({ ...template, user_id: id, username: `member-${index}` }))
  }
}

const logIn = (api: TestServer, username: string, password = PASSWORD) => api.request('POST', '/login', { body: { username, password } })

test('among many users, POST /login answers the user of that exact username; a wrong password, a prefix or a case variant do not log in', async () => {
  const api = await startServer({ auth: true })
  try {
    const ada = await register(api, 'ada')
    const capital = await register(api, 'Ada', 'anotherPassw0rd')
    await addMany(api, ada)
    const right = await logIn(api, 'ada')
    assert.is(right.status, 200, right.text)
    assert.is(right.json.user.user_id, ada)
    assert.is(right.json.user.username, 'ada')
    const member = await logIn(api, `member-${MANY - 7}`)
    assert.is(member.status, 200, member.text)
    assert.is(member.json.user.user_id, `m${MANY - 7}`)
    // 'Ada' is its own user, with its own password: ada's does not open it.
    const variant = await logIn(api, 'Ada', 'anotherPassw0rd')
    assert.is(variant.status, 200, variant.text)
    assert.is(variant.json.user.user_id, capital)
    // At most four failures from one address before the throttle (lib/auth/throttle.ts): these are the four.
    assertProblem(await logIn(api, 'ada', 'wrongPassw0rd'), 400, /^Incorrect password\.$/)
    assertProblem(await logIn(api, 'ad'), 400, /^Cannot find user: no user has this username/)
    assertProblem(await logIn(api, 'ADA'), 400, /^Cannot find user/)
    assertProblem(await logIn(api, 'member-1 '), 400, /^Cannot find user/)
  } finally {
    await api.close()
  }
})

test('once the users are listed, a login reads no user document the store holds, however many there are', async () => {
  const { store, dispose } = await openTestStore()
  let reads = 0
  const counted = wrapStore(store, { before: (operation, path) => void ((operation === 'read' || operation === 'readText') && path[0] === 'user' && path.length === 2 && reads++) })
  const api = await startServer({ auth: true, store: counted })
  try {
    const ada = await register(api, 'ada')
    await addMany(api, ada)
    // The first filtered listing may read every user once to build the collection's listing index (docs/http-api.md, "Listing queries").
    assert.is((await logIn(api, 'ada')).status, 200)
    reads = 0
    for (const index of [0, 99, 150, MANY - 1]) {
      const answer = await logIn(api, `member-${index}`)
      assert.is(answer.status, 200, answer.text)
      assert.is(answer.json.user.user_id, `m${index}`)
    }
    assertProblem(await logIn(api, 'nobody'), 400, /^Cannot find user/)
    // Five logins: at most one document each, whatever MANY is (a listing of every user reads MANY each).
    assert.ok(reads <= 5, `five logins among ${MANY + 1} users read ${reads} user documents`)
  } finally {
    await api.close()
    await dispose()
  }
})

test.run()
