import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { json5FromJson, json5Key, json5String, Json5SyntaxError, MAX_JSON5_DEPTH, parseJson5 } from '../../lib/json/json5.ts'
import { jsonServer1Package } from '../../bench/json-server-1/install.ts'

// JSON5 as lib/json/json5.ts reads and writes it, held to the json5 package
// (2.2, the one json-server 1.0 reads and writes a db.json5 with, installed
// with it into bench/json-server-1/): the same texts parse to the same
// values, the same broken texts are refused, and a value is written as
// `JSON5.stringify(value, null, 2)` writes it.

interface Json5Package {
  parse(text: string): unknown
  stringify(value: unknown, replacer: null, space: number): string
}

let JSON5: Json5Package

test.before(async () => {
  JSON5 = createRequire(join(await jsonServer1Package(), 'package.json'))('json5') as Json5Package
})

/** Texts every JSON5 form shows in: the spec's own example (spec.json5.org, "Short Example") first. */
const valid = [
  `{
  // comments
  unquoted: 'and you can quote me on that',
  singleQuotes: 'I can use "double quotes" here',
  lineBreaks: "Look, Mom! \\
No \\\\n's!",
  hexadecimal: 0xdecaf,
  leadingDecimalPoint: .8675309, andTrailing: 8675309.,
  positiveSign: +1,
  trailingComma: 'in objects', andIn: ['arrays',],
  "backwardsCompatible": "with JSON",
}`,
  '/* block */ [1, /* inside */ 2, 3,] // end',
  "{'a-b': 1, $c: 2, _d: 3, ünïcode: 4, \\u0061bc: 5}",
  "['\\x41\\u0042\\0', '\\v\\b\\f', '\\q\\'', \"\\\"\", 'a\\\r\nb', 'a\\\u2028b', 'raw \u2028 separator']",
  '[0x7FFFFFFF, -0x10, 1e3, 1E-2, -.5e+2, +0.25, 0, -1]',
  '{"a": {"b": [{"c": null}, true, false]}}',
  '\ufeff  {}  ',
  '\u00a0[\u2003\t1\v,\f2]\u2028',
  `{"__proto__": {"polluted": true}, constructor: 1}`,
]

test('every form of JSON5 parses to the value the json5 package gives', () => {
  for (const text of valid) {
    const { value, problems } = parseJson5(text.replace(/^\ufeff/, ''))
    assert.equal(problems, [], text)
    assert.equal(value, JSON5.parse(text.replace(/^\ufeff/, '')), text)
  }
  const own = parseJson5(valid[8]).value as Record<string, unknown>
  assert.ok(Object.hasOwn(own, '__proto__'), '__proto__ is a key like any other')
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

test('broken JSON5 is refused with the line and column where it goes wrong, as the json5 package refuses it', () => {
  const cases: Array<[string, number, number, string]> = [
    ['{a: 1,, }', 1, 7, 'a property name'],
    ["{\n  a: 'x\n'}", 2, 8, "' closing the string"],
    ['{a: 01}', 1, 6, 'the end of the number'],
    ['{a: 1} x', 1, 8, 'the end of the text'],
    ['{a: 1 /* open', 1, 7, '"*/" closing the comment'],
    ['[1,\n 2', 2, 3, '"," or "]"'],
    ['{1a: 2}', 1, 2, 'a property name'],
    ['{a-b: 2}', 1, 3, '":" after the property name'],
    ["['\\1']", 1, 4, 'no digit after'],
    ["['\\xG0']", 1, 5, '2 hex digits'],
    ['[0x]', 1, 4, 'hex digits after "0x"'],
    ['[.]', 1, 2, 'a number'],
    ['[undefined]', 1, 2, 'a value'],
    ['{a: 1 / 2}', 1, 7, 'a value or a comment'],
    ['', 1, 1, 'a value, but the text ended'],
  ]
  for (const [text, line, column, expected] of cases) {
    assert.throws(() => JSON5.parse(text), undefined, `the json5 package refuses ${JSON.stringify(text)} too`)
    try {
      parseJson5(text)
      assert.unreachable(`${JSON.stringify(text)} was taken`)
    } catch (error) {
      assert.instance(error, Json5SyntaxError, JSON.stringify(text))
      const { message } = error as Json5SyntaxError
      assert.is(`${(error as Json5SyntaxError).line}:${(error as Json5SyntaxError).column}`, `${line}:${column}`, `${JSON.stringify(text)}: ${message}`)
      assert.ok(message.startsWith(`line ${line}, column ${column}: expected ${expected}`), message)
    }
  }
})

test('values JSON cannot keep as written are reported with their path: Infinity, NaN, -0, rounded numbers, repeated keys', () => {
  const { problems } = parseJson5(`{
    a: Infinity, b: [-Infinity, NaN], c: -0, d: -0x0, e: 0x20000000000001, f: 0.30000000000000001, g: 1e400, a: 2,
    ok: [0x1FFFFFFFFFFFFF, 1.5, +7, 5., .25],
  }`)
  assert.equal(problems.map((problem) => problem.path), ['a', 'b[0]', 'b[1]', 'c', 'd', 'e', 'f', 'g', 'a'])
  assert.match(problems[0].message, /^Infinity cannot be kept: JSON has no Infinity/)
  assert.match(problems[1].message, /^-Infinity cannot be kept/)
  assert.match(problems[2].message, /^NaN cannot be kept/)
  assert.match(problems[3].message, /^-0 is negative zero/)
  assert.match(problems[5].message, /^0x20000000000001 is larger than 2\^53/)
  assert.match(problems[6].message, /^0\.30000000000000001 has more precision than a double holds/)
  assert.match(problems[7].message, /^1e400 is out of range/)
  assert.match(problems[8].message, /^the key "a" appears more than once/)
  assert.is(parseJson5('[Infinity, NaN, -0]', 2).problems.length, 2, 'at most as many as asked for')
})

test(`nesting deeper than ${MAX_JSON5_DEPTH} levels is refused, not a crash`, () => {
  assert.equal(parseJson5('['.repeat(MAX_JSON5_DEPTH) + ']'.repeat(MAX_JSON5_DEPTH)).problems, [])
  assert.throws(() => parseJson5('['.repeat(MAX_JSON5_DEPTH + 1) + ']'.repeat(MAX_JSON5_DEPTH + 1)), (error: Error) => error instanceof Json5SyntaxError && /at most 1000 levels/.test(error.message))
  assert.throws(() => parseJson5('['.repeat(100_000)), (error: Error) => error instanceof Json5SyntaxError)
})

/** A string of characters that test the writer: quotes of both kinds, escapes, controls, non-ASCII and astral ones. */
function randomString(random: () => number): string {
  const alphabet = ['a', 'Z', '_', '$', '1', ' ', "'", "'", '"', '\\', '\n', '\r', '\t', '\b', '\f', '\v', '\0', '\x01', '\x1f', '\x7f', 'é', 'ß', '\u2028', '\u2029', '€', '😀', '-', '.', '/']
  let text = ''
  const length = Math.floor(random() * 8)
  for (let index = 0; index < length; index++) text += alphabet[Math.floor(random() * alphabet.length)]
  return text
}

test('a value is written as the json5 package writes it, and reads back as itself', () => {
  let seed = 7
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  const value = (depth: number): unknown => {
    const kind = Math.floor(random() * (depth > 3 ? 4 : 6))
    if (kind === 0) return randomString(random)
    if (kind === 1) return Math.floor(random() * 1e6) / (random() < 0.5 ? 1 : 1000) * (random() < 0.5 ? -1 : 1)
    if (kind === 2) return random() < 0.5
    if (kind === 3) return null
    if (kind === 4) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1))
    const object: Record<string, unknown> = {}
    for (let index = Math.floor(random() * 4); index > 0; index--) object[randomString(random)] = value(depth + 1)
    return object
  }
  for (let round = 0; round < 300; round++) {
    const database = { [randomString(random)]: [value(1)], items: [value(1), value(2)], nested: { [randomString(random)]: value(1) } }
    const written = json5FromJson(JSON.stringify(database, null, 2))
    assert.is(written, JSON5.stringify(database, null, 2), `round ${round}`)
    assert.equal(parseJson5(written).value, database, `round ${round}`)
  }
})

test('keys are bare when they are identifiers; strings take the quotes that need fewer escapes; a lone surrogate is kept', () => {
  assert.is(json5Key('title'), 'title')
  assert.is(json5Key('$schema'), '$schema')
  assert.is(json5Key('null'), 'null')
  assert.is(json5Key('café'), 'café')
  assert.is(json5Key('post-id'), "'post-id'")
  assert.is(json5Key('1st'), "'1st'")
  assert.is(json5Key(''), "''")
  assert.is(json5String(`it's`), `"it's"`)
  assert.is(json5String(`say "hi"`), `'say "hi"'`)
  assert.is(json5String(`'"'`), `"'\\"'"`)
  assert.is(json5String('\0' + '1'), "'\\x001'")
  const lone = '\ud800x'
  assert.is(json5String(lone), "'\\ud800x'")
  assert.is(parseJson5(json5String(lone)).value, lone)
})

test.run()
