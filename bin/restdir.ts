#!/usr/bin/env node
// The `restdir` command; bin/restdir.cjs starts its build. The command itself is lib/cli/.
import { main } from '../lib/cli/main.ts'

await main(process.argv.slice(2))
