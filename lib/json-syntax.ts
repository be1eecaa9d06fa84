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
