import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { makeTempDir, startServer, type TestServer } from '../support/helpers.ts'
import { assertProblem, assertStrongEtag } from '../support/assertions.ts'
import { createServer } from '../../lib/server.ts'
import type { Declarations } from '../../lib/data/declarations.ts'

// Declaring resources (docs/http-api.md, "Declaring resources"): a family declared in JSON gets
// every rule the seed's users and playlists have: server ids, a unique field, children that
// belong to their owner and go with it, arrays that are always arrays.

const teams: Declarations = { team: { id: 'team_id', unique: ['name'], children: { member: { id: 'member_id', arrays: ['roles'] } } } }

let api: TestServer
let folder: string

test.before(async () => {
  folder = await makeTempDir('restdir-declarations-')
  const file = path.join(folder, 'resources.json')
  await writeFile(file, JSON.stringify(teams))
  api = await startServer({ resources: file })
})
test.after(async () => {
  await api.close()
  await rm(folder, { recursive: true, force: true })
})

async function newTeam(body: Record<string, unknown> = {}): Promise<string> {
  const answer = await api.request('POST', '/team', { body })
  assert.is(answer.status, 201, answer.text)
  return answer.json.team_id
}

test('POST on a declared collection assigns its id field, and answers Location and ETag', async () => {
  const created = await api.request('POST', '/team', { body: { name: 'Blue', city: 'Oslo' } })
  assert.is(created.status, 201, created.text)
  assertStrongEtag(created)
  const id = created.json.team_id
  assert.type(id, 'string')
  assert.equal(created.json, { team_id: id, name: 'Blue', city: 'Oslo' })
  assert.is(created.headers.location, `/team/${id}`)
  assert.equal((await api.request('GET', `/team/${id}`)).json, created.json)
  assertProblem(await api.request('POST', '/team', { body: { team_id: 'mine' } }), 400, /^team_id is assigned by the service; leave it out of the body\.$/)
  assertProblem(await api.request('PUT', `/team/${id}`, { body: { team_id: 'other' } }), 400, /^team_id cannot be changed \(this team is ".+"\)\.$/)
})

test('a unique field is a non-empty string no other member holds: 400 otherwise, 409 when taken, on POST, PUT and PATCH', async () => {
  for (const name of ['', '  ', 7, null, ['x']]) {
    assertProblem(await api.request('POST', '/team', { body: { name } }), 400, /^name must be a non-empty string\.$/)
  }
  const red = await newTeam({ name: 'Red' })
  const green = await newTeam({ name: 'Green' })
  assertProblem(await api.request('POST', '/team', { body: { name: 'Red' } }), 409, new RegExp(`^The name "Red" is taken by team "${red}"\\.$`))
  assertProblem(await api.request('PUT', `/team/${green}`, { body: { name: 'Red' } }), 409, /is taken by team/)
  assertProblem(await api.request('PATCH', `/team/${green}`, { body: { name: 'Red' } }), 409, /is taken by team/)
  assert.is((await api.request('PUT', `/team/${red}`, { body: { name: 'Red', motto: 'go' } })).status, 200, 'a member keeps its own value')
  assert.is((await api.request('POST', '/team', { body: { city: 'no name' } })).status, 201, 'the field may be left out')
  await api.request('DELETE', `/team/${red}`)
  assert.is((await api.request('PATCH', `/team/${green}`, { body: { name: 'Red' } })).status, 200, 'a deleted member frees its value')
})

test('a missing member is a 404 named from the family', async () => {
  assertProblem(await api.request('GET', '/team/nobody'), 404, /^There is no team "nobody"\.$/)
  assertProblem(await api.request('PATCH', '/team/nobody', { body: {} }), 404, /^There is no team "nobody"\.$/)
})

test("a child carries its owner's id, gets its own, and its array field is [] when left out", async () => {
  const team = await newTeam()
  const created = await api.request('POST', `/team/${team}/member`, { body: { nick: 'ann' } })
  assert.is(created.status, 201, created.text)
  const id = created.json.member_id
  assert.equal(created.json, { member_id: id, team_id: team, nick: 'ann', roles: [] })
  assert.is(created.headers.location, `/team/${team}/member/${id}`)
  const withRoles = await api.request('POST', `/team/${team}/member`, { body: { roles: ['lead', { any: 'json' }] } })
  assert.equal(withRoles.json.roles, ['lead', { any: 'json' }])
  const listed = await api.request('GET', `/team/${team}/member`)
  assert.equal(listed.json.map((member: { member_id: string }) => member.member_id).sort(), [id, withRoles.json.member_id].sort())
  assertProblem(await api.request('GET', `/team/${team}/member/none`), 404, new RegExp(`^Team "${team}" has no member "none"\\.$`))
})

test('an array field that is null or not an array is a 400; a PATCH with null resets it to []', async () => {
  const team = await newTeam()
  for (const roles of [null, 'lead', 3, { a: 1 }]) {
    assertProblem(await api.request('POST', `/team/${team}/member`, { body: { roles } }), 400, /^roles must be an array \(got \w+\); leave it out for an empty list\. A role can be any JSON value\.$/)
  }
  const member = (await api.request('POST', `/team/${team}/member`, { body: { roles: ['a'] } })).json.member_id
  assertProblem(await api.request('PUT', `/team/${team}/member/${member}`, { body: { roles: 'a' } }), 400, /roles must be an array/)
  assertProblem(await api.request('PATCH', `/team/${team}/member/${member}`, { body: { roles: 5 } }), 400, /roles must be an array/)
  const reset = await api.request('PATCH', `/team/${team}/member/${member}`, { body: { roles: null } })
  assert.equal(reset.json.roles, [])
  const replaced = await api.request('PUT', `/team/${team}/member/${member}`, { body: { nick: 'bo' } })
  assert.equal(replaced.json, { member_id: member, team_id: team, nick: 'bo', roles: [] })
  assertProblem(await api.request('PATCH', `/team/${team}/member/${member}`, { body: { team_id: 'other' } }), 400, new RegExp(`^team_id cannot be changed: this member belongs to team "${team}"\\.$`))
})

test('an array field named __proto__ is a field like any other: [] when left out, kept when sent, on POST, PUT, PATCH and an import', async () => {
  const fixture = path.join(folder, 'proto-fixture.json')
  await writeFile(fixture, '{"box": [{"box_id": "b1"}, {"box_id": "b2", "__proto__": ["x"]}]}')
  const server = await startServer({ resources: { box: { id: 'box_id', arrays: ['__proto__', 'tags'] } }, fixture })
  const own = (doc: object) => (Object.hasOwn(doc, '__proto__') ? Object.getOwnPropertyDescriptor(doc, '__proto__')!.value : 'absent')
  try {
    const created = await server.request('POST', '/box', { body: {} })
    assert.is(created.status, 201, created.text)
    assert.equal(own(created.json), [])
    assert.equal(created.json.tags, [])
    const id = created.json.box_id
    assert.equal(own((await server.request('GET', `/box/${id}`)).json), [], 'stored, not only answered')
    const sent = await server.request('POST', '/box', { body: '{"__proto__": [1, 2]}', headers: { 'content-type': 'application/json' } })
    assert.equal(own(sent.json), [1, 2])
    assert.equal(own((await server.request('PUT', `/box/${id}`, { body: { n: 1 } })).json), [])
    assert.equal(own((await server.request('PATCH', `/box/${id}`, { body: { n: 2 } })).json), [])
    assert.equal(own((await server.request('GET', '/box/b1')).json), [], 'an imported member gets its [] too')
    assert.equal(own((await server.request('GET', '/box/b2')).json), ['x'])
  } finally {
    await server.close()
  }
})

test('writing a child, or anything, below a missing owner is a 404 that says how to make the owner', async () => {
  assertProblem(await api.request('POST', '/team/ghost/member', { body: {} }), 404, /^There is no team "ghost"; create it with POST \/team first\.$/)
  assertProblem(await api.request('PUT', '/team/ghost/notes', { body: {} }), 404, /^There is no team "ghost"; create it with POST \/team first\.$/)
  assertProblem(await api.request('GET', '/team/ghost/member'), 404, /There is no team "ghost"/)
})

test("deleting a member deletes its children and everything below it", async () => {
  const team = await newTeam({ name: 'Doomed' })
  const member = (await api.request('POST', `/team/${team}/member`, { body: {} })).json.member_id
  assert.is((await api.request('PUT', `/team/${team}/notes`, { body: { text: 'hi' } })).status, 201)
  assert.is((await api.request('DELETE', `/team/${team}`)).status, 200)
  assertProblem(await api.request('GET', `/team/${team}/member/${member}`), 404)
  assertProblem(await api.request('GET', `/team/${team}/notes`), 404)
  assert.is((await api.request('POST', '/team', { body: { name: 'Doomed' } })).status, 201, 'its unique value is free again')
})

test('the undeclared seed families are plain documents, and the API description names the declared ones only', async () => {
  const user = await api.request('POST', '/user', { body: { username: '' } })
  assert.is(user.status, 201, 'an empty username is no rule of a plain document')
  assert.type(user.json.id, 'string')
  assert.is(user.json.user_id, undefined)
  const description = (await api.request('GET', '/?_openapi')).json
  const paths = Object.keys(description.paths)
  for (const route of ['/team', '/team/{team_id}', '/team/{team_id}/member', '/team/{team_id}/member/{member_id}']) assert.ok(paths.includes(route), route)
  assert.not.ok(paths.some((route) => route.startsWith('/user/{user_id}')), paths.join(' '))
  assert.equal(description.components.schemas.Member.required, ['member_id', 'team_id', 'roles'])
  assert.is(description.components.schemas.Team.properties.name.minLength, 1)
})

test('with resources none, no URL is declared: /user is a plain document and the description has no declared route', async () => {
  const plain = await startServer({ resources: 'none' })
  try {
    assert.equal(plain.server.handler.routes, [])
    const created = await plain.request('POST', '/user', { body: { user_id: 'mine' } })
    assert.is(created.status, 201, created.text)
    assert.is(created.json.user_id, 'mine')
    const paths = Object.keys((await plain.request('GET', '/?_openapi')).json.paths)
    assert.not.ok(paths.some((route) => route.includes('{user_id}') || route.includes('{playlist_id}')), paths.join(' '))
  } finally {
    await plain.close()
  }
})

test("a db.json fixture's declared arrays follow their family's rules, children nested under their owner", async () => {
  const fixture = path.join(folder, 'fixture.json')
  await writeFile(fixture, JSON.stringify({ team: [{ team_id: 't1', name: 'One', member: [{ member_id: 'm1', nick: 'ann' }] }] }))
  const seeded = await startServer({ resources: teams, fixture })
  try {
    assert.equal((await seeded.request('GET', '/team/t1/member/m1')).json, { member_id: 'm1', nick: 'ann', roles: [], team_id: 't1' })
    assertProblem(await seeded.request('POST', '/team', { body: { name: 'One' } }), 409)
  } finally {
    await seeded.close()
  }
  await writeFile(fixture, JSON.stringify({ team: [{ name: 'A' }, { name: 'A' }] }))
  const refused = createServer({ resources: teams, fixture, quiet: true })
  refused.on('error', () => {}) // the start's failure, read from `ready` below
  await refused.ready.then(() => assert.unreachable('a repeated unique value is refused'), (error: Error) => {
    assert.match(error.message, /team\[1\]\.name: "A" is also the name of team\[0\]; names must differ\./)
  })
  await refused.shutdown()
})

test("a db.json store nests each declared member's children array under it, by the family's name", async () => {
  const file = path.join(folder, 'db.json')
  await writeFile(file, '{}')
  const served = await startServer({ resources: teams, store: file })
  try {
    const team = (await served.request('POST', '/team', { body: { name: 'Nest' } })).json.team_id
    const member = (await served.request('POST', `/team/${team}/member`, { body: { roles: ['x'] } })).json
    const written = JSON.parse(await readFile(file, 'utf8'))
    assert.equal(written, { team: [{ team_id: team, name: 'Nest', member: [member] }] })
  } finally {
    await served.close()
  }
})

test.run()
