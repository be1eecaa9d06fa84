import type { Answer, Context } from '../../http/context.ts'
import type { NodePath } from '../../store/store.ts'
import type { RequireOwners } from '../generic.ts'
import { singular, wordsOf } from '../../listing/relations.ts'
import { createMember } from './plural.ts'
import { readCollection } from './collections.ts'

/*
 * json-server 0.17's nested routes (docs/json-server.md, "The json-server
 * mode"): `/posts/1/comments` is the collection `/comments` seen through its
 * foreign key, `postId` (the parent collection's singular, then `Id`, or
 * `--foreignKeySuffix`), = 1.
 */

export interface NestedRoute {
  /** The top-level collection the route reaches: `['comments']`. */
  collection: NodePath
  foreignKey: string
  /** The parent's id, as the URL spells it: json-server stores it so, as text. */
  parentId: string
}

/**
 * The nested route a path of three segments stands for, or undefined when the
 * path names a node of its own (restdir's nested data wins where it exists).
 */
export async function nestedRouteOf(context: Context): Promise<NestedRoute | undefined> {
  const [parent, parentId, name] = context.path
  if (await context.documents.exists(context.path)) return undefined
  // 0.17 names the key by `pluralize.singular` (`/people/1/pets` → `personId`).
  return { collection: [name], foreignKey: `${singular(parent, wordsOf(context.settings))}${context.settings.foreignKeySuffix}`, parentId }
}

/**
 * GET: the collection's listing with the foreign key as one more filter, set over any the query
 * had (0.17 sets `req.query.postId`): like any `field=value` of the mode, left out when no item of
 * the collection has the field (query.ts), so `/comments/1/replies` lists every reply then.
 */
export function readNested(context: Context, route: NestedRoute): Promise<Answer> {
  const query = new URLSearchParams(context.query)
  query.set(route.foreignKey, route.parentId)
  return readCollection({ ...context, query }, route.collection)
}

/** POST: a new document of the collection, its foreign key set to the parent's id. */
export async function createNested(context: Context, route: NestedRoute, requireOwners: RequireOwners): Promise<Answer> {
  const body = await context.body.json()
  return createMember(context, route.collection, requireOwners, { ...body, [route.foreignKey]: route.parentId })
}
