import { fillIn, flagWithPlaceholder, optionsTable, type CliOption } from './options-table.ts'

/** A mistake on the command line: the message, then the usage, and exit status 2 (docs/cli.md). */
export class UsageError extends Error {}

/** --help's text, from the table of options: the general ones first, then the limits. */
export function usageText(): string {
  return 'Usage: restdir [options] [STORE]\n\n' +
    'Serves JSON documents from a folder, each at its own URL.\n' +
    'STORE, as --store: a json-server db.json (every change is written back into it),\n' +
    'a folder or a postgres:// URL; `restdir db.json` serves db.json as json-server does.\n\n' +
    'Options:\n' +
    section('options', 17) +
    '\nLimits (TIME is 500ms, 10s, 2m; a bare number is milliseconds):\n' +
    section('limits', 24)
}

export function exitWithUsage(message: string): never {
  process.stderr.write(`restdir: ${message}\n\n${usageText()}`)
  process.exit(2)
}

/**
 * One line per option (and one more for each further line of its help), the help starting at
 * `column`; the few flags too long for it line up with each other four columns further.
 */
function section(name: CliOption['section'], column: number): string {
  return optionsTable
    .filter((option) => option.section === name)
    .map((option) => {
      const flag = flagWithPlaceholder(option)
      const width = flag.length + 2 <= column ? column : column + 4
      const [first, ...more] = fillIn(option.usage, option).split('\n')
      return `  ${flag.padEnd(width)}${first}\n` + more.map((line) => `${' '.repeat(2 + width)}${line}\n`).join('')
    })
    .join('')
}
