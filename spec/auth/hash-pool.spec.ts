import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { MalformedHash } from '../../lib/auth/bcrypt.ts'
import { createHashPool, HashPoolFull } from '../../lib/auth/hash-pool.ts'
import { HttpError } from '../../lib/http-error.ts'
import { makeTempDir, send } from '../support/helpers.ts'
import { builtCommand, root, startCli } from '../support/process.ts'

// The pool runs bcrypt on worker threads (lib/auth/hash-pool.ts): the main
// loop keeps serving while a hash runs, the queue is bounded, and an idle pool
// never keeps a process alive. It runs from the TypeScript sources (as here)
// and from the built dist/, where its thread's script is JavaScript.

const require = createRequire(import.meta.url)
/** What these tests use of bcryptjs 2.4 (it ships no types). */
interface Bcryptjs {
  hashSync(password: string, saltOrCost: string | number): string
  compareSync(password: string, hash: string): boolean
  genSaltSync(cost: number): string
}
const bcryptjs = require('bcryptjs') as Bcryptjs

/** Runs `node` (plus `args`) on a module's text, from a file of its own; resolves with its output and exit, or rejects after `timeoutMs`. */
async function runNode(args: string[], code: string, timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const folder = await makeTempDir('restdir-hash-pool-')
  const script = join(folder, 'script.mjs')
  await writeFile(script, code)
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [...args, script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`node did not exit within ${timeoutMs} ms; it printed: ${stdout}${stderr}`))
    }, timeoutMs)
    child.on('close', (exitCode) => {
      clearTimeout(timer)
      resolve({ code: exitCode, stdout, stderr })
    })
  }).finally(() => rm(folder, { recursive: true, force: true }))
}

test('hashes made by the pool verify with bcryptjs, and bcryptjs\'s verify in the pool', async () => {
  const pool = createHashPool({ threads: 2 })
  try {
    const [ours, plain] = await Promise.all([pool.hash('pässwörd 😀', 4), pool.hash('secret', 4, '2b')])
    assert.ok(bcryptjs.compareSync('pässwörd 😀', ours))
    assert.match(plain, /^\$2b\$04\$/)
    const theirs = bcryptjs.hashSync('secret', 5)
    assert.is(await pool.verify('secret', theirs), true)
    assert.is(await pool.verify('Secret', theirs), false)
    assert.is(await pool.verify('secret', plain), true)
  } finally {
    await pool.close()
  }
})

test('while a cost-12 hash runs, a timer on the main loop fires on time', async () => {
  const pool = createHashPool({ threads: 1 })
  try {
    await pool.hash('warm-up', 4) // the thread's start is not what is measured
    const period = 10
    const lateness: number[] = []
    let last = performance.now()
    const timer = setInterval(() => {
      const now = performance.now()
      lateness.push(now - last - period)
      last = now
    }, period)
    const started = performance.now()
    const hash = await pool.hash('slow', 12)
    const took = performance.now() - started
    clearInterval(timer)
    assert.ok(bcryptjs.compareSync('slow', hash))
    // On the main thread, the hash would hold the loop to its end: not one tick in between.
    // Here the loop ticks all along; a machine busy with other work may delay a tick or two, not most.
    const median = [...lateness].sort((a, b) => a - b)[Math.floor(lateness.length / 2)] ?? Infinity
    console.log(`      (a cost-12 hash took ${Math.round(took)} ms; the timer ticked ${lateness.length} times, late by ${Math.round(median)} ms in the median)`)
    assert.ok(lateness.length >= 5, `the timer ticked ${lateness.length} times while the hash ran`)
    assert.ok(median < 20, `the timer was late by ${Math.round(median)} ms in the median`)
  } finally {
    await pool.close()
  }
})

test('past its queue, the pool refuses at once with a 503 and Retry-After, and the jobs it took all finish', async () => {
  const pool = createHashPool({ threads: 1, maxQueue: 2 })
  try {
    const taken = ['one', 'two', 'three'].map((password) => pool.hash(password, 8))
    assert.equal(pool.size, { threads: 1, waiting: 2 })
    for (const refused of [pool.hash('four', 8), pool.verify('four', bcryptjs.hashSync('four', 4))]) {
      try {
        await refused
        assert.unreachable('a job past the queue was taken')
      } catch (error) {
        assert.instance(error, HashPoolFull)
        assert.instance(error, HttpError)
        assert.is((error as HttpError).status, 503)
        assert.equal((error as HttpError).headers, { 'Retry-After': '1' })
      }
    }
    const hashes = await Promise.all(taken)
    hashes.forEach((hash, index) => assert.ok(bcryptjs.compareSync(['one', 'two', 'three'][index], hash)))
    assert.ok(await pool.verify('four', await pool.hash('four', 4)), 'room again once the queue drained')
  } finally {
    await pool.close()
  }
})

test('a malformed hash is refused as MalformedHash before any thread is started; the pool goes on', async () => {
  const pool = createHashPool({ threads: 1 })
  try {
    for (const hash of ['plain text', '$2a$10$short', '']) {
      try {
        await pool.verify('secret', hash)
        assert.unreachable(`${hash} was accepted`)
      } catch (error) {
        assert.instance(error, MalformedHash)
      }
    }
    assert.is(pool.size.threads, 0)
    try {
      await pool.hash('x', 3)
      assert.unreachable('cost 3 was taken')
    } catch (error) {
      assert.instance(error, RangeError)
    }
    assert.ok(await pool.verify('x', await pool.hash('x', 4)))
  } finally {
    await pool.close()
  }
})

test('close() rejects what was waiting or running and every later call, and ends the threads', async () => {
  const pool = createHashPool({ threads: 1, maxQueue: 4 })
  const pending = [pool.hash('a', 10), pool.hash('b', 10)].map((job) => job.then(() => 'done', (error: Error) => error.message))
  await pool.close()
  assert.equal(await Promise.all(pending), ['the password hashing pool is closed', 'the password hashing pool is closed'])
  assert.equal(pool.size, { threads: 0, waiting: 0 })
  try {
    await pool.hash('c', 4)
    assert.unreachable('a closed pool took a job')
  } catch (error) {
    assert.match((error as Error).message, /closed/)
  }
})

test('an awaited hash finishes, and then the process exits by itself though the pool was never closed', async () => {
  const url = pathToFileURL(join(root, 'lib/auth/hash-pool.ts')).href
  const started = performance.now()
  const result = await runNode(['--import', 'tsx'], `
    const { createHashPool } = await import(${JSON.stringify(url)})
    const pool = createHashPool({ threads: 2 })
    const [a, b] = await Promise.all([pool.hash('one', 6), pool.hash('two', 6)])
    console.log(JSON.stringify([a, b]))
  `)
  assert.is(result.code, 0, result.stderr)
  const [a, b] = JSON.parse(result.stdout) as string[]
  assert.ok(bcryptjs.compareSync('one', a) && bcryptjs.compareSync('two', b))
  assert.ok(performance.now() - started < 15_000)
})

test('built into dist/, the pool runs its JavaScript thread under plain node', async () => {
  builtCommand() // npm run build, once per run
  const url = pathToFileURL(join(root, 'dist/lib/auth/hash-pool.js')).href
  const result = await runNode([], `
    const { createHashPool } = await import(${JSON.stringify(url)})
    const pool = createHashPool({ threads: 1 })
    const hash = await pool.hash('from dist', 5)
    console.log(JSON.stringify({ hash, verified: await pool.verify('from dist', hash) }))
    await pool.close()
  `)
  assert.is(result.code, 0, result.stderr)
  const { hash, verified } = JSON.parse(result.stdout) as { hash: string; verified: boolean }
  assert.ok(verified)
  assert.ok(bcryptjs.compareSync('from dist', hash))
})

test('the command, bundled into dist/bin, runs the thread from beside its bundle', async () => {
  const folder = await makeTempDir('restdir-bundled-auth-')
  await writeFile(join(folder, 'db.json'), JSON.stringify({ users: [], posts: [] }))
  const cli = await startCli([join(folder, 'db.json'), '--auth', '--port', '0', '--quiet'], { command: builtCommand() })
  try {
    // Registering hashes the password on the pool's thread: its script must be where the bundle's code looks for it.
    const registered = await send(cli.port, 'POST', '/register', { body: { email: 'ada@example.com', password: 'a long passphrase' } })
    assert.is(registered.status, 201, registered.text)
    const login = await send(cli.port, 'POST', '/login', { body: { email: 'ada@example.com', password: 'a long passphrase' } })
    assert.is(login.status, 200, login.text)
    assert.type(login.json.accessToken, 'string')
  } finally {
    await cli.stop()
    await rm(folder, { recursive: true, force: true })
  }
})

test.run()
