import { endOfString, numberProblem, pathOf, type JsonProblem } from './syntax.ts'
import { defineValue } from './values.ts'

/*
 * JSON5 (https://spec.json5.org/, version 1.0.0), read and written by
 * restdir itself, since the runtime takes no dependency (docs/json-server.md,
 * "Serving a db.json5"). Read: comments, trailing commas, single-quoted and
 * multi-line strings, unquoted keys, hexadecimal numbers, a leading `+`,
 * `.5` and `5.`. Written: keys unquoted where they are identifiers and
 * strings in the quotes that need fewer escapes, as the json5 package's
 * `stringify` (the one json-server 1.0 uses) writes them. A value the store
 * could not keep exactly — Infinity, NaN, -0, a number a double rounds, a key
 * repeated in one object — is reported, as a db.json's are.
 */

/** Broken JSON5: where (1-based line and column) and what was expected there. */
export class Json5SyntaxError extends Error {
  readonly line: number
  readonly column: number
  constructor(line: number, column: number, expected: string) {
    super(`line ${line}, column ${column}: expected ${expected}`)
    this.line = line
    this.column = column
  }
}

/** Nesting deeper than this is refused rather than risk the parser's stack (JSON.parse has its own, larger bound). */
export const MAX_JSON5_DEPTH = 1000

/**
 * Parses a JSON5 text. Broken syntax throws a Json5SyntaxError; values that
 * would not be kept as written are returned as `problems` (at most `max`),
 * each with its path, as `inexactJson` reports a JSON text's.
 */
export function parseJson5(text: string, max = 20): { value: unknown; problems: JsonProblem[] } {
  return new Json5Parser(text, max).parseAll()
}

class Json5Parser {
  readonly #text: string
  readonly #max: number
  readonly problems: JsonProblem[] = []
  readonly #at: Array<{ at: string | number }> = []
  #index = 0

  constructor(text: string, max: number) {
    this.#text = text
    this.#max = max
  }

  parseAll(): { value: unknown; problems: JsonProblem[] } {
    const value = this.#value()
    this.#skipSpace()
    if (this.#index < this.#text.length) this.#fail('the end of the text after the JSON5 value')
    return { value, problems: this.problems }
  }

  #fail(expected: string): never {
    const before = this.#text.slice(0, this.#index)
    const lines = before.split(/\r\n|[\n\r\u2028\u2029]/)
    throw new Json5SyntaxError(lines.length, lines[lines.length - 1].length + 1, expected)
  }

  #problem(message: string): void {
    if (this.problems.length < this.#max) this.problems.push({ path: pathOf(this.#at), message })
  }

  /** White space and comments (JSON5 §6: every ECMAScript white space and line terminator). */
  #skipSpace(): void {
    const text = this.#text
    while (this.#index < text.length) {
      const char = text.charCodeAt(this.#index)
      if (char === 0x2f) {
        const next = text.charCodeAt(this.#index + 1)
        if (next === 0x2f) {
          const end = text.slice(this.#index).search(/[\n\r\u2028\u2029]/)
          this.#index = end === -1 ? text.length : this.#index + end
        } else if (next === 0x2a) {
          const end = text.indexOf('*/', this.#index + 2)
          if (end === -1) this.#fail('"*/" closing the comment')
          this.#index = end + 2
        } else this.#fail('a value or a comment')
      } else if (char === 0x20 || (char >= 0x09 && char <= 0x0d) || char === 0xa0 || char === 0xfeff || char === 0x2028 || char === 0x2029 || (char > 0x7f && /\p{Zs}/u.test(text[this.#index]))) {
        this.#index++
      } else return
    }
  }

  #value(): unknown {
    this.#skipSpace()
    const text = this.#text
    const char = text[this.#index]
    if (char === '{') return this.#object()
    if (char === '[') return this.#array()
    if (char === '"' || char === "'") return this.#string()
    if (char === '-' || char === '+' || char === '.' || (char >= '0' && char <= '9') || char === 'I' || char === 'N') return this.#number()
    for (const [word, value] of literals) {
      if (text.startsWith(word, this.#index) && !isIdContinue(text, this.#index + word.length)) {
        this.#index += word.length
        return value
      }
    }
    this.#fail(this.#index >= text.length ? 'a value, but the text ended' : 'a value')
  }

  #deeper(): void {
    if (this.#at.length >= MAX_JSON5_DEPTH) this.#fail(`at most ${MAX_JSON5_DEPTH} levels of nesting`)
  }

  #object(): Record<string, unknown> {
    this.#deeper()
    this.#index++
    const object: Record<string, unknown> = {}
    const frame = { at: '' as string | number }
    this.#at.push(frame)
    for (;;) {
      this.#skipSpace()
      if (this.#text[this.#index] === '}') break
      const key = this.#key()
      frame.at = key
      if (Object.hasOwn(object, key)) this.#problem(`the key ${JSON.stringify(key)} appears more than once in one object (only the last would be kept)`)
      this.#skipSpace()
      if (this.#text[this.#index] !== ':') this.#fail('":" after the property name')
      this.#index++
      defineValue(object, key, this.#value())
      this.#skipSpace()
      const next = this.#text[this.#index]
      if (next === ',') { this.#index++; continue }
      if (next === '}') break
      this.#fail('"," or "}"')
    }
    this.#index++
    this.#at.pop()
    return object
  }

  #array(): unknown[] {
    this.#deeper()
    this.#index++
    const array: unknown[] = []
    const frame = { at: 0 }
    this.#at.push(frame)
    for (;;) {
      this.#skipSpace()
      if (this.#text[this.#index] === ']') break
      frame.at = array.length
      array.push(this.#value())
      this.#skipSpace()
      const next = this.#text[this.#index]
      if (next === ',') { this.#index++; continue }
      if (next === ']') break
      this.#fail('"," or "]"')
    }
    this.#index++
    this.#at.pop()
    return array
  }

  /** A property name: a string, or an ECMAScript IdentifierName (its `\uXXXX` escapes included). */
  #key(): string {
    const text = this.#text
    const char = text[this.#index]
    if (char === '"' || char === "'") return this.#string()
    let key = ''
    for (;;) {
      if (text[this.#index] === '\\') {
        if (text[this.#index + 1] !== 'u') this.#fail('"\\u" and four hex digits in a property name')
        this.#index += 2
        const unit = String.fromCharCode(this.#hexDigits(4))
        if (!(key === '' ? isIdStartChar(unit) : isIdContinueChar(unit))) this.#fail('an escape of a letter, a digit, "$" or "_" in a property name')
        key += unit
        continue
      }
      const point = text.codePointAt(this.#index)
      const symbol = point === undefined ? '' : String.fromCodePoint(point)
      if (symbol === '' || !(key === '' ? isIdStartChar(symbol) : isIdContinueChar(symbol))) break
      key += symbol
      this.#index += symbol.length
    }
    if (key === '') this.#fail('a property name (quoted, or a letter, "$" or "_" first)')
    return key
  }

  #hexDigits(count: number): number {
    const digits = this.#text.slice(this.#index, this.#index + count)
    if (!new RegExp(`^[0-9a-fA-F]{${count}}$`).test(digits)) this.#fail(`${count} hex digits`)
    this.#index += count
    return parseInt(digits, 16)
  }

  /** A string in single or double quotes; a backslash before a line break continues it on the next line (JSON5 §5). */
  #string(): string {
    const text = this.#text
    const quote = text[this.#index++]
    let value = ''
    let start = this.#index
    for (;;) {
      if (this.#index >= text.length) this.#fail(`${quote} closing the string`)
      const char = text[this.#index]
      if (char === quote) break
      if (char === '\n' || char === '\r') this.#fail(`${quote} closing the string before the line ends (a "\\" before the line break continues it)`)
      if (char !== '\\') { this.#index++; continue }
      value += text.slice(start, this.#index)
      this.#index++
      value += this.#escape()
      start = this.#index
    }
    value += text.slice(start, this.#index)
    this.#index++
    return value
  }

  #escape(): string {
    const text = this.#text
    const char = text[this.#index]
    if (char === undefined) this.#fail('an escaped character')
    const simple = simpleEscapes[char]
    if (simple !== undefined) { this.#index++; return simple }
    if (char === '0') {
      if (/[0-9]/.test(text[this.#index + 1] ?? '')) this.#fail('no digit after "\\0" (octal escapes are not JSON5)')
      this.#index++
      return '\0'
    }
    if (char === 'x') { this.#index++; return String.fromCharCode(this.#hexDigits(2)) }
    if (char === 'u') { this.#index++; return String.fromCharCode(this.#hexDigits(4)) }
    if (char === '\r') { this.#index += text[this.#index + 1] === '\n' ? 2 : 1; return '' }
    if (char === '\n' || char === '\u2028' || char === '\u2029') { this.#index++; return '' }
    if (char >= '1' && char <= '9') this.#fail('no digit after "\\" (octal escapes are not JSON5)')
    // Any other character escapes to itself (ECMAScript's NonEscapeCharacter).
    const symbol = String.fromCodePoint(text.codePointAt(this.#index)!)
    this.#index += symbol.length
    return symbol
  }

  #number(): number {
    const text = this.#text
    const start = this.#index
    let sign = ''
    if (text[this.#index] === '+' || text[this.#index] === '-') sign = text[this.#index++]
    for (const word of ['Infinity', 'NaN']) {
      if (text.startsWith(word, this.#index) && !isIdContinue(text, this.#index + word.length)) {
        this.#index += word.length
        this.#problem(`${sign}${word} cannot be kept: JSON has no ${word}, and JSON answers would turn it into null; write a number or a string`)
        return word === 'NaN' ? NaN : sign === '-' ? -Infinity : Infinity
      }
    }
    if (text[this.#index] === '0' && (text[this.#index + 1] === 'x' || text[this.#index + 1] === 'X')) {
      this.#index += 2
      const digits = /^[0-9a-fA-F]+/.exec(text.slice(this.#index, this.#index + 400))
      if (!digits) this.#fail('hex digits after "0x"')
      this.#index += digits[0].length
      if (isIdContinue(text, this.#index)) this.#fail('the end of the hex number')
      const magnitude = Number(`0x${digits[0]}`)
      if (magnitude > Number.MAX_SAFE_INTEGER) this.#problem(`${text.slice(start, this.#index)} is larger than 2^53 and would not be kept exactly; write it as a string`)
      if (sign === '-' && magnitude === 0) this.#problem(`${text.slice(start, this.#index)} is negative zero, which JSON writes as 0; write 0`)
      return sign === '-' ? -magnitude : magnitude
    }
    // DecimalLiteral: digits with an optional fraction (either side of the point may be empty, not both) and exponent.
    const decimal = /^(0|[1-9]\d*)?(\.\d*)?([eE][+-]?\d+)?/.exec(text.slice(this.#index, this.#index + 1000))!
    const [written, whole, fraction] = decimal
    if ((whole === undefined && (fraction === undefined || fraction === '.')) || written === '') this.#fail('a number')
    this.#index += written.length
    if (isIdContinue(text, this.#index) || text[this.#index] === '.') this.#fail('the end of the number')
    // As JSON writes it, so the exactness rule of a db.json applies unchanged.
    const json = `${sign === '-' ? '-' : ''}${whole ?? '0'}${fraction === '.' || fraction === undefined ? '' : fraction}${decimal[3] ?? ''}`
    const problem = numberProblem(json, 0, json.length)
    if (problem !== undefined) this.#problem(problem.replace(json, text.slice(start, this.#index)))
    return Number(json)
  }
}

const literals: ReadonlyArray<[string, unknown]> = [['null', null], ['true', true], ['false', false]]

const simpleEscapes: Record<string, string> = { "'": "'", '"': '"', '\\': '\\', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' }

/** ECMAScript 5.1's IdentifierStart and IdentifierPart (§7.6), as JSON5 keys use them. */
const ID_START = /^[$_\p{L}\p{Nl}]$/u
const ID_CONTINUE = /^[$_\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}\u200C\u200D]$/u

function isIdStartChar(symbol: string): boolean {
  return ID_START.test(symbol)
}

function isIdContinueChar(symbol: string): boolean {
  return ID_CONTINUE.test(symbol)
}

function isIdContinue(text: string, index: number): boolean {
  const point = text.codePointAt(index)
  return point !== undefined && isIdContinueChar(String.fromCodePoint(point))
}

/** A key as JSON5 writes it: bare when it is an identifier, else quoted (the json5 package's `serializeKey`). */
export function json5Key(key: string): string {
  const symbols = [...key]
  if (symbols.length > 0 && isIdStartChar(symbols[0]) && symbols.slice(1).every(isIdContinueChar)) return key
  return json5String(key)
}

const stringEscapes: Record<string, string> = {
  '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '\u2028': '\\u2028', '\u2029': '\\u2029',
}

/**
 * A string as JSON5 writes it (the json5 package's `quoteString`): in single
 * quotes unless it holds more of them than double ones. A lone surrogate is
 * written as `\uXXXX`, so that the UTF-8 file keeps it.
 */
export function json5String(value: string): string {
  let singles = 0
  let doubles = 0
  let body = ''
  for (let index = 0; index < value.length; index++) {
    const char = value[index]
    const code = value.charCodeAt(index)
    if (char === "'") singles++
    else if (char === '"') doubles++
    if (char === "'" || char === '"') body += char
    else if (stringEscapes[char] !== undefined) body += stringEscapes[char]
    else if (code === 0) body += /[0-9]/.test(value[index + 1] ?? '') ? '\\x00' : '\\0'
    else if (code < 0x20) body += `\\x${code.toString(16).padStart(2, '0')}`
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < value.length && value.charCodeAt(index + 1) >= 0xdc00 && value.charCodeAt(index + 1) <= 0xdfff) {
      body += char + value[++index]
    } else if (code >= 0xd800 && code <= 0xdfff) body += `\\u${code.toString(16)}`
    else body += char
  }
  const quote = singles > doubles ? '"' : "'"
  return quote + body.replaceAll(quote, `\\${quote}`) + quote
}

/**
 * A JSON text laid out as `JSON.stringify(value, null, 2)` lays it out,
 * rewritten as `JSON5.stringify(value, null, 2)` writes the same value: each
 * key and string quoted as JSON5 writes it, and a comma after the last member
 * of every object and array that spans lines; numbers, literals and white
 * space stay. So the db.json layout (lib/store/json-file/layout.ts) becomes a
 * db.json5's.
 */
export function json5FromJson(json: string): string {
  let written = ''
  let index = 0
  // Outside strings, a line that closes an object or array follows its last member.
  const layout = (text: string) => text.replace(closingLine, ',$&')
  while (index < json.length) {
    const quote = json.indexOf('"', index)
    if (quote === -1) break
    written += layout(json.slice(index, quote))
    const end = endOfString(json, quote + 1)
    const literal = json.slice(quote, end)
    const value = literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1)
    let after = end
    while (json[after] === ' ' || json[after] === '\n' || json[after] === '\r' || json[after] === '\t') after++
    written += json[after] === ':' ? json5Key(value) : json5String(value)
    index = end
  }
  return written + layout(json.slice(index))
}

const closingLine = /\n *[}\]]/g
