import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { applyJsonPatch, JsonPatchError, parseJsonPatch, parsePointer } from '../../lib/json/patch.ts'
import { inexactJson } from '../../lib/json/syntax.ts'

// JSON Patch (RFC 6902) as lib/json/patch.ts applies it: the examples of the
// RFC's Appendix A, one test each, then the edges restdir adds.

const limits = { maxDepth: 64, maxSize: 1000 }

function patched(document: unknown, patch: unknown): Promise<unknown> {
  return applyJsonPatch(document, parseJsonPatch(patch), limits)
}

async function refusal(document: unknown, patch: unknown): Promise<JsonPatchError> {
  try {
    await patched(document, patch)
  } catch (error) {
    assert.instance(error, JsonPatchError)
    return error as JsonPatchError
  }
  assert.unreachable('the patch was applied; it should have been refused')
  throw new Error('unreachable')
}

test('A.1: add makes an object member', async () => {
  assert.equal(await patched({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }]), { baz: 'qux', foo: 'bar' })
})

test('A.2: add inserts an array element and shifts those after it', async () => {
  assert.equal(await patched({ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }]), { foo: ['bar', 'qux', 'baz'] })
})

test('A.3: remove takes an object member away', async () => {
  assert.equal(await patched({ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }]), { foo: 'bar' })
})

test('A.4: remove takes an array element away and shifts those after it', async () => {
  assert.equal(await patched({ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }]), { foo: ['bar', 'baz'] })
})

test('A.5: replace changes a value', async () => {
  assert.equal(await patched({ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }]), { baz: 'boo', foo: 'bar' })
})

test('A.6: move takes a member from one object to another', async () => {
  const document = { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } }
  assert.equal(await patched(document, [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }]), { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } })
})

test('A.7: move takes an array element to another index', async () => {
  assert.equal(await patched({ foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }]), { foo: ['all', 'cows', 'eat', 'grass'] })
})

test('A.8: tests that hold leave the document as it was', async () => {
  const document = { baz: 'qux', foo: ['a', 2, 'c'] }
  assert.equal(await patched(document, [{ op: 'test', path: '/baz', value: 'qux' }, { op: 'test', path: '/foo/1', value: 2 }]), document)
})

test('A.9: a test that does not hold is a test-failed error naming the operation', async () => {
  const error = await refusal({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }])
  assert.is(error.kind, 'test-failed')
  assert.is(error.index, 0)
  assert.is(error.op, 'test')
  assert.match(error.message, /^Operation 0 \("test"\): the value at "\/baz" is not "bar"/)
})

test('A.10: add puts a nested object in place', async () => {
  assert.equal(await patched({ foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }]), { foo: 'bar', child: { grandchild: {} } })
})

test('A.11: members an operation does not define are ignored', async () => {
  assert.equal(await patched({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }]), { foo: 'bar', baz: 'qux' })
})

test('A.12: add under a location that does not exist is an invalid error', async () => {
  const error = await refusal({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }])
  assert.is(error.kind, 'invalid')
  assert.is(error.op, 'add')
  assert.match(error.message, /names nothing in the document \(nothing at "\/baz"\)/)
})

test('A.13: an operation with "op" twice is never read as its first op: the body check refuses the repeated key', async () => {
  const text = '[{ "op": "add", "path": "/baz", "value": "qux", "op": "remove" }]'
  const parsed = JSON.parse(text)
  // restdir's body reading refuses a repeated key (lib/json/syntax.ts), so such a patch is a 400 before it is applied…
  assert.equal(inexactJson(text, parsed).map((problem) => problem.path), ['[0].op'])
  // …and were it ever read, JSON.parse keeps the last "op": a remove of a member that is not there, refused, never an add.
  assert.is((await refusal({ foo: 'bar' }, parsed)).op, 'remove')
})

test('A.14: "~01" is read as "~1", not as "/" (RFC 6901 §4 decodes ~1 before ~0)', async () => {
  const document = { '/': 9, '~1': 10 }
  assert.equal(await patched(document, [{ op: 'test', path: '/~01', value: 10 }]), document)
})

test('A.15: a test compares types too: the string "10" is not the number 10', async () => {
  const error = await refusal({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }])
  assert.is(error.kind, 'test-failed')
})

test('A.16: add with "-" appends to an array, an array value as one element', async () => {
  assert.equal(await patched({ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }]), { foo: ['bar', ['abc', 'def']] })
})

test('copy duplicates a value, and a later change to the copy leaves the original alone', async () => {
  assert.equal(
    await patched({ a: { b: 1 } }, [{ op: 'copy', from: '/a', path: '/c' }, { op: 'replace', path: '/c/b', value: 2 }]),
    { a: { b: 1 }, c: { b: 2 } },
  )
})

test('applying a patch changes neither the document nor the patch, so it can be applied again', async () => {
  const document = { list: [1], nested: { keep: true } }
  const operations = parseJsonPatch([{ op: 'add', path: '/list/-', value: { x: 1 } }, { op: 'add', path: '/list/1/y', value: 2 }, { op: 'remove', path: '/nested/keep' }])
  const first = await applyJsonPatch(document, operations, limits)
  assert.equal(document, { list: [1], nested: { keep: true } })
  assert.equal(await applyJsonPatch(document, operations, limits), first)
  assert.equal(first, { list: [1, { x: 1, y: 2 }], nested: {} })
})

test('a failing operation after others that succeeded returns nothing: the caller keeps its document', async () => {
  const document = { a: 1 }
  const error = await refusal(document, [{ op: 'add', path: '/b', value: 2 }, { op: 'remove', path: '/a' }, { op: 'replace', path: '/zz', value: 3 }])
  assert.is(error.index, 2)
  assert.equal(document, { a: 1 })
})

test('replace keeps an object member in its place', async () => {
  assert.equal(Object.keys(await patched({ a: 1, b: 2, c: 3 }, [{ op: 'replace', path: '/a', value: 0 }]) as object), ['a', 'b', 'c'])
})

test('a "__proto__" key is added, copied and read as plain data, never as a prototype', async () => {
  const result = await patched(JSON.parse('{"kept": {"__proto__": {"deep": 1}}}'), [
    { op: 'add', path: '/__proto__', value: { polluted: true } },
    { op: 'copy', from: '/__proto__', path: '/copy' },
    { op: 'test', path: '/__proto__/polluted', value: true },
  ]) as Record<string, unknown>
  assert.is(Object.getPrototypeOf(result), Object.prototype)
  assert.ok(Object.hasOwn(result, '__proto__'))
  assert.is(({} as Record<string, unknown>).polluted, undefined)
  assert.is(JSON.stringify(result), '{"kept":{"__proto__":{"deep":1}},"__proto__":{"polluted":true},"copy":{"polluted":true}}')
})

test('a path through an inherited member names nothing', async () => {
  assert.is((await refusal({}, [{ op: 'test', path: '/constructor', value: {} }])).kind, 'invalid')
  assert.is((await refusal({}, [{ op: 'add', path: '/toString/x', value: 1 }])).kind, 'invalid')
})

test('malformed operations are refused before anything is applied, each naming its index and op', async () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ op: 'fold', path: '/a' }, /^Operation 1 \("fold"\): "op" must be one of/],
    [{ path: '/a' }, /^Operation 1: it has no "op" string/],
    [{ op: 'add', path: '/a' }, /^Operation 1 \("add"\): it has no "value"/],
    [{ op: 'move', path: '/a' }, /^Operation 1 \("move"\): it has no "from"/],
    [{ op: 'remove' }, /^Operation 1 \("remove"\): it has no "path"/],
    [{ op: 'remove', path: 'a' }, /^Operation 1 \("remove"\): "path" "a" is not a JSON Pointer/],
    [{ op: 'remove', path: '/a~2' }, /is not a JSON Pointer/],
    [{ op: 'copy', from: 7, path: '/a' }, /"from" must be a JSON Pointer string, not a number/],
    ['remove', /^Operation 1: an operation is a JSON object, not a string/],
  ]
  for (const [operation, message] of cases) {
    assert.throws(() => parseJsonPatch([{ op: 'test', path: '', value: {} }, operation]), (error: unknown) => error instanceof JsonPatchError && error.kind === 'invalid' && message.test(error.message))
  }
  assert.throws(() => parseJsonPatch({ op: 'add' }), /a JSON Patch is an array of operations, not a object/)
})

test('array indexes are digits without a leading zero, within the array', async () => {
  assert.is((await refusal({ a: [1, 2] }, [{ op: 'add', path: '/a/01', value: 0 }])).kind, 'invalid')
  assert.is((await refusal({ a: [1, 2] }, [{ op: 'add', path: '/a/3', value: 0 }])).kind, 'invalid')
  assert.is((await refusal({ a: [1, 2] }, [{ op: 'remove', path: '/a/2' }])).kind, 'invalid')
  assert.is((await refusal({ a: [1, 2] }, [{ op: 'replace', path: '/a/-', value: 0 }])).kind, 'invalid')
  assert.equal(await patched({ a: [1, 2] }, [{ op: 'add', path: '/a/2', value: 3 }]), { a: [1, 2, 3] })
})

test('a value cannot move into its own child, and the whole document cannot be removed', async () => {
  assert.match((await refusal({ a: { b: {} } }, [{ op: 'move', from: '/a', path: '/a/b/c' }])).message, /cannot move into its own child/)
  assert.match((await refusal({ a: 1 }, [{ op: 'remove', path: '' }])).message, /whole document cannot be removed/)
  assert.equal(await patched({ a: 1 }, [{ op: 'move', from: '/a', path: '/a' }]), { a: 1 })
})

test('a test compares objects whatever their key order, and arrays item by item', async () => {
  assert.equal(await patched({ a: { x: 1, y: [1, 2] } }, [{ op: 'test', path: '/a', value: { y: [1, 2], x: 1 } }]), { a: { x: 1, y: [1, 2] } })
  assert.is((await refusal({ a: [1, 2] }, [{ op: 'test', path: '/a', value: [2, 1] }])).kind, 'test-failed')
  assert.is((await refusal({ a: { x: 1 } }, [{ op: 'test', path: '/a', value: { x: 1, y: null } }])).kind, 'test-failed')
})

test('copies that would make the document grow past the limit are refused: copying it into itself doubles it', async () => {
  const doubling = Array.from({ length: 12 }, (_, index) => ({ op: 'copy', from: '', path: `/c${index}` }))
  const error = await refusal({ a: [1, 2, 3] }, doubling)
  assert.is(error.kind, 'too-large')
  assert.match(error.message, /larger than 1000 characters of JSON, the limit/)
})

test('the size of the patched document is counted in characters of its JSON, whatever a value\'s count of members', async () => {
  // One string of 900 characters copied once passes a limit of 1000: counted by what it adds, not as one value.
  const text = 'x'.repeat(900)
  assert.is((await refusal({ t: text }, [{ op: 'copy', from: '/t', path: '/u' }])).kind, 'too-large')
  const fits = { t: 'x'.repeat(990 - '{"t":""}'.length) }
  assert.is(JSON.stringify(await patched({}, [{ op: 'add', path: '/t', value: fits.t }])).length, 990)
  assert.is((await refusal({}, [{ op: 'add', path: '/t', value: 'x'.repeat(1000) }])).kind, 'too-large')
  // A document larger than the limit already may be patched, as long as it grows no larger.
  const big = { t: 'x'.repeat(5000), n: 1 }
  assert.equal(await patched(big, [{ op: 'replace', path: '/n', value: 2 }, { op: 'remove', path: '/n' }]), { t: big.t })
  assert.is((await refusal(big, [{ op: 'add', path: '/more', value: 'y'.repeat(50) }])).kind, 'too-large')
})

test('what a patch adds is bounded in all too, however much of it it removes again', async () => {
  const addAndRemove = Array.from({ length: 10 }, () => [{ op: 'add', path: '/t', value: 'x'.repeat(500) }, { op: 'remove', path: '/t' }]).flat()
  const error = await refusal({}, addAndRemove)
  assert.is(error.kind, 'too-large')
  assert.is(error.index, 14)
  assert.match(error.message, /would add more than 4000 characters of JSON in all/)
})

test('moves, removals and replacements keep the count: after many of them, what fits the limit still fits', async () => {
  const document = { list: Array.from({ length: 50 }, (_, index) => `item ${index}`), other: { deep: ['a', 'b'] } }
  const moves = Array.from({ length: 400 }, (_, index) => ({ op: 'move', from: `/list/${index % 50}`, path: `/list/${(index * 7) % 50}` }))
  const shuffled = [...moves, { op: 'move', from: '/other/deep', path: '/deep' }, { op: 'move', from: '/deep', path: '/other/deep' }, { op: 'replace', path: '/other', value: { deep: ['a', 'b'] } }]
  const after = (await patched(document, shuffled)) as typeof document
  const room = 1000 - JSON.stringify(after).length
  // The count may exceed the text by a character a container (a separator); a value 10 characters short of the room fits.
  assert.ok(await patched(document, [...shuffled, { op: 'add', path: '/pad', value: 'p'.repeat(room - '"pad":"",'.length - 10) }]))
  assert.is((await refusal(document, [...shuffled, { op: 'add', path: '/pad', value: 'p'.repeat(room) }])).kind, 'too-large')
})

test('a patch may not nest the document deeper than the limit', async () => {
  let deep: unknown = 1
  for (let level = 0; level < 63; level++) deep = [deep]
  assert.match((await refusal({ a: {} }, [{ op: 'add', path: '/a/b', value: deep }])).message, /nest deeper than 64 levels/)
  assert.ok(await patched({ a: {} }, [{ op: 'add', path: '/b', value: deep }]))
})

test('RFC 6901 pointers: "" is the whole document, and "~1" then "~0" are decoded', async () => {
  assert.equal(parsePointer(''), [])
  assert.equal(parsePointer('/a~1b/m~0n/'), ['a/b', 'm~n', ''])
  assert.is(parsePointer('#/a'), undefined)
  assert.is(parsePointer('/~'), undefined)
})

test.run()
