import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { makeTempDir, send, type Answer } from '../support/helpers.ts'
import { builtCommand, startCli, stopAll, type RunningCli } from '../support/process.ts'
import { canonical, mergePatchModel, seeded, seedFrom, type Random } from '../support/random.ts'
import { freshSchema, startTestPostgres } from '../support/postgres.ts'

// docs/storage.md, "Crashes and restarts": after a process crash at any instant, every acknowledged write is
// present and no document is torn, on a store folder, on a db.json (docs/json-server.md, "Serving a
// db.json": the whole file is valid JSON after every kill) and on PostgreSQL. The command-line server runs as a child
// process; concurrent writers (POST, PUT, PATCH, DELETE) record every answer
// they get; SIGKILL lands at a random moment, several times over; each restart
// must take over the dead server's lock and show exactly what was acknowledged,
// give or take the one request per writer that was in flight at the kill.
//
// Longer runs: CRASH_ROUNDS=50 CRASH_WRITERS=32 RESTART_ROUNDS=50 node spec/run.mjs crash
// Replay a run: CRASH_SEED=<the seed it printed> node spec/run.mjs crash

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 5)
const RESTART_ROUNDS = Number(process.env.RESTART_ROUNDS ?? 5)
const WRITERS = Number(process.env.CRASH_WRITERS ?? 16)
const KEYS_PER_WRITER = 4
const SEED = seedFrom('CRASH_SEED')

type Doc = Record<string, unknown>

/** What the test knows about one node: the last acknowledged document, and a write that may or may not have landed. */
interface Tracked {
  path: string
  doc: Doc | undefined
  /** The ETag the last acknowledged write answered with (unknown after a write resolved by reading). */
  etag?: string
  /** A write sent but never answered: after the restart the node holds `doc` or `after`, nothing else. */
  uncertain?: { after: Doc | undefined }
}

interface Writer {
  index: number
  random: Random
  keys: Tracked[]
  user: Tracked
  /** POSTs that were in flight at a kill: each may have created one document with this body. */
  uncertainPosts: Doc[]
  seq: number
}

const figures = { rounds: 0, acknowledged: 0, inFlight: 0, landed: 0, notLanded: 0, checks: 0, filesParsed: 0, lockTakeovers: 0 }
const problems: string[] = []
/** Posts to the shared collection, by id. */
const posts = new Map<string, Tracked>()

test.after(() => stopAll())

/** Where a crash run keeps its data: a store folder, or a schema of its own on a PostgreSQL server started for it. */
interface CrashStore {
  location: string
  /** A store folder, whose files, lock and leftovers are checked too. */
  folder?: string
  /** A db.json, which must be whole JSON after every kill, with no lock or temp file left after a clean stop. */
  file?: string
  dispose(): Promise<void>
}

async function crashFile(): Promise<CrashStore> {
  const folder = await makeTempDir('restdir-crash-')
  const file = join(folder, 'db.json')
  // The file names what the writers write to: as json-server does, the mode answers 404 to a write of a name the file lacks.
  await writeFile(file, '{ "user": [], "crash": {} }\n')
  return { location: file, file, dispose: () => rm(folder, { recursive: true, force: true }) }
}

async function crashFolder(): Promise<CrashStore> {
  const folder = await makeTempDir('restdir-crash-')
  return { location: folder, folder, dispose: () => rm(folder, { recursive: true, force: true }) }
}

async function crashDatabase(): Promise<CrashStore> {
  const postgres = await startTestPostgres()
  const schema = await freshSchema(postgres.url)
  return { location: schema.url, dispose: () => postgres.dispose() }
}

for (const [kind, open] of [['a store folder', crashFolder], ['a db.json', crashFile], ['PostgreSQL', crashDatabase]] as const) {
  test(`on ${kind}: acknowledged writes survive ${ROUNDS} SIGKILLs at random moments, and no document is torn (seed ${SEED})`, async () => {
    const store = await open()
    try {
      await crashRounds(store)
    } finally {
      // A failed check leaves a server running: it is ended first, so that its writes do not race the removal and hide the failure.
      await stopAll()
      await store.dispose()
    }
  })
}

async function crashRounds(store: CrashStore): Promise<void> {
  const random = seeded(SEED)
  Object.assign(figures, { rounds: 0, acknowledged: 0, inFlight: 0, landed: 0, notLanded: 0, checks: 0, filesParsed: 0, lockTakeovers: 0 })
  problems.length = 0
  posts.clear()
  const writers: Writer[] = Array.from({ length: WRITERS }, (_, index) => ({
    index,
    random: seeded(random.int(2 ** 32)),
    keys: Array.from({ length: KEYS_PER_WRITER }, (_, key) => ({ path: `/crash/w${index}/k${key}`, doc: undefined })),
    user: { path: '', doc: undefined },
    uncertainPosts: [],
    seq: 0,
  }))
  const args = ['--port', '0', '--store', store.location, '--quiet']
  let server = await startCli(args)
  for (const writer of writers) {
    const answer = await send(server.port, 'POST', '/user', { body: { username: `crash-w${writer.index}` } })
    assert.is(answer.status, 201, answer.text)
    writer.user = { path: String(answer.headers.location), doc: answer.json, etag: String(answer.headers.etag) }
  }

  for (let round = 1; round <= ROUNDS; round++) {
    // A random moment: sometimes while the server is still sweeping up after the last crash.
    const killAfter = random.chance(0.2) ? random.between(5, 60) : random.between(300, 1500)
    const running = writers.map((writer) => runWriter(server.port, writer))
    await new Promise((resolve) => setTimeout(resolve, killAfter))
    assert.equal(await server.stop('SIGKILL'), { code: null, signal: 'SIGKILL' }, 'the server ran until it was killed')
    const stopped = await Promise.all(running)
    assert.ok(stopped.every(Boolean), 'every writer saw the server go')
    figures.rounds++

    if (store.folder) await checkFilesWhole(store.folder)
    if (store.file) await checkDatabaseWhole(store.file)
    // A folder is sometimes served with --sync; a database makes every commit durable itself.
    server = await startCli([...args, ...(store.folder && round % 2 === 0 ? ['--sync'] : [])])
    if (store.folder) await checkLockTakenOver(store.folder, server)
    if (store.file) await checkLockTakenOver(join(store.file, '..', '.db.json.lock'), server)
    await reconcile(server.port, writers)
    assert.equal(problems, [], `seed ${SEED}, after kill ${round}`)
  }

  await reconcile(server.port, writers)
  assert.equal(await server.stop(), { code: 0, signal: null })
  if (store.folder) assert.equal(await leftoverEntries(store.folder), [], 'a clean stop leaves no lock, temp files or trash')
  if (store.file) assert.equal(await readdir(join(store.file, '..')), ['db.json'], 'a clean stop leaves no lock or temp file beside the db.json')
  assert.equal(problems, [], `seed ${SEED}`)
  assert.ok(figures.acknowledged > ROUNDS * WRITERS, `only ${figures.acknowledged} writes were acknowledged`)
  console.log(
    `\n  crash (${store.folder ? 'store folder' : store.file ? 'db.json' : 'PostgreSQL'}): ${figures.rounds} SIGKILLs survived${store.folder ? `, ${figures.lockTakeovers} lock take-overs` : ''}; ` +
      `${figures.acknowledged} acknowledged writes, all present or superseded (${figures.checks} node checks); ` +
      `${figures.inFlight} in flight at a kill (${figures.landed} landed whole, ${figures.notLanded} not at all); ` +
      (store.folder ? `${figures.filesParsed} document files parsed, none torn; ` : '') +
      (store.file ? `the db.json parsed whole after each of ${figures.filesParsed} kills; ` : '') +
      `seed ${SEED}`,
  )
}

test(`the restdir command, SIGKILLed ${RESTART_ROUNDS} times, starts again at once each time on its store and keeps every document`, async () => {
  const store = await makeTempDir('restdir-restart-')
  const command = builtCommand()
  const args = ['--port', '0', '--store', store, '--quiet']
  const slowest = { start: 0 }
  try {
    let server = await startCli(args, { command })
    for (let round = 1; round <= RESTART_ROUNDS; round++) {
      assert.is((await send(server.port, 'PUT', `/restart/r${round}`, { body: { round } })).status, 201)
      assert.equal(await server.stop('SIGKILL'), { code: null, signal: 'SIGKILL' })
      const started = Date.now()
      // At once: no waiting, no cleaning up, whatever lock the killed server left.
      server = await startCli(args, { command })
      slowest.start = Math.max(slowest.start, Date.now() - started)
      assert.is(JSON.parse(await readFile(join(store, '@lock'), 'utf8')).pid, server.child.pid, `round ${round}: the new server holds the lock`)
      const listed = await send(server.port, 'GET', '/restart')
      assert.equal(
        (listed.json as Array<{ round: number }>).map((doc) => doc.round).sort((a, b) => a - b),
        Array.from({ length: round }, (_, index) => index + 1),
        `round ${round}: every document written before a kill is there`,
      )
    }
    assert.equal(await server.stop(), { code: 0, signal: null })
    assert.equal(await leftoverEntries(store), [], 'a clean stop leaves no lock, temp files or trash')
  } finally {
    await stopAll()
    await rm(store, { recursive: true, force: true })
  }
  console.log(`\n  restart: ${RESTART_ROUNDS} SIGKILLs of the restdir command, each followed at once by a start that served (slowest ${slowest.start} ms)`)
})

/** How a request fails when the server is killed under it; anything else is a fault of the test or the server. */
const CONNECTION_ERRORS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE'])

/** One writer's loop: random writes to its own nodes, its user and the shared collection, one at a time, until the server is gone. */
async function runWriter(port: number, writer: Writer): Promise<boolean> {
  for (;;) {
    const { random } = writer
    const seq = ++writer.seq
    const roll = random.next()
    const key = random.pick(writer.keys)
    try {
      if (roll < 0.3 || (roll < 0.6 && !key.doc)) {
        const body = { w: writer.index, seq, data: random.text(random.int(random.chance(0.2) ? 20_000 : 300)) }
        const expected = { id: key.path.split('/').pop()!, ...body }
        const ifMatch = key.etag && random.chance(0.3) ? { 'If-Match': key.etag } : undefined
        await write(key, expected, () => send(port, 'PUT', key.path, { body, headers: ifMatch }), [key.doc ? 200 : 201])
      } else if (roll < 0.6) {
        const patch = { seq, [`f${random.int(5)}`]: random.chance(0.3) ? null : random.text(random.int(50)) }
        await write(key, mergePatchModel(key.doc, patch) as Doc, () => send(port, 'PATCH', key.path, { body: patch }), [200])
      } else if (roll < 0.7) {
        await write(key, undefined, () => send(port, 'DELETE', key.path), key.doc ? [200] : [404])
      } else if (roll < 0.8) {
        const patch = { username: `crash-w${writer.index}-${seq}`, seq }
        await write(writer.user, mergePatchModel(writer.user.doc, patch) as Doc, () => send(port, 'PATCH', writer.user.path, { body: patch }), [200])
      } else if (roll < 0.95 || posts.size === 0) {
        const body = { w: writer.index, seq, data: random.text(random.int(500)) }
        writer.uncertainPosts.push(body)
        const answer = await send(port, 'POST', '/crash/posts', { body })
        writer.uncertainPosts.pop()
        if (answer.status !== 201) problems.push(`POST /crash/posts: ${answer.status} ${answer.text}`)
        else {
          figures.acknowledged++
          if (canonical(answer.json) !== canonical({ id: answer.json.id, ...body })) problems.push(`POST answered ${answer.text}`)
          posts.set(answer.json.id, { path: String(answer.headers.location), doc: answer.json, etag: String(answer.headers.etag) })
        }
      } else {
        // Delete a post this writer made, if any is still there.
        const mine = [...posts.values()].filter((post) => post.doc && post.doc.w === writer.index && !post.uncertain)
        if (mine.length === 0) continue
        const post = random.pick(mine)
        await write(post, undefined, () => send(port, 'DELETE', post.path), [200])
      }
    } catch (error) {
      // The connection broke: the server is gone, and the one request in flight stays uncertain.
      if (CONNECTION_ERRORS.has((error as NodeJS.ErrnoException).code ?? '')) return true
      throw error
    }
  }
}

/** Sends one write; an answer must be the expected one, and becomes what the test knows; no answer leaves it uncertain. */
async function write(node: Tracked, expected: Doc | undefined, request: () => Promise<Answer>, statuses: number[]): Promise<void> {
  node.uncertain = { after: expected }
  const answer = await request()
  node.uncertain = undefined
  if (!statuses.includes(answer.status)) {
    problems.push(`${node.path}: expected ${statuses.join('/')} but got ${answer.status} ${answer.text.slice(0, 300)}`)
    return
  }
  if (answer.status === 404) return
  figures.acknowledged++
  if (expected && canonical(answer.json) !== canonical(expected)) {
    problems.push(`${node.path}: answered ${answer.text.slice(0, 200)}, expected ${canonical(expected).slice(0, 200)}`)
  }
  node.doc = expected
  node.etag = expected ? String(answer.headers.etag) : undefined
}

/** After a restart: every node holds what was acknowledged, or what its one in-flight write would have made it. */
async function reconcile(port: number, writers: Writer[]): Promise<void> {
  const nodes = [...writers.flatMap((writer) => [...writer.keys, writer.user]), ...posts.values()]
  for (const node of nodes) {
    const answer = await send(port, 'GET', node.path)
    figures.checks++
    const actual = answer.status === 404 ? undefined : answer.json
    if (answer.status !== 200 && answer.status !== 404) {
      problems.push(`GET ${node.path}: ${answer.status} ${answer.text.slice(0, 300)}`)
      continue
    }
    const same = (doc: Doc | undefined) => (doc === undefined ? actual === undefined : actual !== undefined && canonical(actual) === canonical(doc))
    if (node.uncertain) {
      figures.inFlight++
      if (same(node.uncertain.after) && !same(node.doc)) {
        figures.landed++
        node.doc = node.uncertain.after
        node.etag = answer.headers.etag as string | undefined
      } else if (same(node.doc)) figures.notLanded++
      else problems.push(`${node.path}: holds ${answer.text.slice(0, 200)}, neither the acknowledged ${canonical(node.doc).slice(0, 200)} nor the write in flight`)
      node.uncertain = undefined
      continue
    }
    if (!same(node.doc)) {
      problems.push(`${node.path}: lost the acknowledged ${canonical(node.doc).slice(0, 200)}; holds ${answer.status} ${answer.text.slice(0, 200)}`)
    } else if (node.doc && node.etag && answer.headers.etag !== node.etag) {
      problems.push(`${node.path}: ETag ${answer.headers.etag} differs from the acknowledged ${node.etag}`)
    }
  }

  // The shared collection: acknowledged posts are all there (checked above); any other post must be one that was in flight.
  const listed = await send(port, 'GET', '/crash/posts')
  const inList = listed.status === 404 ? [] : (listed.json as Doc[])
  for (const doc of inList) {
    if (posts.has(String(doc.id))) continue
    const writer = writers.find((candidate) => candidate.index === doc.w)
    const match = writer?.uncertainPosts.findIndex((body) => canonical({ id: doc.id, ...body }) === canonical(doc)) ?? -1
    if (match === -1) {
      problems.push(`/crash/posts holds ${canonical(doc).slice(0, 200)}, which no request sent`)
      continue
    }
    writer!.uncertainPosts.splice(match, 1)
    figures.inFlight++
    figures.landed++
    posts.set(String(doc.id), { path: `/crash/posts/${doc.id}`, doc })
  }
  for (const writer of writers) {
    figures.inFlight += writer.uncertainPosts.length
    figures.notLanded += writer.uncertainPosts.length
    writer.uncertainPosts = []
  }
  const present = [...posts.values()].filter((post) => post.doc).length
  if (inList.length !== present) problems.push(`/crash/posts lists ${inList.length} documents; ${present} were expected`)
}

/** While the server is dead: every document file on disk is whole JSON (temp files and trash may lie around). */
async function checkFilesWhole(directory: string): Promise<void> {
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name)
    if (entry.isDirectory() && !entry.name.startsWith('@')) await checkFilesWhole(path)
    else if (entry.name === '@.json') {
      const text = await readFile(path, 'utf8')
      figures.filesParsed++
      try {
        const value = JSON.parse(text)
        if (value === null || typeof value !== 'object' || Array.isArray(value)) problems.push(`${path} holds ${text.slice(0, 100)}`)
      } catch {
        problems.push(`${path} is torn: ${JSON.stringify(text.slice(0, 100))}…${JSON.stringify(text.slice(-100))}`)
      }
    }
  }
}

/** While the server is dead: the db.json is whole JSON, an object (a temp file beside it may lie around). */
async function checkDatabaseWhole(file: string): Promise<void> {
  const text = await readFile(file, 'utf8')
  figures.filesParsed++
  try {
    const value = JSON.parse(text)
    if (value === null || typeof value !== 'object' || Array.isArray(value)) problems.push(`${file} holds ${text.slice(0, 100)}`)
  } catch {
    problems.push(`${file} is torn: ${JSON.stringify(text.slice(0, 100))}…${JSON.stringify(text.slice(-100))}`)
  }
}

/** The dead server's lock does not keep the store shut: the new one holds it now. */
async function checkLockTakenOver(store: string, server: RunningCli): Promise<void> {
  const lock = JSON.parse(await readFile(join(store, '@lock'), 'utf8')) as { pid: number }
  assert.is(lock.pid, server.child.pid, 'the restarted server holds the lock')
  figures.lockTakeovers++
}

/** Lock, temp files and trash anywhere in the store. */
async function leftoverEntries(directory: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    if (/^@(lock|tmp-|trash-|batch-)/.test(entry.name)) found.push(join(directory, entry.name))
    else if (entry.isDirectory() && !entry.name.startsWith('@')) found.push(...(await leftoverEntries(join(directory, entry.name))))
  }
  return found
}

// docs/http-api.md, "Batches"; docs/storage.md, "Batches": a batch on a store folder is whole or absent after a SIGKILL at
// any moment. Each writer's batch removes its last group of documents and puts the next one
// (BATCH_GROUP documents): after each restart, exactly one of the two groups is there, whole.
const BATCH_GROUP = 24
const BATCH_WRITERS = 4

interface BatchWriter {
  name: string
  /** The last group whose batch was acknowledged (0: none yet). */
  acknowledged: number
  /** The group whose batch was sent but not answered when the server went. */
  inFlight?: number
}

/**
 * Sends batches until the server goes: true when it stopped because the
 * server went, else the answer that was not a 200 (with what the server logged).
 */
async function runBatchWriter(port: number, writer: BatchWriter, logged: () => string): Promise<true | string> {
  for (;;) {
    const next = writer.acknowledged + 1
    const requests = [
      ...(writer.acknowledged > 0 ? [{ method: 'DELETE', path: `/batches/${writer.name}-${writer.acknowledged}` }] : []),
      ...Array.from({ length: BATCH_GROUP }, (_, key) => ({ method: 'PUT', path: `/batches/${writer.name}-${next}/k${key}`, body: { group: next, key } })),
    ]
    writer.inFlight = next
    let answer: Answer
    try {
      answer = await send(port, 'POST', '/?_batch', { body: { requests } })
    } catch {
      return true
    }
    // Said when the round ends, never thrown here: the writers run while the test waits to kill the server.
    if (answer.status !== 200) return `writer ${writer.name}, batch ${next}: ${answer.status} ${answer.text.slice(0, 300)}\nserver log:\n${logged().slice(-2000)}`
    writer.acknowledged = next
    writer.inFlight = undefined
  }
}

/** How many documents each group under /batches holds now. */
async function groupSizes(port: number): Promise<Map<string, number>> {
  const sizes = new Map<string, number>()
  const groups = await send(port, 'GET', '/batches?_children')
  if (groups.status === 404) return sizes
  for (const group of groups.json as string[]) sizes.set(group, ((await send(port, 'GET', `/batches/${group}`)).json as unknown[]).length)
  return sizes
}

test(`batches on a store folder, SIGKILLed ${ROUNDS} times at random moments, are each whole or absent after every restart`, async () => {
  const folder = await makeTempDir('restdir-batch-crash-')
  const random = seeded(SEED)
  const writers: BatchWriter[] = Array.from({ length: BATCH_WRITERS }, (_, index) => ({ name: `w${index}`, acknowledged: 0 }))
  const args = ['--port', '0', '--store', folder, '--quiet']
  const counts = { kills: 0, acknowledged: 0, landed: 0, notLanded: 0 }
  try {
    let server = await startCli(args)
    for (let round = 1; round <= ROUNDS; round++) {
      const before = writers.reduce((sum, writer) => sum + writer.acknowledged, 0)
      const current = server
      const started = writers.map((writer) => writer.acknowledged)
      let refused: true | string = true
      const running = writers.map((writer) => runBatchWriter(current.port, writer, () => current.stderr()).then((outcome) => (refused = outcome)))
      // Each writer has a batch acknowledged first, so that every round kills a server busy with batches, however slow
      // the machine (a --sync round makes 25 fsyncs a batch); then the kill comes at a random moment.
      const progress = Date.now() + 30_000
      while (refused === true && writers.some((writer, index) => writer.acknowledged === started[index]) && Date.now() < progress) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.is(refused, true, 'no writer was refused before the kill')
      assert.ok(writers.every((writer, index) => writer.acknowledged > started[index]), `round ${round}: every writer had a batch acknowledged within 30 s`)
      await new Promise((resolve) => setTimeout(resolve, random.between(0, 750)))
      assert.equal(await server.stop('SIGKILL'), { code: null, signal: 'SIGKILL' })
      for (const outcome of await Promise.all(running)) assert.is(outcome, true, 'every writer saw the server go')
      counts.kills++
      counts.acknowledged += writers.reduce((sum, writer) => sum + writer.acknowledged, 0) - before
      server = await startCli([...args, ...(round % 2 === 0 ? ['--sync'] : [])])
      const sizes = await groupSizes(server.port)
      for (const writer of writers) {
        const last = writer.acknowledged > 0 ? `${writer.name}-${writer.acknowledged}` : undefined
        const sent = writer.inFlight === undefined ? undefined : `${writer.name}-${writer.inFlight}`
        const landed = sent !== undefined && sizes.has(sent)
        const expected = new Map<string, number>()
        if (landed) expected.set(sent, BATCH_GROUP)
        else if (last !== undefined) expected.set(last, BATCH_GROUP)
        const found = new Map([...sizes].filter(([group]) => group.startsWith(`${writer.name}-`)))
        assert.equal(Object.fromEntries(found), Object.fromEntries(expected), `round ${round}, writer ${writer.name}: one group, whole (seed ${SEED})`)
        if (sent !== undefined) counts[landed ? 'landed' : 'notLanded']++
        if (landed) writer.acknowledged = writer.inFlight!
        writer.inFlight = undefined
      }
    }
    assert.equal(await server.stop(), { code: 0, signal: null })
    assert.equal(await leftoverEntries(folder), [], 'a clean stop leaves no lock, temp files, trash or journal')
    assert.ok(counts.acknowledged >= ROUNDS * BATCH_WRITERS, `only ${counts.acknowledged} batches were acknowledged`)
    console.log(
      `\n  batch crash (store folder): ${counts.kills} SIGKILLs; ${counts.acknowledged} acknowledged batches of ${BATCH_GROUP + 1} requests, each whole; ` +
        `${counts.landed + counts.notLanded} in flight at a kill (${counts.landed} landed whole, ${counts.notLanded} not at all); seed ${SEED}`,
    )
  } finally {
    await stopAll()
    await rm(folder, { recursive: true, force: true })
  }
})

test.run()
