import { createHmac, randomBytes } from 'node:crypto'
import type { Answer, Answering, Context } from '../http/context.ts'
import type { PatchBody, RequestBody } from '../http/body.ts'
import type { Doc, Store } from '../store/store.ts'
import type { Documents } from '../data/documents.ts'
import type { ListingQuery } from '../listing/query.ts'
import { selectListing } from '../listing/listing.ts'
import type { Family } from '../data/declarations.ts'
import { FileStore } from '../store/file/file-store.ts'
import { HttpError } from '../http-error.ts'
import { jsonAnswer } from '../http/respond.ts'
import { defineValue, type JsonObject } from '../json/values.ts'
import { createHashPool, type HashPool } from '../auth/hash-pool.ts'
import { MalformedHash } from '../auth/bcrypt.ts'
import { signToken } from '../auth/jwt.ts'
import { explicitSecret, resolveSecret, secretPathFor } from '../auth/secret.ts'
import { accountKey, addressKey, createThrottle, type Throttle } from '../auth/throttle.ts'
import { createMember } from './json-server/plural.ts'

/*
 * Accounts on a db.json as json-server-auth keeps them (docs/accounts.md): the
 * file's `users` collection, each user an `email`, a `password` stored as a
 * bcrypt hash and any other fields. `POST /register` (or `/signup`, `/users`)
 * and `POST /login` (or `/signin`) answer `{ accessToken, user }`, with
 * json-server-auth's validations and messages, each a problem whose detail
 * starts with json-server-auth's words. What it does not do is done here too:
 * hashes are made off the event loop, logins are slowed per account and per
 * address, one email makes one account however many ask at once, and a token
 * names the password it was issued for, so that changing it ends every older token.
 */

/** json-server-auth's constants (its EMAIL_REGEX, MIN_PASSWORD_LENGTH and SALT_LENGTH, the bcrypt cost). */
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/
export const MIN_PASSWORD_LENGTH = 4
export const BCRYPT_COST = 10
/** The token's claim naming the password it was issued for (docs/accounts.md, "Tokens"). */
export const PASSWORD_CLAIM = 'pwd'

/**
 * A request's way under --auth (lib/resources/access.ts for a db.json's users, lib/resources/family-access.ts
 * for a declared family's): the access rules answer it, or hand it on to `inner`.
 */
export type AccessAnswer = (context: Context, accounts: Accounts, inner: (context: Context) => Answering) => Promise<Answer>

/** What the accounts of one server share: the signing secret, the hashing threads, the login throttle. */
export interface Accounts {
  /** The collection holding the users: a db.json's `users`, or the declared family of usernames (`user`). */
  collection: string
  /** On the declared families, the family of usernames (lib/resources/family-access.ts); undefined on a db.json. */
  family?: Family
  secret: Buffer
  hashes: HashPool
  throttle: Throttle
  /** Registrations under way, by email: the next one of the same email waits for it. */
  registering: Map<string, Promise<unknown>>
}

/** The accounts of a db.json at `file` (its secret beside it unless one is given). */
export async function openAccounts(options: { file: string | undefined; secret: string | undefined }): Promise<Accounts> {
  if (options.secret === undefined && options.file === undefined) throw new Error('auth: give authSecret: a store passed as an object has no folder to keep its signing secret in.')
  const secret = await resolveSecret({ explicit: options.secret, path: options.file === undefined ? '' : secretPathFor({ file: options.file }) })
  return { collection: 'users', secret, hashes: createHashPool(), throttle: createThrottle(), registering: new Map() }
}

/**
 * The accounts of the declared families (docs/accounts.md, "The declared families"): the users are
 * `family`'s members. The secret is the one given, else the store's: a store folder's `@secret`,
 * PostgreSQL's table shared by every instance, or, in memory, a fresh one the process keeps.
 */
export async function openFamilyAccounts(store: Store, family: Family, secret: string | undefined): Promise<Accounts> {
  const candidate = randomBytes(32).toString('hex')
  const resolved = secret !== undefined
    ? explicitSecret(secret)
    : store instanceof FileStore
      ? await resolveSecret({ path: secretPathFor({ folder: store.dir }) })
      : store.sharedSecret
        ? explicitSecret(await store.sharedSecret(candidate))
        : Buffer.from(candidate, 'utf8')
  return { collection: family.collection, family, secret: resolved, hashes: createHashPool(), throttle: createThrottle(), registering: new Map() }
}

/** The paths that register (json-server-auth's users router): `/register`, `/signup`, `/users`, and `/users` behind a guard. */
export function registers(path: readonly string[], guarded: boolean): boolean {
  if (guarded) return path.length === 1 && path[0] === 'users'
  return path.length === 1 && (path[0] === 'register' || path[0] === 'signup' || path[0] === 'users')
}

/** The paths that log in: `/login`, `/signin`. */
export function logsIn(path: readonly string[]): boolean {
  return path.length === 1 && (path[0] === 'login' || path[0] === 'signin')
}

/** json-server-auth's validate: with `required`, both fields; an email of its format; a password of its length. */
function validate(body: JsonObject, required: boolean): void {
  const { email, password } = body
  if (required && (!isFilled(email) || !isFilled(password))) throw new HttpError(400, 'Email and password are required: send both, as strings, in a JSON body.')
  if (email !== undefined && email !== null && email !== '' && (typeof email !== 'string' || !EMAIL.test(email))) throw new HttpError(400, 'Email format is invalid: send an address such as ada@example.com.')
  if (password !== undefined && password !== null && password !== '' && typeof password !== 'string') throw new HttpError(400, 'Password is too short: a password is a string of at least 4 characters.')
  if (typeof password === 'string' && password !== '' && password.length < MIN_PASSWORD_LENGTH) throw new HttpError(400, `Password is too short: it needs at least ${MIN_PASSWORD_LENGTH} characters.`)
}

function isFilled(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== ''
}

/** `POST /register`: a new user in `users`, its password hashed; `201 { accessToken, user }`. */
export async function register(context: Context, accounts: Accounts): Promise<Answer> {
  const body = await context.body.json()
  validate(body, true)
  const email = body.email as string
  if (!(await context.documents.fileResources())?.includes('users')) {
    throw new HttpError(404, 'There is no "users" collection in the db.json to register in: add "users": [] to the file.')
  }
  if (await userByEmail(context, email)) throw emailTaken()
  const hash = await accounts.hashes.hash(body.password as string, BCRYPT_COST)
  // One email, one account: registrations of the same email take turns, each looking again before it writes.
  const user = await inTurn(accounts.registering, email, async () => {
    if (await userByEmail(context, email)) throw emailTaken()
    const fields: JsonObject = { email, password: hash }
    for (const [key, value] of Object.entries(body)) if (key !== 'email' && key !== 'password') defineValue(fields, key, value)
    const created = await createMember(context, ['users'], async () => undefined, fields)
    return JSON.parse(created.body as string) as Doc
  })
  return tokenAnswer(context, accounts, 201, user)
}

function emailTaken(): HttpError {
  return new HttpError(400, 'Email already exists: log in with it (POST /login), or register another.')
}

/** `POST /login`: `200 { accessToken, user }` for the right password; slowed after failures, per account and per address. */
export async function logIn(context: Context, accounts: Accounts): Promise<Answer> {
  const body = await context.body.json()
  validate(body, true)
  const email = body.email as string
  const account = accountKey(email)
  const keys = [account, addressKey(context.connection.remoteAddress ?? '')]
  const wait = accounts.throttle.attempt(keys)
  // RFC 6585 §4: too many requests, and when to try again.
  if (wait > 0) throw new HttpError(429, `Too many failed logins for this account or from this address; try again in ${wait} seconds.`, { 'Retry-After': String(wait) })
  const user = await userByEmail(context, email)
  if (!user) throw new HttpError(400, 'Cannot find user: no user has this email; register first (POST /register).')
  let same: boolean
  try {
    same = await accounts.hashes.verify(body.password as string, String(user.password))
  } catch (error) {
    if (!(error instanceof MalformedHash)) throw error
    throw new HttpError(400, 'Incorrect password: the user\'s stored password is not a bcrypt hash (was it written by hand?); set a new one with PATCH, which hashes it.')
  }
  if (!same) throw new HttpError(400, 'Incorrect password.')
  accounts.throttle.succeeded(account, keys.slice(1))
  return tokenAnswer(context, accounts, 200, user)
}

/**
 * A PUT or PATCH of a user (`/users/1`, behind a guard or not) with json-server-auth's validations
 * (PUT: email and password required), its password hashed before it is stored. Returns the
 * request's body as it is to be read from now on.
 */
export async function userWriteBody(context: Context): Promise<{ body: RequestBody; hashed(accounts: Accounts): Promise<RequestBody> }> {
  if (context.method === 'PUT') {
    const body = await context.body.json()
    validate(body, true)
    return {
      body: jsonBody(body),
      hashed: async (accounts) => jsonBody(await withHash(body, accounts)),
    }
  }
  const patch = await context.body.patch()
  if (patch.type === 'json-patch') {
    const touches = Array.isArray(patch.operations) && patch.operations.some((operation) => typeof operation === 'object' && operation !== null && /^\/password(\/|$)/.test(String((operation as JsonObject).path)))
    if (touches) throw new HttpError(400, 'A user\'s password is changed by a merge patch or a PUT, where it is hashed, not by a JSON Patch.')
    return { body: patchBody(patch), hashed: async () => patchBody(patch) }
  }
  validate(patch.patch, false)
  const changes = typeof patch.patch.password === 'string' && patch.patch.password !== ''
  return {
    body: patchBody(patch),
    hashed: async (accounts) => (changes ? patchBody({ type: 'merge', patch: await withHash(patch.patch, accounts) }) : patchBody(patch)),
  }
}

/** `fields` with its password replaced by the password's hash. */
async function withHash(fields: JsonObject, accounts: Accounts): Promise<JsonObject> {
  const replaced = { ...fields }
  defineValue(replaced, 'password', await accounts.hashes.hash(fields.password as string, BCRYPT_COST))
  return replaced
}

/** A body read already, as a JSON object: a PUT's or a POST's. */
export function jsonBody(body: JsonObject): RequestBody {
  return { json: async () => body, patch: async () => ({ type: 'merge', patch: body }) }
}

/** A PATCH's body read already; read as a document, a JSON Patch is what it is everywhere: not one. */
export function patchBody(patch: PatchBody): RequestBody {
  return {
    json: async () => {
      if (patch.type === 'merge') return patch.patch
      throw new HttpError(400, 'A JSON Patch is an array of operations, not a document.')
    },
    patch: async () => patch,
  }
}

/** The claim a token carries for `hash`: a keyed digest, so the token tells nothing of the hash, and any new hash ends it. */
export function passwordClaim(secret: Buffer, hash: unknown): string {
  return createHmac('sha256', secret).update(`password:${String(hash)}`).digest('base64url').slice(0, 22)
}

function tokenAnswer(context: Context, accounts: Accounts, status: number, user: Doc): Answer {
  const sub = String(user[context.settings.idField])
  const accessToken = signToken({ sub, email: String(user.email) }, accounts.secret, { claims: { [PASSWORD_CLAIM]: passwordClaim(accounts.secret, user.password) } })
  const shown: Doc = {}
  for (const [key, value] of Object.entries(user)) if (key !== 'password') defineValue(shown, key, value)
  return jsonAnswer(context, status, { accessToken, user: shown })
}

/** The user whose email is `email`, exactly as written (json-server-auth's `find({ email })`). */
async function userByEmail(context: Context, email: string): Promise<Doc | undefined> {
  return memberWhere(context.documents, 'users', 'email', email)
}

/**
 * The member of `collection` whose `field` is `value`, exactly (the same string, case and all), or
 * undefined. Asked as the listing `?field=value` (docs/http-api.md, "Listing queries"), which the
 * collection's listing index or the store's own query answers without reading every member; that
 * filter compares values as text, so what it finds is checked once more for the very string.
 */
export async function memberWhere(documents: Documents, collection: string, field: string, value: string): Promise<Doc | undefined> {
  const query: ListingQuery = { filters: [{ operator: 'eq', field, values: [value] }], sort: [], relations: [], start: 0, end: undefined }
  const found = await selectListing(documents, [collection], query)
  if (!found) return undefined
  return (JSON.parse(found.text) as Doc[]).find((member) => member[field] === value)
}

/** Runs `work` after any earlier work of the same key has ended. */
async function inTurn<T>(turns: Map<string, Promise<unknown>>, key: string, work: () => Promise<T>): Promise<T> {
  const before = turns.get(key) ?? Promise.resolve()
  const mine = before.catch(() => {}).then(work)
  const settled = mine.catch(() => {})
  turns.set(key, settled)
  try {
    return await mine
  } finally {
    if (turns.get(key) === settled) turns.delete(key)
  }
}
