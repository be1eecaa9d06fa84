import { readFileSync, statSync } from 'node:fs'
import { accessRuleOf } from '../auth/access-rules.ts'
export { childrenOf, familyAt } from '../store/families.ts'

/**
 * The declared resource families and their rules (docs/http-api.md, "Declaring resources"), in
 * one place for everything that holds documents to them: the HTTP resources (lib/resources/),
 * the importer (lib/data/import.ts), the db.json store's layout, the API description and the banner.
 * A declaration is JSON; `parseDeclarations` turns it into families and refuses one that cannot work.
 */
export interface Family {
  /** The collection's URL segment: `/user`, `/user/:user_id/playlist`. */
  collection: string
  /** The member's id field, assigned by the service and named in its route. */
  idField: string
  /** Fields that, when present, are non-empty strings unique within the collection. */
  unique: readonly string[]
  /** Fields that are always arrays, `[]` when left out. */
  arrays: readonly string[]
  /** The family whose members own this collection (a playlist's user); none at the top. */
  parent?: Family
  /** Under `--auth`, who may read and write it, in json-server-auth's three digits (`"640"`); undefined: the owner only (docs/accounts.md, "The declared families"). */
  access?: string
}

/** One family as JSON declares it (docs/http-api.md, "Declaring resources"). */
export interface FamilyDeclaration {
  id: string
  unique?: string[]
  arrays?: string[]
  access?: string
  children?: Declarations
}

/** A declaration file's content: each top-level family by its collection's name. */
export type Declarations = { [collection: string]: FamilyDeclaration }

/** The seed's families, declared when nothing else is: users, and each user's playlists. */
export const seedDeclarations: Declarations = {
  user: { id: 'user_id', unique: ['username'], children: { playlist: { id: 'playlist_id', arrays: ['songs'] } } },
}

/** A declaration that cannot work: where it is (a JSON path), what is wrong and the fix, in one message. */
export class DeclarationError extends Error {
  constructor(source: string, where: string, problem: string) {
    super(`${source}: ${where}: ${problem}`)
    this.name = 'DeclarationError'
  }
}

/**
 * The families of the `resources` option: an object as the file holds it, a file's path,
 * `'none'` for no families, or nothing for the seed's. Throws a DeclarationError that names the
 * file and the place.
 */
export function loadDeclarations(option: Declarations | string | undefined): Family[] {
  if (option === undefined) return parseDeclarations(seedDeclarations, 'the seed declaration')
  if (typeof option !== 'string') return parseDeclarations(option, 'resources')
  if (option === 'none') return []
  const tooLong = () => new DeclarationError(option, '$', `is longer than ${MAX_DECLARATION_TEXT} characters (1 MiB), the limit of a declaration; declare fewer families.`)
  let text: string
  try {
    // The size is looked at before the file is read: a huge one is refused, not loaded (a character is at most 4 bytes).
    if (statSync(option).size > MAX_DECLARATION_TEXT * 4) throw tooLong()
    text = readFileSync(option, 'utf8').replace(/^\uFEFF/, '')
  } catch (error) {
    if (error instanceof DeclarationError) throw error
    throw new DeclarationError(option, '$', `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give the path of a JSON declaration file, or none.`)
  }
  if (text.length > MAX_DECLARATION_TEXT) throw tooLong()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new DeclarationError(option, '$', `is not JSON (${(error as Error).message}); write an object such as {"user": {"id": "user_id"}}.`)
  }
  return parseDeclarations(json, option)
}

/**
 * Bounds of a declaration (docs/http-api.md, "Declaring resources"), so that whatever it says its
 * families fit in memory, in the stack and in the API description: each level of owners adds two
 * segments to its members' URLs (`/team/:team_id/member/:member_id`), and the default
 * `--max-depth` of 32 segments holds 16 of them; a few hundred families and a few dozen fields
 * each are more than any API a person declares by hand.
 */
export const MAX_DECLARATION_DEPTH = 16
export const MAX_FAMILIES = 256
export const MAX_DECLARED_FIELDS = 64
/** The longest field name (as a listing's filter on a field takes at most 256 characters). */
const MAX_FIELD_NAME = 256
/** Characters of the collection and field names of a declaration in all (256 KiB), whether read from a file or handed in. */
export const MAX_DECLARED_NAMES = 256 * 1024
/** Characters of a declaration file (1 MiB), checked before it is parsed. */
export const MAX_DECLARATION_TEXT = 1024 * 1024

/** A collection name a URL segment can hold and no reserved word (`_children`, `_openapi`) takes. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.~-]*$/
const KEYS = new Set(['id', 'unique', 'arrays', 'access', 'children'])

/** Families from a declaration's JSON, outermost first, each followed by its children. */
export function parseDeclarations(json: unknown, source: string): Family[] {
  const families: Family[] = []
  parseLevel(json, source, '$', undefined, families, [], { names: 0 })
  return families
}

function parseLevel(json: unknown, source: string, where: string, parent: Family | undefined, into: Family[], idsAbove: string[], count: { names: number }): Family[] {
  const fail = (at: string, problem: string): never => {
    throw new DeclarationError(source, at, problem)
  }
  if (!isPlainObject(json)) fail(where, `must be an object of families, such as {"user": {"id": "user_id"}}.`)
  // Checked before going a level down, so a declaration nested thousands deep is refused, not a stack overflow.
  if (idsAbove.length >= MAX_DECLARATION_DEPTH) fail(where, `nests families ${MAX_DECLARATION_DEPTH + 1} levels deep; a declaration holds at most ${MAX_DECLARATION_DEPTH} levels (each adds two segments to a URL, and --max-depth allows 32).`)
  const level: Family[] = []
  for (const [collection, declared] of Object.entries(json as object)) {
    const at = `${where}.${collection}`
    if (into.length >= MAX_FAMILIES) fail(at, `is family number ${MAX_FAMILIES + 1}; a declaration holds at most ${MAX_FAMILIES} families.`)
    if (!NAME.test(collection)) fail(at, `"${collection}" cannot name a collection: start with a letter or digit and use letters, digits, _ . ~ -; a leading _ is kept for queries such as ?_children.`)
    if (!isPlainObject(declared)) fail(at, `must be an object such as {"id": "${collection}_id"}.`)
    const body = declared as Record<string, unknown>
    for (const key of Object.keys(body)) if (!KEYS.has(key)) fail(`${at}.${key}`, `is not a known key; a family takes id, unique, arrays, access and children.`)
    const idField = body.id
    if (typeof idField !== 'string' || !NAME.test(idField)) fail(`${at}.id`, `must name the member's id field, such as "${collection}_id".`)
    const id = idField as string
    if (idsAbove.includes(id)) fail(`${at}.id`, `"${id}" is already the id of an owner above; name it apart, such as "${collection}_id".`)
    const unique = fieldList(body.unique, `${at}.unique`, fail)
    const arrays = fieldList(body.arrays, `${at}.arrays`, fail)
    // The stores keep one field unique a write, in the same step as the write (lib/store/conditions.ts).
    if (unique.length > 1) fail(`${at}.unique[1]`, `a family keeps one field unique; keep "${unique[0]}" alone, or declare the others as plain fields.`)
    const ids = [...idsAbove, id]
    for (const [list, name] of [[unique, 'unique'], [arrays, 'arrays']] as const) {
      list.forEach((field, index) => {
        if (ids.includes(field)) fail(`${at}.${name}[${index}]`, `"${field}" is an id field, which the service assigns; leave it out of ${name}.`)
      })
    }
    arrays.forEach((field, index) => {
      if (unique.includes(field)) fail(`${at}.arrays[${index}]`, `"${field}" is also unique, and a unique field holds a string; keep it in one list.`)
    })
    // The names a declaration gives, in all: the API description repeats each a few times (lib/resources/openapi.ts).
    count.names += [collection, id, ...unique, ...arrays].reduce((sum, name) => sum + name.length, 0)
    if (count.names > MAX_DECLARED_NAMES) fail(at, `brings the names of collections and fields declared past ${MAX_DECLARED_NAMES} characters (256 KiB), the limit of a declaration; declare fewer or shorter.`)
    const access = body.access
    // Only json-server-auth's guards are rules (lib/auth/access-rules.ts): `"601"` would say nothing any request could be held to.
    if (access !== undefined && (typeof access !== 'string' || !accessRuleOf(access))) {
      fail(`${at}.access`, `must be one of json-server-auth's three digits as a string: "600", "640", "644", "660", "664", "666", "400", "440" or "444" (the owner's, a signed-in user's, everyone's).`)
    }
    const family: Family = { collection, idField: id, unique, arrays, parent, ...(access === undefined ? {} : { access: access as string }) }
    into.push(family)
    level.push(family)
    if (body.children !== undefined) {
      const children = parseLevel(body.children, source, `${at}.children`, family, into, ids, count)
      for (const child of children) {
        if ([...unique, ...arrays].includes(child.collection)) fail(`${at}.children.${child.collection}`, `"${child.collection}" is also a field of ${collection}; name the children apart.`)
      }
    }
  }
  return level
}

function fieldList(value: unknown, where: string, fail: (at: string, problem: string) => never): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) return fail(where, 'must be an array of field names, such as ["name"].')
  if (value.length > MAX_DECLARED_FIELDS) fail(`${where}[${MAX_DECLARED_FIELDS}]`, `is field number ${MAX_DECLARED_FIELDS + 1}; a list holds at most ${MAX_DECLARED_FIELDS} fields.`)
  value.forEach((field, index) => {
    if (typeof field !== 'string' || field === '') fail(`${where}[${index}]`, 'must be a field name: a non-empty string.')
    if (field.length > MAX_FIELD_NAME) fail(`${where}[${index}]`, `is longer than ${MAX_FIELD_NAME} characters, the longest field name a declaration takes.`)
    if (value.indexOf(field) !== index) fail(`${where}[${index}]`, `"${field}" is named twice; name it once.`)
  })
  return value as string[]
}

function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}


/** The family and its owners, outermost first: a playlist's are `[user, playlist]`. */
export function lineageOf(family: Family): Family[] {
  return family.parent ? [...lineageOf(family.parent), family] : [family]
}

/** Why a value cannot be held in a unique field, or undefined when it can. */
export function uniqueFieldProblem(field: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return `${field} must be a non-empty string`
  return undefined
}

/** Why a value cannot be held in an array field, or undefined when it can. */
export function arrayFieldProblem(field: string, value: unknown): string | undefined {
  if (Array.isArray(value)) return undefined
  const got = value === null ? 'null' : typeof value
  return `${field} must be an array (got ${got}); leave it out for an empty list`
}

/** What an array field may hold, said with its item's name: `songs` → "A song can be any JSON value." */
export function arrayItemNote(field: string): string {
  const item = /[^s]s$/.test(field) ? field.slice(0, -1) : ''
  if (!item) return 'An item can be any JSON value.'
  return `${/^[aeiou]/i.test(item) ? 'An' : 'A'} ${item} can be any JSON value.`
}
