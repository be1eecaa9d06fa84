import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ReadBatch } from '../../../lib/store/postgres/read-batch.ts'

// Point reads sharing statements under load (lib/store/postgres/read-batch.ts; docs/postgres.md, "Running on PostgreSQL").

/** A fake database: each statement waits until the test lets it finish, and records the keys it was asked and when. */
function fakeDatabase(limit: number, most = 100, patience = 60_000) {
  const values = new Map<string, string>([
    ['a', 'A'],
    ['b', 'B'],
    ['c', 'C'],
    ['d', 'D'],
  ])
  const statements: Array<{ keys: string[]; finish(): void; fail(error: Error): void }> = []
  const statement = <R>(keys: string[], answer: () => R) =>
    new Promise<R>((resolve, reject) => statements.push({ keys, finish: () => resolve(answer()), fail: reject }))
  const batch = new ReadBatch<string, string>({
    limit,
    most,
    patience,
    read: (keys) =>
      statement(keys, () => new Map(keys.flatMap((key, index) => (values.has(key) ? [[index, values.get(key)!] as [number, string]] : [])))),
  })
  return { batch, values, statements, read: (key: string) => batch.read(key, key) }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

test('below the limit each read is a statement of its own, sent at once', async () => {
  const db = fakeDatabase(2)
  const a = db.read('a')
  const b = db.read('b')
  assert.equal(
    db.statements.map((statement) => statement.keys),
    [['a'], ['b']],
  )
  db.statements.forEach((statement) => statement.finish())
  assert.equal(await Promise.all([a, b]), ['A', 'B'])
})

test('past the limit reads wait, then go together in one statement as soon as one finishes', async () => {
  const db = fakeDatabase(1)
  const first = db.read('a')
  const waiting = [db.read('b'), db.read('x'), db.read('c')]
  await settle()
  assert.is(db.statements.length, 1, 'nothing more is sent while the limit is reached')
  db.statements[0].finish()
  assert.is(await first, 'A')
  assert.equal(db.statements[1].keys, ['b', 'x', 'c'])
  db.statements[1].finish()
  assert.equal(await Promise.all(waiting), ['B', undefined, 'C'], 'a key not found is undefined')
})

test('a waiting read is answered by a statement sent after it was asked for, never by one already under way', async () => {
  const db = fakeDatabase(1)
  const first = db.read('a')
  db.values.set('a', 'A2') // a write acknowledged now, after the first statement began
  const second = db.read('a')
  db.statements[0].finish()
  assert.is(await first, 'A2', 'the fake reads its value when the statement finishes')
  await settle()
  assert.is(db.statements.length, 2, 'the second read has a statement of its own')
  db.values.set('a', 'A3')
  db.statements[1].finish()
  assert.is(await second, 'A3')
})

test('reads of one key waiting together are asked for once and share the answer', async () => {
  const db = fakeDatabase(1)
  const first = db.read('d')
  const same = [db.read('a'), db.read('a'), db.read('b'), db.read('a')]
  db.statements[0].finish()
  await first
  assert.equal(db.statements[1].keys, ['a', 'b'])
  db.statements[1].finish()
  assert.equal(await Promise.all(same), ['A', 'A', 'B', 'A'])
})

test('no statement holds more than `most` reads; the rest go in the next ones, up to the limit', async () => {
  const db = fakeDatabase(2, 2)
  const running = [db.read('a'), db.read('b')]
  const waiting = ['c', 'd', 'a2', 'b2', 'x'].map((key) => db.read(key))
  db.statements[0].finish()
  db.statements[1].finish()
  await Promise.all(running)
  await settle()
  assert.equal(
    db.statements.slice(2).map((statement) => statement.keys),
    [
      ['c', 'd'],
      ['a2', 'b2'],
    ],
    'two statements start, each with two reads; the fifth waits',
  )
  db.statements[2].finish()
  await settle()
  assert.equal(db.statements[4].keys, ['x'])
  db.statements[3].finish()
  db.statements[4].finish()
  assert.equal(await Promise.all(waiting), ['C', 'D', undefined, undefined, undefined])
})

test('a statement that fails fails every read it carried, and the reads after it still go', async () => {
  const db = fakeDatabase(1)
  const first = db.read('a')
  const carried = [db.read('b'), db.read('b'), db.read('c')].map((read) => read.then(() => 'answered', (error: Error) => error.message))
  db.statements[0].finish()
  await first
  const later = db.read('d')
  db.statements[1].fail(new Error('connection lost'))
  assert.equal(await Promise.all(carried), ['connection lost', 'connection lost', 'connection lost'])
  await settle()
  db.statements[2].finish()
  assert.is(await later, 'D')
})

test('a statement still under way after the patience no longer holds the waiting reads back', async () => {
  const db = fakeDatabase(1, 100, 30)
  const stuck = db.read('a')
  const waiting = db.read('b')
  await new Promise((resolve) => setTimeout(resolve, 10))
  assert.is(db.statements.length, 1, 'within the patience the read waits')
  await new Promise((resolve) => setTimeout(resolve, 40))
  assert.equal(db.statements[1]?.keys, ['b'], 'past it, the waiting read goes in a statement of its own')
  db.statements[1].finish()
  assert.is(await waiting, 'B')
  const next = db.read('c')
  assert.equal(db.statements[2]?.keys, ['c'], 'the stuck statement no longer counts: the next read goes at once')
  db.statements[2].finish()
  db.statements[0].finish()
  assert.equal(await Promise.all([next, stuck]), ['C', 'A'])
})

test.run()
