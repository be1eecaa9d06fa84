/*
 * JSON text laid out as `JSON.stringify(value, null, 2)` lays it out, from
 * JSON text, without parsing it: the json-server mode's answers
 * (docs/json-server.md, "The json-server mode") are json-server's bytes, and
 * a listing's text is joined from its documents' compact texts, never made
 * into values (lib/listing/listing.ts). One pass over the text.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c

const padding: string[] = ['']

function pad(depth: number): string {
  while (padding.length <= depth) padding.push(padding[padding.length - 1] + '  ')
  return padding[depth]
}

/** `text` (valid JSON, laid out in any way) as `JSON.stringify(JSON.parse(text), null, 2)` gives it. */
export function indentJson(text: string): string {
  const parts: string[] = []
  let depth = 0
  let at = 0
  const length = text.length
  while (at < length) {
    const code = text.charCodeAt(at)
    if (code === QUOTE) {
      let end = at + 1
      for (;;) {
        const next = text.charCodeAt(end)
        if (next === BACKSLASH) end += 2
        else if (next === QUOTE) break
        else end++
      }
      parts.push(text.slice(at, end + 1))
      at = end + 1
      continue
    }
    const char = text[at]
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']'
      let next = at + 1
      while (isSpace(text.charCodeAt(next))) next++
      if (text[next] === close) {
        parts.push(char + close)
        at = next + 1
        continue
      }
      parts.push(char + '\n' + pad(++depth))
    } else if (char === '}' || char === ']') parts.push('\n' + pad(--depth) + char)
    else if (char === ',') parts.push(',\n' + pad(depth))
    else if (char === ':') parts.push(': ')
    else if (!isSpace(code)) {
      // A number, true, false or null: up to the next delimiter.
      let end = at + 1
      while (end < length && !isDelimiter(text.charCodeAt(end))) end++
      parts.push(text.slice(at, end))
      at = end
      continue
    }
    at++
  }
  return parts.join('')
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
}

function isDelimiter(code: number): boolean {
  return isSpace(code) || code === 0x2c || code === 0x5d || code === 0x7d || code === 0x3a
}
