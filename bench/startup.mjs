// Start-up time of the command line: from spawning `restdir --port 0` to its
// "listening on" line, for the built binary (what `npx restdir` runs) and for
// the TypeScript source through tsx (what `npm start` runs). Median of several runs.
//
//   npm run build && node bench/startup.mjs [runs]
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const runs = Number(process.argv[2] ?? 7)
if (!existsSync('dist/bin/restdir.js')) {
  console.error('dist/bin/restdir.js is missing: run `npm run build` first.')
  process.exit(1)
}

const variants = [
  ['built (node bin/restdir.cjs, the package command)', [process.execPath, 'bin/restdir.cjs']],
  ['source (tsx bin/restdir.ts)', [process.execPath, '--import', 'tsx', 'bin/restdir.ts']],
]

function startOnce(command) {
  const store = mkdtempSync(join(tmpdir(), 'restdir-startup-'))
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command[0], [...command.slice(1), '--port', '0', '--quiet', '--store', store], { stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('listening on')) {
        const elapsed = performance.now() - started
        child.once('exit', () => {
          rmSync(store, { recursive: true, force: true })
          resolve(elapsed)
        })
        child.kill('SIGTERM')
      }
    })
    child.once('error', reject)
  })
}

for (const [label, command] of variants) {
  const times = []
  for (let run = 0; run < runs; run++) times.push(await startOnce(command))
  times.sort((a, b) => a - b)
  console.log(`${label}: median ${times[Math.floor(times.length / 2)].toFixed(0)} ms, fastest ${times[0].toFixed(0)} ms (${runs} runs)`)
}
