/**
 * The curl command that sends the same request from a terminal: pasted into a
 * POSIX shell, it sends exactly the method, URL, headers and body the page sent.
 * Pure functions, no DOM: spec/www/curl.spec.ts runs what they write in `sh`.
 */

/**
 * One shell word that stands for `text` exactly: single quotes keep every
 * character as it is (POSIX, Shell Command Language §2.2.2: `$`, `\`, `` ` ``,
 * newlines, any byte), and a quote itself is closed, escaped and reopened: `'\''`.
 */
export function shellQuote(text) {
  return `'${String(text).replaceAll("'", `'\\''`)}'`
}

/**
 * The command, one option per line:
 * { method, url (absolute), headers: [[name, value]], body? } → "curl -i -X POST 'http://…' \\\n  -H …"
 */
export function curlCommand({ method, url, headers = [], body }) {
  const words = ['curl', '-i']
  // HEAD with -X would wait for a body that never comes; -I asks for the headers only.
  if (method === 'HEAD') words.push('-I')
  else if (method !== 'GET' || body !== undefined) words.push('-X', method)
  // Brackets and braces in a URL are curl's own ranges ("globbing") unless told otherwise.
  if (/[[\]{}]/.test(url)) words.push('-g')
  const lines = [words.join(' ') + ' ' + shellQuote(url)]
  for (const [name, value] of headers) {
    // `Name:` alone would remove the header; `Name;` sends it empty (curl's manual, --header).
    lines.push('-H ' + shellQuote(value === '' ? `${name};` : `${name}: ${value}`))
  }
  // --data-raw sends the text as it is: -d would read a file for a body starting with @.
  if (body !== undefined) lines.push('--data-raw ' + shellQuote(body))
  return lines.join(' \\\n  ')
}
