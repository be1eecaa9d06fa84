import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import net from 'node:net'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { makeTempDir, send } from '../../support/helpers.ts'
import { spawnCli, startCli, stopAll, type CliProcess } from '../../support/process.ts'

// Faults that need a server process of their own: too few file descriptors,
// and a SIGKILL in the middle of a big removal.

test.after(stopAll)

/** Writes `count` documents under `collection` straight to disk, as the store would lay them out. */
function buildCollection(store: string, collection: string, count: number): void {
  for (let index = 0; index < count; index++) {
    const folder = join(store, collection, `n${index}`)
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, '@.json'), `{"id": "n${index}"}\n`)
  }
}

/** Sends one GET on an open keep-alive connection; resolves with the status and the Retry-After header. */
function getOn(socket: net.Socket, target: string): Promise<{ status: number; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => reject(new Error(`GET ${target} got no answer`)), 10_000)
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0)
      if (text.length < end + 4 + length) return
      socket.off('data', onData)
      clearTimeout(timer)
      resolve({ status: Number(text.slice(9, 12)), retryAfter: /\r\nretry-after: *([^\r]+)/i.exec(text)?.[1] })
    }
    socket.on('data', onData)
    socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
  })
}

test('out of file descriptors: an uncached read is 503 with Retry-After, the server keeps running, and serves again once descriptors free up', async () => {
  if (process.platform === 'win32') {
    console.log('  skipped: ulimit needs a POSIX shell')
    return
  }
  const store = await makeTempDir()
  buildCollection(store, 'd', 20)
  const cli: CliProcess = spawnCli(['--port', '0', '--store', store, '--quiet'], {
    command: ['sh', '-c', 'ulimit -n 64 && exec "$0" --import tsx bin/restdir.ts "$@"', process.execPath],
  })
  const port = Number((await cli.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)\//))[1])
  const probe = net.connect(port, '127.0.0.1')
  await new Promise((resolve) => probe.once('connect', resolve))
  // Idle connections take every descriptor left (the server drops those past its limit).
  const flood = Array.from({ length: 100 }, () => net.connect(port, '127.0.0.1').on('error', () => {}))
  await Promise.all(flood.map((socket) => new Promise((resolve) => socket.once('connect', resolve).once('close', resolve))))
  await new Promise((resolve) => setTimeout(resolve, 300))
  try {
    const starved = await getOn(probe, '/d/n1')
    assert.is(starved.status, 503)
    assert.is(starved.retryAfter, '1')
    for (const socket of flood) socket.destroy()
    // Descriptors come back as the server sees the connections close.
    let answer = starved
    for (let attempt = 0; attempt < 50 && answer.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      answer = await getOn(probe, '/d/n2')
    }
    assert.is(answer.status, 200)
    assert.is(cli.child.exitCode, null)
    assert.not.match(cli.stderr(), 'unexpected fault')
  } finally {
    probe.destroy()
    cli.child.kill('SIGKILL')
    await cli.exited
    await rm(store, { recursive: true, force: true })
  }
})

/** How many documents the collection holds on disk, and whether a removal's leftovers (`@trash-*`) are there. */
function onDisk(store: string, collection: string): { documents: number; trash: boolean } {
  const trash = readdirSync(store).some((name) => name.startsWith('@trash-'))
  let names: string[]
  try {
    names = readdirSync(join(store, collection))
  } catch {
    return { documents: 0, trash }
  }
  let documents = 0
  for (const name of names) {
    try {
      readdirSync(join(store, collection, name)).includes('@.json') && documents++
    } catch {}
  }
  return { documents, trash }
}

/** Entries left of a collection being removed: in its folder, or in the `@trash-*` folder it was moved to. */
function remaining(store: string, collection: string): number {
  const trash = readdirSync(store).find((name) => name.startsWith('@trash-'))
  for (const folder of [join(store, collection), ...(trash ? [join(store, trash)] : [])]) {
    try {
      return readdirSync(folder).length
    } catch {}
  }
  return 0
}

const BIG = 20_000

/**
 * A folder for a big store: a tmpfs where one can be mounted (20 000 folders
 * are made in a second or two there, against tens of seconds on a busy disk),
 * else a plain temporary folder. `dispose` unmounts and removes it.
 */
async function bigStoreFolder(): Promise<{ store: string; dispose(): Promise<void> }> {
  const store = await makeTempDir('restdir-crash-delete-')
  let mounted = false
  if (process.platform === 'linux') {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m', 'tmpfs', store], { stdio: 'pipe' })
      mounted = true
    } catch {}
  }
  return {
    store,
    async dispose() {
      if (mounted) execFileSync('umount', [store], { stdio: 'pipe' })
      await rm(store, { recursive: true, force: true })
    },
  }
}

test(`a SIGKILL in the middle of a ${BIG}-document DELETE leaves the subtree wholly there or wholly gone after a restart`, async () => {
  const { store, dispose } = await bigStoreFolder()
  const outcomes: string[] = []
  try {
    // One kill before the removal starts, the others once it has taken away 10 % and 60 % of the files.
    for (const share of [0, 0.1, 0.6]) {
      if (onDisk(store, 'big').documents === 0) buildCollection(store, 'big', BIG)
      const server = await startCli(['--port', '0', '--store', store, '--quiet'])
      const deleting = send(server.port, 'DELETE', '/big').catch(() => undefined)
      let finished = false
      void deleting.then(() => (finished = true))
      while (!finished && share > 0 && remaining(store, 'big') > BIG * (1 - share)) await new Promise((resolve) => setTimeout(resolve, 2))
      const delay = `${share * 100} %${finished ? ' (finished before the kill)' : ''}`
      await server.stop('SIGKILL')
      await deleting

      const restarted = await startCli(['--port', '0', '--store', store, '--quiet'])
      const answer = await send(restarted.port, 'GET', '/big?_limit=1')
      const total = answer.status === 200 ? Number(answer.headers['x-total-count']) : 0
      assert.ok(answer.status === 404 || (answer.status === 200 && total === BIG), `after a kill at ${delay}: ${answer.status}, ${total} documents listed`)
      // The restart sweeps what the dead server was removing; the subtree never comes back half.
      let disk = onDisk(store, 'big')
      for (let attempt = 0; attempt < 200 && disk.trash; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        disk = onDisk(store, 'big')
      }
      assert.not.ok(disk.trash, 'the removal left a @trash folder after the restart')
      assert.ok(disk.documents === 0 || disk.documents === BIG, `after a kill at ${delay}, ${disk.documents} of ${BIG} documents are on disk`)
      assert.is(disk.documents === BIG, answer.status === 200)
      outcomes.push(`${delay}: ${disk.documents === BIG ? 'there' : 'gone'}`)
      await restarted.stop()
    }
    console.log(`  kills during DELETE: ${outcomes.join(', ')}`)
  } finally {
    await dispose()
  }
})

test.run()
