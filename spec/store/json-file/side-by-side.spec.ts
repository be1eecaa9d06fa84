import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, send, startServer, type Answer, type TestServer } from '../../support/helpers.ts'
import { startJsonServer017, type JsonServer017 } from '../../support/json-server-017.ts'

// A db.json served by restdir and by json-server 0.17.4 (its own command line, unchanged), each on
// a copy of the same file, asked the same requests (docs/json-server.md, "Serving a db.json"):
// the file is its own declaration, and its empty collections are kept as json-server keeps them.

interface Pair {
  restdir: TestServer
  jsonServer: JsonServer017
  files: { restdir: string; jsonServer: string }
  /** The same request to both: [json-server's answer, restdir's]. */
  ask(method: string, target: string, body?: unknown): Promise<[Answer, Answer]>
}

const folders: string[] = []
const closing: Array<() => Promise<void>> = []
test.after.each(async () => {
  for (const close of closing.splice(0)) await close()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

async function pairOn(db: unknown): Promise<Pair> {
  const folder = await makeTempDir('restdir-side-by-side-')
  folders.push(folder)
  const files = { restdir: join(folder, 'restdir.json'), jsonServer: join(folder, 'json-server.json') }
  for (const file of Object.values(files)) await writeFile(file, JSON.stringify(db, null, 2))
  const jsonServer = await startJsonServer017(files.jsonServer)
  closing.push(() => jsonServer.close())
  const restdir = await startServer({ store: files.restdir })
  closing.push(() => restdir.close())
  return {
    restdir,
    jsonServer,
    files,
    async ask(method, target, body) {
      // One after the other: json-server writes its file after answering, and the next request must see the write.
      const theirs = await send(jsonServer.port, method, target, { body })
      const ours = await send(restdir.port, method, target, { body })
      return [theirs, ours]
    },
  }
}

/** The two answers agree: the status, and (below 400) the JSON; a refusal's body is restdir's problem+json (docs/json-server.md). */
function assertSame([theirs, ours]: [Answer, Answer], what: string): void {
  assert.is(ours.status, theirs.status, `${what}: json-server answered ${theirs.status} ${theirs.text}, restdir ${ours.status} ${ours.text}`)
  if (theirs.status < 400) assert.equal(ours.json, theirs.json, `${what}: the same JSON`)
}

async function filesOf(pair: Pair): Promise<[unknown, unknown]> {
  // json-server writes its file a moment after it answers (lowdb's write is not awaited).
  await new Promise((resolve) => setTimeout(resolve, 100))
  return [JSON.parse(await readFile(pair.files.jsonServer, 'utf8')), JSON.parse(await readFile(pair.files.restdir, 'utf8'))]
}

test('a db.json with its own "user" object serves it as json-server does: a singular resource, no users family', async () => {
  const pair = await pairOn({ user: { name: 'ann', role: 'admin' }, posts: [{ id: 1, title: 'one' }] })
  assertSame(await pair.ask('GET', '/user'), 'GET /user')
  assertSame(await pair.ask('PATCH', '/user', { role: 'owner' }), 'PATCH /user')
  assertSame(await pair.ask('PUT', '/user', { name: 'bob' }), 'PUT /user')
  assertSame(await pair.ask('POST', '/user', { name: 'cy' }), 'POST /user')
  assertSame(await pair.ask('GET', '/user'), 'GET /user after the writes')
  assertSame(await pair.ask('GET', '/user/1'), 'GET /user/1')
  assertSame(await pair.ask('GET', '/db'), 'GET /db')
  const [theirs, ours] = await filesOf(pair)
  assert.equal(ours, theirs)
})

test('a db.json with its own "user" array serves a plain collection: integer ids, no user_id, a PATCH merges', async () => {
  const pair = await pairOn({ user: [{ id: 1, name: 'ann' }], playlist: [{ id: 1, userId: 1, name: 'mix' }] })
  assertSame(await pair.ask('POST', '/user', { name: 'bob' }), 'POST /user')
  assertSame(await pair.ask('PATCH', '/user/2', { name: 'bobby' }), 'PATCH /user/2')
  assertSame(await pair.ask('GET', '/user?_sort=name&_order=desc'), 'GET /user sorted')
  assertSame(await pair.ask('GET', '/user/1/playlist'), 'GET /user/1/playlist (a nested route)')
  assertSame(await pair.ask('POST', '/user/1/playlist', { name: 'two' }), 'POST /user/1/playlist')
  assertSame(await pair.ask('DELETE', '/user/2'), 'DELETE /user/2')
  assertSame(await pair.ask('GET', '/playlist'), 'GET /playlist')
  const [theirs, ours] = await filesOf(pair)
  assert.equal(ours, theirs)
})

/** Every kind of listing query json-server 0.17 takes, on one collection. */
const listings = (name: string) => [
  `/${name}`,
  `/${name}?_start=0&_end=10`,
  `/${name}?_start=1&_limit=2`,
  `/${name}?_page=1`,
  `/${name}?_page=2&_limit=5`,
  `/${name}?_limit=3`,
  `/${name}?_sort=body`,
  `/${name}?_sort=body&_order=desc&_page=1&_limit=2`,
  `/${name}?postId=1`,
  `/${name}?body_like=a`,
  `/${name}?id_gte=1`,
  `/${name}?q=a`,
  `/${name}?_embed=likes`,
  `/posts/1/${name}`,
]

test('an empty collection answers 200 [] to every query, as json-server does, and stays in the file and in GET /db', async () => {
  const pair = await pairOn({ posts: [{ id: 1, title: 'one' }], comments: [], profile: { name: 'x' } })
  for (const target of listings('comments')) assertSame(await pair.ask('GET', target), `GET ${target}`)
  assertSame(await pair.ask('GET', '/db'), 'GET /db')
  assertSame(await pair.ask('POST', '/comments', { body: 'first', postId: 1 }), 'POST into the empty collection')
  const [theirs, ours] = await filesOf(pair)
  assert.equal(ours, theirs)
})

test('a collection whose last item is deleted answers 200 [] to every query, whether or not a filtered listing ran before, and stays in the file and in GET /db', async () => {
  const pair = await pairOn({ posts: [{ id: 1, title: 'one' }], comments: [{ id: 1, postId: 1, body: 'a' }], notes: [{ id: 1, body: 'b' }] })
  // A filtered and a sorted listing of `comments` first (restdir then keeps a listing index of it); `notes` has none.
  assertSame(await pair.ask('GET', '/comments?body=a'), 'a filtered listing')
  assertSame(await pair.ask('GET', '/comments?_sort=body'), 'a sorted listing')
  assertSame(await pair.ask('DELETE', '/comments/1'), 'DELETE /comments/1')
  assertSame(await pair.ask('DELETE', '/notes/1'), 'DELETE /notes/1')
  for (const name of ['comments', 'notes']) {
    for (const target of listings(name)) assertSame(await pair.ask('GET', target), `GET ${target}`)
  }
  assertSame(await pair.ask('GET', '/db'), 'GET /db')
  const [theirs, ours] = await filesOf(pair)
  assert.equal(ours, theirs)
  assert.equal(ours, { posts: [{ id: 1, title: 'one' }], comments: [], notes: [] })
})

test('a name the file does not hold is still a 404, as json-server answers it', async () => {
  const pair = await pairOn({ posts: [], profile: {} })
  assertSame(await pair.ask('GET', '/nothing'), 'GET /nothing')
  assertSame(await pair.ask('GET', '/nothing?_sort=id'), 'GET /nothing sorted')
  assertSame(await pair.ask('GET', '/profile'), 'GET /profile (an empty object)')
})

test.run()
