import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DeclarationError, loadDeclarations, MAX_DECLARATION_DEPTH, MAX_DECLARATION_TEXT, MAX_DECLARED_FIELDS, MAX_FAMILIES, parseDeclarations, seedDeclarations, type Declarations, type FamilyDeclaration } from '../../lib/data/declarations.ts'
import { makeTempDir } from '../support/helpers.ts'
import { runCli } from '../support/process.ts'

// A declaration file (docs/http-api.md, "Declaring resources") is read once, at the start: one
// that cannot work stops it, with the file, the place (a JSON path) and the fix.

function refusal(json: unknown): string {
  try {
    parseDeclarations(json, 'resources.json')
  } catch (error) {
    assert.instance(error, DeclarationError)
    return (error as Error).message
  }
  return assert.unreachable(`${JSON.stringify(json)} was taken`) as never
}

test('the seed declaration gives users, then their playlists, each with the rules of docs/http-api.md', () => {
  const [user, playlist, ...more] = loadDeclarations(undefined)
  assert.equal(more, [])
  assert.equal({ ...user }, { collection: 'user', idField: 'user_id', unique: ['username'], arrays: [], parent: undefined })
  assert.equal({ ...playlist, parent: playlist.parent?.collection }, { collection: 'playlist', idField: 'playlist_id', unique: [], arrays: ['songs'], parent: 'user' })
  assert.equal(loadDeclarations(seedDeclarations), loadDeclarations(undefined))
  assert.equal(loadDeclarations('none'), [])
})

test('children may go to any depth, each below its owner', () => {
  const families = parseDeclarations({ a: { id: 'a_id', children: { b: { id: 'b_id', children: { c: { id: 'c_id' } } } } } }, 'x')
  assert.equal(families.map((family) => `${family.parent?.collection ?? '-'}>${family.collection}`), ['->a', 'a>b', 'b>c'])
})

test('a declaration that cannot work is refused with its place and the fix', () => {
  assert.match(refusal([]), /^resources\.json: \$: must be an object of families/)
  assert.match(refusal({ _x: { id: 'x_id' } }), /^resources\.json: \$\._x: "_x" cannot name a collection: .*a leading _ is kept/)
  assert.match(refusal({ team: { id: 'team_id', color: 'red' } }), /^resources\.json: \$\.team\.color: is not a known key; a family takes id, unique, arrays, access and children\.$/)
  assert.match(refusal({ team: {} }), /^resources\.json: \$\.team\.id: must name the member's id field, such as "team_id"\.$/)
  assert.match(refusal({ team: { id: 'team_id', children: { member: { id: 'team_id' } } } }), /^resources\.json: \$\.team\.children\.member\.id: "team_id" is already the id of an owner above/)
  assert.match(refusal({ team: { id: 'team_id', unique: ['tags'], arrays: ['tags'] } }), /^resources\.json: \$\.team\.arrays\[0\]: "tags" is also unique/)
  assert.match(refusal({ team: { id: 'team_id', unique: ['team_id'] } }), /^resources\.json: \$\.team\.unique\[0\]: "team_id" is an id field/)
  assert.match(refusal({ team: { id: 'team_id', unique: 'name' } }), /^resources\.json: \$\.team\.unique: must be an array of field names/)
  assert.match(refusal({ team: { id: 'team_id', arrays: ['a', 'a'] } }), /^resources\.json: \$\.team\.arrays\[1\]: "a" is named twice/)
  assert.match(refusal({ team: { id: 'team_id', unique: ['name', 'code'] } }), /^resources\.json: \$\.team\.unique\[1\]: a family keeps one field unique/)
  assert.match(refusal({ team: { id: 'team_id', arrays: ['member'], children: { member: { id: 'member_id' } } } }), /\$\.team\.children\.member: "member" is also a field of team/)
})

test('restdir --resources with a declaration that cannot work stops the start: exit 2, naming the file, the place and the fix', async () => {
  const folder = await makeTempDir('restdir-declarations-')
  try {
    const file = path.join(folder, 'resources.json')
    await writeFile(file, JSON.stringify({ team: { id: 'team_id', children: { member: { id: 'team_id' } } } }))
    const bad = await runCli(['--port', '0', '--store', path.join(folder, 'store'), '--resources', file])
    assert.is(bad.code, 2)
    assert.match(bad.stderr, `restdir: ${file}: $.team.children.member.id: "team_id" is already the id of an owner above; name it apart, such as "member_id".`)
    await writeFile(file, '{ "team": ')
    const broken = await runCli(['--port', '0', '--store', path.join(folder, 'store'), '--resources', file])
    assert.is(broken.code, 2)
    assert.match(broken.stderr, `restdir: ${file}: $: is not JSON`)
    const missing = await runCli(['--port', '0', '--resources', path.join(folder, 'nothing.json'), '--import', file])
    assert.is(missing.code, 2)
    assert.match(missing.stderr, 'nothing.json: $: cannot be read (ENOENT)')
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
})

/** A declaration of `levels` families, each the only child of the one before. */
function chain(levels: number): Declarations {
  const top: Declarations = {}
  let level = top
  for (let depth = 0; depth < levels; depth++) {
    const family: FamilyDeclaration = { id: `l${depth}_id` }
    level[`l${depth}`] = family
    if (depth < levels - 1) level = family.children = {}
  }
  return top
}

test(`a declaration holds at most ${MAX_DECLARATION_DEPTH} levels, ${MAX_FAMILIES} families and ${MAX_DECLARED_FIELDS} fields a list, each bound named where it is passed`, () => {
  assert.is(parseDeclarations(chain(MAX_DECLARATION_DEPTH), 'x').length, MAX_DECLARATION_DEPTH)
  const deepest = Array.from({ length: MAX_DECLARATION_DEPTH }, (_, depth) => `.l${depth}`).join('.children')
  assert.match(refusal(chain(MAX_DECLARATION_DEPTH + 1)), `resources.json: $${deepest}.children: nests families ${MAX_DECLARATION_DEPTH + 1} levels deep; a declaration holds at most ${MAX_DECLARATION_DEPTH} levels`)
  const wide = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`f${index}`, { id: `f${index}_id` }]))
  assert.is(parseDeclarations(wide(MAX_FAMILIES), 'x').length, MAX_FAMILIES)
  assert.match(refusal(wide(MAX_FAMILIES + 1)), `resources.json: $.f${MAX_FAMILIES}: is family number ${MAX_FAMILIES + 1}; a declaration holds at most ${MAX_FAMILIES} families.`)
  const fields = (count: number) => Array.from({ length: count }, (_, index) => `a${index}`)
  assert.is(parseDeclarations({ t: { id: 't_id', arrays: fields(MAX_DECLARED_FIELDS) } }, 'x')[0].arrays.length, MAX_DECLARED_FIELDS)
  assert.match(refusal({ t: { id: 't_id', arrays: fields(MAX_DECLARED_FIELDS + 1) } }), `resources.json: $.t.arrays[${MAX_DECLARED_FIELDS}]: is field number ${MAX_DECLARED_FIELDS + 1}`)
  assert.match(refusal({ t: { id: 't_id', unique: ['x'.repeat(257)] } }), 'resources.json: $.t.unique[0]: is longer than 256 characters')
})

test('restdir --resources with a declaration 2,000 levels deep, 10,000 families wide or of 5 MB exits 2 naming the file, the place and the bound', async () => {
  const folder = await makeTempDir('restdir-declarations-')
  try {
    const file = path.join(folder, 'resources.json')
    const cases: Array<[string, string]> = [
      [JSON.stringify(chain(2000)), `.l15.children: nests families ${MAX_DECLARATION_DEPTH + 1} levels deep`],
      [JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`f${index}`, { id: `f${index}_id` }]))), `$.f${MAX_FAMILIES}: is family number`],
      [`{"t": {"id": "t_id", "arrays": [${'"x",'.repeat(1_300_000)}"y"]}}`, `$: is longer than ${MAX_DECLARATION_TEXT} characters`],
    ]
    for (const [text, problem] of cases) {
      await writeFile(file, text)
      const refused = await runCli(['--port', '0', '--store', path.join(folder, 'store'), '--resources', file])
      assert.is(refused.code, 2, refused.stderr)
      assert.match(refused.stderr, `restdir: ${file}: `)
      assert.match(refused.stderr, problem)
      assert.not.match(refused.stderr, 'call stack')
    }
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
})

test.run()
