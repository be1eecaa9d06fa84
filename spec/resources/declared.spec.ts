import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Context, RouteHandler } from '../../lib/http/context.ts'
import { Router } from '../../lib/http/router.ts'
import { HttpError } from '../../lib/http-error.ts'
import { createHandler } from '../../lib/handler.ts'
import { MemoryStore } from '../../lib/store/index.ts'
import type { NodePath } from '../../lib/store/store.ts'
import { addDeclaredRoutes, ownersCheck, ownerOf, type DeclaredResource } from '../../lib/resources/declared.ts'
import { users } from '../../lib/resources/users.ts'
import { playlists } from '../../lib/resources/playlists.ts'
import { startCli, stopAll } from '../support/process.ts'
import { makeTempDir } from '../support/helpers.ts'
import { rm } from 'node:fs/promises'

// Declared resources (docs/http-api.md, "Users and playlists"): each is declared once,
// and its routes, its ownership checks and the command line's banner all come
// from that declaration.

/** A handler that says which one it is, so a test can see which route it reached. */
function named(name: string): RouteHandler {
  const handler = async () => ({ status: 204 })
  Object.defineProperty(handler, 'name', { value: name })
  return handler
}

function declaration(collection: string, idField: string, parent?: DeclaredResource): DeclaredResource {
  return {
    collection,
    idField,
    parent,
    missing: (params) => new HttpError(404, `No ${collection} ${params[idField]}.`),
    create: named(`create ${collection}`),
    read: named(`read ${collection}`),
    replace: named(`replace ${collection}`),
    patch: named(`patch ${collection}`),
    remove: named(`remove ${collection}`),
  }
}

const shelves = declaration('shelf', 'shelf_id')
const books = declaration('book', 'book_id', shelves)

/** Just enough of a request's context for an ownership check: a store that holds `existing`. */
function contextHolding(existing: NodePath[]): Context {
  const held = new Set(existing.map((path) => path.join('/')))
  const documents = { read: async (path: NodePath) => (held.has(path.join('/')) ? { doc: {}, etag: '"x"' } : undefined) }
  return { base: '/api', params: Object.create(null), documents } as unknown as Context
}

async function rejection(promise: Promise<unknown>): Promise<HttpError | undefined> {
  try {
    await promise
  } catch (error) {
    if (error instanceof HttpError) return error
    throw error
  }
  return undefined
}

test('a declaration gives POST and GET on its collection and GET, PUT, PATCH, DELETE on a member, below its parent', () => {
  const router = new Router<RouteHandler>()
  addDeclaredRoutes(router, [shelves, books])
  assert.equal(router.routes(), [
    { pattern: '/shelf', methods: ['POST', 'GET'] },
    { pattern: '/shelf/:shelf_id', methods: ['GET', 'PUT', 'PATCH', 'DELETE'] },
    { pattern: '/shelf/:shelf_id/book', methods: ['POST', 'GET'] },
    { pattern: '/shelf/:shelf_id/book/:book_id', methods: ['GET', 'PUT', 'PATCH', 'DELETE'] },
  ])
  const create = router.find('POST', '/shelf/s1/book')
  assert.is(create?.handler?.name, 'create book')
  assert.equal({ ...create?.params }, { shelf_id: 's1' })
  const patch = router.find('PATCH', '/shelf/s1/book/b2')
  assert.is(patch?.handler?.name, 'patch book')
  assert.equal({ ...patch?.params }, { shelf_id: 's1', book_id: 'b2' })
  assert.is(router.find('DELETE', '/shelf/s1')?.handler?.name, 'remove shelf')
  assert.is(router.find('PUT', '/shelf')?.handler, undefined, 'a collection takes no PUT')
})

test('users and playlists declare /user, /user/:user_id and, below a user, /playlist and /playlist/:playlist_id', () => {
  const router = new Router<RouteHandler>()
  addDeclaredRoutes(router, [users, playlists])
  assert.equal(router.routes().map((route) => route.pattern), [
    '/user',
    '/user/:user_id',
    '/user/:user_id/playlist',
    '/user/:user_id/playlist/:playlist_id',
  ])
})

test('the owner of a path is the innermost declared member it lies in or below, with the ids on the way', () => {
  const resources = [shelves, books]
  assert.is(ownerOf(resources, ['shelf']), undefined, 'a collection itself has no owner')
  assert.is(ownerOf(resources, ['notes', 'n1']), undefined)
  assert.is(ownerOf(resources, ['shelf', 's1'])?.resource, shelves)
  assert.is(ownerOf(resources, ['shelf', 's1', 'book'])?.resource, shelves)
  assert.is(ownerOf(resources, ['shelf', 's1', 'labels', 'l1'])?.resource, shelves, 'an undeclared child stays with its shelf')
  const deep = ownerOf(resources, ['shelf', 's1', 'book', 'b2', 'notes'])
  assert.is(deep?.resource, books)
  assert.equal({ ...deep?.params }, { shelf_id: 's1', book_id: 'b2' })
  assert.is(ownerOf([books], ['book', 'b1']), undefined, 'a resource with a parent is never at the top')
})

test('a write below a declared member needs that member and each of its owners, outermost first', async () => {
  const requireOwners = ownersCheck([shelves, books])
  const none = contextHolding([])
  assert.is(await rejection(requireOwners(none, ['shelf'])), undefined, 'the collection of shelves exists without any shelf')
  assert.is(await rejection(requireOwners(none, ['notes', 'n1'])), undefined, 'an undeclared path has no owner')

  const noShelf = await rejection(requireOwners(none, ['shelf', 's1', 'book', 'b2']))
  assert.is(noShelf?.status, 404)
  assert.is(noShelf?.message, 'No shelf s1; create it with POST /api/shelf first.')

  const shelfOnly = contextHolding([['shelf', 's1']])
  assert.is(await rejection(requireOwners(shelfOnly, ['shelf', 's1', 'labels'])), undefined)
  const noBook = await rejection(requireOwners(shelfOnly, ['shelf', 's1', 'book', 'b2', 'notes']))
  assert.is(noBook?.status, 404)
  assert.is(noBook?.message, 'No book b2; create it with POST /api/shelf/s1/book first.')

  const both = contextHolding([['shelf', 's1'], ['shelf', 's1', 'book', 'b2']])
  assert.is(await rejection(requireOwners(both, ['shelf', 's1', 'book', 'b2', 'notes'])), undefined)
})

const folders: string[] = []
test.after(async () => {
  await stopAll()
  for (const dir of folders) await rm(dir, { recursive: true, force: true })
})

test("the command line's banner lists exactly the router's routes, each with its methods, under the prefix", async () => {
  const handler = createHandler({ store: new MemoryStore() })
  const routes = handler.routes
  await handler.close()
  const router = new Router<RouteHandler>()
  addDeclaredRoutes(router, [users, playlists])
  assert.equal(routes, router.routes(), 'the server routes what the declarations declare')
  assert.ok(routes.length >= 4, `users and playlists give at least four routes: ${JSON.stringify(routes)}`)

  const dir = await makeTempDir('restdir-declared-')
  folders.push(dir)
  const cli = await startCli(['--port', '0', '--store', dir, '--prefix', '/api'])
  const listed = [...cli.stdout().matchAll(/^ {2}([A-Z]+(?: [A-Z]+)*) +(\/api\/\S*)$/gm)].map(([, methods, path]) => ({
    pattern: path.slice('/api'.length),
    methods: methods.split(' '),
  }))
  await cli.stop('SIGTERM')
  assert.equal(listed, routes)
})

test.run()
