import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer, StoreError, type Doc, type NodePath, type Store, type StoreErrorKind } from '../../lib/index.ts'
import { openTestStore, send } from '../support/helpers.ts'

// The store names its faults (StoreError kinds); the handler alone turns them
// into HTTP answers. Held to the same answers over the file store and the memory store.

/** Wraps the test's store; `fault` set, every call on `path` throws that StoreError. */
class FaultyStore implements Store {
  fault: { kind: StoreErrorKind; reason?: string } | undefined
  constructor(readonly inner: Store, readonly faultyPath: string) {}
  #check(path: NodePath): void {
    if (this.fault && path.join('/') === this.faultyPath) throw new StoreError(this.fault.kind, path, this.fault.reason)
  }
  async read(path: NodePath) { this.#check(path); return this.inner.read(path) }
  async children(path: NodePath) { return this.inner.children(path) }
  async exists(path: NodePath) { this.#check(path); return this.inner.exists(path) }
  async write(path: NodePath, doc: Doc) { this.#check(path); return this.inner.write(path, doc) }
  async create(path: NodePath, doc: Doc) { this.#check(path); return this.inner.create(path, doc) }
  async remove(path: NodePath) { this.#check(path); return this.inner.remove(path) }
  close() { return this.inner.close() }
}

const expected: [StoreErrorKind, number, string, Record<string, string>?][] = [
  ['bad-document', 409, 'The document file for /notes/a is not valid JSON'],
  ['blocked-path', 409, 'The store cannot reach /notes/a'],
  ['disk-full', 507, 'disk holding the store is full'],
  ['out-of-descriptors', 503, 'out of file descriptors', { 'retry-after': '1' }],
  ['read-only', 503, 'cannot be written'],
  ['store-gone', 503, 'deleted or moved away'],
  ['path-too-long', 414, 'too long'],
  ['batch-unfinished', 503, 'could not be completed on disk', { 'retry-after': '1' }],
]

test('each kind of store fault is answered with its own status and a detail that says what happened, never a 500', async () => {
  const { store, dispose } = await openTestStore()
  const faulty = new FaultyStore(store, 'notes/a')
  const server = createServer({ store: faulty, quiet: true })
  await server.ready
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  try {
    assert.is((await send(port, 'PUT', '/notes/a', { body: { text: 'a' } })).status, 201)
    for (const [kind, status, detail, headers = {}] of expected) {
      faulty.fault = { kind, reason: kind === 'bad-document' ? 'is not valid JSON' : 'is a link' }
      for (const [method, body] of [['GET', undefined], ['PATCH', { text: 'b' }], ['DELETE', undefined]] as const) {
        const answer = await send(port, method, '/notes/a', body ? { body } : {})
        assert.is(answer.status, status, `${kind}, ${method}: ${answer.text}`)
        assert.is(answer.headers['content-type'], 'application/problem+json')
        assert.ok(answer.json.detail.includes(detail), `${kind}: ${answer.json.detail}`)
        for (const [name, value] of Object.entries(headers)) assert.is(answer.headers[name], value)
      }
    }
    faulty.fault = undefined
    assert.equal((await send(port, 'GET', '/notes/a')).json, { id: 'a', text: 'a' })
  } finally {
    await server.shutdown()
    await dispose()
  }
})

test.run()
