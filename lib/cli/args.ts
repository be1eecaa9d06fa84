import type { RestdirOptions } from '../options.ts'
import { nearestWord } from './near-miss.ts'
import { defaultOf, longNames, optionNamed, optionOf, optionsTable, optionWritten, type CliOption } from './options-table.ts'
import { UsageError } from './usage.ts'
import { parseValue, whatItTakes } from './values.ts'

/** The flags as given: the text of each one given (every text, in order, of a repeatable one), true or false for each switch, the list of a `files` flag. */
export type Flags = Record<string, string | string[] | boolean | undefined>

/** The command line: its flags, and the arguments that are not flags (at most one, the store: `restdir db.json`). */
export interface CommandLine {
  flags: Flags
  positionals: string[]
}

/**
 * Reads the command line by the table of options: `--port 4000`, `--port=4000`, `-p 4000`, `-p4000`;
 * after `--` every argument is a store. A mistake is a UsageError in restdir's words (docs/cli.md,
 * "Mistakes on the command line"): an unknown flag with the one it most likely meant, a value missing
 * with what the flag takes. A flag given twice keeps its last value, a repeatable one (`-s a -s b`) each.
 */
export function readCommandLine(argv: string[]): CommandLine {
  const flags: Flags = {}
  for (const option of optionsTable) if (option.value === 'switch' || option.value === 'version') flags[option.flag] = false
  const positionals: string[] = []
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]
    if (arg === '--') {
      positionals.push(...argv.slice(index + 1))
      break
    }
    if (!looksLikeFlag(arg)) {
      positionals.push(arg)
      continue
    }
    const { written, inline } = splitFlag(arg)
    const longWithOneDash = /^-([a-z][a-z-]+)(=.*)?$/.exec(arg)?.[1]
    if (longWithOneDash !== undefined && optionNamed(longWithOneDash) !== undefined) {
      throw new UsageError(`${arg}: a long option takes two dashes, as --${longWithOneDash}.`)
    }
    const option = optionWritten(written)
    if (option === undefined) throw new UsageError(unknownFlag(written))
    if (option.value === 'switch') {
      if (inline === undefined) flags[option.flag] = true
      else if (written.startsWith('--')) throw new UsageError(`${written} takes no value (it was given "${inline}").`)
      else throw new UsageError(`${arg}: give short flags one at a time, as ${written} -${inline.replace(/^=/, '')[0]}.`)
      continue
    }
    if (option.value === 'files') {
      index = readFiles(argv, index, written, inline, flags, option)
      continue
    }
    if (inline !== undefined) {
      setText(flags, option, inline)
      continue
    }
    // `--json-server 1`, but `--json-server db.json`: the next argument is the version only when it looks like one.
    if (option.value === 'version') {
      const next = argv[index + 1]
      if (next !== undefined && /^\d+(\.\d+)*$/.test(next)) flags[option.flag] = argv[++index]
      else flags[option.flag] = true
      continue
    }
    // The next argument is the value, a negative number too (`--delay -5`), which the flag's own rule then refuses.
    const next = argv[index + 1]
    if (next === undefined || looksLikeFlag(next)) throw new UsageError(`${written} needs a value: ${whatItTakes(option)}.`)
    setText(flags, option, next)
    index++
  }
  return { flags, positionals }
}

/**
 * The files of a `files` flag, added to those it was given before: its inline value or the arguments after it,
 * up to the next flag, as json-server reads `-m a.js b.js`; a `.json` file is the store (`restdir -m a.js db.json`),
 * never a module. Answers the index of the last argument taken.
 */
function readFiles(argv: string[], index: number, written: string, inline: string | undefined, flags: Flags, option: CliOption): number {
  const files = Array.isArray(flags[option.flag]) ? (flags[option.flag] as string[]) : []
  let last = index
  if (inline !== undefined) files.push(inline)
  else while (last + 1 < argv.length && !looksLikeFlag(argv[last + 1]) && !/\.json5?$/i.test(argv[last + 1])) files.push(argv[++last])
  if (files.length === 0) throw new UsageError(`${written} needs a value: ${whatItTakes(option)}.`)
  flags[option.flag] = files
  return last
}

/** A repeatable flag adds its value to those given before it; another keeps the last. */
function setText(flags: Flags, option: CliOption, text: string): void {
  const before = flags[option.flag]
  flags[option.flag] = option.repeatable ? [...(Array.isArray(before) ? before : []), text] : text
}

/** `-p`, `--port`, `--port=4000`; not `-` alone (a name like any other) nor a negative number. */
function looksLikeFlag(arg: string): boolean {
  return arg.length > 1 && arg.startsWith('-') && !/^-\d/.test(arg)
}

/** `--port=4000` → `--port` and `4000`; `-p4000` and `-p=4000` → `-p` and `4000`. */
function splitFlag(arg: string): { written: string; inline?: string } {
  if (arg.startsWith('--')) {
    const equals = arg.indexOf('=')
    return equals < 0 ? { written: arg } : { written: arg.slice(0, equals), inline: arg.slice(equals + 1) }
  }
  const rest = arg.slice(2)
  return rest === '' ? { written: arg.slice(0, 2) } : { written: arg.slice(0, 2), inline: rest.replace(/^=/, '') }
}

/** `--prot is not an option; did you mean --port?`; an unknown short flag is shown the short ones. */
function unknownFlag(written: string): string {
  if (!written.startsWith('--')) {
    const shorts = optionsTable.filter((option) => option.short).map((option) => `-${option.short}`).join(' ')
    return `${written} is not an option; the short ones are ${shorts}.`
  }
  const meant = nearestWord(written.slice(2), longNames())
  return meant === undefined ? `${written} is not an option.` : `${written} is not an option; did you mean --${meant}?`
}

export function switchOn(flags: Flags, flag: string): boolean {
  return flags[optionOf(flag).flag] === true
}

/** The text of a flag as given (the last, of a repeatable one), undefined when it is not (or is a switch). */
export function textOf(flags: Flags, flag: string): string | undefined {
  const text = flags[optionOf(flag).flag]
  return Array.isArray(text) ? text.at(-1) : typeof text === 'string' ? text : undefined
}

/** Every text of a repeatable flag, in the order given; none when it is not given. */
export function textsOf(flags: Flags, flag: string): string[] {
  const text = flags[optionOf(flag).flag]
  return Array.isArray(text) ? text : typeof text === 'string' ? [text] : []
}

/**
 * A flag's value: as given, else its environment variable's, else the command's own default;
 * read by its kind. Undefined when none of these is there (the library's default applies).
 */
export function valueOf(flags: Flags, option: CliOption, env: NodeJS.ProcessEnv): string | number | boolean | undefined {
  if (option.value === 'switch') return flags[option.flag] === true
  if (option.value === 'version' && typeof flags[option.flag] === 'boolean') return flags[option.flag] === true
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
    if (option.repeatable) {
      const texts = textsOf(flags, option.flag).map((text) => parseValue(option, text, `--${option.flag}`))
      if (texts.length > 0) options[option.lands] = texts
      continue
    }
    // A version switch not given leaves the library's default too.
    if (option.value === 'version' && flags[option.flag] === false) continue
    // Two flags for one option (`--no-cors` for `--cors`): the one given wins over the other's default.
    if (flags[option.flag] === undefined && options[option.lands] !== undefined) continue
    options[option.lands] = valueOf(flags, option, env)
  }
  if (flags['json-server'] !== undefined && flags['json-server'] !== false && flags['no-json-server'] === true) throw new UsageError('--json-server and --no-json-server contradict each other; give one.')
  if (flags['no-cors'] === true && textOf(flags, 'cors') !== undefined) throw new UsageError('--cors and --no-cors contradict each other; give one.')
  return options as RestdirOptions
}
