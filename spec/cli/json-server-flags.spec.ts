import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { makeTempDir, send, type Answer } from '../support/helpers.ts'
import { freePort } from '../support/process.ts'
import { runProgram, startProgram, stopPrograms, type Program, type Running } from '../support/side-by-side.ts'

// json-server's command line (docs/json-server.md, "Its command line"): each flag is given, as its
// users type it, to json-server 0.17.4 itself and to restdir, each in a folder of its own holding
// the same db.json, and the test compares what the two answer. json-server 1.0 stands in where
// the behaviour is 1.0's (a repeated --static).

/** json-server 0.17's README db.json, with a post long enough (over 1 kB) for json-server to compress. */
const db = {
  posts: [
    { id: 1, title: 'json-server', author: 'typicode' },
    { id: 2, title: 'a long one', author: 'restdir', body: 'x'.repeat(2000) },
  ],
  comments: [{ id: 1, body: 'some comment', postId: 1 }],
  profile: { name: 'typicode' },
}

const folders: string[] = []

/** A folder as a json-server user has it: db.json, two static folders a/ and b/, and ./public when asked. */
async function projectFolder(options: { publicFolder?: boolean; files?: Record<string, string> } = {}): Promise<string> {
  const dir = await makeTempDir('restdir-flags-')
  folders.push(dir)
  await writeFile(path.join(dir, 'db.json'), JSON.stringify(db, null, 2))
  const files: Record<string, string> = {
    'a/page.txt': 'page from a',
    'b/page.txt': 'page from b',
    'b/only-b.txt': 'only in b',
    ...(options.publicFolder ? { 'public/page.txt': 'page from public' } : {}),
    ...options.files,
  }
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true })
    await writeFile(path.join(dir, name), text)
  }
  return dir
}

/** Starts each program with the same flags in a folder of its own, on a port of its own, on 127.0.0.1 (json-server 1.0's `-h` is its host, so it is told `--host`). */
async function sideBySide(args: string[], programs: Program[] = ['json-server 0.17', 'restdir'], folder = () => projectFolder()): Promise<Running[]> {
  // Started side by side, each on a port of its own: the starts take most of this spec's time.
  return Promise.all(programs.map(async (program) => {
    const port = await freePort()
    const host = program === 'json-server 1.0' ? '--host' : '-H'
    return startProgram(program, ['db.json', ...args, '-p', String(port), host, '127.0.0.1'], await folder(), port)
  }))
}

async function ask(running: Running[], method: string, target: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer[]> {
  return Promise.all(running.map((one) => send(one.port, method, target, { headers, body })))
}

async function stop(running: Running[]): Promise<void> {
  await Promise.all(running.map((one) => one.stop()))
}

test.after(async () => {
  await stopPrograms()
  for (const dir of folders) await rm(dir, { recursive: true, force: true })
})

test('--watch and -w start both, which then serve the same posts; restdir says no watching is needed', async () => {
  for (const flag of ['--watch', '-w']) {
    const both = await sideBySide([flag, '--quiet'])
    const [theirs, ours] = await ask(both, 'GET', '/posts/1')
    assert.is(theirs.status, 200)
    assert.is(ours.status, theirs.status, flag)
    assert.equal(ours.json, theirs.json, flag)
    assert.match(both[1].stdout(), /hand edits to the store are always served: --watch is not needed/)
    await stop(both)
  }
})

test('-s DIR and --static DIR: both serve the folder\'s file instead of ./public', async () => {
  for (const flag of ['-s', '--static']) {
    const both = await sideBySide([flag, 'a', '-q'], undefined, () => projectFolder({ publicFolder: true }))
    const [theirs, ours] = await ask(both, 'GET', '/page.txt')
    assert.is(theirs.text, 'page from a', `json-server ${flag}`)
    assert.is(ours.status, 200)
    assert.is(ours.text, theirs.text, flag)
    await stop(both)
  }
})

test('-s given twice: each folder in the order given, the first that has the file answering, as json-server 1.0 serves them', async () => {
  const both = await sideBySide(['-s', 'a', '-s', 'b'], ['json-server 1.0', 'restdir'])
  for (const target of ['/page.txt', '/only-b.txt']) {
    const [theirs, ours] = await ask(both, 'GET', target)
    assert.is(theirs.status, 200, `json-server 1.0 ${target}`)
    assert.is(ours.status, 200, target)
    assert.is(ours.text, theirs.text, target)
  }
  assert.is((await send(both[1].port, 'GET', '/page.txt')).text, 'page from a')
  await stop(both)
})

test('without -s, ./public is served when it exists, as json-server does', async () => {
  const both = await sideBySide(['-q'], undefined, () => projectFolder({ publicFolder: true }))
  const [theirs, ours] = await ask(both, 'GET', '/page.txt')
  assert.is(theirs.text, 'page from public')
  assert.is(ours.text, theirs.text)
  assert.match(both[1].stdout(), /any file in \S+\/public\n/)
  await stop(both)
})

test('a static folder that does not exist stops restdir\'s start with its name (json-server would serve nothing from it)', async () => {
  const dir = await projectFolder()
  for (const args of [['-s', 'missing'], ['-s', 'a', '--static', 'missing'], ['-s', 'db.json']]) {
    const run = await runProgram('restdir', ['db.json', '-p', '0', ...args], dir)
    assert.is(run.code, 2, run.output)
    assert.match(run.output, new RegExp(`restdir: The static folder ${args.at(-1)!.replace('.', '\\.')} \\(--static, --www\\) (does not exist|is not a folder)`))
  }
})

test('--read-only, --ro: both refuse a POST with 403 and write nothing, and still answer reads', async () => {
  for (const flag of ['--read-only', '--ro']) {
    const both = await sideBySide([flag, '-q'])
    const [theirs, ours] = await ask(both, 'POST', '/posts', {}, { title: 'refused' })
    assert.is(theirs.status, 403, `json-server ${flag}`)
    assert.is(ours.status, theirs.status, `${flag}: ${ours.text}`)
    const reads = await ask(both, 'GET', '/posts')
    assert.equal(reads[1].json, reads[0].json)
    assert.is(reads[0].json.length, 2, 'nothing was added')
    await stop(both)
  }
})

const origin = { Origin: 'http://localhost:5173' }
const corsHeaders = (answer: Answer) => Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'))

test('--nc, --no-cors: no CORS header on either answer, where both send them otherwise', async () => {
  const plain = await sideBySide(['-q'])
  for (const answer of await ask(plain, 'GET', '/posts', origin)) assert.is(answer.headers['access-control-allow-origin'], origin.Origin)
  await stop(plain)
  const both = await sideBySide(['--nc', '-q'])
  const [theirs, ours] = await ask(both, 'GET', '/posts', origin)
  assert.equal(corsHeaders(theirs), [])
  assert.equal(corsHeaders(ours), corsHeaders(theirs))
  assert.is(ours.status, theirs.status)
  await stop(both)
  // json-server 0.17.4 reads its own long --no-cors as "no `cors` option" and sends the headers still; restdir's does what it says.
  const [long] = await sideBySide(['--no-cors', '-q'], ['restdir'])
  assert.equal(corsHeaders(await send(long.port, 'GET', '/posts', { headers: origin })), [])
  await long.stop()
})

test('--ng, --no-gzip: neither compresses an answer, where json-server otherwise does', async () => {
  const gzip = { 'Accept-Encoding': 'gzip' }
  const [plain] = await sideBySide(['-q'], ['json-server 0.17'])
  assert.is((await send(plain.port, 'GET', '/posts', { headers: gzip })).headers['content-encoding'], 'gzip')
  await plain.stop()
  const both = await sideBySide(['--ng', '-q'])
  const [theirs, ours] = await ask(both, 'GET', '/posts', gzip)
  assert.is(theirs.headers['content-encoding'], undefined, 'json-server --ng')
  assert.is(ours.headers['content-encoding'], theirs.headers['content-encoding'])
  assert.equal(ours.json, theirs.json)
  await stop(both)
  // json-server 0.17.4 reads its own long --no-gzip as "no `gzip` option" and compresses still; restdir takes it as --ng.
  const [long] = await sideBySide(['--no-gzip', '-q'], ['restdir'])
  assert.is((await send(long.port, 'GET', '/posts', { headers: gzip })).headers['content-encoding'], undefined)
  await long.stop()
})

/** The db-<milliseconds>.json files in a folder. */
const snapshotsIn = (folder: string) => readdirSync(folder).filter((name) => /^db-\d+\.json$/.test(name))

test('-S DIR, then s and Enter: both write db-<time>.json holding the same data, and say where', async () => {
  const both = await sideBySide(['-S', 'snaps'], undefined, () => projectFolder({ files: { 'snaps/.keep': '' } }))
  // A change first, so that the snapshot is of the data as served now, not of the file as it started.
  const created = await ask(both, 'POST', '/comments', {}, { body: 'a new one', postId: 2 })
  assert.equal(created.map((answer) => answer.status), [201, 201])
  const written: unknown[] = []
  for (const one of both) {
    assert.equal(snapshotsIn(path.join(one.cwd, 'snaps')), [], 'none before s and Enter')
    one.type('s\n')
    await one.waitFor(/Saved snapshot to snaps\/db-\d+\.json/)
    const files = snapshotsIn(path.join(one.cwd, 'snaps'))
    assert.is(files.length, 1, `${one.program}: ${files.join(' ')}`)
    written.push(JSON.parse(readFileSync(path.join(one.cwd, 'snaps', files[0]), 'utf8')))
  }
  assert.equal(written[1], written[0])
  assert.equal((written[0] as typeof db).comments.length, 2)
  await stop(both)
})

test('-S with a folder that does not exist: neither starts, and both name the folder', async () => {
  for (const program of ['json-server 0.17', 'restdir'] as const) {
    const run = await runProgram(program, ['db.json', '-S', 'no-such-folder', '-p', '0'], await projectFolder())
    assert.ok(run.code !== 0 && run.code !== null, `${program} exits with an error: ${run.code}`)
    assert.match(run.output, /no-such-folder/, program)
  }
})

test('./json-server.json: both take their port and options from it when it is there, the command line winning', async () => {
  const both: Running[] = []
  for (const program of ['json-server 0.17', 'restdir'] as const) {
    const port = await freePort()
    const config = JSON.stringify({ port, host: '127.0.0.1', 'read-only': true, static: 'b', quiet: true })
    const dir = await projectFolder({ files: { 'json-server.json': config } })
    both.push(await startProgram(program, ['db.json'], dir, port))
  }
  const [theirs, ours] = await ask(both, 'POST', '/posts', {}, { title: 'refused' })
  assert.is(theirs.status, 403)
  assert.is(ours.status, theirs.status)
  const pages = await ask(both, 'GET', '/only-b.txt')
  assert.is(pages[0].text, 'only in b')
  assert.is(pages[1].text, pages[0].text)
  await stop(both)

  // -c names another file, in json-server's camelCase; -p on the command line wins over its port.
  const overridden: Running[] = []
  for (const program of ['json-server 0.17', 'restdir'] as const) {
    const port = await freePort()
    const dir = await projectFolder({ files: { 'settings.json': JSON.stringify({ port: 1, host: '127.0.0.1', readOnly: true }) } })
    overridden.push(await startProgram(program, ['db.json', '-c', 'settings.json', '-p', String(port)], dir, port))
  }
  const refused = await ask(overridden, 'POST', '/posts', {}, { title: 'refused' })
  assert.equal(refused.map((answer) => answer.status), [403, 403])
  await stop(overridden)
})

test('-c with a file that is not there, or not JSON: neither starts, and both name the file', async () => {
  for (const [file, text] of [['missing.json', undefined], ['broken.json', '{ "port": ']] as const) {
    for (const program of ['json-server 0.17', 'restdir'] as const) {
      const dir = await projectFolder(text === undefined ? {} : { files: { [file]: text } })
      const run = await runProgram(program, ['db.json', '-c', file, '-p', '0'], dir)
      assert.ok(run.code !== 0 && run.code !== null, `${program} -c ${file} exits with an error: ${run.code}\n${run.output}`)
      assert.ok(run.output.includes(file), `${program} names ${file}: ${run.output}`)
    }
  }
})

test('-d MS: both wait at least MS before answering', async () => {
  const both = await sideBySide(['-d', '300', '-q'])
  for (const one of both) {
    const started = performance.now()
    assert.is((await send(one.port, 'GET', '/posts/1')).status, 200)
    assert.ok(performance.now() - started >= 290, `${one.program} waited ${performance.now() - started} ms`)
  }
  await stop(both)
})

test('-q: neither logs a request, where both do otherwise; -p and -H put both on that port and address', async () => {
  const logged = /GET \/posts\/1\b/
  const loud = await sideBySide([])
  await ask(loud, 'GET', '/posts/1')
  for (const one of loud) await one.waitFor(logged)
  await stop(loud)
  const quiet = await sideBySide(['-q'])
  const answers = await ask(quiet, 'GET', '/posts/1')
  assert.equal(answers[1].json, answers[0].json)
  // A request after it is answered too, so the log of the first would be in by now.
  await ask(quiet, 'GET', '/profile')
  await stop(quiet)
  for (const one of quiet) assert.not.match(one.stdout() + one.stderr(), logged, one.program)
})

test('a json-server flag typed a letter off is answered with the flag it most likely meant', async () => {
  const dir = await projectFolder()
  for (const [typed, meant] of [['--statc', '--static'], ['--read-onyl', '--read-only'], ['--snapshot', '--snapshots'], ['--no-gzp', '--no-gzip'], ['--wacth', '--watch'], ['--confg', '--config']]) {
    const run = await runProgram('restdir', ['db.json', typed], dir)
    assert.is(run.code, 2)
    assert.ok(run.output.startsWith(`restdir: ${typed} is not an option; did you mean ${meant}?\n`), run.output)
  }
})

test('restdir names the json-server.json it read, and warns of a host it gives as of one on the command line', async () => {
  const port = await freePort()
  const dir = await projectFolder({ files: { 'json-server.json': JSON.stringify({ port, host: '0.0.0.0', quiet: true }) } })
  const cli = await startProgram('restdir', ['db.json'], dir, port)
  await cli.waitFor(/0\.0\.0\.0 is reachable from other machines/)
  assert.ok(cli.stdout().includes(`options from ${path.join(dir, 'json-server.json')} (--config), the command line winning\n`), cli.stdout())
  await cli.stop()
})

test('a config file with a key that is no option says which, and what it most likely meant', async () => {
  const dir = await projectFolder({ files: { 'json-server.json': JSON.stringify({ prot: 4000 }) } })
  const run = await runProgram('restdir', ['db.json'], dir)
  assert.is(run.code, 2)
  assert.ok(run.output.startsWith('restdir: json-server.json: "prot" is not an option; did you mean "port"?\n'), run.output)
  assert.ok(existsSync(path.join(dir, 'db.json')))
})

test.run()
