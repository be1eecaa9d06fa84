import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startServer, startServerOnFolder, touchLater, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem } from '../support/assertions.ts'

// A document is stored exactly as sent, or refused (docs/http-api.md, "Requests and errors"):
// numbers a double cannot carry and keys repeated in one object are 400s that say where.

let api: TestServer
test.before(async () => {
  api = await startServer()
})
test.after(async () => {
  await api.close()
})

const json = { 'content-type': 'application/json' }

/** Sends `text` as a JSON body by every write method and expects each to be refused with the detail. */
async function assertRefusedEverywhere(text: string, detail: RegExp): Promise<void> {
  await api.request('PUT', '/exact/base', { body: { a: 1 } })
  assertProblem(await api.request('PUT', '/exact/put', { body: text, headers: json }), 400, detail)
  assertProblem(await api.request('POST', '/exact', { body: text, headers: json }), 400, detail)
  assertProblem(await api.request('PATCH', '/exact/base', { body: text, headers: json }), 400, detail)
  assertProblem(await api.request('POST', '/user', { body: text, headers: json }), 400, detail)
  assert.is((await api.request('GET', '/exact/put')).status, 404, 'nothing was stored')
  assertJson(await api.request('GET', '/exact/base'), 200, { id: 'base', a: 1 })
}

test('a number out of range for a double (1e400) is a 400 that names the field and says why', async () => {
  await assertRefusedEverywhere('{"a":1e400}', /\ba: 1e400 is out of range/)
  await assertRefusedEverywhere('{"a":-1e400}', /\ba: -1e400 is out of range/)
})

test('a number too small for a double (1e-400) is a 400, not a silent 0', async () => {
  await assertRefusedEverywhere('{"a":1e-400}', /\ba: 1e-400 is too small for a double and would become 0/)
})

test('an integer with more digits than a double holds is a 400 that says what it would become', async () => {
  await assertRefusedEverywhere('{"big":12345678901234567890}', /big: 12345678901234567890 has more precision than a double holds and would be stored as 12345678901234567000/)
  await assertRefusedEverywhere('{"n":9007199254740993}', /n: 9007199254740993 .*stored as 9007199254740992/)
  await assertRefusedEverywhere('{"n":0.30000000000000001}', /n: 0\.30000000000000001 .*stored as 0\.3/)
})

test('negative zero is a 400 (JSON output would write it as 0)', async () => {
  await assertRefusedEverywhere('{"z":-0}', /z: -0 is negative zero/)
  await assertRefusedEverywhere('{"z":-0.0e3}', /z: -0\.0e3 is negative zero/)
})

test('numbers a double holds exactly are stored and served with their value', async () => {
  const text = '{"a":0.1,"b":1.5e300,"c":1.50,"d":1e2,"e":9007199254740992,"f":-0.5,"g":0,"h":5e-324,"i":1e21,"j":123456789012345}'
  assertJson(await api.request('PUT', '/exact/fine', { body: text, headers: json }), 201)
  const answer = await api.request('GET', '/exact/fine')
  assertJson(answer, 200, { id: 'fine', a: 0.1, b: 1.5e300, c: 1.5, d: 100, e: 9007199254740992, f: -0.5, g: 0, h: 5e-324, i: 1e21, j: 123456789012345 })
  assert.match(answer.text, /"b":1\.5e\+300/)
})

test('a bad number deep inside is named by its path, and every bad value is listed', async () => {
  const text = '{"a":{"b":[1,{"c":1e999}]},"tags":{"x y":[0,9007199254740993]}}'
  const answer = await api.request('PUT', '/exact/deep', { body: text, headers: json })
  assertProblem(answer, 400, /a\.b\[1\]\.c: 1e999 is out of range/)
  assert.match(answer.json.detail, /tags\["x y"\]\[1\]: 9007199254740993/)
})

test('a key repeated at the top of the body is a 400 naming the key', async () => {
  await assertRefusedEverywhere('{"name":"a","other":1,"name":"b"}', /name: the key "name" appears more than once/)
})

test('a key repeated in a nested object is a 400 naming its path, while equal keys in different objects are fine', async () => {
  await assertRefusedEverywhere('{"a":[{"k":1},{"k":2,"k":3}]}', /a\[1\]\.k: the key "k" appears more than once/)
  await assertRefusedEverywhere('{"a":{"__proto__":1,"__proto__":2}}', /a\.__proto__: the key "__proto__" appears more than once/)
  assertJson(await api.request('PUT', '/exact/same', { body: '{"k":{"k":{"k":1}},"l":[{"k":1},{"k":2}]}', headers: json }), 201)
})

test('strings that look like numbers, quotes and colons inside strings are kept as they are', async () => {
  const body = { s: '1e400', t: 'a "quoted: -0" \\', 'k:1': '12345678901234567890' }
  assertJson(await api.request('PUT', '/exact/strings', { body }), 201, { id: 'strings', ...body })
})

test('a form body carries strings only, so long digit strings in it are stored as sent', async () => {
  const answer = await api.request('PUT', '/exact/form', { body: 'n=12345678901234567890&z=-0', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  assertJson(answer, 201, { id: 'form', n: '12345678901234567890', z: '-0' })
})

// Hand-edited files hold the same rule: a file that JSON.parse would change is never served changed.

test('a stored file a person edited to hold a number a double cannot carry is not served as changed data', async () => {
  const server = await startServerOnFolder()
  try {
    await server.request('PUT', '/hand/a', { body: { n: 1 } })
    await server.request('PUT', '/hand/b', { body: { n: 2 } })
    writeFileSync(join(server.dir, 'hand', 'a', '@.json'), '{\n  "id": "a",\n  "n": 12345678901234567890\n}\n')
    touchLater(join(server.dir, 'hand', 'a', '@.json'))
    const refused = await server.request('GET', '/hand/a')
    assert.is(refused.status, 409, refused.text)
    assert.match(refused.json.detail, /n: 12345678901234567890/)
    // Its collection still lists, without it, and names it (docs/http-api.md, "Requests and errors").
    for (const target of ['/hand', '/hand?_sort=n']) {
      const answer = await server.request('GET', target)
      assertJson(answer, 200, [{ id: 'b', n: 2 }])
      assert.is(answer.headers['x-restdir-skipped'], '/hand/a')
      assert.not.match(answer.text, /12345678901234567000/)
    }
    mkdirSync(join(server.dir, 'hand', 'c'))
    writeFileSync(join(server.dir, 'hand', 'c', '@.json'), '{"id":"c","k":1,"k":2}')
    const duplicate = await server.request('GET', '/hand/c')
    assert.is(duplicate.status, 409, `a file with a repeated key is refused (got ${duplicate.status}: ${duplicate.text})`)
    assert.match(duplicate.json.detail, /"k"|k/)
    assertJson(await server.request('GET', '/hand/b'), 200, { id: 'b', n: 2 })
  } finally {
    await server.close()
  }
})

test.run()
