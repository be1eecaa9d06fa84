// Runs the spec files with uvu and closes with one plain summary line,
// `tests: N passed, N failed`, that CI reads. An extra argument narrows the files (a pattern).
//
// Every spec that gets its store from the helpers runs twice: once on a
// FileStore in a temporary folder, once on a MemoryStore, so the whole HTTP
// API must answer the same on both stores.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

const pattern = new RegExp(process.argv[2] ?? '\\.spec\\.ts$')
const specs = readdirSync('spec').filter((name) => name.endsWith('.spec.ts') && pattern.test(name)).sort()
// A spec takes part when some server or store of it is the helpers' choice (a
// `startServer(...)` without `store:`, or `openTestStore()`); specs whose servers
// all bring their own store, and browser specs (they check the page), run once.
const apiSpecs = specs.filter((name) => {
  const source = readFileSync(`spec/${name}`, 'utf8')
  return /\b(startServer\((?![^)]*\bstore:)|openTestStore\()/.test(source) && !source.includes("from 'playwright-core'")
})

const passes = [{ label: 'file store', files: specs, store: 'file' }]
if (apiSpecs.length > 0) passes.push({ label: 'memory store', files: apiSpecs, store: 'memory' })

let passed = 0
let failed = 0
let skipped = 0
let allGood = specs.length > 0
for (const pass of passes) {
  process.stdout.write(`\n== ${pass.label}: ${pass.files.length} spec file${pass.files.length === 1 ? '' : 's'}\n`)
  const result = await runUvu(pass.files, pass.store)
  passed += result.passed
  failed += result.failed
  skipped += result.skipped
  allGood &&= result.ok
}
process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`)
process.exit(allGood && failed === 0 ? 0 : 1)

function runUvu(files, store) {
  const only = `^(?:${files.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`
  const child = spawn(process.execPath, ['node_modules/uvu/bin.js', '-r', 'tsx', 'spec', only], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, FORCE_COLOR: '0', RESTDIR_TEST_STORE: store },
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
      resolve({ passed: passedHere, failed: failedHere, skipped: skippedHere, ok: code === 0 && !signal && total > 0 })
    })
  })
}
