import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { chmod, mkdir, rename, rm } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { FileStore } from '../../../lib/store/index.ts'
import { makeTempDir, send } from '../../support/helpers.ts'
import { assertJson } from '../../support/assertions.ts'
import { builtCommand, childPids, freePort, killGroup, processState, reachableCommand, spawnCli, startCli, stopAll, unprivilegedUser, type Account, type SpawnOptions } from '../../support/process.ts'

// The store lock (docs/cli.md, "The command line"): a killed restdir starts again at
// once, wherever it ran; a live one keeps its store; a failed start leaves
// nothing behind; a store folder that cannot be used is one clear sentence.
// Servers start as the `restdir` command does: node bin/restdir.cjs.

const folders: string[] = []

async function tempStore(): Promise<string> {
  const dir = await makeTempDir('restdir-lock-')
  folders.push(dir)
  return dir
}

test.after(async () => {
  await stopAll()
  for (const dir of folders) await rm(dir, { recursive: true, force: true })
})

/** Why this machine cannot run a server as pid 1 of its own pid namespace, if it cannot. */
function containerUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'pid namespaces are Linux only'
  const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { encoding: 'utf8', timeout: 10_000 })
  if (probe.error) return `unshare cannot run here (${(probe.error as NodeJS.ErrnoException).code})`
  if (probe.status !== 0) return `unshare --pid is not permitted here: ${probe.stderr.trim()}`
  return undefined
}

/** Polls `check` until it holds, or fails after `timeoutMs`. */
async function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > timeoutMs) assert.unreachable(`${what} within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function lockNote(store: string): { pid: number; run: string } {
  return JSON.parse(readFileSync(path.join(store, '@lock'), 'utf8'))
}

const containerReason = containerUnavailable()
const inContainer = containerReason ? test.skip : test
if (containerReason) console.log(`  lock.spec: skipping the container restart: ${containerReason}`)

inContainer('a server that was pid 1 of its container and was killed starts again at once as pid 1 on the same store', async () => {
  const store = await tempStore()
  const [node, cli] = builtCommand()
  // --kill-child: should the test end unshare, the server goes with it.
  const container = { command: ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc', node, cli] }
  const args = ['--port', '0', '--store', store, '--quiet']

  const first = await startCli(args, container)
  assert.is(lockNote(store).pid, 1, 'inside its pid namespace the server is pid 1')
  assert.is((await send(first.port, 'PUT', '/kept/doc', { body: { round: 1 } })).status, 201)
  const [server] = childPids(first.child.pid!)
  assert.ok(server, 'the server runs under unshare')
  process.kill(server, 'SIGKILL')
  await first.exited

  // The new server is pid 1 too, and finds a lock note naming pid 1: itself. The note proves nothing.
  const second = await startCli(args, container)
  assert.is(lockNote(store).pid, 1)
  assertJson(await send(second.port, 'GET', '/kept/doc'), 200, { id: 'doc', round: 1 })
  process.kill(childPids(second.child.pid!)[0], 'SIGTERM')
  assert.is((await second.exited).code, 0)
  assert.equal(readdirSync(store), ['kept'], 'a clean stop releases the lock')
})

const zombieReason = process.platform === 'linux' ? undefined : 'telling a zombie needs /proc (Linux)'
const withZombie = zombieReason ? test.skip : test
if (zombieReason) console.log(`  lock.spec: skipping the zombie restart: ${zombieReason}`)

withZombie('a killed server that stays a zombie (its parent never reaps it) does not keep its store shut', async () => {
  const store = await tempStore()
  const [node, cli] = builtCommand()
  const args = ['--port', '0', '--store', store, '--quiet']
  // sh starts the server in the background, then becomes `sleep`, which never waits for its child.
  const parent = await startCli(args, { command: ['sh', '-c', '"$0" "$@" & exec sleep 120', node, cli], detached: true })
  try {
    assert.is((await send(parent.port, 'PUT', '/kept/doc', { body: { kept: true } })).status, 201)
    const [server] = childPids(parent.child.pid!)
    assert.is(lockNote(store).pid, server, 'the server in the background holds the lock')
    process.kill(server, 'SIGKILL')
    await waitUntil(() => processState(server) === 'Z', 'the killed server became a zombie')
    process.kill(server, 0) // a zombie still answers signal 0, as a live process does

    const second = await startCli(args, { command: builtCommand() })
    assert.is(processState(server), 'Z', 'the old server is still a zombie')
    assert.is(lockNote(store).pid, second.child.pid)
    assertJson(await send(second.port, 'GET', '/kept/doc'), 200, { id: 'doc', kept: true })
    assert.is((await second.stop('SIGTERM')).code, 0)
  } finally {
    killGroup(parent.child, 'SIGKILL')
    await parent.exited
  }
})

test('a live server keeps its store: a second one is refused with a message naming the folder and its pid, even for a deep folder', async () => {
  // Deeper than a Unix socket path may be (104 bytes on macOS, 108 on Linux).
  const parent = await tempStore()
  const store = path.join(parent, 'a-folder-name-of-some-length'.repeat(5), 'store')
  const args = ['--port', '0', '--store', store, '--quiet']
  const first = await startCli(args, { command: builtCommand() })
  // Node cuts a socket path that is too long short without a word: the socket would land outside the store.
  assert.equal(readdirSync(store).sort(), ['@lock', '@lock.sock'], 'the lock socket is in the store folder')
  assert.equal(readdirSync(parent, { recursive: true }).length, 4, 'and nowhere else')
  const second = spawnCli(args, { command: builtCommand() })
  assert.equal(await second.exited, { code: 1, signal: null })
  assert.is(second.stderr(), `restdir: The store folder ${store} is in use by another restdir (pid ${first.child.pid}); stop that one first.\n`)
  assert.not.match(second.stdout(), /listening on/)
  assertJson(await send(first.port, 'GET', '/user'), 200, [])
  assert.is(lockNote(store).pid, first.child.pid, 'the refused start left the lock alone')
  assert.is((await first.stop('SIGTERM')).code, 0)
  assert.equal(readdirSync(store), [], 'a clean stop removes the lock note and its socket')
})

test('a start that fails because the port is in use releases the lock and removes the store folder it made', async () => {
  const port = await freePort()
  const taken = net.createServer()
  await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve))
  try {
    const parent = await tempStore()
    const made = path.join(parent, 'new', 'store')
    const existing = path.join(parent, 'existing')
    await mkdir(existing)
    for (const store of [made, existing]) {
      const failed = spawnCli(['--port', String(port), '--store', store, '--quiet'], { command: builtCommand() })
      assert.equal(await failed.exited, { code: 1, signal: null })
      assert.is(failed.stderr(), `restdir: port ${port} is in use; pick another with --port.\n`)
    }
    assert.equal(readdirSync(parent), ['existing'], 'the folders the start made are gone')
    assert.equal(readdirSync(existing), [], 'no lock is left in a folder that was there before')
  } finally {
    taken.close()
  }
})

test('a --store that is a file, or lies below one, is one clear sentence and exit 1', async () => {
  const file = path.join(await tempStore(), 'passwd')
  writeFileSync(file, 'root:x:0:0::/root:/bin/sh\n')
  for (const store of [file, path.join(file, 'store')]) {
    const cli = spawnCli(['--port', '0', '--store', store, '--quiet'], { command: builtCommand() })
    assert.equal(await cli.exited, { code: 1, signal: null })
    assert.is(cli.stderr(), `restdir: The store folder ${store} cannot be used: ${file} is a file, not a folder.\n`)
  }
  assert.is(readFileSync(file, 'utf8'), 'root:x:0:0::/root:/bin/sh\n')
})

test('of eight stores opened at once on the folder of a killed server, exactly one gets it', async () => {
  const store = await tempStore()
  const killed = await startCli(['--port', '0', '--store', store, '--quiet'], { command: builtCommand() })
  await killed.stop('SIGKILL')
  assert.ok(existsSync(path.join(store, '@lock.sock')), 'the killed server left its lock socket behind')
  const ticks = (count: number) => Array.from({ length: count }).reduce<Promise<unknown>>((done) => done.then(() => new Promise(setImmediate)), Promise.resolve())
  for (let round = 0; round < 60; round++) {
    // Started a few event-loop turns apart, so that one may find the socket dead just before another takes it.
    const opened = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => ticks(index * (round % 6)).then(() => FileStore.open(store))))
    const winners = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
    const refusals = opened.flatMap((result) => (result.status === 'rejected' ? [(result.reason as NodeJS.ErrnoException).code] : []))
    assert.is(winners.length, 1, `round ${round}: ${winners.length} stores got the folder`)
    assert.equal(refusals, Array(7).fill('ESTORELOCKED'))
    // Leave the lock behind again, as a crash would: the socket stays, nobody listens on it.
    const socket = path.join(store, '@lock.sock')
    await rename(socket, `${socket}.kept`)
    await winners[0].close()
    await rename(`${socket}.kept`, socket)
  }
})

const withProc = process.platform === 'linux' && existsSync('/proc/self') ? test : test.skip
if (process.platform !== 'linux') console.log('  lock.spec: skipping the /proc store folder: Linux only')

withProc('a store folder where the file system lets no folder be made (/proc) is one clear sentence, not a hang', async () => {
  const store = `/proc/restdir-${process.pid}`
  const cli = spawnCli(['--port', '0', '--store', store, '--quiet'], { command: builtCommand() })
  const bound = setTimeout(() => cli.child.kill('SIGKILL'), 20_000)
  const exit = await cli.exited
  clearTimeout(bound)
  assert.equal(exit, { code: 1, signal: null }, 'restdir answered within 20 s')
  assert.is(cli.stderr(), `restdir: The store folder ${store} cannot be used: the file system does not let a folder be made there.\n`)
})

// Root may write anywhere, so as root the server runs as an unprivileged user, from a copy of the package it can reach.
const permissionUser: Account | { reason: string } | undefined = process.platform === 'win32' ? { reason: 'folder modes are POSIX' } : process.getuid?.() === 0 ? unprivilegedUser() : undefined
const permissionSkip = permissionUser && 'reason' in permissionUser ? permissionUser.reason : undefined
const withPermissions = permissionSkip ? test.skip : test
if (permissionSkip) console.log(`  lock.spec: skipping the permission check: ${permissionSkip}`)

withPermissions('a store folder without write permission is one clear sentence and exit 1', async () => {
  const parent = await tempStore()
  const store = path.join(parent, 'closed')
  await mkdir(store, { mode: 0o555 })
  let options: SpawnOptions = { command: builtCommand() }
  if (permissionUser && 'uid' in permissionUser) {
    await chmod(parent, 0o755) // the server's user reaches the folder, and may only read it
    options = { user: permissionUser, command: await reachableCommand(await tempStore()), cwd: parent }
    const reading = spawnSync(process.execPath, ['-e', `require('node:fs').readdirSync(${JSON.stringify(store)})`], { ...permissionUser, cwd: parent, encoding: 'utf8' })
    assert.is(reading.status, 0, `the server's user may read the folder, so only writing is refused: ${reading.stderr}`)
  }
  const cli = spawnCli(['--port', '0', '--store', store, '--quiet'], options)
  const bound = setTimeout(() => cli.child.kill('SIGKILL'), 20_000) // a server that got the folder would never exit
  const exit = await cli.exited
  clearTimeout(bound)
  assert.equal(exit, { code: 1, signal: null }, 'restdir refused the folder within 20 s')
  assert.is(cli.stderr(), `restdir: The store folder ${store} cannot be used: permission denied.\n`)
  assert.equal(readdirSync(store), [])
})

/** A read-only file system to start on (a tmpfs mounted read-only), or why there is none. */
const readOnly = (() => {
  if (process.platform !== 'linux') return { reason: 'mounting a read-only file system is done the Linux way here' }
  const mountPoint = mkdtempSync(path.join(tmpdir(), 'restdir-lock-ro-'))
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', mountPoint], { encoding: 'utf8', timeout: 10_000 })
  if (mounted.status === 0) return { mountPoint }
  rmSync(mountPoint, { recursive: true, force: true })
  return { reason: `cannot mount a read-only tmpfs here: ${(mounted.stderr ?? '').trim() || mounted.error?.message}` }
})()
const withReadOnly = readOnly.mountPoint ? test : test.skip
if (readOnly.reason) console.log(`  lock.spec: skipping the read-only check: ${readOnly.reason}`)
test.after(() => {
  if (!readOnly.mountPoint) return
  spawnSync('umount', [readOnly.mountPoint], { timeout: 10_000 })
  rmSync(readOnly.mountPoint, { recursive: true, force: true })
})

withReadOnly('a store folder on a read-only file system, there or to be made, is one clear sentence and exit 1', async () => {
  for (const store of [readOnly.mountPoint!, path.join(readOnly.mountPoint!, 'store')]) {
    const cli = spawnCli(['--port', '0', '--store', store, '--quiet'], { command: builtCommand() })
    assert.equal(await cli.exited, { code: 1, signal: null })
    assert.is(cli.stderr(), `restdir: The store folder ${store} cannot be used: it is on a read-only file system.\n`)
  }
})

test.run()
