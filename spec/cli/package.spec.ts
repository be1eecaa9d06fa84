import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { makeTempDir, send } from '../support/helpers.ts'

// The package as users get it (docs/cli.md, "The command line"; docs/library.md, "Using restdir as a library"): `npm pack`, installed from the
// tarball into an empty folder with the network shut (`--offline`, and a
// registry nobody answers at), then run through `npx` and imported as a
// library. Every step is bounded; nothing here reaches the network.

const repository = resolve('.')
const STEP_TIMEOUT_MS = 90_000

let work: string
let app: string
let tarball: string
let server: ChildProcess | undefined

/** npm with its own cache, and no registry it could reach. */
function npm(args: string[], cwd: string): SpawnSyncReturns<string> {
  const result = spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    timeout: STEP_TIMEOUT_MS,
    env: {
      ...process.env,
      npm_config_cache: join(work, 'npm-cache'),
      npm_config_offline: 'true',
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    },
  })
  if (result.status !== 0) assert.unreachable(`npm ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`)
  return result
}

/** Runs the installed binary directly (no npm in between), bounded. */
function restdir(args: string[], cwd = app): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [join(app, 'node_modules', 'restdir', 'bin', 'restdir.cjs'), ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 20_000,
  })
}

test.before(async () => {
  work = await makeTempDir('restdir-pack-')
  app = join(work, 'app')
  mkdirSync(app)
  npm(['pack', '--pack-destination', work], repository)
  const packed = readdirSync(work).filter((name) => name.endsWith('.tgz'))
  assert.is(packed.length, 1, 'npm pack made one tarball')
  tarball = join(work, packed[0])
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
  npm(['install', '--offline', '--no-save', tarball], app)
})

test.after(async () => {
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  if (work) await rm(work, { recursive: true, force: true })
})

test('the tarball holds compiled JavaScript, .d.ts types and the playground, and no TypeScript sources', () => {
  const listing = spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8', timeout: 20_000 }).stdout.split('\n').filter(Boolean)
  for (const file of ['package/package.json', 'package/README.md', 'package/LICENSE', 'package/SECURITY.md', 'package/bench/RESULTS.md', 'package/dist/lib/index.js', 'package/dist/lib/index.d.ts', 'package/dist/bin/restdir.js', 'package/bin/restdir.cjs', 'package/www/index.html', 'package/docs/http-api.md']) {
    assert.ok(listing.includes(file), `${file} is packed`)
  }
  const sources = listing.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  assert.equal(sources, [], 'no .ts sources')
  // The bench's results page is one the README links to; the bench itself stays out.
  assert.equal(listing.filter((file) => /^package\/(spec|bench|store|node_modules)\//.test(file) && file !== 'package/bench/RESULTS.md'), [], 'no tests, benchmarks or data')
})

test('the package is whole: its MIT license, and every relative link of every page it ships resolves inside it', () => {
  const unpacked = join(work, 'unpacked')
  mkdirSync(unpacked)
  const extracted = spawnSync('tar', ['-xzf', tarball, '-C', unpacked], { encoding: 'utf8', timeout: 20_000 })
  assert.is(extracted.status, 0, extracted.stderr)
  const packageRoot = join(unpacked, 'package')
  assert.is(JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')).license, 'MIT')
  assert.match(readFileSync(join(packageRoot, 'LICENSE'), 'utf8'), /^MIT License\n\nCopyright \(c\) \d{4} .+\n\nPermission is hereby granted, free of charge/)
  const pages = readdirSync(packageRoot, { recursive: true }).map(String).filter((name) => name.endsWith('.md'))
  assert.ok(pages.includes('README.md') && pages.includes('SECURITY.md') && pages.includes(join('bench', 'RESULTS.md')), pages.join(', '))
  const broken: string[] = []
  let links = 0
  for (const page of pages) {
    const text = readFileSync(join(packageRoot, page), 'utf8').replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '')
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue
      links++
      const linked = resolve(packageRoot, page, '..', target.split('#')[0])
      if (!linked.startsWith(packageRoot + '/') || !existsSync(linked)) broken.push(`${page}: ${target}`)
    }
  }
  assert.ok(links > 50, `links were found (${links})`)
  assert.equal(broken, [], 'links that lead nowhere in the package')
})

test('the packed package.json has no dependencies and points exports, types and bin at the build', () => {
  const manifest = JSON.parse(readFileSync(join(app, 'node_modules', 'restdir', 'package.json'), 'utf8'))
  assert.is(manifest.dependencies, undefined)
  assert.equal(manifest.bin, { restdir: 'bin/restdir.cjs' })
  assert.is(manifest.types, './dist/lib/index.d.ts')
  assert.equal(manifest.exports['.'], { types: './dist/lib/index.d.ts', default: './dist/lib/index.js' })
  assert.equal(manifest.exports['./store-contract'], { types: './dist/lib/store/contract.d.ts', default: './dist/lib/store/contract.js' })
  assert.equal(readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.')), ['restdir'], 'nothing else was installed')
})

test('installed offline, `npx restdir` starts and answers over HTTP, with the bundled page', async () => {
  writeFileSync(join(app, 'db.json'), JSON.stringify({ posts: [{ id: 1, title: 'From json-server' }], profile: { name: 'typicode' } }))
  const imported = restdir(['--import', 'db.json', '--store', 'data'])
  assert.is(imported.status, 0, imported.stderr)
  assert.match(imported.stdout, /imported 2 documents/)

  server = npxOffline(['restdir', '--port', '0', '--store', 'data', '--prefix', '/api', '--quiet'], app)
  const port = await listeningPort(server)

  const page = await send(port, 'GET', '/')
  assert.is(page.status, 200)
  assert.is(page.text, readFileSync(join(repository, 'www', 'index.html'), 'utf8'))
  assert.is(page.headers['x-restdir-api'], '/api')
  assert.equal((await send(port, 'GET', '/api/posts/1')).json, { id: 1, title: 'From json-server' })
  const created = await send(port, 'POST', '/api/user', { body: { username: 'ada' } })
  assert.is(created.status, 201)
  assert.is(created.headers.location, `/api/user/${created.json.user_id}`)

  // npx passes SIGTERM on; restdir finishes, closes the store (its lock goes) and lets go of the output pipe.
  await assertStopsOnSigterm(server)
  assert.not.ok(existsSync(join(app, 'data', '@lock')), 'the store lock was released')
})

test('`npx ./restdir-<version>.tgz db.json` in a folder holding only the tarball and a db.json serves the db.json (README.md)', async () => {
  const folder = join(work, 'empty')
  mkdirSync(folder)
  const name = tarball.slice(tarball.lastIndexOf('/') + 1)
  assert.match(name, /^restdir-\d+\.\d+\.\d+\.tgz$/)
  assert.match(readFileSync(join(repository, 'README.md'), 'utf8'), `npx ./${name} db.json`, 'the README shows it, with the version npm pack names')
  copyFileSync(tarball, join(folder, name))
  writeFileSync(join(folder, 'db.json'), JSON.stringify({ posts: [{ id: 1, title: 'packed' }], profile: { name: 'typicode' } }, null, 2))
  const child = npxOffline(['--yes', `./${name}`, 'db.json', '--port', '0', '--quiet'], folder)
  server = child
  const port = await listeningPort(child)
  assert.equal((await send(port, 'GET', '/posts')).json, [{ id: 1, title: 'packed' }])
  const created = await send(port, 'POST', '/posts', { body: { title: 'written back' } })
  assert.is(created.status, 201)
  assert.equal(JSON.parse(readFileSync(join(folder, 'db.json'), 'utf8')).posts[1], created.json)
  await assertStopsOnSigterm(child)
  assert.equal(readdirSync(folder).sort(), ['db.json', name], 'nothing else was left in the folder')
})

test('the installed package works as a library, and its types check', () => {
  writeFileSync(join(app, 'embed.mjs'), `
import http from 'node:http'
import { createHandler, MemoryStore } from 'restdir'
const handler = createHandler({ store: new MemoryStore(), quiet: true })
await handler.ready
const server = http.createServer(handler).listen(0, '127.0.0.1', async () => {
  const base = 'http://127.0.0.1:' + server.address().port
  const created = await fetch(base + '/notes', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hi"}' })
  const listed = await fetch(base + '/notes?_page=1')
  console.log(JSON.stringify({ status: created.status, total: listed.headers.get('x-total-count'), notes: await listed.json() }))
  server.close()
  await handler.close()
})
`)
  const embedded = spawnSync(process.execPath, ['embed.mjs'], { cwd: app, encoding: 'utf8', timeout: 20_000 })
  assert.is(embedded.status, 0, embedded.stderr)
  const result = JSON.parse(embedded.stdout)
  assert.is(result.status, 201)
  assert.is(result.total, '1')
  assert.is(result.notes[0].text, 'hi')

  writeFileSync(join(app, 'typed.ts'), `
import { createServer, MemoryStore, type RestdirOptions, type Store } from 'restdir'
const store: Store = new MemoryStore()
const options: RestdirOptions = { store, prefix: '/api', delay: 0 }
createServer(options).listen(0)
// @ts-expect-error: the types know an option's type
createServer({ prefix: 5 })
`)
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', noEmit: true, types: ['node'], typeRoots: [join(repository, 'node_modules', '@types')] },
    files: ['typed.ts'],
  }))
  const checked = spawnSync(process.execPath, [join(repository, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { encoding: 'utf8', timeout: 60_000 })
  assert.is(checked.status, 0, checked.stdout + checked.stderr)
})

test('the store contract is exported as restdir/store-contract: a store of ones own runs it, typed', () => {
  writeFileSync(join(app, 'contract.mjs'), `
import { MemoryStore } from 'restdir'
import { storeContract } from 'restdir/store-contract'
const open = async () => {
  const store = new MemoryStore()
  return { store, dispose: () => store.close() }
}
const results = []
for (const check of storeContract(open)) results.push(await check.run().then(() => 'ok', (error) => check.name + ': ' + error.message))
console.log(JSON.stringify(results))
`)
  const ran = spawnSync(process.execPath, ['contract.mjs'], { cwd: app, encoding: 'utf8', timeout: 60_000 })
  assert.is(ran.status, 0, ran.stderr)
  const results: string[] = JSON.parse(ran.stdout)
  assert.ok(results.length >= 10, 'every check is there')
  assert.equal(results.filter((result) => result !== 'ok'), [])

  writeFileSync(join(app, 'typed-contract.ts'), `
import { MemoryStore, type Store } from 'restdir'
import { storeContract, type ContractCheck, type OpenStore } from 'restdir/store-contract'
const open: OpenStore = async () => {
  const store: Store = new MemoryStore()
  return { store, dispose: () => store.close() }
}
const checks: ContractCheck[] = storeContract(open)
// @ts-expect-error: a factory gives a store and a way to dispose of it
storeContract(async () => new MemoryStore())
console.log(checks.length)
`)
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', noEmit: true, types: ['node'], typeRoots: [join(repository, 'node_modules', '@types')] },
    files: ['typed-contract.ts'],
  }))
  const checked = spawnSync(process.execPath, [join(repository, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { encoding: 'utf8', timeout: 60_000 })
  assert.is(checked.status, 0, checked.stdout + checked.stderr)
})

test('the binary names every flag in --help, and a bad flag exits 2 saying where the usage is', () => {
  const help = restdir(['--help'])
  assert.is(help.status, 0)
  for (const flag of ['--port', '--host', '--store', '--www', '--prefix', '--sync', '--max-body', '--delay', '--import', '--force', '--quiet', '--help', '--version']) {
    assert.ok(help.stdout.includes(flag), `--help names ${flag}`)
  }
  const version = restdir(['--version'])
  assert.is(version.stdout.trim(), JSON.parse(readFileSync(join(repository, 'package.json'), 'utf8')).version)
  for (const args of [['--nope'], ['--force'], ['--delay', 'soon'], ['--prefix', '/a?b'], ['--port', 'x']]) {
    const refused = restdir(args)
    assert.is(refused.status, 2, args.join(' '))
    assert.match(refused.stderr, /^restdir: .+\nrestdir --help for every option\n$/, args.join(' '))
  }
})

test('--import refuses to overwrite documents unless --force, and says why', () => {
  writeFileSync(join(app, 'db2.json'), JSON.stringify({ posts: [{ id: 1, title: 'Replaced' }] }))
  const refused = restdir(['--import', 'db2.json', '--store', 'data'])
  assert.is(refused.status, 1, refused.stderr)
  assert.match(refused.stderr, /nothing was written:\n  1 document exists already \(\/posts\/1\)\. Use --force/)
  const forced = restdir(['--import', 'db2.json', '--store', 'data', '--force'])
  assert.is(forced.status, 0, forced.stderr)
  assert.match(readFileSync(join(app, 'data', 'posts', '1', '@.json'), 'utf8'), /Replaced/)
  const broken = restdir(['--import', 'missing.json', '--store', 'data'])
  assert.is(broken.status, 1)
  assert.match(broken.stderr, /Cannot read missing\.json/)
})

test('with --sync the command widens Node\'s thread pool, so flushes overlap; a size the user set is kept', async () => {
  if (process.platform !== 'linux') return // threads are counted in /proc
  const threadsWith = async (args: string[], env: Record<string, string> = {}) => {
    const child = spawn(process.execPath, [join(app, 'node_modules', 'restdir', 'bin', 'restdir.cjs'), '--port', '0', '--quiet', '--store', 'pool-data', ...args], {
      cwd: app,
      env: { ...process.env, UV_THREADPOOL_SIZE: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      const port = await listeningPort(child)
      // Enough concurrent writes to start every thread the pool has.
      await Promise.all(Array.from({ length: 64 }, (_, n) => send(port, 'PUT', `/pool/n${n}`, { body: { n } })))
      return readdirSync(`/proc/${child.pid}/task`).length
    } finally {
      // Gone for good before the next one opens the same store.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGKILL')
        await exited
      }
    }
  }
  const plain = await threadsWith([])
  const syncing = await threadsWith(['--sync'])
  const chosen = await threadsWith(['--sync'], { UV_THREADPOOL_SIZE: '6' })
  assert.ok(syncing >= plain + 28, `--sync: ${syncing} threads, without: ${plain}`)
  // Node's own helper threads vary by a few; 32 pool threads do not hide among them.
  assert.ok(chosen < plain + 16, `UV_THREADPOOL_SIZE=6 kept: ${chosen} threads, ${plain} with Node's 4`)
})

/** `npx --offline ...args` in `cwd`, from the test's own npm cache, never the registry. */
function npxOffline(args: string[], cwd: string): ChildProcess {
  return spawn('npx', ['--offline', ...args], {
    cwd,
    // Its own process group: npx runs restdir in a child, and the test stops (or, failing, kills) both at once.
    detached: true,
    env: { ...process.env, npm_config_cache: join(work, 'npm-cache'), npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/', npm_config_update_notifier: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** SIGTERM to the process group of `child` ends it, output pipe closed, within 15 s; then the test no longer holds it. */
async function assertStopsOnSigterm(child: ChildProcess): Promise<void> {
  const closed = new Promise<boolean>((done) => {
    const timer = setTimeout(() => done(false), 15_000)
    child.stdout?.once('close', () => {
      clearTimeout(timer)
      done(true)
    })
  })
  process.kill(-(child.pid as number), 'SIGTERM')
  const stopped = await closed
  if (stopped) server = undefined
  assert.ok(stopped, 'SIGTERM stops it within 15 s')
}

/** Waits for the "listening on http://host:port/" line. */
function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolvePort, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error(`no "listening" line within 30 s:\n${output}`)), 30_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on http:\/\/[^:]+:(\d+)\//.exec(output)
      if (match) {
        clearTimeout(timer)
        resolvePort(Number(match[1]))
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)))
  })
}

test.run()
