import type { Answer, Answering, Context } from '../http/context.ts'
import type { Doc } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { accessRuleOf, type AccessRule, type Audience } from '../auth/access-rules.ts'
import { verifyToken, type TokenRefusal } from '../auth/jwt.ts'
import { withoutPasswordHashes } from '../auth/password-hashes.ts'
import { indentJson } from '../json/indent.ts'
import { emptyCollectionAnswer } from './collection.ts'
import { wantsChanges, withChangeView } from './events.ts'
import { openView, ownerView, tokenEndedBy } from './change-access.ts'
import { jsonBody, logIn, logsIn, passwordClaim, PASSWORD_CLAIM, register, registers, userWriteBody, type Accounts } from './accounts.ts'

/*
 * The access check of `--auth` (docs/accounts.md), at the one place every
 * request passes, from the network and inside a batch (lib/handler.ts,
 * dispatch): registering and logging in, json-server-auth's guards in front of
 * a URL (`/600/messages/1`, or what `--routes` rewrote to it), and every answer
 * without its password hashes. A guard's refusal is a problem: `401` with the
 * reason a token was refused and `WWW-Authenticate` (RFC 6750 §3), `403` when
 * the caller may not; each detail starts with json-server-auth's own message.
 */

/** The caller a token names: the user's id as the token's `sub`. */
export interface Caller {
  sub: string
  /** When its token expires, in seconds (RFC 7519 §4.1.4). */
  exp: number
  /** The token's digest of the password hash it was issued for. */
  pwd: unknown
}

type Inner = (context: Context) => Answering

/** The answer to a request under `--auth`: the check first, then `inner`'s answer, without password hashes. */
export async function answerWithAccess(context: Context, accounts: Accounts, inner: Inner): Promise<Answer> {
  const rule = context.path.length > 1 ? accessRuleOf(context.path[0]) : undefined
  const path = rule ? context.path.slice(1) : context.path
  // Behind a guard, the URLs an answer gives (Location, a page's Link) keep the guard.
  let inside: Context = rule ? { ...context, path, base: `${context.base}/${rule.guard}` } : context
  if (context.method === 'POST' && registers(path, rule !== undefined)) return register(inside, accounts)
  if (context.method === 'POST' && !rule && logsIn(path)) return logIn(inside, accounts)
  // A user's PUT or PATCH is checked as json-server-auth checks it before its guard, and its password hashed after.
  const userWrite = path[0] === 'users' && path.length === 2 && (context.method === 'PUT' || context.method === 'PATCH') ? await userWriteBody(inside) : undefined
  if (userWrite) inside = { ...inside, body: userWrite.body }
  // The root's and /db's changes are every collection's, which a routes file's guards would not narrow.
  if ((path.length === 0 || path[0] === 'db') && wantsChanges(inside) && context.settings.rewrites.some((rewrite) => accessRuleOf(rewrite.target.split('/')[1]))) {
    throw new HttpError(403, 'Under --auth with guards in the routes file, the changes of the root and of /db are not streamed: stream each collection at its own URL.')
  }
  if (rule) {
    const checked = await checkAccess(inside, rule, accounts)
    if (checked.answer) return checked.answer
    inside = checked.context
  }
  if (wantsChanges(inside)) inside = withChangeView(inside, await changeView(inside, rule, accounts))
  if (userWrite) inside = { ...inside, body: await userWrite.hashed(accounts) }
  return withoutHashes(await inner(inside), context)
}

/** An answer whose body holds no password hash (lib/auth/password-hashes.ts); the stored version's ETag still names it. */
export function withoutHashes(answer: Answer, context: Context): Answer {
  if (answer.body === undefined) return answer
  const text = typeof answer.body === 'string' ? answer.body : answer.body.toString('utf8')
  const kept = withoutPasswordHashes(text)
  if (kept === text) return answer
  // The json-server mode lays its answers out as json-server does; what is left is laid out again.
  const body = context.settings.jsonServer ? `${indentJson(kept)}\n` : kept
  return { ...answer, body, length: undefined }
}

/** How a stream (or `?_changes`) tells its changes (lib/resources/change-access.ts): behind an owner's guard, only the caller's; else all; never a hash. */
async function changeView(context: Context, rule: AccessRule | undefined, accounts: Accounts) {
  if (!rule || rule.read === 'everyone') return openView()
  const caller = await callerOf(context, accounts)
  const view = rule.read !== 'owner'
    ? openView(caller.exp * 1000)
    : ownerView({ documents: context.documents, path: context.path, sub: caller.sub, field: ownerField(context, context.path[0]), endsAt: caller.exp * 1000 })
  view.endedBy = tokenEndedBy(caller.sub, (hash) => passwordClaim(accounts.secret, hash) === caller.pwd)
  return view
}

/** What a guard lets through: the request, its listing narrowed to the caller's; or an answer already. */
type Checked = { context: Context; answer?: undefined } | { answer: Answer; context?: undefined }

const READ_METHODS = new Set(['GET', 'HEAD'])

async function checkAccess(context: Context, rule: AccessRule, accounts: Accounts): Promise<Checked> {
  const { method } = context
  // OPTIONS reads and writes nothing: json-server-auth's guards let it pass too.
  if (method === 'OPTIONS') return { context }
  const audience: Audience = READ_METHODS.has(method) ? rule.read : rule.write
  if (audience === 'everyone') return { context }
  if (audience === 'nobody') {
    // `440` and `400` ask who is writing (and `400` whether they own it) before they refuse it, as json-server-auth's guards run in that order.
    if (rule.read !== 'everyone') {
      const caller = await callerOf(context, accounts)
      if (rule.read === 'owner') await ownersOnly(context, caller)
    }
    throw new HttpError(403, `Read only: ${rule.guard} lets nobody write here.`)
  }
  const caller = await callerOf(context, accounts)
  if (audience === 'signed-in') return { context }
  return ownersOnly(context, caller)
}

/** The field naming a document's owner: a user's own id, else `user` and the foreign key suffix (`userId`). */
function ownerField(context: Context, collection: string): string {
  return collection === 'users' ? context.settings.idField : `user${context.settings.foreignKeySuffix}`
}

function owns(caller: Caller, doc: Doc | undefined, field: string): boolean {
  const owner = doc?.[field]
  return owner !== undefined && owner !== null && String(owner) === caller.sub
}

/**
 * A guard whose audience is the owner: json-server-auth's `privateOnly`, safer where it
 * is loose (docs/accounts.md, "What restdir does that json-server-auth does not"): a
 * listing answers only the caller's documents, a PUT may not take another's document,
 * and a collection is not replaced or deleted whole.
 */
async function ownersOnly(context: Context, caller: Caller): Promise<Checked> {
  const { method, path, documents } = context
  const [collection, id] = path
  const field = ownerField(context, collection)
  // Child names are not narrowed to the caller's documents yet: refused rather than told whole.
  if (context.query.has('_children')) throw new HttpError(403, 'Private resource access: behind an owner\'s guard, _children is not served yet; read the documents themselves.')
  if (path.length === 1 && READ_METHODS.has(method)) {
    if (collection === 'db') throw new HttpError(403, 'Private resource access: /db holds every user\'s documents; read each collection behind its guard.')
    const singular = await documents.read([collection])
    if (singular) return owns(caller, singular.doc, field) ? { context } : refuseAccess()
    return narrowedListing(context, caller, field)
  }
  if (method === 'POST' && path.length === 1) {
    const body = await context.body.json()
    if (!owns(caller, body, field)) throw new HttpError(403, `Private resource creation: request body must have a reference to the owner id (${JSON.stringify(field)}: ${caller.sub}).`)
    return { context: { ...context, body: jsonBody(body) } }
  }
  if (path.length === 1) {
    const singular = await documents.read([collection])
    if (singular && owns(caller, singular.doc, field) && method !== 'DELETE') return checkedBody(context, caller, field)
    throw new HttpError(403, 'Private resource access: entity must have a reference to the owner id; a guarded collection is written one document at a time.')
  }
  // A PUT's body is looked at first, as json-server-auth does, then what it would replace.
  const checked = path.length === 2 && method === 'PUT' ? await checkedBody(context, caller, field) : { context }
  const stored = await documents.read([collection, id])
  if (stored && !owns(caller, stored.doc, field)) return refuseAccess()
  return checked
}

/** A PUT's body must name the caller as its owner, as json-server-auth asks (a user's own record may leave it out). */
async function checkedBody(context: Context, caller: Caller, field: string): Promise<Checked> {
  if (context.method !== 'PUT') return { context }
  const body = await context.body.json()
  const ownRecord = context.path[0] === 'users' && context.path[1] === caller.sub
  if (!ownRecord && !owns(caller, body, field)) throw new HttpError(403, `Private resource replacement: request body must have a reference to the owner id (${JSON.stringify(field)}: ${caller.sub}).`)
  return { context: { ...context, body: jsonBody(body) } }
}

function refuseAccess(): never {
  throw new HttpError(403, 'Private resource access: entity must have a reference to the owner id; it belongs to another user.')
}

/**
 * A guarded listing answers only the caller's documents: the query gains the filter
 * `userId_eq=<caller>` (an operator, which json-server's leniency for fields no
 * document has never drops), so filters, pages and X-Total-Count count only those.
 * A caller who asks for another owner's documents gets none.
 */
function narrowedListing(context: Context, caller: Caller, field: string): Checked {
  const query = new URLSearchParams(context.query)
  const key = `${field}_eq`
  const asked = query.getAll(key)
  if (asked.length > 0 && !asked.includes(caller.sub)) return { answer: emptyCollectionAnswer({ ...context, query: withoutKey(query, key) }, context.path) }
  query.set(key, caller.sub)
  return { context: { ...context, query } }
}

function withoutKey(query: URLSearchParams, key: string): URLSearchParams {
  const copy = new URLSearchParams(query)
  copy.delete(key)
  return copy
}

/** jsonwebtoken's words for each refusal, which json-server-auth answers as they are: a token of three parts that cannot be read is its `invalid token`. */
function refusalWords(reason: TokenRefusal, token: string): string {
  return reason === 'malformed' && token.split('.').length === 3 ? 'invalid token' : REFUSAL_WORDS[reason]
}

const REFUSAL_WORDS: Record<TokenRefusal, string> = {
  malformed: 'jwt malformed',
  algorithm: 'invalid algorithm',
  signature: 'invalid signature',
  expired: 'jwt expired',
  'not-yet-valid': 'jwt not active',
}

/** The signed-in caller, from `Authorization: Bearer <token>`; a 401 naming why not. */
export async function callerOf(context: Context, accounts: Accounts): Promise<Caller> {
  const header = context.requestHeaders.authorization
  if (header === undefined || header === '') throw unauthorized('Missing authorization header: send "Authorization: Bearer <accessToken>", the token POST /login answers.')
  const [scheme, token] = header.split(' ')
  if (scheme !== 'Bearer') throw unauthorized('Incorrect authorization scheme: send "Authorization: Bearer <accessToken>".', 'invalid_request')
  if (!token) throw unauthorized('Missing token: send "Authorization: Bearer <accessToken>".', 'invalid_request')
  const verdict = verifyToken(token, accounts.secret)
  if (!verdict.ok) throw unauthorized(`${refusalWords(verdict.reason, token)}: ${verdict.message}; log in again (POST /login) for a new token.`, 'invalid_token')
  const { sub } = verdict.claims
  const user = await context.documents.read([accounts.collection, sub])
  if (!user) throw unauthorized('invalid token: its user no longer exists.', 'invalid_token')
  if (verdict.claims[PASSWORD_CLAIM] !== passwordClaim(accounts.secret, user.doc.password)) {
    throw unauthorized('invalid token: it was issued before the user\'s password changed; log in again (POST /login).', 'invalid_token')
  }
  return { sub, exp: verdict.claims.exp, pwd: verdict.claims[PASSWORD_CLAIM] }
}

/** A 401 with its challenge (RFC 6750 §3): no error code when no token was sent (§3.1). */
function unauthorized(detail: string, error?: 'invalid_request' | 'invalid_token'): HttpError {
  return new HttpError(401, detail, { 'WWW-Authenticate': `Bearer realm="restdir"${error ? `, error="${error}"` : ''}` })
}
