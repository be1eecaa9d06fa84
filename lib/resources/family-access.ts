import { createHash, timingSafeEqual } from 'node:crypto'
import type { Answer, Answering, Context } from '../http/context.ts'
import type { RequestBody } from '../http/body.ts'
import type { Doc } from '../store/store.ts'
import type { Family } from '../data/declarations.ts'
import { HttpError } from '../http-error.ts'
import { jsonAnswer } from '../http/respond.ts'
import { defineValue, type JsonObject } from '../json/values.ts'
import { accessRuleOf, type Audience } from '../auth/access-rules.ts'
import { MalformedHash } from '../auth/bcrypt.ts'
import { signToken } from '../auth/jwt.ts'
import { accountKey, addressKey } from '../auth/throttle.ts'
import { wantsChanges, withChangeView, type ChangeView } from './events.ts'
import { openView, ownerView, tokenEndedBy } from './change-access.ts'
import { BCRYPT_COST, jsonBody, memberWhere, MIN_PASSWORD_LENGTH, PASSWORD_CLAIM, passwordClaim, patchBody, type Accounts } from './accounts.ts'
import { callerOf, withoutHashes } from './access.ts'
import { checkedGrant, checkGrantsWriter, grantAllows } from './grants.ts'

/*
 * `--auth` on the declared families (docs/accounts.md, "The declared families"): the family
 * keeping `username` unique (the seed's `user`) holds the accounts, `POST /user` registers and
 * `POST /login` logs in, and a member owns its subtree: `/user/:user_id` and everything below it
 * (its playlists) are that user's. A family's `access` (json-server-auth's three digits) says who
 * else may read or write it; without one, only the owner. `--token` is the administrator's key,
 * which may do everything. Every answer leaves without its password hashes.
 */

type Inner = (context: Context) => Answering

/** The seed's rule: a user reads and writes only their own subtree. */
export const DEFAULT_ACCESS = '600'
const READ_METHODS = new Set(['GET', 'HEAD'])

/** The answer to a request under `--auth` on the declared families: the check first, then `inner`'s answer, without password hashes. */
export async function answerWithFamilyAccess(context: Context, accounts: Accounts, inner: Inner): Promise<Answer> {
  const users = accounts.family!
  const { method, path } = context
  // Anyone may register; the store keeps the username unique, so two registrations of one name make one account.
  if (method === 'POST' && path.length === 1 && path[0] === users.collection) return register(context, accounts, users, inner)
  if (method === 'POST' && path.length === 1 && path[0] === 'login') return logIn(context, accounts, users)
  const administrator = isAdministrator(context)
  let inside = administrator ? context : await checkFamilyAccess(context, accounts, users)
  inside = await checkedGrant(inside, users)
  if (wantsChanges(inside)) inside = withChangeView(inside, administrator ? openView() : await familyChangeView(inside, accounts, users))
  if (path.length === 2 && path[0] === users.collection && (method === 'PUT' || method === 'PATCH')) inside = { ...inside, body: await hashedBody(inside, accounts) }
  return withoutHashes(await inner(inside), context)
}

/** The administrator sends the server's `--token` as its Bearer token; compared in constant time, as lib/http/guards.ts compares it. */
function isAdministrator(context: Context): boolean {
  const key = context.settings.adminToken
  const header = context.requestHeaders.authorization
  if (key === undefined || typeof header !== 'string' || !header.startsWith('Bearer ')) return false
  const digest = (text: string) => createHash('sha256').update(text).digest()
  return timingSafeEqual(digest(header.slice('Bearer '.length)), digest(key))
}

/**
 * Who may do what, by the family a path lies in and the user whose subtree it is: the request as it
 * is to be answered (a listing of the users narrowed to the caller), or a refusal.
 */
async function checkFamilyAccess(context: Context, accounts: Accounts, users: Family): Promise<Context> {
  const { method, path, query } = context
  // OPTIONS reads and writes nothing, as on a db.json.
  if (method === 'OPTIONS') return context
  if (path.length === 0) {
    // The description is public; each request of a batch is checked as its caller when the batch runs it.
    if (query.has('_openapi') || query.has('_batch')) return context
    if (query.has('_reset')) throw new HttpError(403, 'Under --auth a reset is the administrator\'s: start the server with --token and send "Authorization: Bearer <token>".')
    throw new HttpError(403, 'Under --auth the root holds every user\'s documents: only the administrator (--token) reads or writes it; read /user/<your user_id>.')
  }
  const family = familyOf(context.settings.families, path)
  if (!family) throw new HttpError(403, `Under --auth only the declared families are served to their users; /${path[0]} is the administrator's (--token).`)
  const owner = path[0] === users.collection && path.length >= 2 ? path[1] : undefined
  // The users' names are every account's: not listed, even narrowed (docs/accounts.md, "The declared families").
  if (path[0] === users.collection && path.length === 1 && query.has('_children')) {
    throw new HttpError(403, `Under --auth the users' names are not listed: your own is the ${users.idField} your token names; read /${users.collection}/<your ${users.idField}>.`)
  }
  const rule = accessRuleOf(family.access ?? DEFAULT_ACCESS)!
  if (query.has('_expand') || query.has('_embed')) await checkRelations(context, accounts, users, family, owner, rule.read)
  const audience: Audience = READ_METHODS.has(method) ? rule.read : rule.write
  await checkGrantsWriter(context, users, () => callerOf(context, accounts))
  if (audience === 'everyone') return context
  if (audience === 'nobody') throw new HttpError(403, `Read only: the access of ${family.collection}, ${rule.guard}, lets nobody write it.`)
  const caller = await callerOf(context, accounts)
  if (audience === 'signed-in') return context
  if (owner !== undefined && caller.sub === owner) return context
  // The grants of /user/:user_id/permissions are the one place that widens this (docs/accounts.md, "The grants").
  if (owner !== undefined && await grantAllows(context, users, owner, caller.sub)) return context
  if (owner === undefined && path.length === 1 && path[0] === users.collection && READ_METHODS.has(method)) {
    // A listing of the users answers the caller alone: its filter on the id counts in X-Total-Count and pages too.
    const narrowed = new URLSearchParams(query)
    narrowed.set(users.idField, caller.sub)
    return { ...context, query: narrowed }
  }
  const whose = owner === undefined ? 'no user\'s subtree, so only the administrator\'s (--token)' : `${users.collection} ${JSON.stringify(owner)}'s`
  throw new HttpError(403, `Private resource access: ${context.target.split('?')[0]} is ${whose}; the access of ${family.collection} is ${rule.guard}.`)
}

/**
 * How a stream (or `?_changes`) the check let through tells its changes (lib/resources/change-access.ts,
 * as on a db.json): the users' collection only the caller's own record and what lies below it; a
 * subtree the caller may read whole, every change; never a hash; the stream ends with its token.
 */
async function familyChangeView(context: Context, accounts: Accounts, users: Family): Promise<ChangeView> {
  const { path, settings } = context
  const family = familyOf(settings.families, path)!
  const read = accessRuleOf(family.access ?? DEFAULT_ACCESS)!.read
  const caller = read !== 'everyone' || context.requestHeaders.authorization ? await callerOf(context, accounts) : undefined
  const own = caller !== undefined && path[0] === users.collection && path.length >= 2 && path[1] === caller.sub
  // Another's subtree, which its family's access lets the caller read, is streamed whole only when no family below reads more narrowly.
  const narrower = (below: Family) => READERS.indexOf(accessRuleOf(below.access ?? DEFAULT_ACCESS)!.read) > READERS.indexOf(read)
  if (!own && read !== 'owner' && descendantsOf(settings.families, family).some(narrower)) {
    throw new HttpError(403, `Under --auth the changes of ${context.target.split('?')[0]} would carry documents below it that you may not read; stream /${users.collection}/<your ${users.idField}>.`)
  }
  if (!caller) return openView()
  const endsAt = caller.exp * 1000
  const view = own || read !== 'owner' ? openView(endsAt) : ownerView({ documents: context.documents, path, sub: caller.sub, field: users.idField, endsAt })
  view.endedBy = tokenEndedBy(caller.sub, (hash) => passwordClaim(accounts.secret, hash) === caller.pwd, users.collection)
  return view
}

/** Who reads, from the widest audience to the narrowest. */
const READERS: readonly Audience[] = ['everyone', 'signed-in', 'owner', 'nobody']

/** The families declared below `family`, at any depth. */
function descendantsOf(families: readonly Family[], family: Family): Family[] {
  const children = families.filter((candidate) => candidate.parent === family)
  return children.flatMap((child) => [child, ...descendantsOf(families, child)])
}

/**
 * A join reads documents the request's own path does not name: `_expand=note` the `/notes/…` a
 * `noteId` points to, `_embed` the documents below each one answered, or a parent by a singular name.
 * Until each joined document is checked on its own, a user joins only their family's declared
 * children within their own subtree (`/user/:user_id/playlist?_embed=…`, `/user?_embed=playlist`
 * narrowed to themselves); the administrator joins anything.
 */
async function checkRelations(context: Context, accounts: Accounts, users: Family, family: Family, owner: string | undefined, read: Audience): Promise<void> {
  if (context.query.has('_expand')) throw new HttpError(403, 'Under --auth, _expand is the administrator\'s for now: the document it joins may be another user\'s.')
  for (const name of context.query.getAll('_embed')) {
    if (!context.settings.families.some((candidate) => candidate.parent === family && candidate.collection === name)) {
      throw new HttpError(403, `Under --auth, _embed joins only a family declared below ${family.collection} for now: ${JSON.stringify(name)} is not one.`)
    }
  }
  const caller = await callerOf(context, accounts)
  const ownListing = owner === undefined && context.path.length === 1 && context.path[0] === users.collection && read === 'owner'
  if (caller.sub !== owner && !ownListing) throw new HttpError(403, 'Under --auth, _embed is served within your own subtree for now: the documents it joins may be another user\'s.')
}

/** The innermost declared family a path lies in: `/user/1/playlist/2/x` is a playlist's. */
function familyOf(families: readonly Family[], path: readonly string[]): Family | undefined {
  let found: Family | undefined
  for (let index = 0; index < path.length; index += 2) {
    const next = families.find((candidate) => candidate.parent === found && candidate.collection === path[index])
    if (!next) break
    found = next
  }
  return found
}

function checkPassword(password: unknown): asserts password is string {
  if (typeof password !== 'string') throw new HttpError(400, 'Password is required: send it as a string.')
  if (password.length < MIN_PASSWORD_LENGTH) throw new HttpError(400, `Password is too short: it needs at least ${MIN_PASSWORD_LENGTH} characters.`)
}

/** `POST /user` with `username` and `password`: the family's own create, the password stored as its hash; `201 { accessToken, user }`. */
async function register(context: Context, accounts: Accounts, users: Family, inner: Inner): Promise<Answer> {
  const body = await context.body.json()
  if (typeof body.username !== 'string' || body.username.trim() === '' || body.password === undefined) {
    throw new HttpError(400, 'Username and password are required: send both, as strings, in a JSON body.')
  }
  checkPassword(body.password)
  const fields: JsonObject = { ...body }
  defineValue(fields, 'password', await accounts.hashes.hash(body.password, BCRYPT_COST))
  const created = await inner({ ...context, body: jsonBody(fields) })
  if (created.status !== 201 || created.body === undefined) return withoutHashes(created, context)
  const user = JSON.parse(String(created.body)) as Doc
  const answer = tokenAnswer(context, accounts, users, 201, user)
  return { ...answer, headers: { ...answer.headers, ...(created.headers?.Location ? { Location: created.headers.Location } : {}) } }
}

/** `POST /login` with `username` and `password`: `200 { accessToken, user }`; slowed after failures, per account and per address. */
async function logIn(context: Context, accounts: Accounts, users: Family): Promise<Answer> {
  const body = await context.body.json()
  const { username, password } = body
  if (typeof username !== 'string' || username === '' || typeof password !== 'string' || password === '') {
    throw new HttpError(400, 'Username and password are required: send both, as strings, in a JSON body.')
  }
  const account = accountKey(username)
  const keys = [account, addressKey(context.connection.remoteAddress ?? '')]
  const wait = accounts.throttle.attempt(keys)
  // RFC 6585 §4: too many requests, and when to try again.
  if (wait > 0) throw new HttpError(429, `Too many failed logins for this account or from this address; try again in ${wait} seconds.`, { 'Retry-After': String(wait) })
  const user = await memberWhere(context.documents, users.collection, 'username', username)
  if (!user) throw new HttpError(400, `Cannot find user: no user has this username; register first (POST /${users.collection}).`)
  let same: boolean
  try {
    same = await accounts.hashes.verify(password, String(user.password))
  } catch (error) {
    if (!(error instanceof MalformedHash)) throw error
    throw new HttpError(400, 'Incorrect password: the user\'s stored password is not a bcrypt hash (was it written by hand?); set a new one with PATCH, which hashes it.')
  }
  if (!same) throw new HttpError(400, 'Incorrect password.')
  accounts.throttle.succeeded(account, keys.slice(1))
  return tokenAnswer(context, accounts, users, 200, user)
}

/** The token names the user by its id (`sub`), and the password it was issued for, so that a new password ends it. */
function tokenAnswer(context: Context, accounts: Accounts, users: Family, status: number, user: Doc): Answer {
  const sub = String(user[users.idField])
  const accessToken = signToken({ sub }, accounts.secret, { claims: { username: String(user.username), [PASSWORD_CLAIM]: passwordClaim(accounts.secret, user.password) } })
  const shown: Doc = {}
  for (const [key, value] of Object.entries(user)) if (key !== 'password') defineValue(shown, key, value)
  return jsonAnswer(context, status, { accessToken, user: shown })
}

/**
 * A user's PUT or PATCH, its password hashed before it is stored. A PUT without a password keeps
 * the stored one (its GET never shows it, so a client replacing what it read could not send it back).
 */
async function hashedBody(context: Context, accounts: Accounts): Promise<RequestBody> {
  if (context.method === 'PUT') {
    const body = await context.body.json()
    const fields: JsonObject = { ...body }
    if (Object.hasOwn(body, 'password')) {
      checkPassword(body.password)
      defineValue(fields, 'password', await accounts.hashes.hash(body.password, BCRYPT_COST))
    } else {
      const stored = await context.documents.read(context.path)
      if (stored && stored.doc.password !== undefined) defineValue(fields, 'password', stored.doc.password)
    }
    return jsonBody(fields)
  }
  const patch = await context.body.patch()
  if (patch.type === 'json-patch') {
    const touches = Array.isArray(patch.operations) && patch.operations.some((operation) => typeof operation === 'object' && operation !== null && /^\/password(\/|$)/.test(String((operation as JsonObject).path)))
    if (touches) throw new HttpError(400, 'A user\'s password is changed by a merge patch or a PUT, where it is hashed, not by a JSON Patch.')
    return patchBody(patch)
  }
  if (!Object.hasOwn(patch.patch, 'password')) return patchBody(patch)
  checkPassword(patch.patch.password)
  const changed: JsonObject = { ...patch.patch }
  defineValue(changed, 'password', await accounts.hashes.hash(patch.patch.password, BCRYPT_COST))
  return patchBody({ type: 'merge', patch: changed })
}
