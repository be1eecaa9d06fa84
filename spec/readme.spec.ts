import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile, spawnSync } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, startServerOnFolder, touchLater } from './support/helpers.ts'
import { root } from './support/process.ts'

// README.md read as a test: each ```sh block of "A five-minute tutorial" is
// run by sh with the real curl against a fresh server, and what it prints must
// be the untagged block shown right after it, character for character (a block
// with none shown must print nothing). Only what differs from run to run is
// matched by form: a generated id (paired with this run's the first time it is
// met, the same one after), an ETag and the Date. The store tree of "Where the
// data goes" must be the folder the tutorial leaves.

const readme = readFileSync(join(root, 'README.md'), 'utf8')
/** The origin the README's commands name; the test sends them to its own server instead. */
const readmeOrigin = 'http://127.0.0.1:3000'
/** A generated id: 12 lower-case letters and digits (docs/http-api.md, "The generic data API"). */
const generatedId = /^(?=.*\d)[0-9a-z]{12}$/

interface Step {
  /** The sh block as the README writes it. */
  script: string
  /** What the README shows it prints, if anything. */
  shown?: string
}

/** The text of a `## ` section, without its heading. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`)
  assert.ok(start >= 0, `README.md has a section "${title}"`)
  const end = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, end < 0 ? undefined : end)
}

/** The ```sh blocks of a section, each with the untagged block shown right after it. */
function stepsOf(text: string): Step[] {
  const steps: Step[] = []
  let lastBlockEnd = -1
  for (const block of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    const [whole, language, body] = block
    const index = block.index ?? 0
    if (language === 'sh') {
      steps.push({ script: body })
      lastBlockEnd = index + whole.length
    } else if (language === '' && lastBlockEnd >= 0 && text.slice(lastBlockEnd, index).trim() === '') {
      steps[steps.length - 1].shown = body
    }
  }
  return steps
}

/**
 * Ids the README shows, each paired with the one this run got where it stands.
 * A shown id met for the first time is paired with what the server answered in its place.
 */
const ids = new Map<string, string>()

/** The README's text with each id it showed before replaced by this run's. */
function withIds(text: string): string {
  let replaced = text
  for (const [shown, actual] of ids) replaced = replaced.split(shown).join(actual)
  return replaced
}

const idPattern = /\b[0-9a-z]{12}\b/g
const etagPattern = /^ETag: "[\w-]{22}"$/
const datePattern = /^Date: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/

/**
 * Holds when `printed` is `shown` line for line: an ETag or Date line of the
 * same form, and every generated id where the README shows one, paired as it goes.
 */
function samePrint(shown: string, printed: string, where: string): void {
  const shownLines = shown.split('\n')
  const printedLines = printed.split('\n')
  for (let index = 0; index < Math.max(shownLines.length, printedLines.length); index++) {
    const [want, got] = [shownLines[index], printedLines[index]]
    const line = `${where}, line ${index + 1}`
    assert.type(got, 'string', `${line}: the README shows ${JSON.stringify(want)}, and nothing more was printed`)
    assert.type(want, 'string', `${line}: printed ${JSON.stringify(got)}, which the README does not show`)
    if (etagPattern.test(want) || datePattern.test(want)) {
      assert.match(got, want.startsWith('ETag') ? etagPattern : datePattern, line)
      continue
    }
    // Pair each id the README shows for the first time with the one printed in its place.
    const shownIds = [...want.matchAll(idPattern)].map((match) => match[0]).filter((id) => generatedId.test(id))
    const unpaired = shownIds.filter((id) => !ids.has(id))
    if (unpaired.length > 0) {
      const pattern = new RegExp(`^${escapeRegExp(withIds(want)).replace(new RegExp(unpaired.map(escapeRegExp).join('|'), 'g'), '([0-9a-z]{12})')}$`)
      const match = pattern.exec(got)
      assert.ok(match, `${line}: printed\n  ${got}\nwhere the README shows\n  ${want}`)
      const order = [...withIds(want).matchAll(new RegExp(unpaired.map(escapeRegExp).join('|'), 'g'))].map((found) => found[0])
      order.forEach((shownId, at) => {
        const actual = match[at + 1]
        assert.match(actual, generatedId, `${line}: a generated id where the README shows ${shownId}`)
        if (ids.has(shownId)) assert.is(actual, ids.get(shownId), `${line}: the id the README shows as ${shownId}`)
        else {
          assert.not.ok([...ids.values()].includes(actual), `${line}: a new id where the README shows ${shownId}`)
          ids.set(shownId, actual)
        }
      })
    }
    assert.is(got, withIds(want), line)
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Runs a tutorial block in sh, with the real curl, against `origin`; answers what it printed, line
 * ends as a terminal shows them. curl leaves out its progress meter only when printing to a
 * terminal, so here a curlrc of its own (`silent`, `show-error`) does what the terminal does.
 */
async function runInShell(script: string, origin: string, variables: Record<string, string>, curlHome: string): Promise<string> {
  const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile('sh', ['-c', script.split(readmeOrigin).join(origin)], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...variables, CURL_HOME: curlHome } }, (error, stdout, stderr) =>
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    )
  })
  assert.is(run.status, 0, `sh ran\n${script}\nand said ${run.stderr}`)
  assert.is(run.stderr, '', `nothing on stderr for\n${script}`)
  return run.stdout.replace(/\r\n/g, '\n')
}

/** Every file and folder below a store folder, as paths with `/`; folders end with `/`. */
function storeEntries(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => {
      const relative = join(entry.parentPath, entry.name).slice(dir.length + 1).split('\\').join('/')
      return entry.isDirectory() ? `${relative}/` : relative
    })
    .sort()
}

/** The files and folders a README tree draws (`├── name`, `│   └── a/@.json`), in the same form. */
function treeEntries(tree: string): string[] {
  const entries = new Set<string>()
  const folders: string[] = []
  const [top, ...lines] = tree.split('\n')
  assert.is(top, 'store/')
  for (const line of lines) {
    const drawn = /^((?:│   |    )*)(?:├── |└── )(\S+)/.exec(line)
    assert.ok(drawn, `a tree line: ${line}`)
    const depth = drawn[1].length / 4
    const name = withIds(drawn[2])
    folders.length = depth
    const path = [...folders, name].join('/')
    // Each folder on the way is an entry too: `first/@.json` is the folder first/ and a file in it.
    path.split('/').slice(0, -1).reduce((parent, segment) => {
      entries.add(`${parent}${segment}/`)
      return `${parent}${segment}/`
    }, '')
    entries.add(path)
    if (name.endsWith('/')) folders.push(name.slice(0, -1))
  }
  return [...entries].sort()
}

test('the tutorial runs as written in sh with curl, prints exactly what it shows, and the store is the tree it draws', async () => {
  const check = spawnSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' })
  assert.is(check.status, 0, 'curl is on PATH: the tutorial is run with it, as a reader does (nothing is faked)')
  const steps = stepsOf(section('A five-minute tutorial'))
  assert.ok(steps.length >= 8, 'the tutorial has its steps')
  const server = await startServerOnFolder()
  const curlHome = await makeTempDir('restdir-curlrc-')
  writeFileSync(join(curlHome, '.curlrc'), 'silent\nshow-error\n')
  try {
    const variables: Record<string, string> = {}
    for (const step of steps) {
      const assignment = /^(\w+)=(\S+)\n$/.exec(step.script)
      if (assignment) {
        // U=… is the id the README showed in the Location before it, which the reader takes from theirs.
        assert.ok(ids.has(assignment[2]), `${assignment[0].trim()} is an id the README showed before`)
        variables[assignment[1]] = ids.get(assignment[2]) as string
        continue
      }
      assert.ok(step.script.split('\n').every((line) => line === '' || /^(curl |  )/.test(line)), `the tutorial runs curl: ${step.script}`)
      const printed = await runInShell(step.script, server.url, variables, curlHome)
      samePrint(step.shown ?? '', printed, `what\n${step.script}printed`)
    }
    assert.ok('U' in variables, 'the tutorial sets U')

    const where = section('Where the data goes')
    const tree = /^```\n(store\/\n[\s\S]*?)\n^```$/m.exec(where)
    assert.ok(tree, '"Where the data goes" draws the store')
    assert.equal(storeEntries(server.dir), treeEntries(tree[1]), 'the store after the tutorial is the tree the README draws')
    for (const path of where.matchAll(/`(user\/[^`]+)`/g)) {
      assert.ok(!existsSync(join(server.dir, withIds(path[1]))), `${path[1]} went with the user`)
    }
  } finally {
    await server.close()
    await rm(curlHome, { recursive: true, force: true })
  }
})

test('npx restdir --import db.json works in a fresh clone: the command builds dist/ first', async () => {
  const clone = await makeTempDir('restdir-clone-')
  try {
    for (const name of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts', 'bin', 'lib', 'www']) cpSync(join(root, name), join(clone, name), { recursive: true })
    writeFileSync(join(clone, 'db.json'), JSON.stringify({ posts: [{ id: 1, title: 'json-server' }], profile: { name: 'typicode' } }))

    // Before `npm ci`: one line that says what to do.
    const early = spawnSync('npx', ['restdir', '--import', 'db.json'], { cwd: clone, encoding: 'utf8', timeout: 60_000 })
    assert.is(early.status, 1, early.stderr)
    const said = early.stderr.split('\n').filter((line) => line.startsWith('restdir: '))
    assert.equal(said, [`restdir: dist/ is missing, and TypeScript and esbuild are not installed to build it: run \`npm ci\` in ${clone}`])
    assert.not.match(early.stderr, /ERR_MODULE_NOT_FOUND|\n\s+at /)

    symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'))
    const first = spawnSync('npx', ['restdir', '--import', 'db.json'], { cwd: clone, encoding: 'utf8', timeout: 120_000 })
    assert.is(first.status, 0, first.stderr)
    assert.match(first.stderr, 'restdir: building dist/')
    assert.equal(JSON.parse(readFileSync(join(clone, 'store', 'posts', '1', '@.json'), 'utf8')), { id: 1, title: 'json-server' })
    assert.ok(existsSync(join(clone, 'dist', 'bin', 'restdir.js')))

    const again = spawnSync('npx', ['restdir', '--version'], { cwd: clone, encoding: 'utf8', timeout: 60_000 })
    assert.is(again.status, 0, again.stderr)
    assert.not.match(again.stderr, 'building', 'a build that is current is not made again')

    // A source edited after the build (as after `git pull`) is built before the command runs.
    const source = readFileSync(join(clone, 'lib', 'package.ts'), 'utf8')
    const edit = source.replace('return packageJson.version', 'return `${packageJson.version}-edited`')
    assert.is.not(edit, source, 'lib/package.ts returns packageJson.version')
    writeFileSync(join(clone, 'lib', 'package.ts'), edit)
    touchLater(join(clone, 'lib', 'package.ts'))
    const edited = spawnSync('npx', ['restdir', '--version'], { cwd: clone, encoding: 'utf8', timeout: 120_000 })
    assert.is(edited.status, 0, edited.stderr)
    assert.match(edited.stderr, 'restdir: building dist/')
    assert.match(edited.stdout, /-edited\n/)
  } finally {
    await rm(clone, { recursive: true, force: true })
  }
})

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
}

test('every relative link of README.md, SECURITY.md and docs/ names a file, and a heading, that exist', () => {
  const pages = ['README.md', 'SECURITY.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
  const anchors = (page: string) => {
    const text = readFileSync(join(root, page), 'utf8').replace(/^```[\s\S]*?^```$/gm, '')
    return new Set([...text.matchAll(/^#+ (.+)$/gm)].map((match) => anchorOf(match[1])))
  }
  const broken: string[] = []
  let links = 0
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8').replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '')
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue
      links++
      const [file, anchor] = target.split('#')
      const linked = file === '' ? page : join(page, '..', file).replace(/\\/g, '/')
      if (!existsSync(join(root, linked))) broken.push(`${page}: ${target} (no file ${linked})`)
      else if (anchor && linked.endsWith('.md') && !anchors(linked).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${linked})`)
    }
  }
  assert.ok(links > 50, `links were found (${links})`)
  assert.equal(broken, [])
})

test.run()
