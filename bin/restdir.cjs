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
const { pathToFileURL } = require('node:url')
const { join } = require('node:path')

const syncing = process.argv.slice(2).includes('--sync')
if (syncing && !process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = '32'

import(pathToFileURL(join(__dirname, '..', 'dist', 'bin', 'restdir.js')).href)
