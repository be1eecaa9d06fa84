import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { makeTempDir, send } from '../support/helpers.ts'
import { assertJson } from '../support/assertions.ts'
import { readCommandLine } from '../../lib/cli/args.ts'
import { freePort, killGroup, readDocumentFiles, root, runCli, spawnCli, startCli, stopAll } from '../support/process.ts'

// The command line (docs/cli.md, "The command line"), run as a real child process.

const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }
const folders: string[] = []

async function tempStore(): Promise<string> {
  const dir = await makeTempDir('restdir-cli-')
  folders.push(dir)
  return dir
}

test.after(async () => {
  await stopAll()
  for (const dir of folders) await rm(dir, { recursive: true, force: true })
})

/** A request log line: method, path, status and time (docs/cli.md, "The command line"). */
const logLine = /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \S+ \d{3} \d+(\.\d+)?ms$/gm

test('--help prints the usage with every option and exits 0', async () => {
  const result = await runCli(['--help'])
  assert.is(result.code, 0)
  assert.match(result.stdout, /^Usage: restdir \[options\]/)
  for (const option of ['--port', '--host', '--store', '--www', '--sync', '--max-body', '--quiet', '--help', '--version']) {
    assert.ok(result.stdout.includes(option), `the usage lists ${option}`)
  }
  assert.is(result.stderr, '')
})

test('--help shows examples before the limits, each a command line restdir reads', async () => {
  const help = (await runCli(['--help'])).stdout
  const examples = /\nExamples:\n((?:  .+\n)+)/.exec(help)
  assert.ok(examples, help)
  assert.ok(help.indexOf('\nExamples:') < help.indexOf('\nLimits'), 'the limits come last')
  const commands = examples[1].split('\n').filter(Boolean).map((line) => line.trim().split(/\s{2,}/)[0])
  assert.ok(commands.length >= 3, commands.join(' | '))
  assert.ok(commands.includes('restdir --watch db.json -p 4000'), 'json-server\'s first command is among them')
  for (const command of commands) {
    const [program, ...args] = command.split(' ')
    assert.is(program, 'restdir')
    assert.not.throws(() => readCommandLine(args), command)
  }
})

test('a command that should end and does not fails its test within runCli\'s limit, killed, rather than holding the run', async () => {
  // A server never ends by itself: it stands for a regression that makes --help or a bad flag serve instead of exit.
  const store = await tempStore()
  const started = Date.now()
  const outcome = await Promise.race([
    runCli(['--port', '0', '--store', store], {}, 2000).then((exit) => `ended: ${JSON.stringify(exit)}`, (error: Error) => error.message),
    new Promise<string>((resolve) => setTimeout(() => resolve('still waiting after 15 s'), 15_000).unref()),
  ])
  assert.match(outcome, /^restdir --port 0 --store \S+ did not end within 2000 ms\./)
  assert.ok(Date.now() - started < 10_000, 'rejected at its limit')
})

test('--version prints the package version and exits 0', async () => {
  const result = await runCli(['--version'])
  assert.is(result.code, 0)
  assert.is(result.stdout, `${version}\n`)
})

test('a bad flag, a bad value or a bad PORT exits 2 with what is wrong in two lines, not the whole usage', async () => {
  // One case per way to go wrong: an unknown flag, a missing value, and each value check.
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [['--nope'], {}, '--nope is not an option.'],
    [['--port'], {}, '--port needs a value: a port number, 0 for any free one.'],
    [['-p', '--quiet'], {}, '-p needs a value: a port number, 0 for any free one.'],
    [['--store'], {}, '--store needs a value: a folder, a db.json or a postgres:// URL.'],
    [['--port', 'abc'], {}, '--port "abc" is not a port number (0-65535).'],
    [['--max-body', 'lots'], {}, '--max-body "lots" is not a size such as 512kb or 2mb.'],
    [['--quiet=yes'], {}, '--quiet takes no value (it was given "yes").'],
    [['-P', '4000'], {}, '-P is not an option; the short ones are -p -H -s -d -r -m -i -w -S -c -q -h -v.'],
    [['-port', '4000'], {}, '-port: a long option takes two dashes, as --port.'],
    [['-qv'], {}, '-qv: give short flags one at a time, as -q -v.'],
    [[], { PORT: 'eighty' }, 'PORT "eighty" is not a port number (0-65535).'],
  ]
  for (const [args, env, what] of cases) {
    const result = await runCli(args, env)
    assert.is(result.code, 2, `${args.join(' ')} exits 2 (got ${result.code}): ${result.stderr}`)
    assert.is(result.stderr, `restdir: ${what}\nrestdir --help for every option\n`)
    assert.is(result.stdout, '')
  }
})

test('a negative number after a flag is its value, refused by the flag\'s own rule', async () => {
  for (const [args, what] of [[['--delay', '-5'], '--delay "-5" is not a number of milliseconds (0-600000).'], [['-p', '-1'], '--port "-1" is not a port number (0-65535).']] as const) {
    const result = await runCli([...args])
    assert.is(result.code, 2)
    assert.is(result.stderr, `restdir: ${what}\nrestdir --help for every option\n`)
  }
})

test('a near miss of a flag is answered with the flag it most likely meant', async () => {
  const cases: Array<[string, string]> = [['--prot', '--port'], ['--stor', '--store'], ['--max-bdy', '--max-body'], ['--jsonserver', '--json-server'], ['--readonyl', '--readonly'], ['--Port', '--port']]
  for (const [typed, meant] of cases) {
    const result = await runCli([typed, '4000'])
    assert.is(result.code, 2)
    assert.is(result.stderr, `restdir: ${typed} is not an option; did you mean ${meant}?\nrestdir --help for every option\n`)
  }
  const far = await runCli(['--verbose'])
  assert.is(far.stderr, 'restdir: --verbose is not an option.\nrestdir --help for every option\n', 'no guess when no flag is near')
})

test('-h and -v are --help and --version, and -p, -s, -d and -q start a server as their long forms do', async () => {
  assert.equal(await runCli(['-h']), await runCli(['--help']))
  assert.is((await runCli(['-v'])).stdout, `${version}\n`)
  const dir = await tempStore()
  const www = await tempStore()
  await writeFile(path.join(www, 'hello.txt'), 'hi from -s')
  const port = await freePort()
  const cli = await startCli(['-p', String(port), '--store', dir, '-s', www, '-d', '30', '-q'])
  assert.is(cli.port, port)
  assert.match(cli.stdout(), /every data answer waits 30 ms \(--delay\)/)
  assert.is((await send(port, 'GET', '/hello.txt')).text, 'hi from -s')
  const started = Date.now()
  assert.is((await send(port, 'PUT', '/notes/a', { body: { v: 1 } })).status, 201)
  assert.ok(Date.now() - started >= 30, 'the data answer waited')
  await cli.stop('SIGTERM')
  assert.not.match(cli.stdout(), /PUT \/notes/, '-q logs no request')
})

test('the banner names the modes that change what a request gets: the token, read-only, json-server URLs, the delay', async () => {
  const dir = await makeTempDir()
  try {
    const plain = await startCli(['--port', '0', '--store', dir, '--quiet'])
    const quiet = plain.stdout()
    await plain.stop()
    for (const mode of ['Authorization: Bearer', 'read-only', "json-server 0.17's URLs", '--delay']) assert.not.ok(quiet.includes(mode), `no ${mode} line without its flag: ${quiet}`)
    const modes = await startCli(['--port', '0', '--store', dir, '--quiet', '--token', 'secret', '--json-server', '--delay', '5'])
    const banner = modes.stdout()
    await modes.stop()
    assert.match(banner, /every write needs "Authorization: Bearer <token>" \(--token\)\n/)
    assert.not.ok(banner.includes('secret'), 'the banner never shows the token')
    assert.match(banner, /json-server 0\.17's URLs/)
    assert.match(banner, /every data answer waits 5 ms \(--delay\)/)
    const readonly = await startCli(['--port', '0', '--store', dir, '--quiet', '--token', 'secret', '--readonly'])
    const readonlyBanner = readonly.stdout()
    await readonly.stop()
    assert.match(readonlyBanner, /read-only \(--readonly\): every write is refused/)
    assert.not.ok(readonlyBanner.includes('Authorization'), 'a read-only server takes no write, so it names no token')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('the banner shows the URL, the store folder and the routes, then one log line per request', async () => {
  const dir = await tempStore()
  const cli = await startCli(['--port', '0', '--store', dir])
  const banner = cli.stdout()
  assert.match(banner, new RegExp(`^restdir ${version.replaceAll('.', '\\.')} listening on http://127\\.0\\.0\\.1:${cli.port}/\\n`))
  assert.ok(banner.includes(`store: ${dir}\n`), `the banner names the store folder: ${banner}`)
  for (const route of ['/user\n', '/user/:user_id\n', '/user/:user_id/playlist\n', '/user/:user_id/playlist/:playlist_id\n', 'any other URL']) {
    assert.ok(banner.includes(route), `the banner lists ${route.trim()}`)
  }
  assert.equal(banner.match(logLine), null)

  assertJson(await send(cli.port, 'GET', '/user'), 200, [])
  assert.is((await send(cli.port, 'PUT', '/notes/a?x=1', { body: { v: 1 } })).status, 201)
  assert.is((await send(cli.port, 'GET', '/missing')).status, 404)
  assert.is((await send(cli.port, 'POST', '/user', { body: '{bad', headers: { 'content-type': 'application/json' } })).status, 400)
  await cli.waitFor(/^POST \/user 400 .*$/m)
  const stop = await cli.stop('SIGTERM')
  assert.is(stop.code, 0)
  const lines: string[] = cli.stdout().match(logLine) ?? []
  assert.is(lines.length, 4, `one line per request: ${lines.join(' | ')}`)
  assert.match(lines[0], /^GET \/user 200 /)
  assert.match(lines[1], /^PUT \/notes\/a\?x=1 201 /)
  assert.match(lines[2], /^GET \/missing 404 /)
  assert.match(lines[3], /^POST \/user 400 /)
})

test('--quiet logs no request at all', async () => {
  const cli = await startCli(['--port', '0', '--store', await tempStore(), '--quiet'])
  assert.is((await send(cli.port, 'PUT', '/quiet/a', { body: {} })).status, 201)
  assert.is((await send(cli.port, 'GET', '/quiet/a')).status, 200)
  assert.is((await send(cli.port, 'GET', '/quiet/none')).status, 404)
  const stop = await cli.stop('SIGTERM')
  assert.is(stop.code, 0)
  assert.match(cli.stdout(), /listening on/)
  assert.equal(cli.stdout().match(logLine), null)
  assert.not.match(cli.stdout(), /\/quiet\//)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} stops accepting, lets an in-flight write finish, releases the lock and exits 0`, async () => {
    const dir = await tempStore()
    const cli = await startCli(['--port', '0', '--store', dir])
    const body = JSON.stringify({ finished: true, signal })
    const socket = net.connect(cli.port, '127.0.0.1')
    const reply = new Promise<string>((resolve) => {
      let text = ''
      socket.setEncoding('latin1').on('data', (data: string) => (text += data))
      socket.on('close', () => resolve(text))
      socket.on('error', () => {})
    })
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`PUT /inflight/doc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`)
    // A complete request sent later on another connection is answered: by then the server is reading the first one.
    assert.is((await send(cli.port, 'GET', '/inflight')).status, 404)

    cli.child.kill(signal)
    await cli.waitFor(new RegExp(`${signal}: finishing in-flight requests`))
    // A connection that raced into the backlog as the listener closed is reset rather than refused: neither is served.
    const refused = await send(cli.port, 'GET', '/inflight').then(() => 'answered', (error: NodeJS.ErrnoException) => error.code)
    assert.ok(refused === 'ECONNREFUSED' || refused === 'ECONNRESET', `a new request after the signal was ${refused}`)
    assert.ok(existsSync(path.join(dir, '@lock')), 'the lock is held while the write is in flight')

    socket.write(body.slice(5))
    const answer = await reply
    assert.match(answer, /^HTTP\/1\.1 201 /)
    assert.ok(answer.endsWith(`{"id":"doc","finished":true,"signal":"${signal}"}\n`), answer)
    const exit = await cli.exited
    assert.is(exit.code, 0, cli.stderr())
    assert.not.ok(existsSync(path.join(dir, '@lock')), 'the lock is released')
    assert.equal([...(await readDocumentFiles(dir)).values()], [{ id: 'doc', finished: true, signal }])
  })
}

test('a second server on the same store refuses to start with a clear message, and the first keeps serving', async () => {
  const dir = await tempStore()
  const first = await startCli(['--port', '0', '--store', dir, '--quiet'])
  const second = spawnCli(['--port', '0', '--store', dir, '--quiet'])
  const exit = await second.exited
  assert.is.not(exit.code, 0)
  assert.match(second.stderr(), /in use by another restdir/)
  assert.ok(second.stderr().includes(dir), `the message names the folder: ${second.stderr()}`)
  assert.not.match(second.stdout(), /listening on/)
  assert.not.match(second.stderr(), /\n\s+at /, 'no stack trace')
  assertJson(await send(first.port, 'GET', '/user'), 200, [])
  assert.is((await first.stop('SIGTERM')).code, 0)
})

test('the PORT environment variable picks the port when --port is not given', async () => {
  const port = await freePort()
  const cli = await startCli(['--store', await tempStore(), '--quiet'], { env: { PORT: String(port) } })
  assert.is(cli.port, port)
  assertJson(await send(port, 'GET', '/user'), 200, [])
  assert.is((await cli.stop('SIGTERM')).code, 0)
})

test('npm start -- --port P --store DIR passes the flags through to restdir', async () => {
  const port = await freePort()
  const dir = await tempStore()
  const cli = spawnCli(['start', '--', '--port', String(port), '--store', dir, '--quiet'], { command: ['npm'], detached: true })
  await cli.waitFor(new RegExp(`listening on http://127\\.0\\.0\\.1:${port}/\\nstore: ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`))
  assert.is((await send(port, 'PUT', '/via-npm/doc', { body: { ok: true } })).status, 201)
  assert.equal([...(await readDocumentFiles(dir)).values()], [{ id: 'doc', ok: true }])
  killGroup(cli.child, 'SIGTERM')
  await cli.exited
})

test('--max-sort-keys and --max-filters set the caps of listing queries, and a value that is not a count exits 2', async () => {
  const dir = await tempStore()
  const cli = await startCli(['--port', '0', '--store', dir, '--quiet', '--max-sort-keys', '2', '--max-filters', '1'])
  await send(cli.port, 'PUT', '/notes/a', { body: { v: 1 } })
  assert.is((await send(cli.port, 'GET', '/notes?_sort=a,b')).status, 200)
  const sorted = await send(cli.port, 'GET', '/notes?_sort=a,b,c')
  assert.is(sorted.status, 400)
  assert.match(sorted.json.detail, /more than 2 fields.*--max-sort-keys/)
  assert.is((await send(cli.port, 'GET', '/notes?v=1')).status, 200)
  const filtered = await send(cli.port, 'GET', '/notes?v=1&q=a')
  assert.is(filtered.status, 400)
  assert.match(filtered.json.detail, /more than 1 filter values.*--max-filters/)
  await cli.stop()
  for (const flag of ['--max-sort-keys', '--max-filters']) {
    const result = await runCli([flag, '0'])
    assert.is(result.code, 2)
    assert.match(result.stderr, new RegExp(`${flag} "0" is not a whole number`))
  }
})

test.run()
