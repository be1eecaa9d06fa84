import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { chmod, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { explicitSecret, MIN_SECRET_LENGTH, readOrCreateSecret, resolveSecret, SecretError, secretPathFor } from '../../lib/auth/secret.ts'
import { makeTempDir } from '../support/helpers.ts'
import { root } from '../support/process.ts'

// A store's signing secret (lib/auth/secret.ts): made once, readable by its
// owner only, the same for every instance that starts at once, read back on the
// next start; refused with a message when anyone else could read or swap it.

let folder: string

test.before.each(async () => {
  folder = await makeTempDir('restdir-secret-')
})

test.after.each(async () => {
  await rm(folder, { recursive: true, force: true })
})

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    assert.instance(error, SecretError)
    return (error as Error).message
  }
  assert.unreachable('the secret was accepted')
  return ''
}

test('a store folder keeps its secret inside as @secret; a db.json beside it as .db.json.secret', () => {
  assert.is(secretPathFor({ folder: '/srv/store' }), join('/srv/store', '@secret'))
  assert.is(secretPathFor({ file: '/srv/app/db.json' }), join('/srv/app', '.db.json.secret'))
})

test('made at first use: 32 random bytes, mode 0600 whatever the umask, and the same secret on every later start', async () => {
  const path = secretPathFor({ file: join(folder, 'db.json') })
  const umask = process.umask(0)
  let first: Buffer
  try {
    first = await readOrCreateSecret(path)
  } finally {
    process.umask(umask)
  }
  assert.is((await stat(path)).mode & 0o777, 0o600)
  assert.match(first.toString(), /^[0-9a-f]{64}$/)
  assert.equal(await readOrCreateSecret(path), first)
  assert.equal(await readdir(folder), ['.db.json.secret'], 'nothing else is left beside it')
  const other = await readOrCreateSecret(join(folder, 'other.secret'))
  assert.not.equal(other, first, 'each store its own')
})

test('twenty calls at once in one process make one secret, and all of them read it', async () => {
  const path = join(folder, '@secret')
  const secrets = await Promise.all(Array.from({ length: 20 }, () => readOrCreateSecret(path)))
  const text = (await readFile(path, 'utf8')).trim()
  assert.equal(new Set(secrets.map(String)), new Set([text]))
  assert.equal(await readdir(folder), ['@secret'])
})

test('two processes starting together on the same thirty stores agree on each store\'s secret', async () => {
  const url = pathToFileURL(join(root, 'lib/auth/secret.ts')).href
  const script = join(folder, 'start.mjs')
  // Both wait for the same moment, then race to make the secret of every store, all at once.
  await writeFile(script, `
    const { readOrCreateSecret } = await import(${JSON.stringify(url)})
    const [startAt, ...paths] = process.argv.slice(2)
    while (Date.now() < Number(startAt)) {}
    const secrets = await Promise.all(paths.map((path) => readOrCreateSecret(path)))
    process.stdout.write(JSON.stringify(secrets.map(String)))
  `)
  const stores = Array.from({ length: 30 }, (_, index) => join(folder, `store-${index}`))
  await Promise.all(stores.map((store) => mkdir(store)))
  const paths = stores.map((store) => secretPathFor({ folder: store }))
  const startAt = Date.now() + 4000
  const outputs = await Promise.all([1, 2].map(() => new Promise<string[]>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, String(startAt), ...paths], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code === 0) resolve(JSON.parse(stdout) as string[])
      else reject(new Error(`exit ${code}: ${stderr}`))
    })
  })))
  const stored = await Promise.all(paths.map(async (path) => (await readFile(path, 'utf8')).trim()))
  assert.equal(outputs[0], stored)
  assert.equal(outputs[1], stored)
  for (const store of stores) assert.equal(await readdir(store), ['@secret'])
})

test('a secret file that others may read or write is refused with the chmod to run, and left as it was', async () => {
  const path = join(folder, '.db.json.secret')
  await writeFile(path, `${'a'.repeat(64)}\n`)
  for (const mode of [0o644, 0o640, 0o604, 0o620, 0o602, 0o660]) {
    await chmod(path, mode)
    const message = await refusal(readOrCreateSecret(path))
    assert.match(message, `can be read or written by others (mode 0${mode.toString(8)}); only its owner may: chmod 600 ${path}`)
    assert.is(await readFile(path, 'utf8'), `${'a'.repeat(64)}\n`)
  }
  await chmod(path, 0o600)
  assert.is((await readOrCreateSecret(path)).toString(), 'a'.repeat(64))
  await chmod(path, 0o400)
  assert.is((await readOrCreateSecret(path)).toString(), 'a'.repeat(64), 'read-only for its owner is fine')
})

test('a link, a folder, or a file too short to be a secret is refused, never followed, replaced or used', async () => {
  const target = join(folder, 'elsewhere')
  await writeFile(target, 'b'.repeat(64), { mode: 0o600 })
  const link = join(folder, 'linked.secret')
  await symlink(target, link)
  assert.match(await refusal(readOrCreateSecret(link)), /is a symbolic link/)
  const dangling = join(folder, 'dangling.secret')
  await symlink(join(folder, 'nowhere'), dangling)
  assert.match(await refusal(readOrCreateSecret(dangling)), /is a symbolic link/)
  assert.equal((await readdir(folder)).sort(), ['dangling.secret', 'elsewhere', 'linked.secret'], 'nothing made through the dangling link')
  const directory = join(folder, 'directory.secret')
  await mkdir(directory, { mode: 0o700 })
  assert.match(await refusal(readOrCreateSecret(directory)), /not a regular file/)
  const short = join(folder, 'short.secret')
  await writeFile(short, 'x'.repeat(MIN_SECRET_LENGTH - 1), { mode: 0o600 })
  assert.match(await refusal(readOrCreateSecret(short)), /holds 31 characters; it must have at least 32/)
  assert.match(await refusal(readOrCreateSecret(join(folder, 'no-such-folder', '@secret'))), /cannot be made \(ENOENT\)/)
})

test('an explicit secret is used as given and no file is touched; one under 32 characters is refused', async () => {
  const path = join(folder, '@secret')
  const given = 'é'.repeat(MIN_SECRET_LENGTH)
  assert.equal(await resolveSecret({ explicit: given, path }), Buffer.from(given))
  assert.equal(await readdir(folder), [])
  assert.throws(() => explicitSecret('short'), (error: Error) => error instanceof SecretError && /is 5 characters long; it must have at least 32/.test(error.message))
  assert.match(await refusal(resolveSecret({ explicit: 'x'.repeat(31), path })), /at least 32/)
  assert.equal(await readdir(folder), [])
  const made = await resolveSecret({ path })
  assert.equal(await resolveSecret({ path }), made, 'without one, the file is made and read back')
})

test.run()
