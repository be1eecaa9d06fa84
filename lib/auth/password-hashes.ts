// A password hash never leaves the server (docs/accounts.md, "What restdir
// does that json-server-auth does not"): json-server-auth answers `GET /users`
// with every user's bcrypt hash, and a hash is a password to guess offline. An
// answer's JSON text loses every `"password"` member whose value is a bcrypt
// hash, wherever it is: a user, a listing of users, `GET /db`, a user embedded
// in another document (`_expand=user`), a batch's responses. The text is
// scanned, not parsed, so every other byte of the answer (numbers a double
// cannot carry included) stays as the store has it.

/** `$2a$10$` and 53 characters of salt and hash, as bcrypt writes them. */
const BCRYPT_HASH = /^\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}$/

/** The JSON text `text` without its password hashes; `text` itself when it has none (the common case, found without scanning). */
export function withoutPasswordHashes(text: string): string {
  if (!text.includes('password') || !text.includes('$2')) return text
  const kept: string[] = []
  let copiedTo = 0
  let index = 0
  while (index < text.length) {
    if (text.charCodeAt(index) !== 0x22) {
      index++
      continue
    }
    const keyEnd = endOfString(text, index)
    const colon = skipSpace(text, keyEnd)
    if (text[colon] !== ':' || !isPasswordKey(text.slice(index, keyEnd))) {
      index = keyEnd
      continue
    }
    const valueStart = skipSpace(text, colon + 1)
    if (text[valueStart] !== '"') {
      index = valueStart
      continue
    }
    const valueEnd = endOfString(text, valueStart)
    if (!BCRYPT_HASH.test(JSON.parse(text.slice(valueStart, valueEnd)) as string)) {
      index = valueEnd
      continue
    }
    // The member goes with the comma before it, or, when it is an object's first, with the one after it.
    const before = skipSpaceBack(text, index - 1)
    let from = index
    let to = valueEnd
    if (text[before] === ',') from = before
    else {
      const after = skipSpace(text, valueEnd)
      if (text[after] === ',') to = skipSpace(text, after + 1)
    }
    kept.push(text.slice(copiedTo, from))
    copiedTo = to
    index = to
  }
  if (copiedTo === 0) return text
  kept.push(text.slice(copiedTo))
  return kept.join('')
}

function isPasswordKey(token: string): boolean {
  if (token === '"password"') return true
  // A key spelled with escapes (`"passw\u006frd"`) is the same key to every JSON reader.
  return token.includes('\\') && JSON.parse(token) === 'password'
}

/** The index just past the string token starting at `start` (a `"`). */
function endOfString(text: string, start: number): number {
  let at = start + 1
  while (at < text.length) {
    const code = text.charCodeAt(at)
    if (code === 0x5c) at += 2
    else if (code === 0x22) return at + 1
    else at++
  }
  return text.length
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && (text[at] === ' ' || text[at] === '\n' || text[at] === '\r' || text[at] === '\t')) at++
  return at
}

function skipSpaceBack(text: string, at: number): number {
  while (at >= 0 && (text[at] === ' ' || text[at] === '\n' || text[at] === '\r' || text[at] === '\t')) at--
  return at
}
