// Runs the spec files with uvu and closes with one plain summary line,
// `tests: N passed, N failed`, that CI reads. An extra argument narrows the
// files: a pattern over their paths below spec/ (`crash`, `every-store/`).
//
// spec/ mirrors lib/ (spec/http/ for lib/http/, spec/store/file/ for
// lib/store/file/, …), with the helpers in spec/support/. The specs of
// spec/every-store/ run three times: on a FileStore in a temporary folder, on
// a MemoryStore, and on a PostgresStore (one PostgreSQL server for the pass,
// see spec/support/postgres.ts; each test store gets a fresh schema), so the
// whole HTTP API must answer the same on every store. The others run once.
// The specs of users and playlists run once more with the seed's families
// declared in a file (--resources, spec/support/fixtures/seed-resources.json),
// so that a declaration read from JSON keeps every rule the default keeps.
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'

const pattern = new RegExp(process.argv[2] ?? '\\.spec\\.ts$')
const specs = readdirSync('spec', { recursive: true })
  .map((name) => name.split('\\').join('/'))
  .filter((name) => name.endsWith('.spec.ts') && !name.startsWith('support/') && pattern.test(name))
  .sort()
const everyStore = specs.filter((name) => name.startsWith('every-store/'))

const passes = [{ label: 'file store', files: specs, store: 'file' }]
if (everyStore.length > 0) passes.push({ label: 'memory store', files: everyStore, store: 'memory' })
if (everyStore.length > 0) passes.push({ label: 'PostgreSQL store', files: everyStore, store: 'postgres' })
const declaredFromFile = specs.filter((name) => /^(every-store\/(users|playlists)|resources\/declared)\.spec\.ts$/.test(name))
if (declaredFromFile.length > 0) {
  passes.push({ label: 'file store, families declared in a file', files: declaredFromFile, store: 'file', env: { RESTDIR_TEST_RESOURCES: 'spec/support/fixtures/seed-resources.json' } })
}

let passed = 0
let failed = 0
let skipped = 0
let allGood = specs.length > 0
// A long log may be read from its end only: each failure is told again
// there, under the pass it happened in, just before the closing line.
const failures = []
for (const pass of passes) {
  process.stdout.write(`\n== ${pass.label}: ${pass.files.length} spec file${pass.files.length === 1 ? '' : 's'}\n`)
  const result = pass.store === 'postgres' ? await runOnPostgres(pass.files) : await runUvu(pass.files, pass.store, pass.env)
  passed += result.passed
  failed += result.failed
  skipped += result.skipped
  allGood &&= result.ok
  if (result.failures.length > 0) failures.push(`== ${pass.label}\n${result.failures.join('\n')}`)
}
if (failures.length > 0) process.stdout.write(`\nfailures, again:\n${failures.join('\n')}\n`)
process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`)
process.exit(allGood && failed === 0 ? 0 : 1)

/** Runs the files against one PostgreSQL server started for the pass, stopped at its end whatever happens. */
async function runOnPostgres(files) {
  const { register } = await import('tsx/esm/api')
  register()
  const { startTestPostgres } = await import('./support/postgres.ts')
  let postgres
  try {
    postgres = await startTestPostgres()
  } catch (error) {
    process.stdout.write(`PostgreSQL could not be started for this pass: ${error?.message ?? error}\n`)
    return { passed: 0, failed: 1, skipped: 0, ok: false, failures: ['PostgreSQL could not be started'] }
  }
  // Ctrl+C or a kill ends the run, never leaving the server running.
  const stopOnSignal = (signal) => postgres.dispose().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143))
  process.once('SIGINT', stopOnSignal)
  process.once('SIGTERM', stopOnSignal)
  try {
    return await runUvu(files, 'postgres', { RESTDIR_TEST_POSTGRES_URL: postgres.url })
  } finally {
    process.off('SIGINT', stopOnSignal)
    process.off('SIGTERM', stopOnSignal)
    await postgres.dispose().catch((error) => process.stdout.write(`PostgreSQL did not stop cleanly: ${error?.message ?? error}\n`))
  }
}

function runUvu(files, store, env = {}) {
  const only = `^(?:${files.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`
  // The specs load as ES modules, as the package's own files do: lib/ imports some modules only when a
  // run uses them (docs/speed.md, "Start-up"), and under `uvu -r tsx` the specs' require() and lib's
  // import() would each load a copy of a module, so that an error or a store of one copy would not
  // be an instance of the other's class. Without -r, uvu imports each spec file.
  const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'spec', only], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, FORCE_COLOR: '0', RESTDIR_TEST_STORE: store, ...env },
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    process.stdout.write(chunk)
    output += chunk.toString()
  })
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '')
      const count = (label) => Number(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'm').exec(plain)?.[1] ?? 0)
      const total = count('Total')
      const passedHere = count('Passed')
      const skippedHere = count('Skipped')
      // uvu's Total counts the tests that ran; skipped ones are counted apart.
      // A crashed run prints no totals: count it as a failure, never as a pass.
      const failedHere = code === 0 ? total - passedHere : Math.max(1, total - passedHere)
      resolve({ passed: passedHere, failed: failedHere, skipped: skippedHere, ok: code === 0 && !signal && total > 0, failures: failuresIn(plain, code, signal) })
    })
  })
}

/**
 * uvu's own account of each failed test: the ` FAIL ` line with the message
 * and the first lines of its stack. A run that ended without totals is named
 * by its exit, since it printed no such line for what stopped it.
 */
function failuresIn(plain, code, signal) {
  const lines = plain.split('\n')
  const told = []
  let file = ''
  lines.forEach((line, at) => {
    if (/^\S+\.spec\.ts$/.test(line.trim())) file = line.trim()
    if (/^\s*FAIL /.test(line)) told.push(`${file}\n${lines.slice(at, at + 8).join('\n')}`)
  })
  if (told.length === 0 && (code !== 0 || signal)) told.push(`  the run ended with ${signal ?? `exit code ${code}`} and named no failed test`)
  return told
}
