import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { PostgresStore, SchemaError, StoreError, redactUrl } from '../../../lib/store/index.ts'
import { serializeDoc } from '../../../lib/store/serialize.ts'
import { makeTempDir, startServer } from '../../support/helpers.ts'
import { runCli, spawnCli, startCli, stopAll } from '../../support/process.ts'
import { adminQuery, countingProxy, freshSchema as freshSchemaOf, startTestPostgres, type TestPostgres } from '../../support/postgres.ts'

// What only the PostgreSQL store shows: its schema, the optional `pg` package,
// the CLI's choice of store, and a database that goes away and comes back.
// (The whole HTTP API runs on it too: spec/run.mjs's third pass.)

let postgres: TestPostgres | undefined
const embedded = !process.env.RESTDIR_TEST_POSTGRES

test.before(async () => {
  postgres = await startTestPostgres()
})

test.after(async () => {
  await stopAll()
  await postgres?.dispose()
})

/**
 * A fresh schema, its URL always holding a password, so the tests can look for
 * it in what restdir prints (a server that trusts local connections ignores it).
 */
async function freshSchema(databaseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = await freshSchemaOf(databaseUrl)
  const url = new URL(schema.url)
  if (url.password === '') url.password = 'pw-unused-by-trust'
  return { url: url.toString(), drop: schema.drop }
}

/** The schema a connection string's search_path names. */
function schemaOf(url: string): string {
  return /search_path=(\w+)/.exec(new URL(url).searchParams.get('options') ?? '')![1]
}

function passwordOf(url: string): string {
  return decodeURIComponent(new URL(url).password)
}

test('on a database without its tables the store makes its schema, says so, and records version 2; the next start makes nothing', async () => {
  const schema = await freshSchema(postgres!.url)
  const lines: string[] = []
  const first = await PostgresStore.open(schema.url, { log: (line) => lines.push(line) })
  assert.is(await first.ready, true)
  await first.write(['notes', '1'], { text: 'kept' })
  await first.close()
  assert.is(lines.length, 1)
  assert.match(lines[0], /made the restdir schema \(version 2\)/)
  assert.not.ok(lines[0].includes(passwordOf(schema.url)), 'the log line shows no password')
  const version = await adminQuery(postgres!.url, `SELECT value FROM ${schemaOf(schema.url)}.restdir_meta WHERE key = 'schema_version'`)
  assert.equal(version.rows, [{ value: '2' }])

  const second = await PostgresStore.open(schema.url, { log: (line) => lines.push(line) })
  assert.is(await second.ready, false)
  assert.equal((await second.read(['notes', '1']))?.doc, { text: 'kept' })
  await second.close()
  assert.is(lines.length, 1)
  await schema.drop()
})

test('a database of schema version 1 is moved to version 2 in place at the start: its documents stay, the move is said once, and changes are kept from then on', async () => {
  const schema = await freshSchema(postgres!.url)
  const name = schemaOf(schema.url)
  // Version 1 as an earlier restdir made it: the meta and nodes tables and the listing index.
  await adminQuery(postgres!.url, `CREATE TABLE ${name}.restdir_meta (key text PRIMARY KEY, value text NOT NULL);
    INSERT INTO ${name}.restdir_meta VALUES ('schema_version', '1');
    CREATE TABLE ${name}.restdir_nodes (parent text COLLATE "C" NOT NULL, name text COLLATE "C" NOT NULL, text text, PRIMARY KEY (parent, name));
    INSERT INTO ${name}.restdir_nodes VALUES ('/', 'notes', NULL), ('/notes/', '1', $$${serializeDoc({ id: '1', text: 'from version 1' })}$$)`)
  const lines: string[] = []
  const store = await PostgresStore.open(schema.url, { log: (line) => lines.push(line) })
  assert.equal(lines.length, 1)
  assert.match(lines[0], /moved the restdir schema .* from version 1 to 2/)
  assert.equal((await store.read(['notes', '1']))?.doc, { id: '1', text: 'from version 1' })
  const before = await store.lastChangeId()
  assert.ok(before > Date.UTC(2020, 0) * 1000, 'change ids go on from the time in microseconds, as before the move')
  await store.write(['notes', '2'], { id: '2' })
  assert.equal(await store.changesAfter(before, 10), [{ id: before + 1, type: 'put', path: ['notes', '2'], data: { id: '2' } }])
  await store.close()
  const version = await adminQuery(postgres!.url, `SELECT value FROM ${name}.restdir_meta WHERE key = 'schema_version'`)
  assert.equal(version.rows, [{ value: '2' }])
  const again = await PostgresStore.open(schema.url, { log: (line) => lines.push(line) })
  await again.close()
  assert.equal(lines.length, 1, 'the next start moves nothing')
  await schema.drop()
})

test('three stores starting at once on one database make the schema once, or move it from version 1 once, and all serve', async () => {
  for (const from of ['nothing', 'version 1']) {
    const schema = await freshSchema(postgres!.url)
    if (from === 'version 1') {
      const name = schemaOf(schema.url)
      await adminQuery(postgres!.url, `CREATE TABLE ${name}.restdir_meta (key text PRIMARY KEY, value text NOT NULL);
        INSERT INTO ${name}.restdir_meta VALUES ('schema_version', '1');
        CREATE TABLE ${name}.restdir_nodes (parent text COLLATE "C" NOT NULL, name text COLLATE "C" NOT NULL, text text, PRIMARY KEY (parent, name))`)
    }
    const lines: string[] = []
    const stores = await Promise.all([0, 1, 2].map(() => PostgresStore.open(schema.url, { log: (line) => lines.push(line) })))
    assert.is(lines.length, 1, `${from}: said once`)
    await Promise.all(stores.map((store, index) => store.write(['n', String(index)], { index })))
    assert.equal(await stores[0].children(['n']), ['0', '1', '2'])
    for (const store of stores) await store.close()
    await schema.drop()
  }
})

test('a database holding a schema version this restdir does not know is refused, naming the version, by the library and by the command', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {} })
  await store.write(['a'], { v: 1 })
  await store.close()
  await adminQuery(postgres!.url, `UPDATE ${schemaOf(schema.url)}.restdir_meta SET value = '7' WHERE key = 'schema_version'`)

  let refused: unknown
  await PostgresStore.open(schema.url).catch((error: unknown) => (refused = error))
  assert.instance(refused, SchemaError)
  assert.match((refused as Error).message, /schema version "7", which this restdir \(schema version 2\) does not know/)

  const cli = await runCli(['--port', '0', '--store', schema.url])
  assert.is(cli.code, 1)
  assert.match(cli.stderr, /schema version "7"/)
  assert.not.ok(cli.stderr.includes(passwordOf(schema.url)), 'the message shows no password')
  const rows = await adminQuery(postgres!.url, `SELECT text FROM ${schemaOf(schema.url)}.restdir_nodes`)
  assert.equal(rows.rows, [{ text: serializeDoc({ v: 1 }) }])
  await schema.drop()
})

test('a search_path naming a schema that does not exist is refused, naming the schema and how to make it, by the library and by the command', async () => {
  const url = new URL(postgres!.url)
  const missing = `nowhere_${process.pid}_${randomBytes(3).toString('hex')}`
  url.searchParams.set('options', `-c search_path=${missing}`)
  let refused: unknown
  await PostgresStore.open(url.toString(), { log: () => {} }).catch((error: unknown) => (refused = error))
  assert.instance(refused, SchemaError)
  assert.match((refused as Error).message, new RegExp(`has no schema "${missing}", which its search_path \\(${missing}\\) names .*CREATE SCHEMA ${missing};`))
  const cli = await runCli(['--port', '0', '--store', url.toString()])
  assert.is(cli.code, 1)
  assert.ok(cli.stderr.includes(`CREATE SCHEMA ${missing};`), cli.stderr)
  assert.not.match(cli.stderr, /3F000|no schema has been selected/)
  const made = await adminQuery(postgres!.url, 'SELECT count(*)::int AS count FROM pg_namespace WHERE nspname = $1', [missing])
  assert.equal(made.rows, [{ count: 0 }], 'no schema is made behind the user\'s back')
})

test('a database not encoded in UTF-8 is refused with a message saying so, and gets no tables', async () => {
  const name = `restdir_ascii_${process.pid}`
  await adminQuery(postgres!.url, `CREATE DATABASE ${name} ENCODING 'SQL_ASCII' LOCALE 'C' TEMPLATE template0`)
  const url = new URL(postgres!.url)
  url.pathname = `/${name}`
  try {
    let refused: unknown
    await PostgresStore.open(url.toString(), { log: () => {} }).catch((error: unknown) => (refused = error))
    assert.instance(refused, SchemaError)
    assert.match((refused as Error).message, /is encoded SQL_ASCII; restdir needs a UTF8 database/)
    const tables = await adminQuery(url.toString(), "SELECT count(*)::int AS count FROM pg_tables WHERE tablename LIKE 'restdir%'")
    assert.equal(tables.rows, [{ count: 0 }])
  } finally {
    await adminQuery(postgres!.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
})

test('a connection string is shown without its password: in the user information, holding an @, or as a password= parameter', () => {
  assert.is(redactUrl('postgres://ann:s3cret@db.example:5432/app'), 'postgres://ann:***@db.example:5432/app')
  assert.is(redactUrl('postgresql://ann:p@ss@db.example/app?sslmode=require'), 'postgresql://ann:***@db.example/app?sslmode=require')
  assert.is(redactUrl('postgres://db.example/app?user=ann&password=s3cret&sslmode=require'), 'postgres://db.example/app?user=ann&password=***&sslmode=require')
  assert.is(redactUrl('postgres://ann@db.example/app'), 'postgres://ann@db.example/app')
})

test('restdir --store postgres://… where the pg package is not installed exits 2 with one line naming the package to install', async () => {
  const url = 'postgres://someone:s3cret-pw@127.0.0.1:1/nowhere'
  const cli = spawnCli(['--port', '0', '--store', url], {
    command: [process.execPath, '--import', './spec/support/fixtures/without-pg.mjs', '--import', 'tsx', 'bin/restdir.ts'],
  })
  const exit = await cli.exited
  assert.is(exit.code, 2)
  const lines = cli.stderr().trim().split('\n')
  assert.is(lines.length, 1, cli.stderr())
  assert.match(lines[0], /^restdir: .*"pg" package.*npm install pg/)
  assert.not.ok(cli.stderr().includes('s3cret-pw'))
  assert.is(cli.stdout(), '')
})

test('the command takes its store from --store, else $RESTDIR_STORE, else a postgres:// $DATABASE_URL, and shows the URL without its password', async () => {
  const schema = await freshSchema(postgres!.url)
  const dir = await makeTempDir()
  try {
    const onDatabase = await startCli(['--port', '0', '--quiet'], { env: { DATABASE_URL: schema.url, RESTDIR_STORE: '' } })
    assert.match(onDatabase.stdout(), /store: postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/restdir_test_/)
    assert.not.ok(onDatabase.stdout().includes(passwordOf(schema.url)))
    const put = await fetch(`${onDatabase.url}/notes/1`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"b":1,"a":[2,"é"]}' })
    assert.is(put.status, 201)
    await onDatabase.stop()
    // Kept as the very text a file store writes: key order and spelling as sent.
    const stored = await adminQuery(postgres!.url, `SELECT text FROM ${schemaOf(schema.url)}.restdir_nodes WHERE parent = '/notes/' AND name = '1'`)
    assert.equal(stored.rows, [{ text: '{\n  "id": "1",\n  "b": 1,\n  "a": [\n    2,\n    "é"\n  ]\n}\n' }])

    const onFolder = await startCli(['--port', '0', '--quiet'], { env: { DATABASE_URL: schema.url, RESTDIR_STORE: dir } })
    assert.match(onFolder.stdout(), new RegExp(`store: ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`))
    assert.is((await fetch(`${onFolder.url}/notes/1`)).status, 404)
    await onFolder.stop()

    const flagWins = await startCli(['--port', '0', '--quiet', '--store', schema.url], { env: { DATABASE_URL: '', RESTDIR_STORE: dir } })
    assert.equal(await (await fetch(`${flagWins.url}/notes/1`)).json(), { id: '1', b: 1, a: [2, 'é'] })
    await flagWins.stop()
  } finally {
    await rm(dir, { recursive: true, force: true })
    await schema.drop()
  }
})

test('a document edited by hand in the database is served as edited with a new ETag; text that is no document is a 409 that a PUT repairs', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {} })
  const server = await startServer({ store: store })
  const table = `${schemaOf(schema.url)}.restdir_nodes`
  try {
    const put = await server.request('PUT', '/notes/1', { body: { text: 'sent' } })
    // Read once first, so the store knows the document's compact text: an edit must still show.
    assert.equal((await server.request('GET', '/notes/1')).json, { id: '1', text: 'sent' })
    await adminQuery(postgres!.url, `UPDATE ${table} SET text = $1 WHERE parent = '/notes/' AND name = '1'`, ['{"id": "1", "text": "edited"}\n'])
    const edited = await server.request('GET', '/notes/1')
    assert.equal(edited.json, { id: '1', text: 'edited' })
    assert.is.not(edited.headers.etag, put.headers.etag)
    await adminQuery(postgres!.url, `UPDATE ${table} SET text = 'not json' WHERE parent = '/notes/' AND name = '1'`)
    const broken = await server.request('GET', '/notes/1')
    assert.is(broken.status, 409)
    assert.match(broken.json.detail, /is not valid JSON/)
    assert.is((await server.request('PUT', '/notes/1', { body: { text: 'repaired' } })).status, 200)
    assert.equal((await server.request('GET', '/notes/1')).json, { id: '1', text: 'repaired' })
  } finally {
    await server.close()
    await schema.drop()
  }
})

test('reads asked for at once share statements, and each gets its own document: distinct, repeated, missing and edited by hand', async () => {
  const schema = await freshSchema(postgres!.url)
  const proxy = await countingProxy(schema.url)
  const store = await PostgresStore.open(proxy.url, { log: () => {} })
  try {
    for (let id = 0; id < 50; id++) await store.write(['notes', String(id)], { id: String(id), n: id })
    await store.write(['notes', '7', 'below'], { under: 7 })
    await adminQuery(schema.url, `UPDATE restdir_nodes SET text = $1 WHERE parent = '/notes/' AND name = '3'`, ['{"id": "3", "n": "edited"}\n'])
    const wanted = Array.from({ length: 400 }, (_, index) => (index % 9 === 8 ? ['notes', `missing-${index % 5}`] : index % 13 === 12 ? ['notes', '7', 'below'] : ['notes', String(index % 50)]))
    const before = proxy.statements()
    const answers = await Promise.all(wanted.map((path, index) => (index % 2 ? store.read(path) : store.readText(path))))
    const statements = proxy.statements() - before
    answers.forEach((answer, index) => {
      const path = wanted[index]
      const doc = index % 2 ? (answer as { doc: unknown } | undefined)?.doc : answer && JSON.parse((answer as { json: string }).json)
      if (path[1].startsWith('missing')) assert.is(answer, undefined, path.join('/'))
      else if (path.length === 3) assert.equal(doc, { under: 7 })
      else if (path[1] === '3') assert.equal(doc, { id: '3', n: 'edited' })
      else assert.equal(doc, { id: path[1], n: Number(path[1]) }, path.join('/'))
    })
    assert.ok(statements < 40, `400 reads at once took ${statements} statements`)
  } finally {
    await store.close()
    await proxy.close()
    await schema.drop()
  }
})

test('a read statement that goes silent holds the other reads back for a second at most: they go on another connection', async () => {
  const schema = await freshSchema(postgres!.url)
  const proxy = await countingProxy(schema.url)
  const store = await PostgresStore.open(proxy.url, { log: () => {} })
  let resume = () => {}
  try {
    await store.write(['notes', 'a'], { n: 1 })
    await store.write(['notes', 'b'], { n: 2 })
    assert.equal((await store.read(['notes', 'a']))?.doc, { n: 1 })
    resume = proxy.stallLatest() // the connection that just read: the pool hands it out next
    const silent = store.read(['notes', 'a'])
    const started = performance.now()
    const other = await Promise.race([store.read(['notes', 'b']), sleep(5000, 'still waiting')])
    const waited = performance.now() - started
    assert.ok(typeof other === 'object', 'the other read is answered while the first is silent')
    assert.equal(other?.doc, { n: 2 })
    assert.ok(waited >= 900 && waited < 4000, `the other read waited ${Math.round(waited)} ms`)
    resume()
    assert.equal((await silent)?.doc, { n: 1 })
  } finally {
    resume() // the store's pool closes only once every statement has ended
    await store.close()
    await proxy.close()
    await schema.drop()
  }
})

test('a path too long to be a key in the index is a 414 that says so, and nothing is written', async () => {
  const schema = await freshSchema(postgres!.url)
  const store = await PostgresStore.open(schema.url, { log: () => {} })
  const server = await startServer({ store: store })
  try {
    // Random characters: PostgreSQL compresses a key before it measures it, so a repeated one would fit.
    const segment = () => randomBytes(500).toString('hex')
    const answer = await server.request('PUT', `/${segment()}/${segment()}/${segment()}/a`, { body: { v: 1 } })
    assert.is(answer.status, 414)
    assert.match(answer.json.detail, /too long for the store database/)
    assert.equal((await server.request('GET', '/?_children')).json, [])
    assert.is((await server.request('PUT', `/${segment()}/a`, { body: { v: 1 } })).status, 201)
  } finally {
    await server.close()
    await schema.drop()
  }
})

const restartName = 'while the database restarts under a running server requests get 503 with Retry-After, and once it is back they are served again without a restart of restdir'
if (embedded) {
  test(restartName, async () => {
    const schema = await freshSchema(postgres!.url)
    const lines: string[] = []
    const store = await PostgresStore.open(schema.url, { log: (line) => lines.push(line), connectTimeout: 2000 })
    const server = await startServer({ store: store })
    let down = false
    try {
      assert.is((await server.request('PUT', '/notes/1', { body: { text: 'before' } })).status, 201)
      await postgres!.stopServer!()
      down = true
      const refused = await server.request('GET', '/notes/1')
      assert.is(refused.status, 503)
      assert.is(refused.headers['retry-after'], '2')
      assert.is(refused.headers['content-type'], 'application/problem+json')
      assert.match(refused.json.detail, /database behind the store cannot be reached/)
      const refusedWrite = await server.request('PUT', '/notes/2', { body: { text: 'while down' } })
      assert.is(refusedWrite.status, 503)
      assert.ok(lines.some((line) => /cannot be reached/.test(line)), 'the log says the database is out of reach')
      // A store made while the database is down answers 'unavailable', and serves once it is back.
      const late = new PostgresStore(schema.url, { log: () => {}, connectTimeout: 2000 })
      const early = await late.read(['notes', '1']).catch((error: unknown) => error)
      assert.instance(early, StoreError)
      assert.is((early as StoreError).kind, 'unavailable')
      assert.not.ok(lines.join('\n').includes(passwordOf(schema.url)), 'the log shows no password')

      await postgres!.startServer!()
      down = false
      let back = await server.request('GET', '/notes/1')
      for (const started = Date.now(); back.status !== 200 && Date.now() - started < 30_000; back = await server.request('GET', '/notes/1')) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.is(back.status, 200)
      assert.equal(back.json, { id: '1', text: 'before' })
      assert.is((await server.request('PUT', '/notes/2', { body: { text: 'after' } })).status, 201)
      assert.equal((await late.read(['notes', '1']))?.doc, { id: '1', text: 'before' })
      await late.close()
      assert.equal((await server.request('GET', '/notes/2')).json, { id: '2', text: 'after' })
    } finally {
      if (down) await postgres!.startServer!() // so that the rest of the file, and its cleanup, have a database
      await server.close()
      await schema.drop()
    }
  })
} else {
  console.log(`skipped "${restartName}": RESTDIR_TEST_POSTGRES names a server these tests do not stop`)
  test.skip(restartName)
}

const loadName = 'a database restart in the middle of a write load loses nothing acknowledged: writes get 503 with Retry-After while it is down, and are served again without a restart of restdir'
if (embedded) {
  test(loadName, async () => {
    const schema = await freshSchema(postgres!.url)
    const store = await PostgresStore.open(schema.url, { log: () => {}, connectTimeout: 1000 })
    const server = await startServer({ store: store })
    const problems: string[] = []
    const counts = { before: 0, refused: 0, after: 0 }
    let phase: 'before' | 'down' | 'after' = 'before'
    let stopping = false
    /** Each writer PUTs a new document of its own each time: the acknowledged ones must all be there, the refused ones may. */
    const writers = Array.from({ length: 8 }, (_, index) => ({ path: `/load/w${index}`, acknowledged: [] as number[], uncertain: [] as number[], refused: 0 }))
    const acknowledgedPosts = new Map<string, unknown>()
    const uncertainPosts: string[] = []
    const answered = (statuses: number[], what: string, answer: { status: number; headers: Record<string, unknown>; text: string }) => {
      if (statuses.includes(answer.status)) {
        counts[phase === 'after' ? 'after' : 'before']++
        return true
      }
      if (answer.status === 503 && answer.headers['retry-after'] === '2' && answer.headers['content-type'] === 'application/problem+json') counts.refused++
      else problems.push(`${what}: ${answer.status} ${answer.text.slice(0, 200)}`)
      return false
    }
    const write = async (writer: (typeof writers)[number]) => {
      for (let seq = 1; !stopping; seq++) {
        const put = await server.request('PUT', `${writer.path}/s${seq}`, { body: { seq } })
        if (answered([201], `PUT ${writer.path}/s${seq}`, put)) writer.acknowledged.push(seq)
        else {
          writer.uncertain.push(seq)
          writer.refused++
        }
        const body = { writer: writer.path, seq }
        const post = await server.request('POST', '/load/posts', { body })
        if (answered([201], 'POST /load/posts', post)) acknowledgedPosts.set(post.json.id, { id: post.json.id, ...body })
        else uncertainPosts.push(JSON.stringify(body))
        // Refused: wait a little, as a client that honours Retry-After would (only shorter).
        if (put.status === 503 || post.status === 503) await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    const until = async (done: () => boolean, ms: number) => {
      for (const started = Date.now(); !done() && Date.now() - started < ms; ) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    let down = false
    try {
      const running = writers.map(write)
      await until(() => counts.before >= 100, 20_000)
      phase = 'down'
      await postgres!.stopServer!()
      down = true
      await until(() => writers.every((writer) => writer.refused >= 2), 10_000)
      await postgres!.startServer!()
      down = false
      phase = 'after'
      await until(() => counts.after >= 100, 30_000)
      stopping = true
      await Promise.all(running)

      assert.equal(problems, [], 'every answer is a success or a 503 with Retry-After')
      assert.ok(counts.before >= 100, `${counts.before} writes acknowledged before the restart`)
      assert.ok(writers.every((writer) => writer.refused >= 2), 'every writer was refused while the database was down')
      assert.ok(counts.after >= 100, `${counts.after} writes acknowledged after the restart, without a restart of restdir`)
      for (const writer of writers) {
        const stored = new Set(((await server.request('GET', writer.path)).json as { seq: number }[]).map((doc) => doc.seq))
        for (const seq of writer.acknowledged) assert.ok(stored.has(seq), `${writer.path}/s${seq} was acknowledged, and is there`)
        // A write refused with a 503 may have landed before the connection went.
        for (const seq of stored) assert.ok(writer.acknowledged.includes(seq) || writer.uncertain.includes(seq), `${writer.path}/s${seq} is one that was sent`)
      }
      const listed = await server.request('GET', '/load/posts')
      const byId = new Map((listed.json as { id: string }[]).map((post) => [post.id, post]))
      for (const [id, post] of acknowledgedPosts) assert.equal(byId.get(id), post, `acknowledged post ${id}`)
      for (const [id, post] of byId) {
        if (acknowledgedPosts.has(id)) continue
        const { id: _, ...body } = post as Record<string, unknown>
        assert.ok(uncertainPosts.includes(JSON.stringify(body)), `post ${id} is one that was refused, and landed`)
      }
      console.log(`\n  database restart under load: ${counts.before} writes acknowledged before, ${counts.refused} answered 503 while it was down, ${counts.after} acknowledged after; none lost`)
    } finally {
      stopping = true
      if (down) await postgres!.startServer!()
      await server.close()
      await schema.drop()
    }
  })
} else {
  console.log(`skipped "${loadName}": RESTDIR_TEST_POSTGRES names a server these tests do not stop`)
  test.skip(loadName)
}

test.run()
