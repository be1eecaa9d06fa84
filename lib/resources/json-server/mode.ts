import type { Answer, Context } from '../../http/context.ts'
import { handleGeneric, type RequireOwners } from '../generic.ts'
import { databaseAnswer } from './database.ts'
import { createNested, nestedRouteOf, readNested } from './nested.ts'
import { createMember, removeMember, replaceMember, updateDocument } from './plural.ts'
import { replaceSingular, singularAnswer } from './singular.ts'
import { parseDependents } from '../../listing/relations.ts'
import { checkParameters } from '../../listing/filters.ts'
import { checkWrite1, createMember1, embedded1, removeMember1, version1ItemQuery, version1Query } from './version-1.ts'
import { NothingStored } from '../../data/documents.ts'
import { readCollection } from './collections.ts'

/**
 * The generic data API with json-server 0.17's URL semantics (docs/json-server.md,
 * "The json-server mode"), for the `jsonServer` option: the paths json-server
 * has — `/db`, `/:name`, `/:name/:id`, `/:parent/:id/:name` — answer as it
 * answers them; every other request is restdir's own (handleGeneric). The
 * declared families (`/user`, …) keep their own routes and rules: the mode
 * leaves every path below them to restdir.
 */
export function jsonServerGeneric(declared: readonly string[], version: '0.17' | '1' = '0.17') {
  return async function handleJsonServer(context: Context, requireOwners: RequireOwners): Promise<Answer> {
    const { method, path } = context
    if (path.length === 0 || declared.includes(path[0])) return handleGeneric(context, requireOwners)
    const reads = method === 'GET' || method === 'HEAD'
    // json-server 1.0's answers where they differ from 0.17's (version-1.ts); it has no /db and no nested routes.
    if (version === '1') {
      await checkWrite1(context)
      if (method === 'DELETE' && path.length === 2) return removeMember1(context)
      if (method === 'POST' && path.length === 1) return createMember1(context, path, requireOwners)
      if (path.length > 2) return handleGeneric(context, requireOwners)
      if (reads) context = await embedded1({ ...context, query: path.length === 1 ? version1Query(context.query) : version1ItemQuery(context.query) })
    }
    if (!reads && version === '0.17') await requireFileName(context)
    if (path.length === 1) {
      if (reads && path[0] === 'db' && version === '0.17') return databaseAnswer(context)
      return topLevel(context, requireOwners)
    }
    if (path.length === 2) {
      await requireId(context)
      if (method === 'PUT') return replaceMember(context)
      if (method === 'PATCH') return updateDocument(context, true)
      if (method === 'DELETE') {
        parseDependents(context.query) // every dependent goes; the parameter is still checked
        return removeMember(context)
      }
    }
    if (path.length === 3 && (reads || method === 'POST')) {
      const route = await nestedRouteOf(context)
      if (route && reads) return readNested(context, route)
      if (route) return createNested(context, route, requireOwners)
    }
    return handleGeneric(context, requireOwners)
  }
}

/**
 * json-server 0.17 routes only its file's top-level names: a write to any other (`POST /newthings`,
 * `PUT /newthing`, a nested route's `POST /posts/1/newthings`) is a 404 on a db.json. Other stores
 * have no file to declare names, and their writes make them (an empty store must take its first).
 */
async function requireFileName(context: Context): Promise<void> {
  const names = await context.documents.fileResources()
  if (!names) return
  const { path } = context
  if (!names.includes(path[0])) throw new NothingStored(path.slice(0, 1))
  if (path.length === 3 && context.method === 'POST' && !names.includes(path[2]) && (await nestedRouteOf(context))) throw new NothingStored(path.slice(2))
}

/**
 * json-server 0.17 finds a member by its `id` alone, so an item that has none
 * (a db.json's, kept as it is) is at no URL: a 404, as json-server answers.
 */
async function requireId(context: Context): Promise<void> {
  const stored = await context.documents.read(context.path)
  if (stored && stored.doc[context.settings.idField] == null) throw new NothingStored(context.path)
}

/** `/:name`: a singular resource when a document is stored there, else a collection. */
async function topLevel(context: Context, requireOwners: RequireOwners): Promise<Answer> {
  const { method, path } = context
  if (method === 'GET' || method === 'HEAD') {
    if (context.query.has('_children') || context.query.has('_changes')) return handleGeneric(context, requireOwners)
    const stored = await context.documents.readText(path)
    if (!stored) return readCollection(context, path)
    if (context.query.size > 0) checkParameters(context.query)
    return singularAnswer(context, stored)
  }
  if (method === 'PUT') return replaceSingular(context)
  if (method === 'PATCH') return updateDocument(context, false)
  if (method === 'POST') {
    if (await context.documents.read(path)) return replaceSingular(context)
    const body = await context.body.json()
    return createMember(context, path, requireOwners, body)
  }
  return handleGeneric(context, requireOwners)
}

