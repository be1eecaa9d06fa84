import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { root } from './support/process.ts'

// The layers of docs/architecture.md, read from the code's own imports: a
// request's way reads top to bottom, no import runs back up a layer (a type
// included), and no files import each other in a circle.

/** The layers, top to bottom; a file belongs to the first whose prefix it starts with. */
const layers: ReadonlyArray<readonly string[]> = [
  ['bin/', 'lib/index.ts', 'lib/json-server.ts', 'lib/json-server-db.ts'],
  ['lib/cli/'],
  ['lib/server.ts'],
  ['lib/handler.ts'],
  ['lib/options.ts'],
  ['lib/resources/'],
  ['lib/static/'],
  ['lib/http/'],
  ['lib/middleware/'],
  ['lib/listing/'],
  ['lib/data/'],
  ['lib/auth/'],
  ['lib/store/'],
  ['lib/path.ts', 'lib/http-error.ts', 'lib/json/', 'lib/package.ts'],
]

function layerOf(file: string): number {
  const index = layers.findIndex((prefixes) => prefixes.some((prefix) => file === prefix || file.startsWith(prefix)))
  assert.ok(index >= 0, `${file} is in a layer of docs/architecture.md`)
  return index
}

function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true })
    .map((name) => `${folder}/${String(name).split('\\').join('/')}`)
    .filter((name) => /\.(ts|cjs|mjs)$/.test(name) && !name.endsWith('.d.ts'))
}

/** The files of the tree a file imports (`import`, `export … from`, `import()` with a literal in any of the three quotes). */
function importsOf(text: string, file: string): string[] {
  const names = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"](\.[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]|\bimport\(\s*(['"`])(\.[^'"`$]+)\3\s*[,)]/g)]
  return names.map((match) => relative(root, normalize(join(root, dirname(file), match[1] ?? match[2] ?? match[4]))).split('\\').join('/'))
}

const files = [...sourceFiles('lib'), ...sourceFiles('bin')]
const graph = new Map(files.map((file) => [file, importsOf(readFileSync(join(root, file), 'utf8'), file).filter((target) => target.startsWith('lib/') || target.startsWith('bin/'))]))

test('an import is read in every spelling: from, bare, and import() with any quotes, a template literal included', () => {
  const text = [
    "import { a } from '../handler.ts'",
    "export * from './one.ts'",
    "import './two.ts'",
    "const three = await import('./three.ts')",
    'const four = await import("./four.ts")',
    'const five = await import(`../handler.ts`)',
    'const six = await import( `./six.ts` , { with: {} })',
  ].join('\n')
  assert.equal(importsOf(text, 'lib/http/x.ts'), ['lib/handler.ts', 'lib/http/one.ts', 'lib/http/two.ts', 'lib/http/three.ts', 'lib/http/four.ts', 'lib/handler.ts', 'lib/http/six.ts'])
})

test('no import in lib/ or bin/ runs up a layer', () => {
  const upward: string[] = []
  for (const [file, targets] of graph) {
    for (const target of targets) if (layerOf(target) < layerOf(file)) upward.push(`${file} -> ${target}`)
  }
  assert.ok(graph.size > 80, `the files of lib/ and bin/ were read (${graph.size})`)
  assert.equal(upward, [])
})

test('no files of lib/ or bin/ import each other in a circle', () => {
  const circles: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const visit = (file: string, trail: string[]): void => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'open') {
      circles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '))
      return
    }
    state.set(file, 'open')
    for (const target of graph.get(file) ?? []) visit(target, [...trail, file])
    state.set(file, 'done')
  }
  for (const file of graph.keys()) visit(file, [])
  assert.equal(circles, [])
})

test('sibling stores import only from the floor below them: lib/store/fs/ and lib/store/ itself, never from each other', () => {
  const storeFolder = (file: string): string | undefined => /^lib\/store\/([^/]+)\//.exec(file)?.[1]
  const sideways: string[] = []
  for (const [file, targets] of graph) {
    const folder = storeFolder(file)
    if (folder === undefined) continue
    for (const target of targets) {
      const below = storeFolder(target)
      if (below !== undefined && below !== folder && below !== 'fs') sideways.push(`${file} -> ${target}`)
      if (folder === 'fs' && below !== undefined && below !== 'fs') sideways.push(`${file} -> ${target}`)
    }
  }
  assert.ok([...graph.keys()].some((file) => file.startsWith('lib/store/fs/')), 'the floor lib/store/fs/ was read')
  assert.equal(sideways, [])
})

test('Documents is the only door to the store: no file above lib/data/ reaches through documents.store', () => {
  const through = files.filter((file) => !file.startsWith('lib/data/') && !file.startsWith('lib/store/') && /\bdocuments[?!]?\.store\b|\{[^}]*\bstore\b[^}]*\}\s*=\s*[\w.]*\bdocuments\b/.test(readFileSync(join(root, file), 'utf8')))
  assert.equal(through, [])
})

test('no file in lib/ or bin/ is over 600 lines', () => {
  const long = files.map((file) => [file, readFileSync(join(root, file), 'utf8').split('\n').length] as const).filter(([, lines]) => lines > 600)
  assert.equal(long, [])
})

test('lib/http/ holds HTTP itself, under 1,600 lines: static files, answers to URLs and middlewares have rooms of their own', () => {
  const http = files.filter((file) => file.startsWith('lib/http/'))
  const lines = http.reduce((sum, file) => sum + readFileSync(join(root, file), 'utf8').split('\n').length - 1, 0)
  assert.ok(http.length > 5, 'the files of lib/http/ were read')
  assert.ok(lines < 1600, `lib/http/ has ${lines} lines`)
})

/** The files of lib/ that docs/architecture.md names: a whole path, or a bare name after a path of its folder on the same line. */
function filesNamedIn(text: string): Set<string> {
  const named = new Set<string>()
  for (const line of text.split('\n')) {
    let folder: string | undefined
    for (const match of line.matchAll(/`((?:lib|bin)\/[^`\s]+\.(?:ts|cjs|mjs))`|`([\w.-]+\.(?:ts|cjs|mjs))`/g)) {
      if (match[1] !== undefined) {
        named.add(match[1])
        folder = dirname(match[1])
      } else if (folder !== undefined) named.add(`${folder}/${match[2]}`)
    }
  }
  return named
}

test('docs/architecture.md names every file of lib/', () => {
  const named = filesNamedIn(readFileSync(join(root, 'docs/architecture.md'), 'utf8'))
  const missing = sourceFiles('lib').filter((file) => !named.has(file))
  assert.equal(missing, [])
})

/** Where the project names a file of its own in prose: code comments, docs, the README, SECURITY.md. */
const PROSE = ['lib', 'bin', 'spec', 'bench', 'www', 'docs'].flatMap((folder) =>
  readdirSync(join(root, folder), { recursive: true })
    .map((name) => `${folder}/${String(name).split('\\').join('/')}`)
    .filter((name) => /\.(ts|cjs|mjs|js|md|html)$/.test(name) && !name.includes('node_modules') && !name.startsWith('bench/json-server-1/')),
).concat(['README.md', 'SECURITY.md'])

test('every file of the project that a comment or a doc names exists', () => {
  const gone: string[] = []
  for (const file of PROSE) {
    if (file === 'spec/architecture.spec.ts') continue // its own examples name files that need not exist
    const text = readFileSync(join(root, file), 'utf8')
    for (const match of text.matchAll(/(?<![\w./-])((?:lib|bin|spec|bench|www|docs)\/[\w./-]*\w\.(?:ts|cjs|mjs|js|md|json|html|css))\b/g)) {
      if (!existsSync(join(root, match[1]))) gone.push(`${file}: ${match[1]}`)
    }
  }
  assert.equal(gone, [])
})

test.run()
