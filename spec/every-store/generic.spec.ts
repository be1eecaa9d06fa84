import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, type Answer, type TestServer } from '../support/helpers.ts'
import { assertJson, assertProblem, assertStrongEtag } from '../support/assertions.ts'

// The generic data API (docs/http-api.md, "The generic data API"): every URL not declared elsewhere names a node.

let api: TestServer

test.before(async () => {
  api = await startServer()
})
test.after(async () => {
  await api.close()
})

/** The Location header of an answer: an absolute path on this server, sent back verbatim. */
function follow(answer: Answer): string {
  const location = answer.headers.location
  assert.type(location, 'string', 'the answer has a Location header')
  assert.match(location as string, /^\/[^/]/)
  return location as string
}

/** True when a browser or fetch resolving the path would send it unchanged (WHATWG URL drops dot segments, even encoded ones). */
function browsersKeep(path: string): boolean {
  return new URL(path, 'http://x').pathname === path
}

// GET

test('GET of a node with a document answers 200 with the document and a strong ETag', async () => {
  await api.request('PUT', '/books/dune', { body: { title: 'Dune', year: 1965 } })
  const answer = await api.request('GET', '/books/dune')
  assertJson(answer, 200, { id: 'dune', title: 'Dune', year: 1965 })
  assertStrongEtag(answer)
})

test('GET of a node without a document lists its children documents in ascending id order', async () => {
  for (const id of ['b', 'a', 'c', '10', '9']) await api.request('PUT', `/letters/${id}`, { body: { name: id } })
  const answer = await api.request('GET', '/letters')
  assertJson(answer, 200)
  // Whole numbers come first, by value (docs/http-api.md, "The generic data API").
  assert.equal(answer.json.map((doc: { id: string }) => doc.id), ['9', '10', 'a', 'b', 'c'])
  assert.equal(answer.json[3], { id: 'b', name: 'b' })
})

test('a collection leaves out children that hold no document of their own', async () => {
  await api.request('PUT', '/shelf/one', { body: { n: 1 } })
  await api.request('PUT', '/shelf/empty/deeper', { body: { n: 2 } })
  await api.request('PUT', '/shelf/three', { body: { n: 3 } })
  const answer = await api.request('GET', '/shelf')
  assertJson(answer, 200, [{ id: 'one', n: 1 }, { id: 'three', n: 3 }])
  assertJson(await api.request('GET', '/shelf/empty'), 200, [{ id: 'deeper', n: 2 }])
})

test('GET of a node that does not exist answers 404 problem+json', async () => {
  assertProblem(await api.request('GET', '/nothing/here'), 404, /\/nothing\/here/)
})

test('?_children lists the names of a node children, and 404s for a missing node', async () => {
  await api.request('PUT', '/tree/x', { body: {} })
  await api.request('PUT', '/tree/y/z', { body: {} })
  assertJson(await api.request('GET', '/tree?_children'), 200, ['x', 'y'])
  assertProblem(await api.request('GET', '/no-tree?_children'), 404)
})

// POST

test('POST creates a child with a generated id: 201, Location that GETs it, ETag, the new document', async () => {
  const created = await api.request('POST', '/notes', { body: { text: 'hello' } })
  assertJson(created, 201)
  assert.match(created.json.id, /^[0-9a-z]+$/)
  assert.equal(created.json, { id: created.json.id, text: 'hello' })
  assert.is(follow(created), `/notes/${created.json.id}`)
  const etag = assertStrongEtag(created)
  const read = await api.request('GET', follow(created))
  assertJson(read, 200, created.json)
  assert.is(read.headers.etag, etag)
})

test('generated ids use only lower-case letters and digits and sort in creation order', async () => {
  const ids: string[] = []
  for (let index = 0; index < 30; index++) {
    ids.push((await api.request('POST', '/ordered', { body: { index } })).json.id)
  }
  for (const id of ids) assert.match(id, /^[0-9a-z]{12}$/)
  assert.equal([...ids].sort(), ids)
  assert.is(new Set(ids).size, ids.length)
  const listed = await api.request('GET', '/ordered')
  assert.equal(listed.json.map((doc: { index: number }) => doc.index), [...Array(30).keys()])
})

test('POST with an id in the body is 400: ids are generated, PUT chooses one', async () => {
  assertProblem(await api.request('POST', '/notes', { body: { id: 'mine' } }), 400, /PUT/)
})

test('POST below a document creates a child of it and leaves the document alone', async () => {
  await api.request('PUT', '/parent', { body: { name: 'p' } })
  const child = await api.request('POST', '/parent', { body: { name: 'c' } })
  assert.is(child.status, 201)
  assert.is(follow(child), `/parent/${child.json.id}`)
  assertJson(await api.request('GET', '/parent'), 200, { id: 'parent', name: 'p' })
})

// PUT

test('PUT answers 201 with Location when it creates and 200 when it replaces, with the stored document', async () => {
  const created = await api.request('PUT', '/cities/paris', { body: { population: 2 } })
  assertJson(created, 201, { id: 'paris', population: 2 })
  assert.is(follow(created), '/cities/paris')
  const firstTag = assertStrongEtag(created)

  const replaced = await api.request('PUT', '/cities/paris', { body: { country: 'FR' } })
  assertJson(replaced, 200, { id: 'paris', country: 'FR' })
  assert.is.not(assertStrongEtag(replaced), firstTag)
  assertJson(await api.request('GET', '/cities/paris'), 200, { id: 'paris', country: 'FR' })
})

test('PUT may repeat the id of its URL, and a different id is 400 that leaves the document as it was', async () => {
  assertJson(await api.request('PUT', '/cities/rome', { body: { id: 'rome', river: 'Tiber' } }), 201, { id: 'rome', river: 'Tiber' })
  assertProblem(await api.request('PUT', '/cities/rome', { body: { id: 'milan' } }), 400, /milan/)
  assertProblem(await api.request('PUT', '/cities/rome', { body: { id: 7 } }), 400)
  assertJson(await api.request('GET', '/cities/rome'), 200, { id: 'rome', river: 'Tiber' })
})

test('PUT to a node that only has children gives it a document and keeps the children', async () => {
  await api.request('PUT', '/family/kid', { body: { age: 3 } })
  assert.is((await api.request('PUT', '/family', { body: { name: 'F' } })).status, 201)
  assertJson(await api.request('GET', '/family'), 200, { id: 'family', name: 'F' })
  assertJson(await api.request('GET', '/family/kid'), 200, { id: 'kid', age: 3 })
})

// PATCH

test('PATCH merges per RFC 7396: new keys added, nested objects merged, null removes, arrays replaced', async () => {
  await api.request('PUT', '/profiles/ann', {
    body: { name: 'Ann', drop: true, tags: ['a', 'b'], address: { city: 'Oslo', zip: '0150', geo: { lat: 59, lon: 10 } } },
  })
  const patched = await api.request('PATCH', '/profiles/ann', {
    body: { drop: null, tags: ['c'], age: 40, address: { zip: null, street: 'Main', geo: { lat: 60 } } },
  })
  const expected = { id: 'ann', name: 'Ann', tags: ['c'], address: { city: 'Oslo', geo: { lat: 60, lon: 10 }, street: 'Main' }, age: 40 }
  assertJson(patched, 200, expected)
  assertStrongEtag(patched)
  assertJson(await api.request('GET', '/profiles/ann'), 200, expected)
})

test('PATCH replaces an object with a scalar and a scalar with an object', async () => {
  await api.request('PUT', '/profiles/bob', { body: { a: { deep: 1 }, b: 2 } })
  assertJson(await api.request('PATCH', '/profiles/bob', { body: { a: 'flat', b: { now: { deep: null, kept: 1 } } } }), 200, {
    id: 'bob',
    a: 'flat',
    b: { now: { kept: 1 } },
  })
})

test('PATCH of a node without a document is 404, and creates nothing', async () => {
  assertProblem(await api.request('PATCH', '/profiles/nobody', { body: { a: 1 } }), 404)
  assertProblem(await api.request('GET', '/profiles/nobody'), 404)
})

test('PATCH may repeat the id but never change or remove it (400)', async () => {
  await api.request('PUT', '/profiles/cy', { body: { a: 1 } })
  assertJson(await api.request('PATCH', '/profiles/cy', { body: { id: 'cy', b: 2 } }), 200, { id: 'cy', a: 1, b: 2 })
  assertProblem(await api.request('PATCH', '/profiles/cy', { body: { id: 'dee' } }), 400)
  assertProblem(await api.request('PATCH', '/profiles/cy', { body: { id: null } }), 400)
  assertJson(await api.request('GET', '/profiles/cy'), 200, { id: 'cy', a: 1, b: 2 })
})

// DELETE

test('DELETE answers 200 with the deleted document, and the node is gone', async () => {
  await api.request('PUT', '/trash/one', { body: { v: 1 } })
  assertJson(await api.request('DELETE', '/trash/one'), 200, { id: 'one', v: 1 })
  assertProblem(await api.request('GET', '/trash/one'), 404)
  assertProblem(await api.request('DELETE', '/trash/one'), 404)
})

test('DELETE removes the whole subtree below the node', async () => {
  await api.request('PUT', '/doomed', { body: { top: true } })
  await api.request('PUT', '/doomed/a', { body: {} })
  await api.request('PUT', '/doomed/a/b/c', { body: {} })
  await api.request('PUT', '/kept/a', { body: { kept: true } })
  assertJson(await api.request('DELETE', '/doomed'), 200, { id: 'doomed', top: true })
  for (const path of ['/doomed', '/doomed/a', '/doomed/a/b', '/doomed/a/b/c']) assertProblem(await api.request('GET', path), 404)
  assertJson(await api.request('GET', '/kept/a'), 200, { id: 'a', kept: true })
})

test('DELETE of a node with children but no document answers 204 and removes the children', async () => {
  await api.request('PUT', '/folder/x', { body: {} })
  await api.request('PUT', '/folder/y/z', { body: {} })
  const answer = await api.request('DELETE', '/folder')
  assert.is(answer.status, 204)
  assert.is(answer.text, '')
  assertProblem(await api.request('GET', '/folder'), 404)
  assertProblem(await api.request('GET', '/folder/y/z'), 404)
})

test('DELETE of a node that does not exist is 404', async () => {
  assertProblem(await api.request('DELETE', '/never/was'), 404)
})

// HEAD, OPTIONS, 405

test('HEAD answers the headers of GET without a body, for documents, collections and 404s', async () => {
  await api.request('PUT', '/heads/one', { body: { text: 'some text' } })
  for (const path of ['/heads/one', '/heads']) {
    const get = await api.request('GET', path)
    const head = await api.request('HEAD', path)
    assert.is(head.status, 200)
    assert.is(head.text, '')
    assert.is(head.headers['content-type'], get.headers['content-type'])
    assert.is(head.headers['content-length'], get.headers['content-length'])
    assert.is(head.headers.etag, get.headers.etag)
  }
  const missing = await api.request('HEAD', '/heads/none')
  assert.is(missing.status, 404)
  assert.is(missing.text, '')
  assert.is(missing.headers['content-type'], 'application/problem+json')
})

test('OPTIONS answers 204 with the Allow list, on any node and on /', async () => {
  const node = await api.request('OPTIONS', '/anything/at/all')
  assert.is(node.status, 204)
  assert.is(node.text, '')
  assert.equal(splitAllow(node), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'])
  const root = await api.request('OPTIONS', '/')
  assert.is(root.status, 204)
  assert.equal(splitAllow(root), ['GET', 'HEAD', 'OPTIONS', 'POST'])
})

test('PUT and DELETE on / are 405 with Allow, and the store is untouched', async () => {
  await api.request('PUT', '/survivor', { body: { alive: true } })
  for (const method of ['PUT', 'DELETE']) {
    const answer = await api.request(method, '/', { body: {} })
    assertProblem(answer, 405)
    assert.equal(splitAllow(answer), ['GET', 'HEAD', 'OPTIONS', 'POST'])
  }
  assertJson(await api.request('GET', '/survivor'), 200, { id: 'survivor', alive: true })
})

test('a method the data API does not know is 405 with Allow', async () => {
  const answer = await api.request('PROPFIND', '/notes')
  assertProblem(answer, 405, /PROPFIND/)
  assert.equal(splitAllow(answer), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'])
})

test('a trailing slash names the same node', async () => {
  await api.request('PUT', '/slash/x/', { body: { v: 1 } })
  assertJson(await api.request('GET', '/slash/x'), 200, { id: 'x', v: 1 })
  assertJson(await api.request('GET', '/slash/'), 200, [{ id: 'x', v: 1 }])
})

// Odd segments (docs/storage.md, "Where the data goes": distinct URL paths never share a file)

const oddSegments: Array<[raw: string, decoded: string]> = [
  ['%2e%2e', '..'],
  ['%2E', '.'],
  ['a%2Fb', 'a/b'],
  ['a%5Cb', 'a\\b'],
  ['caf%C3%A9', 'caf\u00e9'],
  ['cafe%CC%81', 'cafe\u0301'],
  ['%F0%9F%8E%B5', '\u{1f3b5}'],
  ['CON', 'CON'],
  ['con', 'con'],
  ['Con', 'Con'],
  ['nul.txt', 'nul.txt'],
  ['Ada', 'Ada'],
  ['ada', 'ada'],
  ['!ada', '!ada'],
  ['%40.json', '@.json'],
  ['%40lock', '@lock'],
  ['%25', '%'],
  ['a%20b', 'a b'],
  ['trailing.', 'trailing.'],
  ['x'.repeat(300), 'x'.repeat(300)],
  ['x'.repeat(299) + 'y', 'x'.repeat(299) + 'y'],
]

test('odd segments are stored distinctly and each round-trips through PUT, Location, GET and listing', async () => {
  for (const [raw, decoded] of oddSegments) {
    const created = await api.request('PUT', `/odd/${raw}`, { body: { name: decoded } })
    assertJson(created, 201, { id: decoded, name: decoded })
    const location = follow(created)
    assertJson(await api.request('GET', location), 200, { id: decoded, name: decoded })
    // A dot segment is spelled %2E so no client takes it for "." or ".." (RFC 3986 §5.2.4); others reach browsers unchanged.
    if (decoded === '.' || decoded === '..') assert.is(location, `/odd/${decoded.replaceAll('.', '%2E')}`)
    else assert.ok(browsersKeep(location), `${location} reaches browsers unchanged`)
  }
  for (const [raw, decoded] of oddSegments) {
    assertJson(await api.request('GET', `/odd/${raw}`), 200, { id: decoded, name: decoded })
  }
  const names = (await api.request('GET', '/odd?_children')).json as string[]
  assert.equal([...names].sort(), oddSegments.map(([, decoded]) => decoded).sort())
  const listed = (await api.request('GET', '/odd')).json as Array<{ id: string; name: string }>
  assert.is(listed.length, oddSegments.length)
  for (const doc of listed) assert.is(doc.id, doc.name)
})

test('POST below an odd segment answers a Location that leads back to the new document', async () => {
  for (const raw of ['%2e%2e', 'a%2Fb', 'CON', 'caf%C3%A9']) {
    const created = await api.request('POST', `/odd-parent/${raw}`, { body: { under: raw } })
    assert.is(created.status, 201)
    assert.equal(created.json, { id: created.json.id, under: raw })
    assertJson(await api.request('GET', follow(created)), 200, created.json)
  }
})

test('deleting an odd segment removes only that node', async () => {
  await api.request('PUT', '/case/Ada', { body: {} })
  await api.request('PUT', '/case/ada', { body: {} })
  await api.request('PUT', '/case/%2e', { body: {} })
  await api.request('PUT', '/case/%2e%2e', { body: {} })
  assert.is((await api.request('DELETE', '/case/Ada')).status, 200)
  assert.is((await api.request('DELETE', '/case/%2e%2e')).status, 200)
  assertJson(await api.request('GET', '/case?_children'), 200, ['.', 'ada'])
})

function splitAllow(answer: Answer): string[] {
  const allow = answer.headers.allow
  assert.type(allow, 'string', 'the answer has an Allow header')
  return (allow as string).split(',').map((method) => method.trim()).sort()
}

test.run()
