import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { RestdirOptions } from '../../lib/options.ts'
import { startServerWithData, type TestServer } from '../support/helpers.ts'

// A DELETE that takes the documents pointing at the deleted one along (docs/json-server.md,
// "The json-server mode"; `_dependent`, docs/http-api.md) is one batch of the store: every
// reader sees all of them or none of them gone, on every store.

const DEPENDENTS = 600
const OTHERS = 50

async function withCascade(options: RestdirOptions, run: (server: TestServer) => Promise<void>): Promise<void> {
  const comments = [
    ...Array.from({ length: DEPENDENTS }, (_, index) => ({ id: index + 1, postId: 1, text: `on one ${index}` })),
    ...Array.from({ length: OTHERS }, (_, index) => ({ id: DEPENDENTS + index + 1, postId: 2, text: `on two ${index}` })),
  ]
  const server = await startServerWithData({ posts: [{ id: 1, title: 'one' }, { id: 2, title: 'two' }], comments }, options)
  try {
    await run(server)
  } finally {
    await server.close()
  }
}

/**
 * Counts the comments, then looks for the post, again and again while `removal` runs, and answers
 * what was seen that one step cannot show: a count with some of the comments gone, or the post
 * still there after they all went.
 */
async function halfDoneDuring(server: TestServer, removal: Promise<unknown>): Promise<string[]> {
  const seen: string[] = []
  let done = false
  void removal.finally(() => (done = true))
  do {
    const count = Number((await server.request('GET', '/comments?_limit=1')).headers['x-total-count'])
    const post = (await server.request('GET', '/posts/1')).status
    if (count !== DEPENDENTS + OTHERS && count !== OTHERS) seen.push(`${count} comments`)
    if (count === OTHERS && post !== 404) seen.push(`the post (${post}) after its comments went`)
  } while (!done)
  return seen
}

test(`json-server mode: DELETE /posts/1 takes its ${DEPENDENTS} comments in one step: no reader sees some of them gone`, () => withCascade({ jsonServer: true }, async (server) => {
  const removal = server.request('DELETE', '/posts/1')
  const halfDone = await halfDoneDuring(server, removal)
  const answer = await removal
  assert.is(answer.status, 200, answer.text)
  assert.equal(answer.json, {})
  assert.equal(halfDone, [], 'every reader saw the post with all its comments, or neither')
  assert.is(Number((await server.request('GET', '/comments?_limit=1')).headers['x-total-count']), OTHERS)
  assert.ok((await server.request('GET', '/comments')).json.every((comment: { postId: number }) => comment.postId === 2))
  assert.is((await server.request('GET', '/posts/1')).status, 404)
}))

test(`DELETE /posts/1?_dependent=comments takes its ${DEPENDENTS} comments in one step and answers the deleted post`, () => withCascade({}, async (server) => {
  const removal = server.request('DELETE', '/posts/1?_dependent=comments')
  const halfDone = await halfDoneDuring(server, removal)
  const answer = await removal
  assert.is(answer.status, 200, answer.text)
  assert.equal(answer.json, { id: 1, title: 'one' })
  assert.equal(halfDone, [], 'every reader saw the post with all its comments, or neither')
  assert.is(Number((await server.request('GET', '/comments?_limit=1')).headers['x-total-count']), OTHERS)
}))

test('a cascade whose If-Match fails removes nothing; one that holds removes all, and a second DELETE is a 404', () => withCascade({ jsonServer: true }, async (server) => {
  const etag = String((await server.request('GET', '/posts/1')).headers.etag)
  assert.is((await server.request('DELETE', '/posts/1', { headers: { 'If-Match': '"other"' } })).status, 412)
  assert.is(Number((await server.request('GET', '/comments?_limit=1')).headers['x-total-count']), DEPENDENTS + OTHERS)
  assert.is((await server.request('DELETE', '/posts/1', { headers: { 'If-Match': etag } })).status, 200)
  assert.is(Number((await server.request('GET', '/comments?_limit=1')).headers['x-total-count']), OTHERS)
  assert.is((await server.request('DELETE', '/posts/1')).status, 404)
}))

test.run()
