import type { Answer, Context } from '../../http/context.ts'
import type { Documents } from '../../data/documents.ts'
import type { NodePath } from '../../store/store.ts'
import { NothingStored } from '../../data/documents.ts'
import { readNode } from '../generic.ts'
import { emptyCollectionAnswer } from '../collection.ts'

/*
 * The top-level collections the json-server mode knows (docs/json-server.md, "The json-server
 * mode"). json-server keeps a collection while it is empty (`"posts": []` stays in its db.json), and
 * so does a db.json store; a store folder, memory or PostgreSQL keeps no node without a document or
 * children, so a collection whose last item goes would stop existing there. The mode remembers each
 * top-level name the change feed showed a member of (a write or a removal of `/posts/<id>`, from
 * this process or, on PostgreSQL, from another instance) until the collection itself is removed
 * (`DELETE /posts`), and answers such a name `200 []` to every query while nothing is stored there.
 * What it remembers lives as long as the process, and holds at most MAX_KNOWN names.
 */

/** Most names remembered; past it the longest-known goes first (its empty collection is then a 404 again, as outside the mode). */
export const MAX_KNOWN = 10_000

const known = new WeakMap<Documents, Set<string>>()

/** The names of the collections the mode knows over `documents`, made on first use. */
function knownOf(documents: Documents): Set<string> {
  let names = known.get(documents)
  if (!names) {
    const made = new Set<string>()
    known.set(documents, (names = made))
    documents.subscribe(({ type, path }) => {
      if (path.length === 2) remember(made, path[0])
      else if (path.length === 1 && type === 'delete') made.delete(path[0])
    })
  }
  return names
}

function remember(names: Set<string>, name: string): void {
  names.delete(name) // re-inserted last: the most recently seen
  names.add(name)
  if (names.size > MAX_KNOWN) names.delete(names.values().next().value!)
}

/** Starts remembering over `documents`, from its next change on (the handler calls it once the store is open). */
export function knowCollections(documents: Documents): void {
  knownOf(documents)
}

/** Whether `name` is a collection the mode knows, emptied or not (json-server 1.0's mode writes only to names the store has). */
export function isKnownCollection(documents: Documents, name: string): boolean {
  return knownOf(documents).has(name)
}

/** The known collections that hold nothing now (for `GET /db`), given the names the store holds. */
export function emptiedCollections(documents: Documents, held: readonly string[]): string[] {
  return [...knownOf(documents)].filter((name) => !held.includes(name))
}

/**
 * GET of a top-level collection: as restdir lists it, or `[]` under the same query (its
 * parameters checked as any listing's) when it is a known collection that holds nothing now.
 */
export async function readCollection(context: Context, path: NodePath): Promise<Answer> {
  try {
    return await readNode(context, path)
  } catch (error) {
    if (!(error instanceof NothingStored) || path.length !== 1 || !knownOf(context.documents).has(path[0])) throw error
    return emptyCollectionAnswer(context, path)
  }
}
