import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { Router } from '../../lib/http/router.ts'
import { queryOf, splitPath } from '../../lib/path.ts'
import { HttpError } from '../../lib/http-error.ts'

function declaredRoutes(): Router<string> {
  return new Router<string>()
    .add('POST', '/user', 'createUser')
    .add('GET', '/user', 'listUsers')
    .add('GET', '/user/:user_id', 'readUser')
    .add(['PUT', 'PATCH'], '/user/:user_id', 'writeUser')
    .add('GET', '/user/:user_id/playlist/:playlist_id', 'readPlaylist')
    .add('GET', '/user/me', 'readMe')
}

function statusOf(action: () => unknown): number | undefined {
  try {
    action()
  } catch (error) {
    if (error instanceof HttpError) return error.status
    throw error
  }
  return undefined
}

test('a literal pattern matches its path and method', () => {
  const match = declaredRoutes().find('POST', '/user')
  assert.is(match?.handler, 'createUser')
})

test('routes are chosen by method as well as path', () => {
  const router = declaredRoutes()
  assert.is(router.find('GET', '/user')?.handler, 'listUsers')
  assert.is(router.find('PUT', '/user/7')?.handler, 'writeUser')
  assert.is(router.find('PATCH', '/user/7')?.handler, 'writeUser')
})

test('a :name segment reaches the handler as a named parameter', () => {
  const match = declaredRoutes().find('GET', '/user/abc/playlist/xyz')
  assert.is(match?.handler, 'readPlaylist')
  assert.equal({ ...match?.params }, { user_id: 'abc', playlist_id: 'xyz' })
})

test('parameters arrive percent-decoded, including an encoded slash', () => {
  const match = declaredRoutes().find('GET', '/user/a%2Fb%20c%C3%A9')
  assert.is(match?.params.user_id, 'a/b cé')
})

test('parameters live in a null-prototype object, so :__proto__ is plain data', () => {
  const match = declaredRoutes().find('GET', '/user/__proto__')
  assert.is(match?.params.user_id, '__proto__')
  assert.is(Object.getPrototypeOf(match?.params), null)
})

test('a literal segment wins over a variable at the same place', () => {
  const router = declaredRoutes()
  assert.is(router.find('GET', '/user/me')?.handler, 'readMe')
  assert.is(router.find('GET', '/user/you')?.handler, 'readUser')
})

test('a literal that fails further down falls back to the variable', () => {
  const router = new Router<string>().add('GET', '/a/b/c', 'literal').add('GET', '/a/:x/d', 'variable')
  const match = router.find('GET', '/a/b/d')
  assert.is(match?.handler, 'variable')
  assert.is(match?.params.x, 'b')
})

test('a path that matches with another method has no handler and lists what is allowed', () => {
  const match = declaredRoutes().find('DELETE', '/user')
  assert.ok(match)
  assert.is(match?.handler, undefined)
  assert.equal(match?.allow.sort(), ['GET', 'HEAD', 'OPTIONS', 'POST'])
})

test('HEAD is answered wherever GET is', () => {
  assert.is(declaredRoutes().find('HEAD', '/user/1')?.handler, 'readUser')
  assert.is(new Router<string>().add('POST', '/x', 'x').find('HEAD', '/x')?.handler, undefined)
})

test('a path that matches no pattern gives undefined', () => {
  const router = declaredRoutes()
  assert.is(router.find('GET', '/users'), undefined)
  assert.is(router.find('GET', '/user/1/playlist'), undefined)
  assert.is(router.find('GET', '/'), undefined)
})

test('a trailing slash is ignored and the query string never takes part', () => {
  const router = declaredRoutes()
  assert.is(router.find('GET', '/user/')?.handler, 'listUsers')
  assert.is(router.find('GET', '/user/42/?x=/user')?.params.user_id, '42')
  assert.is(router.find('GET', '/user?_sort=name')?.handler, 'listUsers')
})

test('malformed percent-encoding is a 400, never a crash', () => {
  const router = declaredRoutes()
  assert.is(statusOf(() => router.find('GET', '/user/%')), 400)
  assert.is(statusOf(() => router.find('GET', '/user/%zz')), 400)
  assert.is(statusOf(() => router.find('GET', '/user/%C3')), 400)
  assert.is(statusOf(() => router.find('GET', '/user/%ED%A0%80')), 400)
})

test('an empty segment (a double slash) is a 400', () => {
  assert.is(statusOf(() => declaredRoutes().find('GET', '/user//1')), 400)
})

test('declaring an invalid or clashing pattern fails at start, not at request time', () => {
  assert.throws(() => new Router().add('GET', 'user', 1), /must start with/)
  assert.throws(() => new Router().add('GET', '/user/:', 1), /not a valid variable/)
  assert.throws(() => new Router().add('GET', '/a/:x', 1).add('GET', '/a/:y/b', 2), /clashes/)
  assert.throws(() => new Router().add('GET', '/a', 1).add('GET', '/a', 2), /declared twice/)
})

test('splitPath decodes each segment once and keeps encoded slashes and dots inside their segment', () => {
  assert.equal(splitPath('/'), [])
  assert.equal(splitPath('/a/b/'), ['a', 'b'])
  assert.equal(splitPath('/a%2Fb/%2e%2e/c?d=/e'), ['a/b', '..', 'c'])
  assert.equal(splitPath('/%2525'), ['%25'])
  assert.equal(splitPath('/a#frag/b'), ['a'])
})

test('splitPath refuses over-long paths, segments and depths with 414', () => {
  const limits = { maxPathLength: 50, maxSegmentLength: 10, maxDepth: 3 }
  assert.is(statusOf(() => splitPath('/' + 'a'.repeat(60), limits)), 414)
  assert.is(statusOf(() => splitPath('/' + 'a'.repeat(11), limits)), 414)
  assert.is(statusOf(() => splitPath('/a/b/c/d', limits)), 414)
  assert.equal(splitPath('/a/b/c', limits), ['a', 'b', 'c'])
})

test('splitPath refuses a target that is not a path', () => {
  assert.is(statusOf(() => splitPath('http://example.com/a')), 400)
  assert.is(statusOf(() => splitPath('*')), 400)
})

test.run()

test('targets without a query share one empty query that nothing can be added to, so no request sees another\'s parameters', () => {
  const first = queryOf('/notes/a')
  assert.is(first, queryOf('/notes/b#x?y=1'), 'one shared object')
  assert.is(first.size, 0)
  assert.throws(() => first.append('_delay', '5'), (error: Error) => error instanceof TypeError)
  assert.throws(() => first.set('q', 'a'), (error: Error) => error instanceof TypeError)
  first.delete('_delay')
  assert.is(queryOf('/notes/c').size, 0)
  const own = queryOf('/notes?')
  assert.is.not(own, first, 'a target with a `?` gets its own')
  own.append('q', 'a')
  assert.is(own.get('q'), 'a')
  assert.equal([...new URLSearchParams(first)], [], 'a copy can be added to')
})
