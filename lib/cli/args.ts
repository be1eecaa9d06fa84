import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { RestdirOptions } from '../options.ts'
import { defaultOf, optionOf, optionsTable, type CliOption } from './options-table.ts'
import { UsageError } from './usage.ts'
import { parseValue } from './values.ts'

/** The flags as given: the text of each one given, true or false for each switch. */
export type Flags = Record<string, string | boolean | undefined>

/** The command line: its flags, and the arguments that are not flags (at most one, the store: `restdir db.json`). */
export interface CommandLine {
  flags: Flags
  positionals: string[]
}

/** Reads the command line by the table of options; an unknown flag or a missing value is a UsageError. */
export function readCommandLine(argv: string[]): CommandLine {
  const options: NonNullable<ParseArgsConfig['options']> = {}
  for (const option of optionsTable) {
    options[option.flag] = option.value === 'switch' ? { type: 'boolean', default: false } : { type: 'string' }
  }
  try {
    // No option is `multiple`, so no value is an array.
    const { values, positionals } = parseArgs({ args: argv, options, strict: true, allowPositionals: true })
    return { flags: values as Flags, positionals }
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

export function switchOn(flags: Flags, flag: string): boolean {
  return flags[optionOf(flag).flag] === true
}

/** The text of a flag as given, undefined when it is not (or is a switch). */
export function textOf(flags: Flags, flag: string): string | undefined {
  const text = flags[optionOf(flag).flag]
  return typeof text === 'string' ? text : undefined
}

/**
 * A flag's value: as given, else its environment variable's, else the command's own default;
 * read by its kind. Undefined when none of these is there (the library's default applies).
 */
export function valueOf(flags: Flags, option: CliOption, env: NodeJS.ProcessEnv): string | number | boolean | undefined {
  if (option.value === 'switch') return flags[option.flag] === true
  const given = textOf(flags, option.flag)
  if (given !== undefined) return parseValue(option, given, `--${option.flag}`)
  const fromEnv = option.env === undefined ? undefined : env[option.env]
  if (fromEnv !== undefined) return parseValue(option, fromEnv, option.env!)
  if (option.commandDefault === undefined) return undefined
  return parseValue(option, String(defaultOf(option)), option.env ?? `--${option.flag}`)
}

/** The options for createServer, each flag that lands in them read in the table's order; the store is chosen apart (store-choice.ts). */
export function serverOptions(flags: Flags, env: NodeJS.ProcessEnv): RestdirOptions {
  const options: Record<string, unknown> = {}
  for (const option of optionsTable) {
    if (option.lands === undefined || option.lands === 'store') continue
    // A switch not given leaves the library's default; a `no-` switch given turns its option off.
    if (option.value === 'switch') {
      if (flags[option.flag] === true) options[option.lands] = !option.flag.startsWith('no-')
      continue
    }
    options[option.lands] = valueOf(flags, option, env)
  }
  if (flags['json-server'] === true && flags['no-json-server'] === true) throw new UsageError('--json-server and --no-json-server contradict each other; give one.')
  return options as RestdirOptions
}
