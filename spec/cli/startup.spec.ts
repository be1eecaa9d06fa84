import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { makeTempDir, send } from '../support/helpers.ts'
import { builtCommand, root, startCli, stopAll } from '../support/process.ts'

// What a start loads (docs/speed.md, "Start-up"): a run loads the store it
// serves and not the others, whose modules are most of what a start would
// otherwise compile. The command runs with a module hook (node:module
// register) that writes down every file it resolves, up to its first answer.

/** The files of the repository the command resolved, up to its first answer, as paths from the root (lib/store/open.ts, …); `built`: the package's command, from dist/. */
async function filesLoadedBy(args: string[], built = false): Promise<string[]> {
  const folder = await makeTempDir('restdir-loads-')
  const log = join(folder, 'loaded.txt')
  writeFileSync(log, '')
  writeFileSync(join(folder, 'hooks.mjs'), `import { appendFileSync } from 'node:fs'
let log
export function initialize(data) { log = data.log }
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  appendFileSync(log, resolved.url + '\\n')
  return resolved
}
`)
  writeFileSync(join(folder, 'register.mjs'), `import { register } from 'node:module'
register(${JSON.stringify(pathToFileURL(join(folder, 'hooks.mjs')).href)}, { data: { log: ${JSON.stringify(log)} } })
`)
  const hook = pathToFileURL(join(folder, 'register.mjs')).href
  const cli = await startCli([...args, '--port', '0', '--quiet'], {
    command: built ? [process.execPath, '--import', hook, builtCommand()[1]] : [process.execPath, '--import', 'tsx', '--import', hook, 'bin/restdir.ts'],
  })
  try {
    assert.is((await send(cli.port, 'GET', '/')).status, 200)
  } finally {
    await cli.stop()
  }
  const rootUrl = pathToFileURL(root).href
  const urls = readFileSync(log, 'utf8').split('\n').filter((url) => url.startsWith(rootUrl) && !url.includes('/node_modules/'))
  return [...new Set(urls.map((url) => fileURLToPath(url).slice(root.length).replace(/^\//, '')))].sort()
}

/** The store modules of another kind: each store's folder, save the small helpers the command reads a location with (its URL test, the optional pg's loader). */
function ofStore(kind: 'postgres' | 'json-file', files: string[]): string[] {
  const helpers = ['lib/store/postgres/url.ts', 'lib/store/postgres/pg.ts']
  return files.filter((file) => file.startsWith(`lib/store/${kind}/`) && !helpers.includes(file))
}

test('a store folder is served without loading the PostgreSQL or the db.json store', async () => {
  const files = await filesLoadedBy(['--store', await makeTempDir()])
  // The hook sees the command's files: the folder store is among them.
  assert.ok(files.includes('lib/store/file/file-store.ts'), files.join('\n'))
  assert.equal(ofStore('postgres', files), [])
  assert.equal(ofStore('json-file', files), [])
  // Nor what only some runs use: the importer (--import, a db.json fixture), the API description's builder (?_openapi),
  // a batch's answer (?_batch) and the accounts with their hashing and tokens (--auth).
  const onlyForSome = ['lib/data/import.ts', 'lib/resources/openapi.ts', 'lib/resources/batch.ts', 'lib/resources/accounts.ts', 'lib/auth/bcrypt.ts', 'lib/auth/jwt.ts']
  assert.equal(files.filter((file) => onlyForSome.includes(file)), [])
})

test('a db.json is served by its own store, without loading the PostgreSQL store', async () => {
  const db = join(await makeTempDir(), 'db.json')
  writeFileSync(db, JSON.stringify({ posts: [{ id: 1, title: 'restdir' }] }))
  const files = await filesLoadedBy([db])
  assert.ok(files.includes('lib/store/json-file/json-file-store.ts'), files.join('\n'))
  assert.equal(ofStore('postgres', files), [])
})

test('the package\'s command is one bundle: it loads no module of dist/lib, and no other store\'s code', async () => {
  const files = await filesLoadedBy(['--store', await makeTempDir()], true)
  assert.ok(files.includes('dist/bin/restdir.js'), files.join('\n'))
  // Each module of the build, loaded one by one, costs the start more than its code does (scripts/build.mjs).
  assert.equal(files.filter((file) => file.startsWith('dist/lib/')), [])
  // What only some runs use stays in files of its own, named after their module, loaded on first use.
  const lazy = ['postgres-store', 'json-file-store', 'import', 'openapi', 'batch', 'accounts', 'access', 'family-access']
  assert.equal(files.filter((file) => lazy.some((name) => new RegExp(`^dist/bin/${name}-[A-Z0-9]+\\.js$`).test(file))), [])
  // ...and they are there to load.
  const built = readdirSync(join(root, 'dist', 'bin'))
  for (const name of lazy) assert.ok(built.some((file) => file.startsWith(`${name}-`)), `${name} is a file of its own in dist/bin: ${built.join(', ')}`)
})

test.after(stopAll)
test.run()
