import type { Context } from '../http/context.ts'
import type { Family } from '../data/declarations.ts'
import type { Doc } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { wantsChanges } from './events.ts'
import { jsonBody } from './accounts.ts'

/*
 * The seed's permissions under `--auth` on the declared families (docs/accounts.md, "The grants"):
 * `/user/:user_id/permissions/:permission_id` holds `{ "to": "<user_id>" | "*", "may": "read" |
 * "write", "path": "<collection>" }`, by which that user lets another user (or every signed-in
 * user) read, or read and write, their subtree or one collection in it. Only the granting user
 * (or the administrator) writes them, and they are the one thing that widens a user's access.
 */

/** The node below each user that holds their grants. */
export const GRANTS = 'permissions'
const FIELDS = new Set(['to', 'may', 'path'])
const READ_METHODS = new Set(['GET', 'HEAD'])

/** Whether a path is a user's grants or lies below them: `/user/:user_id/permissions/…`. */
function isGrants(path: readonly string[], users: Family): boolean {
  return path[0] === users.collection && path.length >= 3 && path[2] === GRANTS
}

/** A write to a user's grants is that user's own, whatever their family's `access` lets others write. */
export async function checkGrantsWriter(context: Context, users: Family, caller: () => Promise<{ sub: string }>): Promise<void> {
  if (!isGrants(context.path, users) || READ_METHODS.has(context.method) || context.method === 'OPTIONS') return
  if (context.path[1] === (await caller()).sub) return
  throw new HttpError(403, `Private resource access: the grants of ${users.collection} ${JSON.stringify(context.path[1])} are written by that user alone.`)
}

/**
 * A grant written (`POST /user/:user_id/permissions`, `PUT …/permissions/:permission_id`), checked
 * before it is stored: the request with its body read, or a `400` naming what is wrong. A PATCH
 * is refused: the whole grant is sent, so that a half-changed one is never stored.
 */
export async function checkedGrant(context: Context, users: Family): Promise<Context> {
  const { method, path } = context
  if (!isGrants(path, users) || method === 'GET' || method === 'HEAD' || method === 'DELETE' || method === 'OPTIONS') return context
  const one = method === 'POST' ? path.length === 3 : path.length === 4
  if (!one || method === 'PATCH') throw new HttpError(400, `A grant is made by POST /${users.collection}/<${users.idField}>/${GRANTS} and replaced whole by PUT /${users.collection}/<${users.idField}>/${GRANTS}/<id>; it has no parts to change.`)
  const body = await context.body.json()
  const problem = grantProblem(body, context.settings.idField)
  if (problem) throw new HttpError(400, `Not a grant: ${problem}. A grant is { "to": "<${users.idField}>" or "*", "may": "read" or "write", "path": "<one collection of the subtree>" (optional) }.`)
  return { ...context, body: jsonBody(body) }
}

/** What is wrong with a grant, if anything; its id field (`id`, as every stored document has) may come back as it was read. */
function grantProblem(body: Doc, idField: string): string | undefined {
  const extra = Object.keys(body).find((key) => !FIELDS.has(key) && key !== idField)
  if (extra !== undefined) return `${JSON.stringify(extra)} is not a field of a grant`
  if (typeof body.to !== 'string' || body.to === '') return '"to" must name a user by their id, or be "*" for every signed-in user'
  if (body.may !== 'read' && body.may !== 'write') return '"may" must be "read" or "write"'
  if (body.path === undefined) return undefined
  if (typeof body.path !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.~-]*$/.test(body.path)) return '"path" must name one collection of the subtree, such as "playlist"'
  if (body.path === GRANTS) return `"path" cannot be "${GRANTS}": a user's grants are their own`
  return undefined
}

/**
 * Whether one of the owner's grants lets the caller make this request: read grants GET and HEAD,
 * write grants every method. No grant reaches the grants themselves, writes the user's own record
 * (its password, its deletion), or opens an event stream (a stream would outlive a deleted grant).
 */
export async function grantAllows(context: Context, users: Family, owner: string, sub: string): Promise<boolean> {
  const { method, path } = context
  if (path[0] !== users.collection || path.length < 2 || isGrants(path, users) || wantsChanges(context)) return false
  const reads = READ_METHODS.has(method)
  if (!reads && path.length < 3) return false
  const grants = (await context.documents.list([users.collection, owner, GRANTS])) ?? []
  return grants.some((grant) => (grant.to === sub || grant.to === '*')
    && (grant.may === 'write' || (grant.may === 'read' && reads))
    && (grant.path === undefined || (typeof grant.path === 'string' && grant.path === path[2])))
}
