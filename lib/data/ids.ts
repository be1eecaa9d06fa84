import type { Doc, NodePath, Store, WriteConditions } from '../store/store.ts'
import { newId } from '../store/new-id.ts'
import type { FullStore } from '../store/full-store.ts'

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
  makeId: () => string = newId,
): Promise<{ id: string; path: NodePath; doc: Doc; etag: string }> {
  for (;;) {
    const id = makeId()
    const path = [...parent, id]
    const doc = makeDoc(id)
    const created = await store.create(path, doc, conditions)
    if (created) return { id, path, doc, etag: created.etag }
  }
}

/** A path segment that is an integer as JSON writes it: `0`, `7`, `42`; not `07`, `-1` or `1e3`. */
const INTEGER_SEGMENT = /^(?:0|[1-9]\d{0,14})$/

/**
 * The next id json-server 0.17 would give a new child of `parent`
 * (docs/json-server.md, "The json-server mode"): 1 in an empty collection, one
 * more than the greatest when every child's name is an integer and that
 * child's `id` is a number, as json-server's own integer ids are. Undefined
 * when the collection's ids are not integers: new ids are then restdir's own.
 * Only names are read, and the one document of the greatest.
 */
export async function nextIntegerId(store: FullStore, parent: NodePath, idField = 'id'): Promise<number | undefined> {
  const greatest = await greatestName(store, parent, idField)
  if (greatest === undefined) return undefined
  if (greatest === 0) return 1
  const last = await store.read([...parent, String(greatest)])
  if (last !== undefined && typeof last.doc[idField] !== 'number') return undefined
  return Number.isSafeInteger(greatest + 1) ? greatest + 1 : undefined
}

/**
 * The greatest child name of `parent` when every one is an integer, 0 when it
 * has none, undefined otherwise. Whole numbers come first in id order
 * (compareIds), so where the store lists its documents in that order the last
 * one tells, without reading every name.
 */
async function greatestName(store: FullStore, parent: NodePath, idField: string): Promise<number | undefined> {
  if (store.fileOrder) return greatestInFile(store, parent, idField)
  const total = (await store.documentChildren(parent, 0, 0))?.total ?? 0
  if (total === 0) return 0
  const last = (await store.documentChildren(parent, total - 1, total))?.names[0]
  return last !== undefined && INTEGER_SEGMENT.test(last) ? Number(last) : undefined
}

/**
 * greatestName for a store listed in its file's order (a db.json), where
 * every name counts, as json-server reads every id: an item without an id
 * (json-server's lodash `maxBy` passes over it) is passed over too. The
 * answer does not depend on the order names are looked at in, and new items
 * are last in the file: where the last one has an id that is not an integer
 * (restdir's own, as a collection of string ids gets), that tells at once,
 * without a list of every name (docs/speed.md).
 */
async function greatestInFile(store: FullStore, parent: NodePath, idField: string): Promise<number | undefined> {
  const total = (await store.documentChildren(parent, 0, 0))?.total ?? 0
  if (total === 0) return 0
  const last = (await store.documentChildren(parent, total - 1, total))?.names[0]
  if (last !== undefined && !INTEGER_SEGMENT.test(last) && (await store.read([...parent, last]))?.doc[idField] != null) return undefined
  const names = (await store.documentChildren(parent, 0, undefined))?.names ?? []
  let greatest = 0
  for (let at = names.length - 1; at >= 0; at--) {
    const name = names[at]
    if (INTEGER_SEGMENT.test(name)) greatest = Math.max(greatest, Number(name))
    else if ((await store.read([...parent, name]))?.doc[idField] != null) return undefined
  }
  return greatest
}

/** Integer ids this process is creating documents under now, by collection: POSTs at once take the next ones in turn. */
const inFlight = new WeakMap<FullStore, Map<string, Set<number>>>()

/**
 * The next integer id of `parent` (nextIntegerId), held for this process
 * until `release`: POSTs that come together get 3, 4, 5 rather than all
 * racing for 3, so none writes in vain; once released, the id is the stored
 * document's or free again, so ids follow json-server's rule whenever no
 * other POST is under way.
 */
export async function holdIntegerId(store: FullStore, parent: NodePath, idField = 'id'): Promise<{ id: number; release(): void } | undefined> {
  const next = await nextIntegerId(store, parent, idField)
  if (next === undefined) return undefined
  let collections = inFlight.get(store)
  if (!collections) inFlight.set(store, (collections = new Map()))
  const key = JSON.stringify(parent)
  let held = collections.get(key)
  if (!held) collections.set(key, (held = new Set()))
  let id = next
  for (const other of held) id = Math.max(id, other + 1)
  if (!Number.isSafeInteger(id)) return undefined
  held.add(id)
  const ids = held
  return {
    id,
    release: () => {
      ids.delete(id)
      if (ids.size === 0) collections.delete(key)
    },
  }
}
