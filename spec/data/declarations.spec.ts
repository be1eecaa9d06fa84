import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DeclarationError, loadDeclarations, parseDeclarations, seedDeclarations } from '../../lib/data/declarations.ts'
import { seedFamilies } from '../../lib/store/json-file/layout.ts'
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

test("the db.json store's own default families are the seed's", () => {
  const seed = loadDeclarations(undefined).map((family) => [family.collection, family.idField, family.parent?.collection])
  assert.equal(seedFamilies.map((family) => [family.collection, family.idField, family.parent?.collection]), seed)
})

test('children may go to any depth, each below its owner', () => {
  const families = parseDeclarations({ a: { id: 'a_id', children: { b: { id: 'b_id', children: { c: { id: 'c_id' } } } } } }, 'x')
  assert.equal(families.map((family) => `${family.parent?.collection ?? '-'}>${family.collection}`), ['->a', 'a>b', 'b>c'])
})

test('a declaration that cannot work is refused with its place and the fix', () => {
  assert.match(refusal([]), /^resources\.json: \$: must be an object of families/)
  assert.match(refusal({ _x: { id: 'x_id' } }), /^resources\.json: \$\._x: "_x" cannot name a collection: .*a leading _ is kept/)
  assert.match(refusal({ team: { id: 'team_id', color: 'red' } }), /^resources\.json: \$\.team\.color: is not a known key; a family takes id, unique, arrays and children\.$/)
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

test.run()
