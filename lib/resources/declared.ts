import type { Answer, Context, RouteHandler } from '../http/context.ts'
import { urlOf } from '../http/context.ts'
import type { Params, Router } from '../http/router.ts'
import type { NodePath } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { NothingStored } from '../data/documents.ts'
import { emptyCollectionAnswer } from './collection.ts'
import { readNode, type RequireOwners } from './generic.ts'

/**
 * A declared resource (docs/http-api.md, "Users and playlists"): a collection whose
 * members the service names, each member owning everything stored below it.
 * Its routes and its ownership checks are both read from this one declaration.
 */
export interface DeclaredResource {
  /** The collection's path segment: `user` serves `/user`. */
  collection: string
  /** A member's id field, also its path variable: `user_id` serves `/user/:user_id`. */
  idField: string
  /** The resource whose members hold this collection (a playlist belongs to a user); none at the top. */
  parent?: DeclaredResource
  /** The 404 for a member that is not there, by the ids of its path. */
  missing(params: Params): HttpError
  /** POST on the collection. */
  create: RouteHandler
  /** GET, PUT, PATCH and DELETE on a member. */
  read: RouteHandler
  replace: RouteHandler
  patch: RouteHandler
  remove: RouteHandler
}

/** The collection's route pattern, below its owners': `/user/:user_id/playlist`. */
export function collectionPattern(resource: DeclaredResource): string {
  return (resource.parent ? memberPattern(resource.parent) : '') + '/' + resource.collection
}

export function memberPattern(resource: DeclaredResource): string {
  return `${collectionPattern(resource)}/:${resource.idField}`
}

/** The store path of a resource's collection for a request's ids: `['user', '7', 'playlist']`. */
export function collectionPath(resource: DeclaredResource, params: Params): NodePath {
  return [...(resource.parent ? memberPath(resource.parent, params) : []), resource.collection]
}

export function memberPath(resource: DeclaredResource, params: Params): NodePath {
  return [...collectionPath(resource, params), params[resource.idField]]
}

/** Adds each resource's routes: POST and GET on the collection, GET, PUT, PATCH and DELETE on a member. */
export function addDeclaredRoutes(router: Router<RouteHandler>, resources: readonly DeclaredResource[]): void {
  for (const resource of resources) {
    const collection = collectionPattern(resource)
    const member = memberPattern(resource)
    router.add('POST', collection, resource.create)
    router.add('GET', collection, (context) => listCollection(context, resource))
    router.add('GET', member, resource.read)
    router.add('PUT', member, resource.replace)
    router.add('PATCH', member, resource.patch)
    router.add('DELETE', member, resource.remove)
  }
}

/**
 * GET of a declared collection: its members, with the listing queries of any
 * collection (docs/http-api.md, "Listing queries"). It exists as soon as its owner does:
 * before the first member it lists `[]` rather than 404.
 */
async function listCollection(context: Context, resource: DeclaredResource): Promise<Answer> {
  await requireOwnersOf(context, resource)
  const path = collectionPath(resource, context.params)
  try {
    return await readNode(context, path)
  } catch (error) {
    if (error instanceof NothingStored) return emptyCollectionAnswer(context, path)
    throw error
  }
}

/**
 * A write into a resource's collection needs its owners, outermost first (a
 * playlist needs its user): each is checked, and the innermost one's path is
 * returned, for the store to keep while it writes (the write's `owner`).
 */
export async function requireOwnersOf(context: Context, resource: DeclaredResource, params: Params = context.params): Promise<NodePath | undefined> {
  return resource.parent && requireMember(context, resource.parent, params)
}

async function requireMember(context: Context, resource: DeclaredResource, params: Params): Promise<NodePath> {
  await requireOwnersOf(context, resource, params)
  const path = memberPath(resource, params)
  if (await context.documents.read(path)) return path
  const missing = resource.missing(params)
  const hint = `create it with POST ${urlOf(context, collectionPath(resource, params))} first`
  throw new HttpError(404, `${missing.message.replace(/\.$/, '')}; ${hint}.`)
}


/**
 * Nodes below a declared member live and die with it (docs/http-api.md, "Users and playlists"): a write under `/user/:user_id/...` needs that user, and under
 * `/user/:user_id/playlist/:playlist_id/...` that playlist too.
 */
export function ownersCheck(resources: readonly DeclaredResource[]): RequireOwners {
  return async (context, parent) => {
    const owner = ownerOf(resources, parent)
    return owner && requireMember(context, owner.resource, owner.params)
  }
}

/** The innermost declared member that `path` lies in or below, with the ids on the way, if any. */
export function ownerOf(resources: readonly DeclaredResource[], path: NodePath): { resource: DeclaredResource; params: Params } | undefined {
  const params: Params = Object.create(null)
  let owner: DeclaredResource | undefined
  for (let index = 0; index + 1 < path.length; index += 2) {
    const resource = resources.find((candidate) => candidate.parent === owner && candidate.collection === path[index])
    if (!resource) break
    params[resource.idField] = path[index + 1]
    owner = resource
  }
  return owner && { resource: owner, params }
}
