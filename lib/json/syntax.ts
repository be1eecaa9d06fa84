/** The 1-based line and column of an offset into a text, for error messages. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) {
    line++
    lineStart = index + 1
  }
  return { line, column: offset - lineStart + 1 }
}

/**
 * Where a JSON text first opens an object or array deeper than `maxDepth`,
 * or -1: scanned without parsing, so a depth check puts no parser's recursion at risk.
 */
export function nestingPastLimit(text: string, maxDepth: number): number {
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index)
    if (inString) {
      if (char === 0x5c) index++ // backslash: skip the escaped character
      else if (char === 0x22) inString = false
    } else if (char === 0x22) inString = true
    else if (char === 0x7b || char === 0x5b) {
      if (++depth > maxDepth) return index
    } else if (char === 0x7d || char === 0x5d) depth--
  }
  return -1
}

/**
 * Finds where a JSON text (RFC 8259) first goes wrong, for error messages:
 * V8's JSON.parse does not always say. Only called after JSON.parse failed,
 * and only on bodies whose nesting was already checked, so recursion is bounded.
 */
export function jsonErrorOffset(text: string): { offset: number; expected: string } {
  let index = 0
  const fail = (expected: string): never => {
    throw { offset: index, expected }
  }
  const skipSpace = () => {
    while (index < text.length && ' \t\n\r'.includes(text[index])) index++
  }
  const literal = (word: string) => {
    for (const char of word) {
      if (text[index] !== char) fail(`"${word}"`)
      index++
    }
  }
  const string = () => {
    index++ // opening quote
    while (index < text.length) {
      const char = text.charCodeAt(index)
      if (char === 0x22) { index++; return }
      if (char < 0x20) fail('a control character to be escaped inside a string')
      if (char === 0x5c) {
        index++
        if (text[index] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(index + 1, index + 5))) fail('four hex digits after \\u')
          index += 5
        } else if ('"\\/bfnrt'.includes(text[index] ?? 'x')) index++
        else fail('a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)')
      } else index++
    }
    fail('a closing quote')
  }
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(index, index + 400))
    if (!match || match[0] === '-') fail('a number')
    index += match![0].length
  }
  const value = (): void => {
    skipSpace()
    const char = text[index]
    if (char === '{') {
      index++
      skipSpace()
      if (text[index] === '}') { index++; return }
      for (;;) {
        skipSpace()
        if (text[index] !== '"') fail('a property name in double quotes')
        string()
        skipSpace()
        if (text[index] !== ':') fail('":" after the property name')
        index++
        value()
        skipSpace()
        if (text[index] === ',') { index++; continue }
        if (text[index] === '}') { index++; return }
        fail('"," or "}"')
      }
    } else if (char === '[') {
      index++
      skipSpace()
      if (text[index] === ']') { index++; return }
      for (;;) {
        value()
        skipSpace()
        if (text[index] === ',') { index++; continue }
        if (text[index] === ']') { index++; return }
        fail('"," or "]"')
      }
    } else if (char === '"') string()
    else if (char === 't') literal('true')
    else if (char === 'f') literal('false')
    else if (char === 'n') literal('null')
    else if (char === '-' || (char >= '0' && char <= '9')) number()
    else fail(index >= text.length ? 'a value, but the body ended' : 'a value')
  }
  try {
    value()
    skipSpace()
    if (index < text.length) fail('the end of the body after the JSON value')
    return { offset: -1, expected: '' }
  } catch (error) {
    return error as { offset: number; expected: string }
  }
}

/** A value JSON.parse would change or lose, with where it is (`user[3].username`) and why. */
export interface JsonProblem {
  path: string
  message: string
}

/**
 * What a JSON text says that its parsed value would not keep: numbers a
 * double cannot hold exactly (out of range, too small, more digits than it
 * carries, `-0`) and keys repeated in one object (JSON.parse keeps the last).
 * RFC 8259 §6 and §4 leave both to the implementation; restdir refuses them so
 * that a document is stored exactly as sent (docs/http-api.md, "Requests and errors").
 * `value` is `text` already parsed; a first pass that allocates nothing finds
 * whether anything is wrong, and only then a second one says where.
 */
export function inexactJson(text: string, value: unknown, max = 20): JsonProblem[] {
  if (!mayChange(text, value)) return []
  return locateProblems(text, max)
}

function mayChange(text: string, value: unknown): boolean {
  let members = 0
  let index = 0
  const length = text.length
  while (index < length) {
    const char = text.charCodeAt(index)
    if (char === 0x22) index = endOfString(text, index + 1)
    else if (char === 0x3a) { members++; index++ }
    else if (char === 0x2d || (char >= 0x30 && char <= 0x39)) {
      const end = endOfNumber(text, index)
      if (numberProblem(text, index, end) !== undefined) return true
      index = end
    } else index++
  }
  // Each ':' outside strings is one member; fewer keys after parsing means some key came twice.
  return members !== countKeys(value)
}

/** Index after the closing quote of a string whose opening quote precedes `index` (the text is valid JSON). */
export function endOfString(text: string, index: number): number {
  for (;;) {
    const quote = text.indexOf('"', index)
    if (quote === -1) return text.length
    let backslash = quote - 1
    while (text.charCodeAt(backslash) === 0x5c) backslash--
    if ((quote - 1 - backslash) % 2 === 0) return quote + 1
    index = quote + 1
  }
}

function endOfNumber(text: string, index: number): number {
  let end = index + 1
  for (;;) {
    const char = text.charCodeAt(end)
    // digits . + - e E
    if ((char >= 0x30 && char <= 0x39) || char === 0x2e || char === 0x2b || char === 0x2d || char === 0x65 || char === 0x45) end++
    else return end
  }
}

function countKeys(root: unknown): number {
  let count = 0
  const pending: unknown[] = [root]
  while (pending.length > 0) {
    const value = pending.pop()
    if (typeof value !== 'object' || value === null) continue
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object' && item !== null) pending.push(item)
    } else {
      for (const key in value) {
        count++
        const item = (value as Record<string, unknown>)[key]
        if (typeof item === 'object' && item !== null) pending.push(item)
      }
    }
  }
  return count
}

/**
 * Why the number written at text[start, end) would not survive a JavaScript
 * number unchanged, or undefined when it does: its decimal value must equal
 * that of the shortest text of the double it parses to (so `0.1`, `1.50` and
 * `1e2` pass, `0.30000000000000001` does not).
 */
export function numberProblem(text: string, start: number, end: number): string | undefined {
  const length = end - start
  // Fast path: up to 15 digits, no fraction or exponent, is always exact (below 2^53), except -0.
  if (length <= 15) {
    let plain = true
    for (let index = start; index < end; index++) {
      const char = text.charCodeAt(index)
      if (char === 0x2e || char === 0x65 || char === 0x45) { plain = false; break }
    }
    if (plain && !(length === 2 && text.charCodeAt(start) === 0x2d && text.charCodeAt(start + 1) === 0x30)) return undefined
  }
  const written = text.slice(start, end)
  const value = Number(written)
  if (!Number.isFinite(value)) return `${shorten(written)} is out of range: a JSON number here must lie within ±1.7976931348623157e308`
  if (Object.is(value, -0)) return `${shorten(written)} is negative zero, which JSON output writes as 0; send 0`
  const decimal = decimalValue(written)
  if (value === 0 && decimal !== '0') return `${shorten(written)} is too small for a double and would become 0`
  if (decimal !== decimalValue(String(value))) {
    return `${shorten(written)} has more precision than a double holds and would be stored as ${value}; send it as a string to keep every digit`
  }
  return undefined
}

/** A decimal number's value as significant digits and the position of the point: `1.50e2` and `150` both give `15e3`. */
function decimalValue(written: string): string {
  let text = written.charCodeAt(0) === 0x2d ? written.slice(1) : written
  let exponent = 0
  const e = text.search(/[eE]/)
  if (e !== -1) {
    exponent = Number(text.slice(e + 1))
    text = text.slice(0, e)
  }
  const point = text.indexOf('.')
  const whole = point === -1 ? text : text.slice(0, point)
  let digits = point === -1 ? text : whole + text.slice(point + 1)
  let position = whole.length + exponent
  let leading = 0
  while (leading < digits.length && digits.charCodeAt(leading) === 0x30) leading++
  digits = digits.slice(leading)
  position -= leading
  let trailing = digits.length
  while (trailing > 0 && digits.charCodeAt(trailing - 1) === 0x30) trailing--
  digits = digits.slice(0, trailing)
  return digits === '' ? '0' : `${digits}e${position}`
}

function shorten(written: string): string {
  return written.length > 40 ? `${written.slice(0, 20)}…${written.slice(-10)}` : written
}

interface Frame {
  /** Keys seen so far in an object; undefined for an array. */
  keys?: Set<string>
  /** The member being read: its key, or its index in an array. */
  at: string | number
  expectingKey: boolean
}

/** The second, slower pass: walks the text keeping the path, without recursion (depth is not bounded here). */
function locateProblems(text: string, max: number): JsonProblem[] {
  const problems: JsonProblem[] = []
  const frames: Frame[] = []
  let index = 0
  while (index < text.length && problems.length < max) {
    const char = text[index]
    const top = frames[frames.length - 1]
    if (char === '{') { frames.push({ keys: new Set(), at: '', expectingKey: true }); index++ }
    else if (char === '[') { frames.push({ at: 0, expectingKey: false }); index++ }
    else if (char === '}' || char === ']') { frames.pop(); index++ }
    else if (char === ',') {
      if (top.keys) top.expectingKey = true
      else top.at = (top.at as number) + 1
      index++
    } else if (char === '"') {
      const end = endOfString(text, index + 1)
      if (top?.keys && top.expectingKey) {
        const key = JSON.parse(text.slice(index, end)) as string
        top.at = key
        top.expectingKey = false
        if (top.keys.has(key)) problems.push({ path: pathOf(frames), message: `the key ${JSON.stringify(key)} appears more than once in one object (JSON.parse would keep only the last)` })
        top.keys.add(key)
      }
      index = end
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      const end = endOfNumber(text, index)
      const message = numberProblem(text, index, end)
      if (message !== undefined) problems.push({ path: pathOf(frames), message })
      index = end
    } else index++
  }
  return problems
}

const identifier = /^[A-Za-z_$][\w$]*$/

/** A path as JavaScript would write it: `user[3].username`, `tags["a b"]`; `(top level)` for the root. */
export function pathOf(frames: readonly { at: string | number }[]): string {
  let path = ''
  for (const frame of frames) {
    if (typeof frame.at === 'number') path += `[${frame.at}]`
    else if (identifier.test(frame.at)) path += path === '' ? frame.at : `.${frame.at}`
    else path += `[${JSON.stringify(frame.at)}]`
  }
  return path === '' ? '(top level)' : path
}
