import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { optionDefaults, resolveSettings, type RestdirOptions } from '../../lib/options.ts'
import { defaultOf, fillIn, flagsWithPlaceholder, flagWithPlaceholder, optionOf, optionsTable, shownDefault } from '../../lib/cli/options-table.ts'
import { optionsMarkdown } from '../../lib/cli/options-markdown.ts'
import { defaultBodyLimits } from '../../lib/http/body.ts'
import { defaultPathLimits } from '../../lib/path.ts'
import { defaultListingLimits } from '../../lib/listing/filters.ts'
import { defaultChangeWindow } from '../../lib/data/changes.ts'
import { root, runCli } from '../support/process.ts'

// The one table of options (lib/cli/options-table.ts) is where every flag's default and help
// are written; --help, the parsing, docs/cli.md and the library's defaults must all agree with it.

test('the option table of docs/cli.md is the one generated from the table of options', () => {
  const page = readFileSync(path.join(root, 'docs', 'cli.md'), 'utf8')
  const between = /<!-- options:start -->\n([\s\S]*?)<!-- options:end -->/.exec(page)
  assert.ok(between, 'docs/cli.md marks its option table with <!-- options:start --> and <!-- options:end -->')
  assert.fixture(between[1], optionsMarkdown(), 'put optionsMarkdown() of lib/cli/options-markdown.ts between the markers of docs/cli.md')
})

test('each option that lands in RestdirOptions has, by the table, the default resolveSettings applies when it is not given', () => {
  const log = () => {}
  const unset = resolveSettings({ log })
  const landing = optionsTable.filter((option) => option.lands !== undefined && option.commandDefault === undefined && defaultOf(option) !== undefined)
  assert.ok(landing.length >= 18, `options with a library default: ${landing.map((option) => option.flag).join(', ')}`)
  for (const option of landing) {
    const given: RestdirOptions = { log, [option.lands!]: defaultOf(option) }
    assert.equal(resolveSettings(given), unset, `--${option.flag}: ${option.lands} given as the table's default (${shownDefault(option)}) resolves as left out`)
  }
  // And no default of the library goes without its flag.
  const landed = new Set(optionsTable.map((option) => option.lands))
  for (const name of Object.keys(optionDefaults)) assert.ok(landed.has(name as keyof RestdirOptions), `a flag lands in ${name}`)
})

test('the limits keep, in their own modules, the defaults the table shows', () => {
  const table = (flag: string) => defaultOf(optionOf(flag))
  assert.equal(defaultBodyLimits, { maxBody: table('max-body'), maxDepth: table('max-json-depth') })
  assert.equal(defaultPathLimits, { maxPathLength: table('max-path'), maxSegmentLength: table('max-segment'), maxDepth: table('max-depth') })
  assert.equal(defaultListingLimits, { maxSortKeys: table('max-sort-keys'), maxFilters: table('max-filters') })
  assert.equal(defaultChangeWindow, { maxChanges: table('change-window'), maxBytes: table('change-window-size') })
})

test('--help prints every option of the table with its help and the default the table gives it', async () => {
  const help = await runCli(['--help'])
  assert.is(help.code, 0)
  const lines = help.stdout.split('\n')
  for (const option of optionsTable) {
    const [first, ...more] = fillIn(option.usage, option).split('\n')
    const line = lines.findIndex((text) => text.startsWith(`  ${flagsWithPlaceholder(option)} `) || text.startsWith(`      ${flagWithPlaceholder(option)} `))
    assert.ok(line >= 0, `--help has a line for ${flagWithPlaceholder(option)}`)
    assert.ok(lines[line].endsWith(` ${first}`), `--help: ${lines[line]}`)
    more.forEach((text, n) => assert.is(lines[line + 1 + n].trim(), text))
    if (option.usage.includes('{default}')) assert.ok(lines[line].includes(`default ${shownDefault(option)}`), lines[line])
  }
  assert.ok(help.stdout.includes('--max-body SIZE  largest request body, e.g. 512kb, 2mb (default 1mb)\n'), 'sizes are shown as written on the command line')
  assert.ok(help.stdout.includes('--header-timeout TIME   time to send the request headers (default 10s)\n'), 'and so are times')
})

test.run()
