import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { HttpError } from '../../lib/http-error.ts'
import {
  ifMatchHolds,
  ifNoneMatchHolds,
  ifRangeHolds,
  isNotModified,
  parseEntityTag,
  parseEntityTagList,
  strongMatch,
  weakMatch,
  writePreconditions,
} from '../../lib/http/conditional.ts'

// The rules of conditional requests (RFC 9110 §8.8.3, §13) as pure functions;
// spec/every-store/conditional.spec.ts and spec/static/static.spec.ts check them through HTTP.

const strong = (opaque: string) => ({ weak: false, opaque: `"${opaque}"` })
const weak = (opaque: string) => ({ weak: true, opaque: `"${opaque}"` })

test('an entity-tag list is read with optional spaces and tabs around its commas', () => {
  assert.equal(parseEntityTagList('"a","b"'), [strong('a'), strong('b')])
  assert.equal(parseEntityTagList('  "a" ,\t"b"  ,  W/"c" '), [strong('a'), strong('b'), weak('c')])
})

test('empty list elements are skipped, as recipients must accept them (RFC 9110 §5.6.1.2)', () => {
  assert.equal(parseEntityTagList(', "a",, ,"b",'), [strong('a'), strong('b')])
  assert.equal(parseEntityTagList(''), [])
})

test('a comma inside quotes belongs to its tag and separates nothing', () => {
  assert.equal(parseEntityTagList('"a,b", "c"'), [strong('a,b'), strong('c')])
  assert.equal(parseEntityTag('W/"x,y"'), weak('x,y'))
})

test('W/ marks a weak tag; only the capital W counts', () => {
  assert.equal(parseEntityTag('W/"v1"'), weak('v1'))
  assert.equal(parseEntityTag('"v1"'), strong('v1'))
  assert.is(parseEntityTag('w/"v1"'), undefined)
  assert.is(parseEntityTagList('"a", w/"v1"'), undefined)
})

test('* alone is the wildcard; * inside a list makes it malformed', () => {
  assert.is(parseEntityTagList('*'), '*')
  assert.is(parseEntityTagList('  * '), '*')
  assert.is(parseEntityTagList('*, "a"'), undefined)
  assert.is(parseEntityTagList('"a", *'), undefined)
})

test('malformed lists are refused whole: unquoted, unclosed, spaced, or tags without a comma between', () => {
  for (const value of ['abc', '"a', '"a" "b"', '"a"W/"b"', '"a b"', '"a", garbage', 'W/', 'W/a', '"a\u007f"', '"a\u0100"', '"a"x']) {
    assert.is(parseEntityTagList(value), undefined, JSON.stringify(value))
  }
})

test('strong comparison matches only two strong tags with the same opaque part (RFC 9110 §8.8.3.2)', () => {
  assert.ok(strongMatch(strong('1'), strong('1')))
  assert.not.ok(strongMatch(weak('1'), strong('1')))
  assert.not.ok(strongMatch(strong('1'), weak('1')))
  assert.not.ok(strongMatch(weak('1'), weak('1')))
  assert.not.ok(strongMatch(strong('1'), strong('2')))
})

test('weak comparison matches the same opaque part whatever the W/ prefixes (RFC 9110 §8.8.3.2)', () => {
  assert.ok(weakMatch(strong('1'), strong('1')))
  assert.ok(weakMatch(weak('1'), strong('1')))
  assert.ok(weakMatch(weak('1'), weak('1')))
  assert.not.ok(weakMatch(weak('1'), weak('2')))
})

test('If-Match holds for the current tag in a list or *, never for a weak tag, a missing version or a malformed list', () => {
  assert.ok(ifMatchHolds('"old", "v2"', '"v2"'))
  assert.ok(ifMatchHolds('*', '"v2"'))
  assert.not.ok(ifMatchHolds('W/"v2"', '"v2"'))
  assert.not.ok(ifMatchHolds('*', undefined))
  assert.not.ok(ifMatchHolds('"v2"', undefined))
  assert.not.ok(ifMatchHolds('garbage, "v2"', '"v2"'))
  assert.not.ok(ifMatchHolds('"v2,"', '"v2"'))
})

test('If-None-Match fails for the current tag by weak comparison or *, and holds where nothing is stored', () => {
  assert.not.ok(ifNoneMatchHolds('W/"v2"', '"v2"'))
  assert.not.ok(ifNoneMatchHolds('"a,b", "v2"', '"v2"'))
  assert.not.ok(ifNoneMatchHolds('*', '"v2"'))
  assert.ok(ifNoneMatchHolds('*', undefined))
  assert.ok(ifNoneMatchHolds('"v1"', '"v2"'))
  assert.ok(ifNoneMatchHolds('"v1" "v2"', '"v2"'), 'a malformed list names nothing')
})

test('a write without If-Match or If-None-Match gets no precondition to run', () => {
  assert.is(writePreconditions({}), undefined)
})

test('a write precondition refuses with 412 and says which header failed', () => {
  const refusal = (headers: Parameters<typeof writePreconditions>[0], current: { etag: string } | undefined) => {
    try {
      writePreconditions(headers)?.(current)
      return undefined
    } catch (error) {
      assert.instance(error, HttpError)
      return error as HttpError
    }
  }
  assert.is(refusal({ 'if-match': '"v2"' }, { etag: '"v2"' }), undefined)
  assert.is(refusal({ 'if-none-match': '*' }, undefined), undefined)
  assert.is(refusal({ 'if-match': '"v1"' }, { etag: '"v2"' })?.status, 412)
  assert.match(refusal({ 'if-match': '"v1"' }, { etag: '"v2"' })?.detail ?? '', /If-Match "v1" does not match the current version "v2"/)
  assert.is(refusal({ 'if-match': '*' }, undefined)?.detail, 'If-Match was sent but there is no document here.')
  assert.is(refusal({ 'if-none-match': '*' }, { etag: '"v2"' })?.detail, 'If-None-Match: * asks to create only, but a document exists here already.')
  assert.is(refusal({ 'if-none-match': 'W/"v2"' }, { etag: '"v2"' })?.detail, 'If-None-Match matches the current version of the document.')
  // If-Match is evaluated first (RFC 9110 §13.2.2, step 1 before step 3).
  assert.match(refusal({ 'if-match': '"v1"', 'if-none-match': '*' }, { etag: '"v2"' })?.detail ?? '', /^If-Match/)
})

const file = { etag: '"f1"', lastModified: 'Sun, 06 Nov 1994 08:49:37 GMT' }

test('a GET is not modified when If-None-Match matches, which then decides alone over If-Modified-Since', () => {
  assert.ok(isNotModified({ 'if-none-match': 'W/"f1"' }, file))
  assert.not.ok(isNotModified({ 'if-none-match': '"f0"', 'if-modified-since': 'Mon, 07 Nov 1994 08:49:37 GMT' }, file))
  assert.not.ok(isNotModified({}, file))
})

test('If-Modified-Since: not modified at or after Last-Modified, modified before it; a bad date or no Last-Modified is ignored', () => {
  assert.ok(isNotModified({ 'if-modified-since': file.lastModified }, file))
  assert.ok(isNotModified({ 'if-modified-since': 'Mon, 07 Nov 1994 08:49:37 GMT' }, file))
  assert.not.ok(isNotModified({ 'if-modified-since': 'Sun, 06 Nov 1994 08:49:36 GMT' }, file))
  assert.not.ok(isNotModified({ 'if-modified-since': 'not a date' }, file))
  assert.not.ok(isNotModified({ 'if-modified-since': 'Mon, 07 Nov 1994 08:49:37 GMT' }, { etag: '"doc"' }))
})

test('If-Range with a tag holds only for the current strong tag; a weak or other tag sends the whole representation', () => {
  assert.ok(ifRangeHolds('"f1"', file))
  assert.ok(ifRangeHolds(' "f1" ', file))
  assert.not.ok(ifRangeHolds('W/"f1"', file))
  assert.not.ok(ifRangeHolds('"f0"', file))
  assert.not.ok(ifRangeHolds('"f1", "f0"', file))
})

test('If-Range with a date holds only for the exact Last-Modified date; without If-Range the Range applies', () => {
  assert.ok(ifRangeHolds(file.lastModified, file))
  assert.not.ok(ifRangeHolds('Mon, 07 Nov 1994 08:49:37 GMT', file), 'a later date is not the same version')
  assert.not.ok(ifRangeHolds(file.lastModified, { etag: '"doc"' }), 'no Last-Modified, no date can match')
  assert.not.ok(ifRangeHolds([file.lastModified, file.lastModified], file), 'sent twice')
  assert.ok(ifRangeHolds(undefined, file))
})

test.run()
