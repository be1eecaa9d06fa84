import { fillIn, flagsWithPlaceholder, optionsTable, type CliOption } from './options-table.ts'

/** A mistake on the command line: what is wrong, where to read more, and exit status 2 (docs/cli.md, "Mistakes on the command line"). */
export class UsageError extends Error {}

/** Commands a first reader can start from, as json-server's --help shows its own. */
const examples: Array<[string, string]> = [
  ['restdir db.json', 'serve db.json as json-server does'],
  ['restdir --watch db.json -p 4000', "json-server's first command, as it is"],
  ['restdir db.json -s ./dist --ro', 'a built front end beside a read-only API'],
  ['restdir db.json -c json-server.json', 'options from a file; the command line wins'],
  ['restdir --store ./data', 'a folder of documents, each at its own URL'],
]

/** --help's text, from the table of options: the general ones, examples, then the limits, which few need. */
export function usageText(): string {
  const width = Math.max(...examples.map(([command]) => command.length)) + 2
  return 'Usage: restdir [options] [STORE]\n\n' +
    'Serves JSON documents from a folder, each at its own URL.\n' +
    'STORE, as --store: a json-server db.json or db.json5 (every change is written back into it),\n' +
    'a folder or a postgres:// URL; `restdir db.json` serves db.json as json-server does.\n' +
    'An http(s):// URL or a seed.js is loaded once and served from memory.\n\n' +
    'Options:\n' +
    section('options', 21) +
    '\nExamples:\n' +
    examples.map(([command, what]) => `  ${command.padEnd(width)}${what}\n`).join('') +
    '\nLimits, rarely changed (TIME is 500ms, 10s, 2m; a bare number is milliseconds):\n' +
    section('limits', 24)
}

/** Two lines, not the whole usage, so the mistake is what stays on the screen. */
export function exitWithUsage(message: string): never {
  process.stderr.write(`restdir: ${message}\nrestdir --help for every option\n`)
  process.exit(2)
}

/**
 * One line per option (and one more for each further line of its help), the help starting at
 * `column`; the few flags too long for it line up with each other four columns further. In a
 * section with short flags, the long ones line up: `-p, --port N` above `    --host HOST`.
 */
function section(name: CliOption['section'], column: number): string {
  const options = optionsTable.filter((option) => option.section === name)
  const indent = options.some((option) => option.short) ? '    ' : ''
  return options
    .map((option) => {
      const flag = option.short ? flagsWithPlaceholder(option) : indent + flagsWithPlaceholder(option)
      const width = flag.length + 2 <= column ? column : column + 4
      const [first, ...more] = [...fillIn(option.usage, option).split('\n'), ...alsoWritten(option)]
      return `  ${flag.padEnd(width)}${first}\n` + more.map((line) => `${' '.repeat(2 + width)}${line}\n`).join('')
    })
    .join('')
}

/** json-server's other spellings of a flag, on a line of their own: `also --read-only, --ro`. */
function alsoWritten(option: CliOption): string[] {
  return option.aliases ? [`also ${option.aliases.map((alias) => `--${alias}`).join(', ')}`] : []
}
