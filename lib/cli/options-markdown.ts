import { fillIn, flagWithPlaceholder, optionsTable, shownDefault, type CliOption } from './options-table.ts'

/**
 * The table of options in docs/cli.md, from the table of options: one row an option,
 * or one for a few that go together (`--max-path N`, `--max-segment N`, `--max-depth N`).
 */
export function optionsMarkdown(): string {
  const rows: Array<{ flags: string[]; meaning: string; defaults: string[] }> = []
  for (const option of optionsTable) {
    if (!('joinsRow' in option.docs)) rows.push({ flags: [], meaning: option.docs.meaning, defaults: [] })
    const row = rows[rows.length - 1]
    row.flags.push(flagCell(option))
    row.defaults.push(fillIn(option.docs.default ?? implicitDefault(option), option))
  }
  const lines = rows.map((row) => markdownRow([row.flags.join(', '), row.meaning, row.defaults.filter(Boolean).join(', ')]))
  return ['| option | meaning | default |', '|---|---|---|', ...lines].join('\n') + '\n'
}

/**
 * `--port N`, in backticks, after its short form (`-p N`, `--port N`) and before its aliases (`--read-only`); a flag that takes either of two
 * (`DIR|URL`) reads `--store DIR` or `--store URL`.
 */
function flagCell(option: CliOption): string {
  const either = option.placeholder?.split('|') ?? []
  const short = option.short === undefined ? '' : `\`-${option.short}${option.placeholder ? ` ${option.placeholder}` : ''}\`, `
  const aliases = (option.aliases ?? []).map((alias) => `, \`--${alias}${option.placeholder ? ` ${option.placeholder}` : ''}\``).join('')
  if (either.length < 2) return `${short}\`${flagWithPlaceholder(option)}\`${aliases}`
  return either.map((placeholder) => `\`--${option.flag} ${placeholder}\``).join(' or ')
}

/** A switch is off unless given; a value's default is shown as written on the command line; no default, no text. */
function implicitDefault(option: CliOption): string {
  if (shownDefault(option) === undefined) return ''
  return option.value === 'switch' ? 'off' : '`{default}`'
}

function markdownRow(cells: string[]): string {
  return '|' + cells.map((cell) => (cell === '' ? ' ' : ` ${cell} `)).join('|') + '|'
}
