import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { importDatabase } from '../../lib/data/import.ts'
import { makeTempDir, openTestStore, send, startServer } from '../support/helpers.ts'
import { freePort, root } from '../support/process.ts'
import { spawn } from 'node:child_process'

// `GET /db` in the json-server mode (docs/json-server.md, "The json-server mode") beside
// json-server 0.17.4 itself, on the same db.json: collections and singular resources alike.

const db = {
  posts: [{ id: 1, title: 'json-server', author: 'typicode' }, { id: 2, title: 'restdir' }],
  comments: [{ id: 1, body: 'some comment', postId: 1 }],
  profile: { name: 'typicode', links: { site: 'https://example.com' } },
  settings: { theme: 'dark' },
}

/** json-server 0.17.4's own command on `file`, until `use` is done. */
async function withJsonServer<T>(file: string, use: (port: number) => Promise<T>): Promise<T> {
  const port = await freePort()
  const child = spawn(process.execPath, [join(root, 'node_modules', 'json-server-017', 'lib', 'cli', 'bin.js'), file, '--port', String(port), '--quiet'], { stdio: 'ignore' })
  try {
    for (let tries = 0; ; tries++) {
      const up = await send(port, 'GET', '/db').then(() => true, () => false)
      if (up) break
      if (tries > 200) throw new Error('json-server 0.17.4 did not start within 20 s')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return await use(port)
  } finally {
    child.kill('SIGKILL')
  }
}

test('GET /db answers what json-server 0.17.4 answers on the same db.json: each collection an array, each singular resource its object', async () => {
  const folder = await makeTempDir('restdir-db-')
  const file = join(folder, 'db.json')
  await writeFile(file, JSON.stringify(db, null, 2))
  const { store, dispose } = await openTestStore()
  await importDatabase(store, structuredClone(db))
  const server = await startServer({ store, jsonServer: true })
  try {
    const theirs = await withJsonServer(file, (port) => send(port, 'GET', '/db'))
    const ours = await server.request('GET', '/db')
    assert.is(theirs.status, 200)
    assert.is(ours.status, theirs.status)
    assert.equal(ours.json, theirs.json)
    assert.equal(ours.json.profile, db.profile, 'a singular resource is its object, without an id of its own')
  } finally {
    await server.close()
    await dispose()
    await rm(folder, { recursive: true, force: true })
  }
})

test.run()
