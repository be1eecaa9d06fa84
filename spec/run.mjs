// Runs every spec file with uvu and closes with one plain summary line,
// `tests: N passed, N failed`, that CI reads. Extra arguments narrow the files (a pattern).
import { spawn } from 'node:child_process'

const pattern = process.argv[2] ?? '\\.spec\\.ts$'
const child = spawn(process.execPath, ['node_modules/uvu/bin.js', '-r', 'tsx', 'spec', pattern], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0' },
})

let output = ''
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk)
  output += chunk.toString()
})
child.on('close', (code, signal) => {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '')
  const total = Number(new RegExp(`^\\s*Total:\\s+(\\d+)`, 'm').exec(plain)?.[1] ?? 0)
  const passed = Number(new RegExp(`^\\s*Passed:\\s+(\\d+)`, 'm').exec(plain)?.[1] ?? 0)
  const skipped = Number(new RegExp(`^\\s*Skipped:\\s+(\\d+)`, 'm').exec(plain)?.[1] ?? 0)
  // A crashed run prints no totals: count it as a failure, never as a pass.
  const failed = code === 0 ? total - passed - skipped : Math.max(1, total - passed - skipped)
  process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`)
  process.exit(code === 0 && !signal && failed === 0 && total > 0 ? 0 : 1)
})
