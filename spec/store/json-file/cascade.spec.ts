import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { JsonFileStore } from '../../../lib/store/index.ts'
import { makeTempDir, startServer } from '../../support/helpers.ts'

// A json-server cascade on a db.json (docs/json-server.md, "The json-server mode"): the deleted
// member and every document naming it go in one write of the file, however many they are.

const DEPENDENTS = 50_000

test(`DELETE /posts/1 with ${DEPENDENTS} comments naming it in a db.json is one write of the file, done within seconds, not minutes`, async () => {
  const folder = await makeTempDir('restdir-cascade-')
  const file = join(folder, 'db.json')
  const comments = Array.from({ length: DEPENDENTS + 10 }, (_, index) => ({ id: index + 1, postId: index < DEPENDENTS ? 1 : 2, body: `comment ${index}` }))
  await writeFile(file, JSON.stringify({ posts: [{ id: 1, title: 'one' }, { id: 2, title: 'two' }], comments }, null, 2))
  const store = await JsonFileStore.open(file, { log: () => {} })
  const server = await startServer({ store, jsonServer: true })
  try {
    const before = store.fileWrites
    const started = performance.now()
    let timer: NodeJS.Timeout | undefined
    const answer = await Promise.race([
      server.request('DELETE', '/posts/1'),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the cascade was not done after 20 s')), 20_000))),
    ]).finally(() => clearTimeout(timer))
    const took = performance.now() - started
    assert.is(answer.status, 200, answer.text)
    assert.is(store.fileWrites - before, 1, 'the member and its dependents went in one write of the file')
    const written = JSON.parse(await readFile(file, 'utf8'))
    assert.equal(written.posts, [{ id: 2, title: 'two' }])
    assert.equal(written.comments.map((comment: { id: number }) => comment.id), Array.from({ length: 10 }, (_, index) => DEPENDENTS + index + 1))
    // One file rewrite per dependent took minutes; one write of the file takes about a second on a quiet machine, and the race above gives a busy one 20.
    assert.ok(took < 20_000, `the cascade took ${Math.round(took)} ms`)
  } finally {
    await server.close()
    await rm(folder, { recursive: true, force: true })
  }
})

test.run()
