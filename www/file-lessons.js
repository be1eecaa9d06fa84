import { apiUrl } from './api.js'

/**
 * The playground on a db.json (docs/json-server.md, "Serving a db.json"): the file is its own
 * declaration, so the page teaches on the file's own resources, read from what the store holds,
 * rather than on the users and playlists of a store folder. Only reads are asked for here: nothing
 * is written to the file unless the person sends it.
 */

/**
 * The file's resources in its order: `{ name, kind: 'collection' | 'document', value }`. `GET /db`
 * gives them all at once in the json-server mode (on for a db.json); without the mode, the root's
 * children, each read once.
 */
export async function discoverResources(base) {
  const database = await readJson(apiUrl(base, '/db'))
  if (isObject(database)) return Object.entries(database).map(([name, value]) => resourceOf(name, value)).filter(Boolean)
  const names = await readJson(apiUrl(base, '/') + '?_children')
  if (!Array.isArray(names)) return []
  const resources = []
  for (const name of names.slice(0, MOST_READ)) {
    const resource = resourceOf(name, await readJson(apiUrl(base, '/' + encodeURIComponent(name))))
    if (resource) resources.push(resource)
  }
  return resources
}

/** Without the mode's GET /db, the names read one by one: enough to find a first collection. */
const MOST_READ = 20

function resourceOf(name, value) {
  if (Array.isArray(value)) return { name, kind: 'collection', value }
  if (isObject(value)) return { name, kind: 'document', value }
  return undefined
}

/** The request the form starts with: a read of the file's first collection (or of the root). */
export function firstRequest(resources) {
  const first = resources.find((resource) => resource.kind === 'collection')
  return { method: 'GET', path: first ? pathOf(first.name) : '/', body: '' }
}

/**
 * One track of lessons on the file's own resources: its first collection listed, read, queried,
 * added to, changed and deleted from, its singular resources read, and a nested route where one
 * collection points at another. A hole `{id}` takes the id of the item the track creates.
 */
export function fileTrack(resources, fileName) {
  const file = fileName ?? 'db.json'
  const collections = resources.filter((resource) => resource.kind === 'collection')
  const documents = resources.filter((resource) => resource.kind === 'document')
  const first = collections[0] ?? { name: 'posts', value: [] }
  const path = pathOf(first.name)
  const items = first.value.filter(isObject)
  const sample = items[0]
  const fields = sample ? Object.keys(sample).filter((key) => key !== 'id') : []
  const textField = fields.find((key) => typeof sample[key] === 'string')
  const body = sample ? withoutId(sample) : { title: 'A first item' }
  const change = textField ? { [textField]: `${sample[textField]}, changed` } : { note: 'changed' }
  const steps = []
  const step = (id, fields) => steps.push({ id: `file-${first.name}-${id}`, ...fields })

  if (collections.length === 0) {
    step('create-first', {
      title: `Start a collection`, method: 'POST', path, body, expect: [201],
      explain: `${file} holds no collection yet. POST to a name and it becomes one: a new top-level array in the file.`,
      outcome: `The answer is the new item with its \`id\`; open ${file} and the \`${first.name}\` array is there.`,
    })
  }
  step('list', {
    title: `List the ${first.name}`, method: 'GET', path, expect: [200],
    explain: `\`${first.name}\` is a top-level array of ${file}: a *collection*. GET answers with every item in it.`,
    outcome: `An array${items.length ? ` of ${items.length} item${items.length === 1 ? '' : 's'}` : ' (empty, as the file holds it)'}. The \`X-Total-Count\` header counts them.`,
  })
  if (sample && (typeof sample.id === 'string' || typeof sample.id === 'number')) {
    step('read-one', {
      title: 'Read one item', method: 'GET', path: `${path}/${encodeURIComponent(String(sample.id))}`, expect: [200],
      explain: `Each item has a URL of its own, named by its \`id\`: ${JSON.stringify(sample.id)}.`,
      outcome: 'The answer is that item alone.',
    })
  }
  const sortField = fields.find((key) => ['string', 'number'].includes(typeof sample[key])) ?? 'id'
  step('query', {
    title: 'Sort and page', method: 'GET', path: `${path}?_sort=${encodeURIComponent(sortField)}&_order=desc&_page=1&_limit=2`, expect: [200],
    explain: `json-server's query parameters work as they did: \`_sort\` and \`_order\` sort, \`_page\` and \`_limit\` page, \`${sortField}=…\` filters.`,
    outcome: 'At most two items, the last by that field first; the `Link` header points to the other pages.',
  })
  step('create', {
    title: 'Add an item', method: 'POST', path, body, expect: [201],
    explain: `POST adds an item to the end of the array in ${file}${sample ? ', here one like the first' : ''}. This one writes to the file, when you send it.`,
    outcome: `The answer carries the new item with its \`id\` (the next integer when the ids are integers) and a \`Location\` header; the playground remembers the id for the next steps.`,
  })
  step('patch', {
    title: 'Change one field', method: 'PATCH', path: `${path}/{id}`, body: change, expect: [200],
    explain: 'PATCH changes only the fields it sends; the others stay as they are.',
    outcome: `The answer is the changed item, as ${file} now holds it.`,
  })
  step('delete', {
    title: 'Delete it', method: 'DELETE', path: `${path}/{id}`, expect: [200],
    explain: `DELETE removes the item from the array in ${file}.`,
    outcome: 'The answer is `{}`, as json-server answers; the tree shows the item gone.',
  })
  step('gone', {
    title: 'Check that it is gone', method: 'GET', path: `${path}/{id}`, expect: [404],
    explain: 'Ask for the deleted item again.',
    outcome: 'An error is an answer too: `404`, with a `detail` saying what went wrong.',
  })
  for (const document of documents.slice(0, 1)) {
    step(`singular-${document.name}`, {
      title: `Read ${document.name}`, method: 'GET', path: pathOf(document.name), expect: [200],
      explain: `\`${document.name}\` is a top-level object of ${file}: a *singular* resource, one document rather than a list.`,
      outcome: 'The object, as the file holds it. PUT replaces it and PATCH changes its fields.',
    })
  }
  const nested = sample !== undefined && sample.id !== undefined ? collections.find((other) => other !== first && other.value.some((item) => isObject(item) && `${singular(first.name)}Id` in item)) : undefined
  if (nested) {
    step(`nested-${nested.name}`, {
      title: `The ${nested.name} of one item`, method: 'GET', path: `${path}/${encodeURIComponent(String(sample.id))}/${encodeURIComponent(nested.name)}`, expect: [200],
      explain: `\`${nested.name}\` items point at ${first.name} by \`${singular(first.name)}Id\`: json-server's nested route lists those of one item.`,
      outcome: `The ${nested.name} whose \`${singular(first.name)}Id\` is ${JSON.stringify(sample.id)}.`,
    })
  }
  return {
    title: `Your ${file}`,
    intro: `These steps use what ${file} holds: its top-level keys are its resources, as json-server serves them. Only the steps you send change the file.`,
    steps,
    learnsFrom: first.name,
  }
}

function pathOf(name) {
  return '/' + encodeURIComponent(name)
}

function singular(name) {
  return name.endsWith('s') ? name.slice(0, -1) : name
}

function withoutId(item) {
  const { id: _id, ...rest } = item
  return rest
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

async function readJson(url) {
  try {
    const response = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' })
    return response.ok ? await response.json() : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether the server keeps accounts (`restdir db.json --auth`, or the declared families under
 * `--auth`, docs/accounts.md): its API description (`?_openapi`, a read) then names the bearer
 * scheme of its tokens and `POST /login`. The accounts as `accountsOf` tells them, or undefined.
 */
export async function discoverAccounts(base) {
  return accountsOf(await readJson(apiUrl(base, '/') + '?_openapi'))
}

/**
 * How a server described by `description` keeps its accounts, or undefined when it keeps none:
 * `register` the path whose POST takes the `Credentials` (`/register` on a db.json, the users'
 * family `/user` on the declared families), `name` the field besides the password that names the
 * account (`email` or `username`), and `families` whether a user owns a subtree (the declared
 * families, docs/accounts.md "The declared families") rather than records behind a guard.
 */
export function accountsOf(description) {
  if (description?.components?.securitySchemes?.bearer?.bearerFormat !== 'JWT' || !isObject(description.paths?.['/login'])) return undefined
  const takesCredentials = (path) => description.paths[path]?.post?.requestBody?.content?.['application/json']?.schema?.$ref === '#/components/schemas/Credentials'
  const register = ['/register', ...Object.keys(description.paths)].find(takesCredentials) ?? '/register'
  const required = description.components.schemas?.Credentials?.required ?? []
  const name = required.find((field) => field !== 'password') ?? 'email'
  return { register, name, families: register !== '/register' }
}

/**
 * The sign-in track (docs/accounts.md, "The API description and the playground"): register, log
 * in, the token sent with the next requests as `Authorization: Bearer …` (the hole `{token}`,
 * filled from the answers as ids are), a read of one's own record, the same read without the
 * token (`401`), and a `403`. On a db.json served with `--auth` the record is read behind `/600/`,
 * and the `403` is another user's record there, or, when the file held no user yet, a write
 * behind `/400/`, which lets nobody write. On the declared families (`accounts.families`) the
 * user is `/user/{me}`, and the `403` is another user's subtree.
 */
export function signInTrack(resources, fileName, accounts = { register: '/register', name: 'email', families: false }) {
  if (accounts.families) return familiesSignInTrack(accounts)
  const file = fileName ?? 'db.json'
  const users = resources.find((resource) => resource.kind === 'collection' && resource.name === 'users')
  const other = users?.value.find((user) => isObject(user) && (typeof user.id === 'number' || typeof user.id === 'string'))
  const credentials = { email: 'ada@example.com', password: 'correct horse battery staple' }
  const steps = [
    {
      id: 'signin-register', title: 'Register', method: 'POST', path: '/register', body: { ...credentials, name: 'Ada' }, expect: [201],
      explain: `The server keeps accounts in the \`users\` of ${file}, as json-server-auth does. POST /register adds one: an \`email\`, a \`password\` and any other fields. This one writes to the file, when you send it.`,
      outcome: 'The answer is `{ accessToken, user }`: the user without its password, which the file holds as a bcrypt hash that no answer ever carries. The playground keeps the token and your id for the next steps.',
      note: 'Registered before? A second registration of the same email is `400 Email already exists`: go on and log in.',
    },
    {
      id: 'signin-login', title: 'Log in', method: 'POST', path: '/login', body: credentials, expect: [200],
      explain: 'POST /login with the same email and password answers a new token. It is a JWT that names you and lasts one hour.',
      outcome: 'The playground keeps the new token, and the next steps send it as `Authorization: Bearer …`: open the curl view of an answer to see the header a terminal must send too.',
      note: THROTTLED,
    },
    {
      id: 'signin-own', title: 'Read your own record', method: 'GET', path: '/600/users/{me}', headers: bearer, expect: [200],
      explain: '`/600/` in front of a URL is a *guard*: its three digits say, as a file\'s mode does, that the owner reads and writes (6), other signed-in users nothing (0), everyone else nothing (0). In `users`, the owner of a user is that user.',
      outcome: 'Your record, without its password. The token said who you are.',
    },
    {
      id: 'signin-no-token', title: 'Without the token', method: 'GET', path: '/600/users/{me}', expect: [401],
      explain: 'Send the same read with no `Authorization` header.',
      outcome: '`401 Unauthorized`: the guard does not know who asks. The `WWW-Authenticate` header names the scheme to use, and the problem\'s `detail` says what to send.',
    },
  ]
  if (other) {
    steps.push({
      id: 'signin-forbidden', title: 'Another user\'s record', method: 'GET', path: `/600/users/${encodeURIComponent(String(other.id))}`, headers: bearer, expect: [403],
      explain: `Now read the first user ${file} holds, behind the same guard, with your token.`,
      outcome: '`403 Forbidden`: the server knows who you are, and that record is not yours. `401` means "who are you?", `403` "you may not".',
      note: 'If you logged in as that very user, the answer is `200`: register another one and send again.',
    })
  } else {
    steps.push({
      id: 'signin-forbidden', title: 'A guard that lets nobody write', method: 'PATCH', path: '/400/users/{me}', headers: bearer, body: { name: 'Ada, changed' }, expect: [403],
      explain: '`/400/` lets the owner read (4) and nobody write: send a change to your own record through it, with your token.',
      outcome: '`403 Forbidden`: the server knows who you are, and this guard lets no one write. `401` means "who are you?", `403` "you may not". The file is left as it was.',
    })
  }
  return {
    title: 'Sign in',
    intro: `This server keeps accounts (--auth): register, log in, and send the token with the requests a guard stands in front of. Only the steps you send change ${file}.`,
    steps,
    signsIn: true,
  }
}

const bearer = 'Authorization: Bearer {token}'
const THROTTLED = 'Five wrong passwords in fifteen minutes and logins of this account are refused a while (`429`, with `Retry-After`).'

/**
 * The sign-in track on the declared families (`restdir --store data --auth`): the users' family
 * is the accounts, `POST /user` with a username and a password registers, and each user owns
 * their subtree, `/user/{me}` and their playlists.
 */
function familiesSignInTrack({ register, name }) {
  const credentials = { [name]: 'ada', password: 'correct horse battery staple' }
  return {
    title: 'Sign in',
    intro: 'This server keeps accounts (--auth): each user owns their own subtree, their playlists included. Register, log in, and send the token with every request on it.',
    steps: [
      {
        id: 'signin-register', title: 'Register', method: 'POST', path: register, body: { ...credentials, name: 'Ada Lovelace' }, expect: [201],
        explain: `The users are the accounts: POST ${register} with a \`${name}\` and a \`password\` (and any other fields) registers one. Anyone may register.`,
        outcome: 'The answer is `{ accessToken, user }`: the user without its password, which the store holds as a bcrypt hash that no answer ever carries. The playground keeps the token and your id for the next steps.',
        note: `Registered before? A second registration of the same ${name} is \`409 Conflict\`: go on and log in.`,
      },
      {
        id: 'signin-login', title: 'Log in', method: 'POST', path: '/login', body: credentials, expect: [200],
        explain: `POST /login with the same ${name} and password answers a new token. It is a JWT that names you and lasts one hour.`,
        outcome: 'The playground keeps the new token, and the next steps send it as `Authorization: Bearer …`: open the curl view of an answer to see the header a terminal must send too.',
        note: THROTTLED,
      },
      {
        id: 'signin-own', title: 'Read your own user', method: 'GET', path: `${register}/{me}`, headers: bearer, expect: [200],
        explain: 'Your user, and everything below it, is yours: send the read with your token.',
        outcome: 'Your user, without its password. The token said who you are.',
      },
      {
        id: 'signin-no-token', title: 'Without the token', method: 'GET', path: `${register}/{me}`, expect: [401],
        explain: 'Send the same read with no `Authorization` header.',
        outcome: '`401 Unauthorized`: the server does not know who asks. The `WWW-Authenticate` header names the scheme to use, and the problem\'s `detail` says what to send.',
      },
      {
        id: 'signin-forbidden', title: 'Another user\'s playlists', method: 'GET', path: `${register}/someone-else/playlist`, headers: bearer, expect: [403],
        explain: 'Now read the playlists of another user, `someone-else`, with your token.',
        outcome: '`403 Forbidden`: the server knows who you are, and that subtree is not yours, whether or not such a user exists. `401` means "who are you?", `403` "you may not".',
      },
    ],
    signsIn: true,
  }
}
