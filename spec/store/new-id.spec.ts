import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { newShortId, randomShortId } from '../../lib/store/new-id.ts'
import { compareIds } from '../../lib/store/store.ts'

// json-server 1.0's form of a new id (docs/json-server.md, "json-server 1.0's mode"): 11 base64url
// characters. On the stores that list in id order they must sort in the order they were made,
// within one millisecond, across milliseconds and past the counter's end, and never repeat.

const ID = /^[A-Za-z0-9_-]{11}$/

test('ids of 1.0 form made in one millisecond, across milliseconds and past the counter sort as they were made', () => {
  const made: string[] = []
  const now = Date.now() + 10_000
  // Past 64³ in one millisecond the clock is borrowed from the next one.
  for (let i = 0; i < 64 ** 3 + 500; i++) made.push(newShortId(now))
  for (let i = 0; i < 500; i++) made.push(newShortId(now + 2 + Math.floor(i / 100)))
  for (const id of made) assert.ok(ID.test(id), id)
  assert.is(new Set(made).size, made.length, 'every id is its own')
  const sorted = [...made].sort(compareIds)
  const firstOut = sorted.findIndex((id, i) => id !== made[i])
  assert.is(firstOut, -1, `in the order made (first out of place at ${firstOut})`)
  assert.ok(made.every((id) => id.startsWith('-')), 'none is a whole number')
})

test("random ids are 1.0's: 11 base64url characters, each its own", () => {
  const made = Array.from({ length: 10_000 }, randomShortId)
  for (const id of made) assert.ok(ID.test(id), id)
  assert.is(new Set(made).size, made.length)
})

test.run()
