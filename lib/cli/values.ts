import { normalizePrefix } from '../options.ts'
import type { CliOption } from './options-table.ts'
import { UsageError } from './usage.ts'

/**
 * Reads a flag's text as its kind of value (options-table.ts) or throws a UsageError
 * that says what is wrong. `source` names where the text came from (`--port`, or
 * `PORT`), so the message points at what to fix.
 */
export function parseValue(option: CliOption, text: string, source: string): string | number {
  switch (option.value) {
    case 'port':
      if (!/^\d+$/.test(text) || Number(text) > 65535) throw new UsageError(`${source} "${text}" is not a port number (0-65535).`)
      return Number(text)
    case 'prefix':
      // The library's own prefix rule: a prefix it refuses is a usage error.
      try {
        return normalizePrefix(text, source)
      } catch (error) {
        throw new UsageError((error as Error).message)
      }
    case 'count':
      if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`${source} "${text}" is not a whole number of at least 1.`)
      return Number(text)
    case 'size':
      return parseSize(text, source)
    case 'positive-size': {
      const size = parseSize(text, source)
      if (size < 1) throw new UsageError(`${source} "${text}" is not a size of at least one byte.`)
      return size
    }
    case 'duration':
      return parseDuration(text, source)
    case 'delay':
      if (!/^\d+$/.test(text) || Number(text) > 600_000) throw new UsageError(`${source} "${text}" is not a number of milliseconds (0-600000).`)
      return Number(text)
    case 'secret':
      if (text.trim() === '') throw new UsageError(`--${option.flag} (or $${option.env}) must not be empty.`)
      return text
    case 'version':
      // json-server's two lines: 0.17 (npm's `json-server`) and 1.0 (docs/json-server.md, "json-server 1.0's mode").
      if (/^0\.17(\.\d+)?$/.test(text)) return '0.17'
      if (/^1(\.0)?(\.\d+)?$/.test(text)) return '1'
      throw new UsageError(`${source} "${text}" is not a json-server version restdir answers as: 0.17 or 1.`)
    case 'text':
    case 'files':
    case 'switch':
      return text
  }
}

/** `1048576`, `512kb`, `2mb`, `1gb` → bytes. */
function parseSize(text: string, source: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(text.trim())
  if (!match) throw new UsageError(`${source} "${text}" is not a size such as 512kb or 2mb.`)
  const units: Record<string, number> = { b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 }
  return Math.floor(Number(match[1]) * units[(match[2] ?? 'b').toLowerCase()])
}

/** `500ms`, `10s`, `2m`; a bare number is milliseconds. */
function parseDuration(text: string, source: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/i.exec(text.trim())
  if (!match || Number(match[1]) <= 0) throw new UsageError(`${source} "${text}" is not a duration such as 500ms, 10s or 2m.`)
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000 }
  return Math.ceil(Number(match[1]) * units[(match[2] ?? 'ms').toLowerCase()])
}

/** What a flag takes, in words, for `--port needs a value: …` (docs/cli.md, "Mistakes on the command line"). */
export function whatItTakes(option: CliOption): string {
  switch (option.value) {
    case 'port': return 'a port number, 0 for any free one'
    case 'prefix': return 'a path, such as /api'
    case 'count': return 'a whole number of at least 1'
    case 'size':
    case 'positive-size': return 'a size, such as 512kb or 2mb'
    case 'duration': return 'a time, such as 500ms, 10s or 2m'
    case 'delay': return 'a number of milliseconds (0-600000)'
    case 'secret': return option.takes ?? 'the secret every write must send'
    case 'version': return 'json-server\'s version, 0.17 or 1'
    case 'text':
    case 'files':
    case 'switch': return option.takes ?? option.placeholder ?? 'a value'
  }
}
