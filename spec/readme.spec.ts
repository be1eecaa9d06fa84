import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, startServerOnFolder, touchLater, type TestServer } from './support/helpers.ts'
import { root } from './support/process.ts'

// README.md read as a test: the commands of "A five-minute tutorial" run
// against a fresh server, every answer the README shows must be the one that
// comes back, and the store tree of "Where the data goes" must be the folder
// the tutorial leaves. In the tutorial, an untagged block right after a ```sh
// block shows the answer to that block's last command (with the status line
// when the command has -i); a command whose answer is not shown must succeed.

const readme = readFileSync(join(root, 'README.md'), 'utf8')
/** The origin the README's commands name; the test sends them to its own server instead. */
const readmeOrigin = 'http://127.0.0.1:3000'
/** A generated id: 12 lower-case letters and digits (docs/http-api.md, "The generic data API"). */
const generatedId = /^(?=.*\d)[0-9a-z]{12}$/

interface Command {
  words: string[]
  /** The answer the README shows for it, if any. */
  shown?: string
}

/** The text of a `## ` section, without its heading. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`)
  assert.ok(start >= 0, `README.md has a section "${title}"`)
  const end = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, end < 0 ? undefined : end)
}

/** The commands of the ```sh blocks of a section, each with the answer shown after its block. */
function commandsOf(text: string): Command[] {
  const commands: Command[] = []
  let lastBlockEnd = -1
  for (const block of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    const [whole, language, body] = block
    const index = block.index ?? 0
    if (language === 'sh') {
      for (const line of body.replace(/\\\n/g, ' ').split('\n')) {
        const words = shellWords(line)
        if (words.length > 0) commands.push({ words })
      }
      lastBlockEnd = index + whole.length
    } else if (language === '' && lastBlockEnd >= 0 && text.slice(lastBlockEnd, index).trim() === '') {
      commands[commands.length - 1].shown = body.trimEnd()
    }
  }
  return commands
}

/** Splits a line as sh does for the quoting the README uses: '…', "…", \" inside "…", and # comments. */
function shellWords(line: string): string[] {
  const words: string[] = []
  let word: string | undefined
  for (let at = 0; at < line.length; at++) {
    const char = line[at]
    if (char === ' ' || char === '\t') {
      if (word !== undefined) words.push(word)
      word = undefined
    } else if (char === '#' && word === undefined) {
      break
    } else if (char === "'") {
      const end = line.indexOf("'", at + 1)
      assert.ok(end > at, `a closed quote in: ${line}`)
      word = (word ?? '') + line.slice(at + 1, end)
      at = end
    } else if (char === '"') {
      let text = ''
      for (at++; line[at] !== '"'; at++) {
        assert.ok(at < line.length, `a closed quote in: ${line}`)
        if (line[at] === '\\' && line[at + 1] === '"') at++
        text += line[at]
      }
      word = (word ?? '') + text
    } else {
      word = (word ?? '') + char
    }
  }
  if (word !== undefined) words.push(word)
  return words
}

/**
 * Ids the README shows, each paired with the one this run got where it stands.
 * A shown id met for the first time is paired with what the server answered in its place.
 */
const ids = new Map<string, string>()

function sameText(shown: string, actual: string, where: string): void {
  if (generatedId.test(shown)) {
    if (!ids.has(shown)) {
      assert.match(actual, generatedId, `${where}: a generated id where the README shows ${shown}`)
      assert.not.ok([...ids.values()].includes(actual), `${where}: a new id where the README shows ${shown}`)
      ids.set(shown, actual)
    }
    assert.is(actual, ids.get(shown), `${where}: the id the README shows as ${shown}`)
    return
  }
  assert.is(actual, withIds(shown), where)
}

/** The README's text with each id it showed before replaced by this run's. */
function withIds(text: string): string {
  let replaced = text
  for (const [shown, actual] of ids) replaced = replaced.split(shown).join(actual)
  return replaced
}

/** Holds when `actual` is the JSON the README shows, key order included, ids paired as they come. */
function sameJson(shown: unknown, actual: unknown, where: string): void {
  if (typeof shown === 'string') {
    assert.type(actual, 'string', where)
    sameText(shown, actual as string, where)
  } else if (Array.isArray(shown)) {
    assert.ok(Array.isArray(actual), `${where}: an array`)
    assert.is((actual as unknown[]).length, shown.length, `${where}: the length`)
    shown.forEach((item, index) => sameJson(item, (actual as unknown[])[index], `${where}[${index}]`))
  } else if (shown !== null && typeof shown === 'object') {
    assert.ok(actual !== null && typeof actual === 'object' && !Array.isArray(actual), `${where}: an object`)
    assert.equal(Object.keys(actual as object), Object.keys(shown), `${where}: the keys, in order`)
    for (const [key, value] of Object.entries(shown)) sameJson(value, (actual as Record<string, unknown>)[key], `${where}.${key}`)
  } else {
    assert.is(actual, shown, where)
  }
}

/** Sends what a README `curl` command sends, and checks the answer against the one the README shows. */
async function runCurl(server: TestServer, command: Command, variables: Map<string, string>): Promise<Response> {
  const line = command.words.join(' ')
  let method: string | undefined
  let body: string | undefined
  let url: string | undefined
  let include = false
  const headers = new Headers()
  const words = command.words.slice(1).map((word) => word.replace(/\$(\w+)/g, (_, name: string) => {
    assert.ok(variables.has(name), `$${name} is set before: ${line}`)
    return variables.get(name) as string
  }))
  for (let at = 0; at < words.length; at++) {
    const word = words[at]
    if (word === '-i') include = true
    else if (word === '-X') method = words[++at]
    else if (word === '-H') {
      const header = words[++at]
      headers.set(header.slice(0, header.indexOf(':')), header.slice(header.indexOf(':') + 1).trim())
    } else if (word === '-d') body = words[++at]
    else if (!word.startsWith('-') && url === undefined) url = word
    else assert.unreachable(`the test knows every curl option of the tutorial, not ${word}: ${line}`)
  }
  const target = url ?? ''
  assert.ok(target.startsWith(readmeOrigin), `the command names ${readmeOrigin}: ${line}`)
  const answer = await fetch(server.url + target.slice(readmeOrigin.length), { method: method ?? (body === undefined ? 'GET' : 'POST'), headers, body })
  const text = await answer.text()
  const where = `the answer to ${line}`

  if (command.shown === undefined) {
    assert.ok(answer.ok, `${where} succeeds (it was ${answer.status}: ${text})`)
    return answer
  }
  let shownBody = command.shown
  if (include) {
    const [head, rest] = splitOnce(command.shown, '\n\n')
    const [statusLine, ...headerLines] = head.split('\n')
    assert.is(`${answer.status} ${answer.statusText}`, statusLine.replace(/^HTTP\/1\.1 /, ''), `${where}: the status line`)
    for (const headerLine of headerLines) {
      const [name, value] = splitOnce(headerLine, ': ')
      const actual = answer.headers.get(name)
      assert.type(actual, 'string', `${where} has ${name}`)
      if (name === 'ETag') assert.match(actual as string, /^"[\w-]{22}"$/, `${where}: an ETag like ${value}`)
      else if (name === 'Location') {
        const shownSegments = value.split('/')
        const actualSegments = (actual as string).split('/')
        assert.is(actualSegments.length, shownSegments.length, `${where}: ${name}`)
        shownSegments.forEach((segment, index) => sameText(segment, actualSegments[index], `${where}: ${name}`))
      } else assert.is(actual, value, `${where}: ${name}`)
    }
    shownBody = rest
  } else {
    assert.ok(answer.ok, `${where} succeeds (it was ${answer.status}: ${text})`)
  }
  sameJson(JSON.parse(shownBody), JSON.parse(text), where)
  return answer
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator)
  assert.ok(at >= 0, `"${separator}" in ${text}`)
  return [text.slice(0, at), text.slice(at + separator.length)]
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

test('the tutorial runs as written, every answer is the one it shows, and the store is the tree it draws', async () => {
  const commands = commandsOf(section('A five-minute tutorial'))
  assert.ok(commands.length >= 10, 'the tutorial has its commands')
  const server = await startServerOnFolder()
  try {
    const variables = new Map<string, string>()
    let lastLocation: string | undefined
    for (const command of commands) {
      const assignment = /^(\w+)=(.*)$/.exec(command.words[0])
      if (assignment && command.words.length === 1) {
        // U=… takes the id from the Location of the POST before it, as the reader does.
        assert.ok(lastLocation, `a POST answered with a Location before ${command.words[0]}`)
        const id = lastLocation.split('/').pop() as string
        assert.is(ids.get(assignment[2]), id, `${command.words[0]} is the id in the Location the README shows`)
        variables.set(assignment[1], id)
        continue
      }
      assert.is(command.words[0], 'curl', `the tutorial runs curl and sets variables, not: ${command.words.join(' ')}`)
      const answer = await runCurl(server, command, variables)
      lastLocation = answer.headers.get('location') ?? lastLocation
    }
    assert.ok(variables.has('U'), 'the tutorial sets U')

    const where = section('Where the data goes')
    const tree = /^```\n(store\/\n[\s\S]*?)\n^```$/m.exec(where)
    assert.ok(tree, '"Where the data goes" draws the store')
    assert.equal(storeEntries(server.dir), treeEntries(tree[1]), 'the store after the tutorial is the tree the README draws')
    for (const path of where.matchAll(/`(user\/[^`]+)`/g)) {
      assert.ok(!existsSync(join(server.dir, withIds(path[1]))), `${path[1]} went with the user`)
    }
  } finally {
    await server.close()
  }
})

test('npx restdir --import db.json works in a fresh clone: the command builds dist/ first', async () => {
  const clone = await makeTempDir('restdir-clone-')
  try {
    for (const name of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'lib', 'www']) cpSync(join(root, name), join(clone, name), { recursive: true })
    writeFileSync(join(clone, 'db.json'), JSON.stringify({ posts: [{ id: 1, title: 'json-server' }], profile: { name: 'typicode' } }))

    // Before `npm ci`: one line that says what to do.
    const early = spawnSync('npx', ['restdir', '--import', 'db.json'], { cwd: clone, encoding: 'utf8', timeout: 60_000 })
    assert.is(early.status, 1, early.stderr)
    const said = early.stderr.split('\n').filter((line) => line.startsWith('restdir: '))
    assert.equal(said, [`restdir: dist/ is missing, and TypeScript is not installed to build it: run \`npm ci\` in ${clone}`])
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
