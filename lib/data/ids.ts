import type { Doc, NodePath, Store, WriteConditions } from '../store/store.ts'

/**
 * Ids for new documents: 12 characters of lowercase base 36, the creation
 * time in milliseconds followed by a counter, so ids sort in creation order
 * as plain strings. Within one millisecond the counter runs on; past 46 656
 * ids in one millisecond the clock is borrowed from the next one, so ids
 * never repeat and never go backwards in a process.
 */
let lastTime = 0
let counter = 0
const COUNTER_LIMIT = 36 ** 3

/** How long every new id is: 9 characters of time, 3 of counter. */
export const ID_LENGTH = 12

export function newId(now: number = Date.now()): string {
  if (now > lastTime) {
    lastTime = now
    counter = 0
  } else if (++counter === COUNTER_LIMIT) {
    lastTime += 1
    counter = 0
  }
  return lastTime.toString(36).padStart(9, '0') + counter.toString(36).padStart(3, '0')
}

/**
 * Stores a new child of `parent` under a new id: `makeDoc` builds the document
 * for an id. An id can only be taken already if the clock went back since an
 * earlier run: then the next one is tried.
 */
export async function createWithNewId(
  store: Store,
  parent: NodePath,
  makeDoc: (id: string) => Doc,
  conditions?: Omit<WriteConditions, 'expect' | 'patch'>,
): Promise<{ id: string; path: NodePath; doc: Doc; etag: string }> {
  for (;;) {
    const id = newId()
    const path = [...parent, id]
    const doc = makeDoc(id)
    const created = await store.create(path, doc, conditions)
    if (created) return { id, path, doc, etag: created.etag }
  }
}
