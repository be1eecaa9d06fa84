import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { Flags } from './args.ts'
import { nearestWord } from './near-miss.ts'
import { longNames, optionNamed, optionsTable, type CliOption } from './options-table.ts'
import { UsageError } from './usage.ts'

/** The file json-server reads its options from when it is there and no --config names another. */
export const defaultConfigFile = 'json-server.json'

/** Flags that make no sense in a file: they do not configure a server. */
const commandOnly = new Set(['config', 'help', 'version'])

/**
 * The flags with those of a config file added (docs/json-server.md, "A config file"): the file of
 * --config, else `./json-server.json` when it exists, as json-server 0.17 reads it. The file is a
 * JSON object of options by their long names (`"port"`, `"read-only"`), json-server's camelCase
 * (`"readOnly"`), an alias (`"ro"`) or a short form (`"p"`); a flag on the command line wins.
 */
export function withConfigFile(flags: Flags, cwd: string): { flags: Flags; file?: string } {
  const named = flags.config
  const file = typeof named === 'string' ? named : existsSync(path.join(cwd, defaultConfigFile)) ? defaultConfigFile : undefined
  if (file === undefined) return { flags }
  const merged: Flags = { ...flags }
  for (const [flag, value] of Object.entries(readConfigFile(file, cwd))) {
    if (merged[flag] === undefined || merged[flag] === false) merged[flag] = value
  }
  return { flags: merged, file: path.resolve(cwd, file) }
}

function readConfigFile(file: string, cwd: string): Flags {
  let text: string
  try {
    text = readFileSync(path.resolve(cwd, file), 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(`--config ${file}: ${code === 'ENOENT' ? 'there is no such file' : `cannot be read (${code})`}.`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}.`)
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new UsageError(`${file} must hold a JSON object of options, such as { "port": 4000 }.`)
  const flags: Flags = {}
  for (const [key, value] of Object.entries(json)) {
    const option = optionOfKey(key)
    if (option === undefined || commandOnly.has(option.flag)) {
      const meant = nearestWord(key, longNames().filter((name) => !commandOnly.has(name)))
      throw new UsageError(`${file}: "${key}" is not an option${meant === undefined ? '.' : `; did you mean "${meant}"?`}`)
    }
    flags[option.flag] = flagValue(option, key, value, file)
  }
  return flags
}

/** `port`, `read-only`, `readOnly`, `ro`, `p`: as yargs, which json-server reads its file with, takes each. */
function optionOfKey(key: string): CliOption | undefined {
  const kebab = key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
  return optionNamed(key) ?? optionNamed(kebab) ?? optionsTable.find((option) => option.short === key)
}

/** A switch takes true or false; a repeatable flag a text or a list of them; another flag a text or a number. */
function flagValue(option: CliOption, key: string, value: unknown, file: string): Flags[string] {
  if (option.value === 'switch') {
    if (typeof value !== 'boolean') throw new UsageError(`${file}: "${key}" is a switch; give it true or false.`)
    return value
  }
  const texts = option.repeatable && Array.isArray(value) ? value : [value]
  if (texts.length === 0 || !texts.every((text) => typeof text === 'string' || (typeof text === 'number' && Number.isFinite(text)))) {
    throw new UsageError(`${file}: "${key}" takes ${option.repeatable ? 'a text or a list of texts' : 'a text or a number'}, as --${option.flag} does.`)
  }
  const strings = texts.map(String)
  return option.repeatable ? strings : strings[0]
}
