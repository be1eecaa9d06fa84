import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, send } from '../../support/helpers.ts'
import { runCli, startCli, stopAll } from '../../support/process.ts'
import { startJsonServer } from '../../support/side-by-side.ts'

// `restdir db.json` (docs/json-server.md, "Serving a db.json"), run as a real child process.

const folders: string[] = []
test.after(async () => {
  await stopAll()
  for (const folder of folders) await rm(folder, { recursive: true, force: true })
})

test('restdir db.json serves the file, names it in the banner and writes every change back into it', async () => {
  const folder = await makeTempDir('restdir-dbjson-cli-')
  folders.push(folder)
  const file = join(folder, 'db.json')
  await writeFile(file, JSON.stringify({ posts: [{ id: 1, title: 'one' }] }, null, 2))
  const server = await startCli([file, '--port', '0'])
  assert.match(server.stdout(), new RegExp(`store: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(a db\\.json`))
  assert.match(server.stdout(), /json-server 0\.17's URLs: .*\(--json-server; --no-json-server turns it off\)\n/)
  assert.equal((await send(server.port, 'GET', '/posts/1')).json, { id: 1, title: 'one' })
  // json-server's URL semantics are on for a db.json (docs/json-server.md): the next integer id, and a PUT of a missing id is a 404.
  const created = await send(server.port, 'POST', '/posts', { body: { title: 'two' } })
  assert.equal([created.status, created.json], [201, { id: 2, title: 'two' }])
  assert.is((await send(server.port, 'PUT', '/posts/3', { body: { title: 'three' } })).status, 404)
  assert.equal(JSON.parse(await readFile(file, 'utf8')).posts, [{ id: 1, title: 'one' }, { id: 2, title: 'two' }])
  assert.equal(await server.stop(), { code: 0, signal: null })
})

test('the banner lists the file\'s own resources as json-server 0.17.4\'s does, one URL a line in the file\'s order, and no declared /user', async () => {
  const folder = await makeTempDir('restdir-dbjson-cli-')
  folders.push(folder)
  const db = { posts: [{ id: 1 }], user: { name: 'ann' }, comments: [], $schema: './schema.json', playlist: [{ id: 1, userId: 1 }] }
  for (const name of ['restdir.json', 'json-server.json']) await writeFile(join(folder, name), JSON.stringify(db, null, 2))
  const jsonServer = await startJsonServer(join(folder, 'json-server.json'))
  const theirs = [...(/Resources\n([\s\S]*?)\n\n/.exec(jsonServer.stdout())?.[1] ?? '').matchAll(/http:\/\/[^/\s]+(\/\S*)/g)].map((match) => match[1])
  await jsonServer.close()
  const server = await startCli([join(folder, 'restdir.json'), '--port', '0'])
  const banner = server.stdout()
  const ours = [...(/\nresources:\n((?: {2}\S+\n)*)/.exec(banner)?.[1] ?? '').matchAll(/ {2}http:\/\/127\.0\.0\.1:\d+(\/\S*)/g)].map((match) => match[1])
  assert.equal(theirs, ['/posts', '/user', '/comments', '/playlist'], `json-server's banner: ${jsonServer.stdout()}`)
  assert.equal(ours, theirs, banner)
  assert.not.match(banner, /:user_id/)
  assert.equal(await server.stop(), { code: 0, signal: null })
})

test('two stores, or a store argument with --store, are a usage error (exit 2)', async () => {
  const two = await runCli(['a.json', 'b.json'])
  assert.is(two.code, 2)
  assert.match(two.stderr, /restdir takes one store to serve .*not 2: a\.json b\.json/)
  assert.match(two.stderr, /\nrestdir --help for every option\n$/)
  const both = await runCli(['a.json', '--store', 'folder'])
  assert.is(both.code, 2)
  assert.match(both.stderr, /The store is given twice, as a\.json and as --store/)
})

test.run()
