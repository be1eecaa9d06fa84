// Builds the package (docs/library.md, "Building the package"): `npm run build`.
//
// dist/lib is the TypeScript compiled file for file, with its types: what an
// app imports. dist/bin/restdir.js, the command, is one bundle of all it runs
// at start (docs/speed.md, "Start-up"): a start that loads a hundred modules
// one by one spends about as long in Node's module loader as in everything
// else it does. What only some runs use (another store, the accounts, a
// batch's answer) stays in files of its own beside it, loaded on first use;
// the hashing thread of the accounts is one more entry, so that it sits
// beside the code that starts it (lib/auth/hash-pool.ts).
import { rmSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
rmSync(join(root, 'dist'), { recursive: true, force: true })
const compiled = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
if (compiled.status !== 0) process.exit(compiled.status ?? 1)

const { build } = await import('esbuild')
await build({
  absWorkingDir: root,
  entryPoints: { restdir: 'bin/restdir.ts', 'hash-worker': 'lib/auth/hash-worker.ts' },
  outdir: 'dist/bin',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
})
