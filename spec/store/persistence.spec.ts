import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { makeTempDir, send, startServer, type Answer } from '../support/helpers.ts'
import { assertJson } from '../support/assertions.ts'
import { readDocumentFiles, startCli, stopAll } from '../support/process.ts'

// Persistence (docs/http-api.md, "Versions and conditional requests"; docs/storage.md, "Where the data goes"): restarts, concurrent writes, and a crash in the middle of a stream of writes.

const folders: string[] = []

async function tempStore(): Promise<string> {
  const dir = await makeTempDir()
  folders.push(dir)
  return dir
}

test.after(async () => {
  await stopAll()
  for (const dir of folders) await rm(dir, { recursive: true, force: true })
})

test('documents, users and playlists survive a restart on the same folder, and closing releases the lock', async () => {
  const dir = await tempStore()
  const first = await startServer({ store: dir })
  await first.request('PUT', '/notes/kept', { body: { text: 'still here', nested: { list: [1, 2] } } })
  await first.request('PUT', '/notes/caf%C3%A9/Ada', { body: { odd: true } })
  const user = (await first.request('POST', '/user', { body: { username: 'persistent' } })).json
  const playlist = (await first.request('POST', `/user/${user.user_id}/playlist`, { body: { songs: ['a'] } })).json
  await first.request('PUT', '/notes/gone', { body: {} })
  await first.request('DELETE', '/notes/gone')
  const before = await first.request('GET', '/notes/kept')
  await first.close(true)
  assert.not.ok(existsSync(path.join(dir, '@lock')), 'the lock is released on close')

  const second = await startServer({ store: dir })
  const after = await second.request('GET', '/notes/kept')
  assertJson(after, 200, { id: 'kept', text: 'still here', nested: { list: [1, 2] } })
  assert.is(after.headers.etag, before.headers.etag)
  assertJson(await second.request('GET', '/notes/caf%C3%A9/Ada'), 200, { id: 'Ada', odd: true })
  assertJson(await second.request('GET', `/user/${user.user_id}`), 200, user)
  assertJson(await second.request('GET', `/user/${user.user_id}/playlist`), 200, [playlist])
  assert.is((await second.request('GET', '/notes/gone')).status, 404)
  // Usernames are checked against the stored users, so the name is still taken.
  assert.is((await second.request('POST', '/user', { body: { username: 'persistent' } })).status, 409)
  await second.close(true)
})

test('100 concurrent POSTs to one collection create 100 distinct documents', async () => {
  const api = await startServer({ store: await tempStore() })
  const answers = await Promise.all(Array.from({ length: 100 }, (_, index) => api.request('POST', '/crowd', { body: { index } })))
  assert.ok(answers.every((answer) => answer.status === 201), 'every POST is 201')
  const ids = answers.map((answer) => answer.json.id as string)
  assert.is(new Set(ids).size, 100)
  assert.equal(new Set(answers.map((answer) => answer.headers.location)).size, 100)
  const listed = (await api.request('GET', '/crowd')).json as Array<{ id: string; index: number }>
  assert.is(listed.length, 100)
  assert.equal(listed.map((doc) => doc.id).sort(), [...ids].sort())
  assert.equal(listed.map((doc) => doc.index).sort((a, b) => a - b), [...Array(100).keys()])
  for (const answer of answers.slice(0, 10)) {
    assertJson(await api.request('GET', answer.headers.location as string), 200, answer.json)
  }
  await api.close(true)
  const files = await readDocumentFiles(api.dir)
  assert.is(files.size, 100)
})

test('50 concurrent PUTs on one document leave exactly one intact write, and the file parses', async () => {
  const api = await startServer({ store: await tempStore() })
  // Each body has its own size, so a torn or interleaved file could not pass for any of them.
  const bodies = Array.from({ length: 50 }, (_, writer) => ({ writer, payload: String(writer % 10).repeat(500 + writer * 97), list: [writer, { writer }] }))
  const answers = await Promise.all(bodies.map((body) => api.request('PUT', '/contested/doc', { body })))
  assert.equal(answers.map((answer) => answer.status).sort(), [...Array(49).fill(200), 201])
  answers.forEach((answer, writer) => assert.equal(answer.json, { id: 'doc', ...bodies[writer] }))

  const stored = await api.request('GET', '/contested/doc')
  assert.is(stored.status, 200)
  const winner = bodies.findIndex((body) => JSON.stringify({ id: 'doc', ...body }) === JSON.stringify(stored.json))
  assert.ok(winner !== -1, `the stored document is one of the writes: ${stored.text.slice(0, 120)}`)
  // The writes ran one at a time: the stored one is the write whose answer carried the current ETag.
  assert.is(answers[winner].headers.etag, stored.headers.etag)
  await api.close(true)
  const files = await readDocumentFiles(api.dir)
  assert.equal([...files.values()], [stored.json])
})

test('after a SIGKILL in the middle of a stream of writes, every acknowledged write is there and every file parses', async () => {
  const dir = await tempStore()
  const first = await startCli(['--port', '0', '--store', dir, '--quiet'])

  interface Sent { seq: number; body: Record<string, unknown> }
  /** For each node written by PUT (one writer per node, one write at a time): every body sent, and the last acknowledged seq. */
  const puts = new Map<string, { sent: Sent[]; acknowledged: number }>()
  /** Documents whose POST was acknowledged, by Location. */
  const posted = new Map<string, Record<string, unknown>>()
  let acknowledged = 0
  let unanswered = 0
  let killed = false

  async function writer(worker: number): Promise<void> {
    for (let seq = 1; !killed; seq++) {
      const body = { worker, seq, pad: 'x'.repeat((seq % 7) * 300) }
      let answer: Answer
      if (seq % 3 === 0) {
        try {
          answer = await send(first.port, 'POST', `/crash/posts-${worker}`, { body })
        } catch {
          unanswered++
          return
        }
        if (answer.status !== 201) throw new Error(`POST answered ${answer.status}: ${answer.text}`)
        posted.set(answer.headers.location as string, answer.json)
      } else {
        const node = `/crash/w${worker}/n${seq % 4}`
        const record = puts.get(node) ?? { sent: [], acknowledged: 0 }
        puts.set(node, record)
        record.sent.push({ seq, body })
        try {
          answer = await send(first.port, 'PUT', node, { body })
        } catch {
          unanswered++
          return
        }
        if (answer.status !== 200 && answer.status !== 201) throw new Error(`PUT answered ${answer.status}: ${answer.text}`)
        record.acknowledged = seq
      }
      acknowledged++
    }
  }

  const writers = Array.from({ length: 8 }, (_, worker) => writer(worker))
  // Kill once a few hundred writes are acknowledged (or after 3 s on a slow machine), with all eight writers mid-request.
  const started = Date.now()
  while (acknowledged < 300 && Date.now() - started < 3000) await new Promise((resolve) => setTimeout(resolve, 10))
  first.child.kill('SIGKILL')
  killed = true
  const exit = await first.exited
  await Promise.all(writers)
  assert.is(exit.signal, 'SIGKILL')
  assert.ok(acknowledged > 0, 'some writes were acknowledged before the kill')
  assert.ok(unanswered > 0, 'the kill came while writes were in flight')
  assert.ok(existsSync(path.join(dir, '@lock')), 'the killed server left its lock behind')

  // The lock of the dead process is taken over: no stuck lock.
  const second = await startCli(['--port', '0', '--store', dir, '--quiet'])
  for (const [node, { sent, acknowledged: last }] of puts) {
    const answer = await send(second.port, 'GET', node)
    if (last === 0) {
      // Never acknowledged: absent, or the one write in flight.
      if (answer.status === 404) continue
      assert.equal(answer.json, { id: path.posix.basename(node), ...sent[sent.length - 1].body })
      continue
    }
    assert.is(answer.status, 200, `${node} was acknowledged (seq ${last}) but is missing`)
    const stored = answer.json as { seq: number }
    // The last acknowledged write, or the single later one that was in flight at the kill.
    assert.ok(stored.seq === last || stored.seq === sent[sent.length - 1].seq, `${node} holds seq ${stored.seq}, acknowledged ${last}`)
    const expected = sent.find((entry) => entry.seq === stored.seq)!
    assert.equal(answer.json, { id: path.posix.basename(node), ...expected.body })
  }
  for (const [location, doc] of posted) assertJson(await send(second.port, 'GET', location), 200, doc)
  const files = await readDocumentFiles(dir)
  assert.ok(files.size >= posted.size + [...puts.values()].filter((record) => record.acknowledged > 0).length)
  const stop = await second.stop('SIGTERM')
  assert.is(stop.code, 0)
  assert.not.ok(existsSync(path.join(dir, '@lock')))
})

test.run()
