import { accessRuleOf, type Audience } from '../auth/access-rules.ts'
import { rewriteTarget, type RewriteRule } from '../middleware/rewrite.ts'
import type { Family } from '../data/declarations.ts'
import { DEFAULT_ACCESS } from './family-access.ts'

/*
 * The API description under `--auth` (docs/accounts.md, "The API description"): the bearer
 * scheme of the accounts' tokens (RFC 6750, a JWT), the operations that register and log in
 * with their bodies and answers, and json-server-auth's guards, each guard's two paths saying
 * who may read and write behind it and the `401` and `403` it answers; a collection a routes
 * file puts behind a guard (`{ "messages": 640 }`) is described as that guard's. Who may call an
 * unguarded path is unchanged: everyone.
 */

type Schema = Record<string, unknown>
type Operation = Record<string, unknown>
type Paths = Record<string, Record<string, Operation>>

/** json-server-auth's guards, as lib/auth/access-rules.ts reads them; `666` lets everyone do everything and is described too. */
const GUARDS = ['664', '660', '644', '640', '600', '444', '440', '400', '666']
const READS = new Set(['get', 'head'])

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const answer = (name: string) => ({ $ref: `#/components/responses/${name}` })
const problemContent = { 'application/problem+json': { schema: ref('Problem') } }

export const securitySchemes = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'The accessToken POST /register and POST /login answer (HS256, one hour), sent as Authorization: Bearer <accessToken>. Only guarded paths (/600/…, /640/… and the others) ask for it.',
  },
}

/**
 * The scheme on the declared families (docs/accounts.md, "The declared families"): the users'
 * tokens, and the administrator's `--token` when the server has one.
 */
export function familySchemes(users: string, administrator: boolean) {
  const key = administrator ? ' The administrator\'s key, the --token the server was started with, is sent the same way (Authorization: Bearer <token>) and may do everything: the root, every user\'s subtree, ?_reset.' : ''
  return {
    bearer: {
      ...securitySchemes.bearer,
      description: `The accessToken POST /${users} (registering) and POST /login answer (HS256, one hour), sent as Authorization: Bearer <accessToken>. A family's access says which of its reads and writes ask for it.${key}`,
    },
  }
}

/** The answers a guard adds: its own 401 (with the challenge of RFC 6750 §3) and 403. */
export const responses = {
  Unauthorized: {
    description: 'No valid access token: none sent, or one malformed, of another algorithm, badly signed, expired, of a deleted user or issued before its user\'s password changed; the detail names which',
    headers: { 'WWW-Authenticate': { description: 'Bearer realm="restdir", with error="invalid_token" when a token was refused', schema: { type: 'string' } } },
    content: problemContent,
  },
  Forbidden: {
    description: 'The guard does not let this user do this: the document (or the body\'s userId) is another user\'s, or the guard lets nobody write',
    content: problemContent,
  },
}

/** The same, where a family's access (not a guard) refuses: the path is another user's, or no user's. */
export const familyResponses = {
  ...responses,
  Forbidden: {
    description: 'The family\'s access does not let this user do this: the path is in another user\'s subtree, in no user\'s (the administrator\'s, --token), or the access lets nobody write',
    content: problemContent,
  },
}

const NAMES = {
  email: { description: 'An address such as ada@example.com', credentials: 'An email and a password' },
  username: { description: 'Unique among the users', credentials: 'A username and a password' },
}

/**
 * The schemas of registering and logging in; `users` names the stored users' schema when the store
 * has them, `by` the field a user logs in with (a db.json's `email`, the declared families' `username`).
 */
export function accountSchemas(users: string | undefined, by: keyof typeof NAMES = 'email'): Record<string, Schema> {
  return {
    Credentials: {
      type: 'object',
      description: `${NAMES[by].credentials}; to register, any other fields of the new user beside them`,
      required: [by, 'password'],
      properties: {
        [by]: { type: 'string', description: NAMES[by].description },
        password: { type: 'string', minLength: 4, writeOnly: true, description: 'Stored as a bcrypt hash, never answered' },
      },
    },
    Session: {
      type: 'object',
      required: ['accessToken', 'user'],
      properties: {
        accessToken: { type: 'string', description: `A JWT (HS256): sub the user's id, ${by}, one hour; send it as Authorization: Bearer <accessToken>` },
        user: users ? { ...ref(users), description: 'The user, without its password' } : { type: 'object', description: 'The user, without its password' },
      },
    },
  }
}

/** A user as sent: the stored schema's fields (which never hold the password, left out of every answer) and the password to hash. */
export function userInputSchema(input: Schema): Schema {
  const properties = { ...(input.properties as Record<string, Schema> | undefined), password: { type: 'string', minLength: 4, writeOnly: true, description: 'Stored as a bcrypt hash, never answered' } }
  return { ...input, properties }
}

const REFUSALS = 'json-server-auth\'s refusals: Email and password are required, Email format is invalid, Password is too short, Email already exists, Cannot find user, Incorrect password'
const FAMILY_REFUSALS = 'Username and password are required, Password is too short, Cannot find user, Incorrect password'

function sessionOperation(operationId: string, summary: string, status: '200' | '201', extra: Record<string, unknown>, refusals = REFUSALS): Operation {
  return {
    operationId,
    summary,
    security: [],
    requestBody: { required: true, content: { 'application/json': { schema: ref('Credentials') } } },
    responses: {
      [status]: { description: 'The token and the user', content: { 'application/json': { schema: ref('Session') } } },
      400: { description: refusals, content: problemContent },
      ...extra,
    },
  }
}

const BUSY = { description: 'Too many passwords are being hashed now; try again after Retry-After', content: problemContent }

/** `POST /register` and its other names, as an operation (also `POST /users` under `--auth`). */
export function registerOperation(operationId: string): Operation {
  return sessionOperation(operationId, 'Register: a new user in users, its password stored as a bcrypt hash', '201', {
    404: { description: 'The db.json has no users collection to register in', content: problemContent },
    503: BUSY,
  })
}

const logInOperation = (operationId: string, by = 'email', refusals = REFUSALS) =>
  sessionOperation(operationId, `Log in: a new token for the user of this ${by} and password`, '200', {
    429: { description: 'Too many failed logins of this account or from this address; try again after Retry-After', content: problemContent },
    503: BUSY,
  }, refusals)

/**
 * The paths that register and log in, each guard's two paths, and the described collections
 * (`collections`, their names) that the routes file's `rules` rewrite behind a guard.
 */
export function describeAccounts(paths: Paths, rules: readonly RewriteRule[], collections: readonly string[]): void {
  for (const name of collections) {
    const url = '/' + encodeURIComponent(name)
    // A collection and one of its documents, as a request names them: the rules see what the handler would.
    for (const [route, target] of [[url, url], [`${url}/{id}`, `${url}/1`]]) {
      const rule = rules.length > 0 && paths[route] ? accessRuleOf(rewriteTarget(rules, target).split(/[/?]/)[1]) : undefined
      if (!rule) continue
      const kept = name === 'users' && route === url ? paths[route].post : undefined
      paths[route] = guarded(rule.guard, paths[route], false)
      // `POST /users` still registers behind a guard (docs/accounts.md, "Register and log in").
      if (kept) paths[route].post = kept
    }
  }
  paths['/register'] = { post: registerOperation('register') }
  paths['/signup'] = { post: registerOperation('signup') }
  paths['/login'] = { post: logInOperation('login') }
  paths['/signin'] = { post: logInOperation('signin') }
  const collection = paths['/{collection}']
  const document = paths['/{collection}/{id}']
  for (const guard of GUARDS) {
    paths[`/${guard}/{collection}`] = guarded(guard, collection, true)
    paths[`/${guard}/{collection}/{id}`] = guarded(guard, document, true)
  }
}

const SAYS: Record<Audience, string> = { everyone: 'everyone', 'signed-in': 'any signed-in user', owner: 'only the owner (the user its userId names)', nobody: 'nobody' }
const FAMILY_SAYS: Record<Audience, string> = { ...SAYS, owner: 'only the owner (the user whose subtree it is)' }

/** A declared family's two paths (its collection's, its member's) under `--auth`. */
export type DescribedFamily = { family: Family; schemaName: string; paths: readonly string[] }

/**
 * The declared families under `--auth` (docs/accounts.md, "The declared families"): each family's
 * paths as its `access` says (without one, the seed's `600`), `POST /<users>` registering with a
 * username and `POST /login`; every other path (the root, an undeclared one) is the administrator's.
 * As lib/resources/family-access.ts checks it: `nobody` is refused before any token is asked for.
 */
export function describeFamilyAccounts(paths: Paths, families: readonly DescribedFamily[], users: Family, administrator: boolean): void {
  const own = new Set<string>()
  const asksWho = (audience: Audience) => audience === 'signed-in' || audience === 'owner'
  // A path nobody may write is still the administrator's, with its key.
  const keyed = (audience: Audience) => asksWho(audience) || (administrator && audience === 'nobody')
  for (const { family, paths: urls } of families) {
    const rule = accessRuleOf(family.access ?? DEFAULT_ACCESS)!
    for (const url of urls) {
      own.add(url)
      if (paths[url]) paths[url] = withAccess(paths[url], rule, `access ${rule.guard}`, FAMILY_SAYS, asksWho, keyed)
    }
  }
  const administrators = { ...SAYS, nobody: administrator ? 'the administrator alone (--token)' : 'nobody: the administrator\'s, and the server has no --token' }
  for (const [url, operations] of Object.entries(paths)) {
    // The root, the generic paths and an undeclared collection: the administrator's key only.
    if (!own.has(url)) paths[url] = withAccess(operations, { guard: 'admin', read: 'nobody', write: 'nobody' }, 'under --auth', administrators, () => false, keyed)
  }
  // A batch (`POST /?_batch`) is anyone's: each of its requests is checked as its caller, so the token is optional and a request may be refused either way.
  const batch = paths['/']?.post
  if (batch) {
    batch.security = [{ bearer: [] }, {}]
    ;(batch.responses as Record<string, unknown>)['401'] = answer('Unauthorized')
  }
  const register = sessionOperation(`register_${users.collection.replace(/\W/g, '_')}`, 'Register: a new user, its password stored as a bcrypt hash', '201', {
    409: { description: 'The username is taken', content: problemContent },
    503: BUSY,
  }, FAMILY_REFUSALS)
  const collection = paths['/' + encodeURIComponent(users.collection)]
  if (collection?.post) collection.post = register
  paths['/login'] = { post: logInOperation('login', 'username', FAMILY_REFUSALS) }
}

/** The operations of a path behind `guard`: who may call each, and the 401 and 403 it answers; `renamed` when they are copies beside the unguarded ones. */
function guarded(guard: string, operations: Record<string, Operation>, renamed: boolean): Record<string, Operation> {
  const rule = accessRuleOf(guard)
  if (!rule) throw new Error(`${guard} is not a guard`)
  // `440` and `400` ask who is writing before they refuse it, as json-server-auth's guards run in that order.
  const asksWho = (audience: Audience) => audience === 'signed-in' || audience === 'owner' || (audience === 'nobody' && rule.read !== 'everyone')
  return withAccess(operations, rule, `behind ${guard}`, SAYS, asksWho, asksWho, renamed ? `guard${guard}_` : undefined)
}

/**
 * The operations of a path under `rule`, said as `where`: who may call each, the bearer token asked
 * for where `keyed`, a `401` where `asksWho` the caller is, a `403` where some are refused.
 */
function withAccess(operations: Record<string, Operation>, rule: { guard: string; read: Audience; write: Audience }, where: string, says: Record<Audience, string>, asksWho: (audience: Audience) => boolean, keyed: (audience: Audience) => boolean, prefix?: string): Record<string, Operation> {
  const described: Record<string, Operation> = {}
  for (const [method, operation] of Object.entries(operations)) {
    const copy: Operation = structuredClone(operation)
    if (prefix) copy.operationId = `${prefix}${String(operation.operationId)}`
    const responses = copy.responses as Record<string, unknown>
    delete responses['401']
    delete responses['403']
    if (method === 'options') {
      // OPTIONS reads and writes nothing: every guard lets it pass.
      described[method] = { ...copy, security: [] }
      continue
    }
    const audience = READS.has(method) ? rule.read : rule.write
    copy.summary = `${String(operation.summary)}, ${where}: ${READS.has(method) ? 'read' : 'written'} by ${says[audience]}`
    const asks = asksWho(audience)
    copy.security = keyed(audience) ? [{ bearer: [] }] : []
    if (asks) responses['401'] = answer('Unauthorized')
    if (audience === 'owner' || audience === 'nobody') responses['403'] = answer('Forbidden')
    described[method] = copy
  }
  return described
}
