import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { curlCommand, shellQuote } from '../../www/curl.js'
import { startServerOnFolder, type TestServer } from '../support/helpers.ts'

// The playground's curl command (www/curl.js): what it writes, and what a POSIX
// shell and a real curl make of it against a real server.

const run = promisify(execFile)

/** Texts a shell would change if they were not quoted whole. */
const trickyTexts = [
  "it's",
  "'",
  "''",
  "a'b'c'",
  '$HOME ${PATH} $(echo no) `echo no`',
  'back\\slash \\n \\\\ \\\'',
  'line one\nline two\n',
  '🎉 ünïcødé 中文 \u00a0 \u200b',
  '!! !$ ~ * ? [a] {b,c} # ; & | < > ( )',
  ' leading and trailing spaces ',
  '\ttab\rcarriage',
  '',
]

/** Runs a command in sh, with curl on PATH; fails with a clear reason when curl is not there (nothing is installed, nothing faked). */
async function runInShell(command: string): Promise<string> {
  try {
    await run('sh', ['-c', 'command -v curl'])
  } catch {
    throw new Error('curl is not on PATH: this test runs the playground\'s curl commands with a real curl (Debian: apt-get install curl).')
  }
  const { stdout } = await run('sh', ['-c', command], { encoding: 'utf8' })
  return stdout
}

/** The status code of `curl -i` output (the last status line, after any 100 Continue). */
function statusOf(curlOutput: string): number {
  const lines = [...curlOutput.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)]
  return Number(lines.at(-1)?.[1])
}

test('shellQuote wraps a text in single quotes and writes a quote as \'\\\'\'', () => {
  assert.is(shellQuote('plain'), "'plain'")
  assert.is(shellQuote("it's"), `'it'\\''s'`)
  assert.is(shellQuote(''), "''")
  assert.is(shellQuote('$HOME\n\\'), "'$HOME\n\\'")
})

test('sh reads every quoted text back exactly as it was, whatever it holds', async () => {
  for (const text of trickyTexts) {
    const { stdout } = await run('sh', ['-c', `printf '%s' ${shellQuote(text)}`], { encoding: 'utf8' })
    assert.is(stdout, text, `round trip of ${JSON.stringify(text)}`)
  }
})

test('a POST names its method, the absolute URL, the form\'s headers and the body with --data-raw', () => {
  const command = curlCommand({
    method: 'POST',
    url: 'http://127.0.0.1:3000/api/notes',
    headers: [['Content-Type', 'application/json'], ['If-Match', '"abc"']],
    body: '{"say": "it\'s $HOME"}',
  })
  assert.is(command, [
    "curl -i -X POST 'http://127.0.0.1:3000/api/notes' \\",
    "  -H 'Content-Type: application/json' \\",
    `  -H 'If-Match: "abc"' \\`,
    `  --data-raw '{"say": "it'\\''s $HOME"}'`,
  ].join('\n'))
})

test('a GET needs no -X, a HEAD asks with -I, an empty header is sent with Name;, and brackets in the URL turn curl\'s globbing off', () => {
  assert.is(curlCommand({ method: 'GET', url: 'http://h/user' }), "curl -i 'http://h/user'")
  assert.is(curlCommand({ method: 'HEAD', url: 'http://h/user' }), "curl -i -I 'http://h/user'")
  assert.is(curlCommand({ method: 'DELETE', url: 'http://h/a' }), "curl -i -X DELETE 'http://h/a'")
  assert.is(curlCommand({ method: 'GET', url: 'http://h/a', headers: [['X-Empty', '']] }), "curl -i 'http://h/a' \\\n  -H 'X-Empty;'")
  assert.is(curlCommand({ method: 'GET', url: 'http://h/a?x[]=1' }), "curl -i -g 'http://h/a?x[]=1'")
})

let server: TestServer

test.before(async () => {
  server = await startServerOnFolder()
})

test.after(async () => {
  await server?.close()
})

test('each command, run in sh with a real curl, stores exactly the body it was made from', async () => {
  for (const [index, text] of trickyTexts.entries()) {
    const body = JSON.stringify({ text, nested: { again: text } }, null, index % 2 === 0 ? 2 : undefined)
    const url = `${server.url}/curl/case-${index}`
    const output = await runInShell(curlCommand({ method: 'PUT', url, headers: [['Content-Type', 'application/json']], body }))
    assert.ok([200, 201].includes(statusOf(output)), `PUT of ${JSON.stringify(text)} answered ${output.split('\n')[0]}`)
    const stored = await server.request('GET', `/curl/case-${index}`)
    // The server adds the id its URL names (docs/http-api.md, "The generic data API"); all else is the body.
    assert.equal(stored.json, { ...JSON.parse(body), id: `case-${index}` }, `stored as sent: ${JSON.stringify(text)}`)
  }
  // A body whose first character would make -d read a file.
  const output = await runInShell(curlCommand({ method: 'POST', url: `${server.url}/curl-at`, headers: [['Content-Type', 'application/x-www-form-urlencoded']], body: '@/etc/passwd=1' }))
  assert.is(statusOf(output), 201, output)
  const [created] = (await server.request('GET', '/curl-at')).json
  assert.is(created['@/etc/passwd'], '1', 'the text went as it is, not a file')
})

test('the headers of a command arrive as written: a quoted ETag in If-Match decides the answer', async () => {
  const first = await server.request('PUT', '/curl-etag/doc', { body: { v: 1 } })
  const etag = String(first.headers.etag)
  const write = (ifMatch: string) => curlCommand({
    method: 'PUT',
    url: `${server.url}/curl-etag/doc`,
    headers: [['Content-Type', 'application/json'], ['If-Match', ifMatch]],
    body: '{"v": 2}',
  })
  assert.is(statusOf(await runInShell(write('"not-the-version"'))), 412)
  assert.is(statusOf(await runInShell(write(etag))), 200)
  assert.equal((await server.request('GET', '/curl-etag/doc')).json, { v: 2, id: 'doc' })
})

test.run()
