#!/usr/bin/env node
'use strict'
// The `restdir` command of the installed package: it starts the built CLI
// (dist/bin/restdir.js) after one thing only CommonJS can do in time.
//
// Node runs file-system calls, fsync among them, on a pool of threads whose
// size it reads from UV_THREADPOOL_SIZE once, when the pool starts; an ES
// module entry point starts it while loading, before any of its code runs.
// With --sync every write waits for fsyncs that take milliseconds, so Node's
// default of 4 threads lets only 4 be in flight, and 100 concurrent writes
// queue behind them. 32 lets the disk commit many together (bench/RESULTS.md).
// Without --sync a wider pool is slower on a small machine, so it is left alone,
// and a size the user chose is always kept.
//
// Run from a clone of the repository (`npx restdir` inside it, or `npm link`),
// it first builds dist/ when dist/ is missing or older than a source file, so
// the command never runs stale code or fails on a missing build (docs/library.md,
// "Building the package"). An installed package holds no sources and skips this.
const { pathToFileURL } = require('node:url')
const { join } = require('node:path')
const { existsSync, readdirSync, statSync } = require('node:fs')
const { spawnSync } = require('node:child_process')

const root = join(__dirname, '..')
const built = join(root, 'dist', 'bin', 'restdir.js')

if (existsSync(join(root, 'tsconfig.build.json'))) buildIfStale()

const syncing = process.argv.slice(2).includes('--sync')
if (syncing && !process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = '32'

import(pathToFileURL(built).href)

function buildIfStale() {
  const builtAt = existsSync(built) ? statSync(built).mtimeMs : -1
  const sources = ['lib', 'bin'].flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true }).filter((name) => String(name).endsWith('.ts')).map((name) => join(root, folder, String(name))),
  )
  if (builtAt >= 0 && sources.every((source) => statSync(source).mtimeMs <= builtAt)) return
  const tools = [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), join(root, 'node_modules', 'esbuild', 'package.json')]
  if (!tools.every((tool) => existsSync(tool))) fail(`dist/ is ${builtAt < 0 ? 'missing' : 'older than the sources'}, and TypeScript and esbuild are not installed to build it: run \`npm ci\` in ${root}`)
  process.stderr.write('restdir: building dist/ from the sources (npm run build)\n')
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
  if (build.status !== 0) fail(`the build failed: fix the errors above, or run \`npm run build\` in ${root}`)
}

function fail(message) {
  process.stderr.write(`restdir: ${message}\n`)
  process.exit(1)
}
